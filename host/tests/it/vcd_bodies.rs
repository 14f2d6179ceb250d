//! Answers are read up to a limit: a list page larger than the collection limit
//! and an answer that never ends are refused with an error naming the
//! limit, instead of growing the process's memory.

use std::time::Duration;

use crate::support::vcd::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vcd_ccm::vcd::reference::EntityRef;
use vcd_ccm::vcd::resources::pool::Pool;
use vcd_ccm::vcd::resources::vm::VmScope;
use vcd_ccm::vcd::{BodyLimits, ClientConfig, CredentialSource, VcdClient, VcdError};

fn pool(name: &str, gateway: &EntityRef) -> Pool {
    serde_json::from_value(json!({
        "name": name,
        "members": [{"ipAddress": "10.0.0.11", "port": 30080}],
        "gatewayRef": gateway,
    }))
    .expect("a pool body")
}

#[tokio::test]
async fn a_list_page_past_the_page_limit_is_refused_naming_the_limit() {
    let sim = sim().await;
    let mut config = config(&sim, tenant_token(&sim));
    config.body_limits = BodyLimits {
        object: 64 << 10,
        collection: 2 << 10,
    };
    let client = connect(config).await;
    let placement = placement(&client).await;
    let gateway = EntityRef::new(placement.gateway.name, placement.gateway.id);
    for i in 0..12 {
        client
            .pools()
            .create(&pool(&format!("pool-{i}"), &gateway))
            .await
            .expect("single objects fit the object limit");
    }
    let error = client.pools().summaries(&gateway.id).await.unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, VcdError::ResponseTooLarge { limit: 2048, .. }),
        "{text}"
    );
    assert!(
        text.contains("2048 bytes") && text.contains("a collection"),
        "{text}"
    );
    assert_eq!(error.outcome(), "too_large");
}

/// Serves every connection a 200 whose chunked body never ends.
async fn endless_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = format!("{:x}\r\n{}\r\n", 64 << 10, " ".repeat(64 << 10));
                while socket.write_all(chunk.as_bytes()).await.is_ok() {}
            });
        }
    });
    format!("http://{address}")
}

#[tokio::test]
async fn an_answer_that_never_ends_is_cut_at_the_object_limit() {
    let host = endless_server().await;
    let mut config = ClientConfig::new(
        host,
        "acme",
        CredentialSource::Static(vcd_ccm::vcd::Credentials::ApiToken {
            org: "acme".into(),
            token: vcd_ccm::vcd::Secret::new("token".to_string()),
        }),
    );
    config.retry = fast_retry();
    config.body_limits.object = 1 << 20;
    let connected = tokio::time::timeout(
        Duration::from_secs(20),
        VcdClient::connect(config, vcd_ccm::vcd::ClientMetrics::default()),
    )
    .await
    .expect("refused long before the request timeout");
    let error = connected.unwrap_err();
    assert!(
        matches!(
            error,
            VcdError::ResponseTooLarge {
                limit: 1_048_576,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("get_versions"), "{error}");
}

#[tokio::test]
async fn a_vapp_with_its_vms_is_read_under_the_collection_limit() {
    let sim = sim().await;
    let limited = |collection: usize| {
        let mut config = config(&sim, tenant_token(&sim));
        config.body_limits = BodyLimits {
            object: 2 << 10,
            collection,
        };
        connect(config)
    };
    let (small, large) = (limited(2 << 10).await, limited(4 << 20).await);
    let records = large
        .vms()
        .query(&VmScope::VAppPrefix("cluster1".into()))
        .await
        .unwrap();
    let container = records[0].container.clone().expect("a vApp");
    let error = small.vms().vapp_with_vms(&container).await.unwrap_err();
    assert!(
        matches!(error, VcdError::ResponseTooLarge { .. }),
        "the vApp document is larger than one object may be: {error}"
    );
    let read = large
        .vms()
        .vapp_with_vms(&container)
        .await
        .expect("a vApp document is a collection, not one object");
    assert_eq!(read.vms.len(), 3);
}
