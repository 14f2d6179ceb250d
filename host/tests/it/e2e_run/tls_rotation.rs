//! `--tls-secret-resync-period` on the real binary: a Service's certificate
//! comes from a `kubernetes.io/tls` Secret, and a Secret renewed in place
//! (as cert-manager renews it) reaches the virtual service within the
//! period, with no change to the Service.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::tls::{KeyPair, TLS_SECRET, certificates_of};

const WAIT: Duration = Duration::from_secs(60);

/// Creates or replaces the `kubernetes.io/tls` Secret `default/web-tls`.
pub(super) async fn put_secret(world: &World, pair: &KeyPair) {
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "web-tls", "namespace": "default"},
        "type": "kubernetes.io/tls",
        "stringData": {"tls.crt": pair.cert, "tls.key": pair.key}
    });
    Api::<Secret>::namespaced(world.client.clone(), "default")
        .patch(
            "web-tls",
            &PatchParams::apply("tls-rotation-test").force(),
            &Patch::Apply(secret),
        )
        .await
        .expect("the Secret is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_secret_reaches_the_virtual_service_within_the_resync_period() {
    let world = World::start().await;
    world.add_nodes().await;
    put_secret(&world, &KeyPair::generate("web.example")).await;
    let _ccm = world.spawn(
        "tls-rotation",
        &["--leader-elect=false", "--tls-secret-resync-period=500ms"],
    );
    let web = world
        .create_annotated_service("web", &[443], json!({TLS_SECRET: "443=web-tls"}))
        .await;
    wait_until("the Service's address", WAIT, || world.external_ip("web")).await;
    let (first, _) = wait_until("a certificate on the virtual service", WAIT, || async {
        match certificates_of(&world.vcd, &web.uid).as_slice() {
            [id] => Ok(id.clone()),
            other => Err(format!("certificates {other:?}")),
        }
    })
    .await;

    put_secret(&world, &KeyPair::generate("web.example")).await;
    let (second, took) = wait_until("the renewed certificate", WAIT, || async {
        match certificates_of(&world.vcd, &web.uid).as_slice() {
            [id] if *id != first => Ok(id.clone()),
            other => Err(format!("certificates {other:?}")),
        }
    })
    .await;
    println!("the renewed certificate reached the virtual service after {took:?}");
    wait_until("the first upload deleted", WAIT, || async {
        let ids: Vec<String> = world.vcd.with_world(|w| {
            w.certificates
                .iter()
                .filter_map(|c| c.item.id.clone())
                .collect()
        });
        match (ids.contains(&first), ids.contains(&second)) {
            (false, true) => Ok(()),
            state => Err(format!("first/second in the library: {state:?}")),
        }
    })
    .await;
}
