//! Certificates from Kubernetes TLS Secrets, through the service controller
//! on kubesim and vcdsim: a Secret named by `vcd-ccm.io/tls-secret` is
//! uploaded once (tagged, alias from the Secret and its digest) and served;
//! a rotated Secret is uploaded again, every virtual service switches, and
//! the old upload goes; unused uploads are deleted and swept, foreign ones
//! kept; a missing, mistyped or unparsable Secret is an Event naming it and
//! writes nothing.

use std::time::Duration;

use serde_json::json;

use crate::support::cluster::{
    Cluster, ServiceControllerConfig, fast_config, lb_service, wait_for,
};
use crate::support::objects::ServiceEdits;
use crate::support::poll::holds_across;
use crate::support::tls::{KeyPair, TLS_SECRET, https_service};
use crate::support::{CLUSTER, lb};

/// Checks Secrets often, so rotations show within a test's patience.
fn rotating() -> ServiceControllerConfig {
    ServiceControllerConfig {
        tls_secret_period: Some(Duration::from_millis(300)),
        ..fast_config()
    }
}

async fn started() -> Cluster {
    let cluster = Cluster::start_with(rotating(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_is_uploaded_once_served_rotated_everywhere_and_its_old_upload_deleted() {
    let cluster = started().await;
    let first = KeyPair::generate("web.example");
    cluster.put_tls_secret("default", "web-tls", &first).await;
    let web = cluster
        .create_service("default", https_service("web", 30443, "web-tls"))
        .await;
    let api = cluster
        .create_service("default", https_service("api", 30444, " web-tls "))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster.wait_for_ip("default", "api").await;

    // One upload for both Services, tagged with this cluster and the Secret.
    let uploads = cluster.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    let (id, alias, description) = &uploads[0];
    assert!(
        alias.ends_with(&format!("-default-web-tls-{}", first.digest12())),
        "{alias}"
    );
    assert_eq!(alias.len(), 8 + "-default-web-tls-".len() + 12);
    let identity = cluster.kube_identity().await;
    assert!(
        description.starts_with(&format!(
            "vcd-ccm cluster={CLUSTER} kube={identity} secret=default/web-tls sha256="
        )),
        "{description}"
    );
    assert_eq!(cluster.certificates_of(&web), std::slice::from_ref(id));
    assert_eq!(cluster.certificates_of(&api), std::slice::from_ref(id));
    // The reference names the upload by its own alias.
    let names: Vec<String> = cluster.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .filter_map(|v| v.certificate_ref.as_ref().map(|r| r.name.clone()))
            .collect()
    });
    assert_eq!(names, vec![alias.clone(); 2]);

    // A periodic check of an unchanged Secret writes nothing.
    // Two checks queue both Services twice.
    let writes = cluster.vcd_writes();
    holds_across(
        "no VCD write without a change",
        4,
        || cluster.syncs(),
        || cluster.vcd_writes() == writes,
    )
    .await;

    // cert-manager renews the Secret: a new upload, both virtual services
    // switch to it, then the old upload is deleted.
    let second = KeyPair::generate("web.example");
    cluster.put_tls_secret("default", "web-tls", &second).await;
    let new_id = wait_for(
        "the rotated certificate served and the old upload gone",
        || async {
            let uploads = cluster.uploads();
            let [(new_id, alias, _)] = uploads.as_slice() else {
                return None;
            };
            let switched = alias.ends_with(&second.digest12())
                && cluster.certificates_of(&web) == [new_id.clone()]
                && cluster.certificates_of(&api) == [new_id.clone()];
            switched.then(|| new_id.clone())
        },
    )
    .await;
    assert_ne!(&new_id, id);
    let updated = cluster
        .wait_for_event("default", "web", "CertificateUpdated")
        .await;
    assert!(updated.contains("updated virtual service"), "{updated}");

    // A Service that stops naming the Secret keeps the upload for the other;
    // when no Service uses it any more, it is deleted.
    cluster
        .patch_service(
            "default",
            "api",
            json!({"metadata": {"annotations": {TLS_SECRET: null, lb::CERT_ALIAS: "my-cert"}}}),
        )
        .await;
    wait_for("api on the library certificate", || async {
        let library = cluster.library();
        let mine = library.iter().find(|(_, alias, _)| alias == "my-cert")?;
        (cluster.certificates_of(&api) == [mine.0.clone()]).then_some(())
    })
    .await;
    assert_eq!(cluster.uploads().len(), 1, "web still uses the upload");
    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    wait_for("the unused upload deleted", || async {
        cluster.uploads().is_empty().then_some(())
    })
    .await;
    assert_eq!(cluster.library().len(), 2, "the library's own items stay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_mistyped_or_unparsable_secret_is_an_event_naming_it_and_writes_nothing() {
    let cluster = started().await;
    let writes = cluster.vcd_writes();
    let uid = cluster
        .create_service("default", https_service("web", 30443, "443=web-tls"))
        .await;
    let failed = |fragment: &'static str| {
        let cluster = &cluster;
        async move {
            wait_for(fragment, || async {
                cluster
                    .events("default", "web")
                    .await
                    .into_iter()
                    .find(|(r, m)| r == "SyncLoadBalancerFailed" && m.contains(fragment))
                    .map(|(_, m)| m)
            })
            .await
        }
    };
    let missing =
        failed("Secret default/web-tls named by vcd-ccm.io/tls-secret does not exist").await;
    assert!(missing.contains("nothing was changed in VCD"), "{missing}");

    let name = |secret: &str| json!({"metadata": {"annotations": {TLS_SECRET: secret}}});
    cluster
        .put_secret(
            "default",
            "opaque",
            "Opaque",
            &[("tls.crt", "x"), ("tls.key", "y")],
        )
        .await;
    cluster
        .patch_service("default", "web", name("443=opaque"))
        .await;
    failed("Secret default/opaque named by vcd-ccm.io/tls-secret is of type \"Opaque\", not kubernetes.io/tls").await;
    cluster
        .patch_service("default", "web", name("443=web-tls"))
        .await;

    let pair = KeyPair::generate("web.example");
    let garbage = [
        ("tls.crt", "not a certificate"),
        ("tls.key", pair.key.as_str()),
    ];
    cluster
        .put_secret("default", "web-tls", "kubernetes.io/tls", &garbage)
        .await;
    failed(
        "Secret default/web-tls named by vcd-ccm.io/tls-secret: tls.crt holds no PEM certificate",
    )
    .await;

    let other = KeyPair::generate("other.example");
    let mismatched = [
        ("tls.crt", pair.cert.as_str()),
        ("tls.key", other.key.as_str()),
    ];
    cluster
        .put_secret("default", "web-tls", "kubernetes.io/tls", &mismatched)
        .await;
    failed("tls.key does not belong to the first certificate of tls.crt").await;
    assert_eq!(cluster.vcd_writes(), writes, "nothing written in VCD");
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());

    // Fixed: served from the Secret.
    cluster.put_tls_secret("default", "web-tls", &pair).await;
    cluster.wait_for_ip("default", "web").await;
    assert_eq!(cluster.uploads().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_deletes_this_clusters_unused_uploads_and_keeps_everyone_elses() {
    let mut cluster = started().await;
    let pair = KeyPair::generate("web.example");
    cluster.put_tls_secret("default", "web-tls", &pair).await;
    let uid = cluster
        .create_service("default", https_service("web", 30443, "web-tls"))
        .await;
    cluster.wait_for_ip("default", "web").await;
    let used = cluster.uploads();
    assert_eq!(used.len(), 1);

    // While the CCM is down: an upload of ours nothing uses (a crash between
    // upload and switch), another cluster's, and a human's item.
    cluster.controller_stop();
    let identity = cluster.kube_identity().await;
    let items = [
        (
            "ours-left-over",
            format!("vcd-ccm cluster={CLUSTER} kube={identity} secret=default/old-tls sha256=ab"),
        ),
        (
            "other-cluster",
            format!(
                "vcd-ccm cluster={CLUSTER} kube=another-cluster secret=default/web-tls sha256=ab"
            ),
        ),
        ("by-hand", "wildcard certificate of the shop".to_string()),
    ];
    cluster.vcd.with_world(|w| {
        let org_id = w.certificates[0].org_id.clone();
        for (alias, description) in &items {
            let mut item = w.certificates[0].clone();
            item.org_id = org_id.clone();
            item.item.id = Some(format!("urn:vcloud:certificateLibraryItem:{alias}"));
            item.item.alias = alias.to_string();
            item.item.description = Some(description.clone());
            w.certificates.push(item);
        }
    });
    cluster.start_controller(rotating()).await;
    wait_for("the left-over upload swept", || async {
        let library = cluster.library();
        (!library
            .iter()
            .any(|(_, alias, _)| alias == "ours-left-over"))
        .then_some(())
    })
    .await;
    let aliases: Vec<String> = cluster.library().into_iter().map(|(_, a, _)| a).collect();
    for kept in ["other-cluster", "by-hand", used[0].1.as_str()] {
        assert!(aliases.iter().any(|a| a == kept), "{kept}: {aliases:?}");
    }
    assert_eq!(cluster.certificates_of(&uid), [used[0].0.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_refused_after_its_decision_uploads_nothing() {
    let cluster = started().await;
    cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    let taken = cluster.wait_for_ip("default", "web").await;
    // The policy decides on web's address; the host refuses it.
    let pair = KeyPair::generate("late.example");
    cluster.put_tls_secret("default", "late-tls", &pair).await;
    let mut late = https_service("late", 30443, "late-tls");
    late["spec"]["loadBalancerIP"] = json!(taken);
    // web's last writes may land after its address: its sync ends with an
    // Event, and a node update (the node cache can lag the first sync) puts
    // worker-0 in its pool.
    let web = cluster.service("default", "web").await.unwrap();
    let web_uid = web.metadata.uid.unwrap();
    cluster
        .wait_for_event("default", "web", "EnsuredLoadBalancer")
        .await;
    wait_for("worker-0 in web's pool", || async {
        (cluster.pool_members(&web_uid) == [["10.0.0.11"]]).then_some(())
    })
    .await;
    let writes = cluster.vcd_writes();
    let uid = cluster.create_service("default", late).await;
    let refused = cluster
        .wait_for_event("default", "late", "SyncLoadBalancerFailed")
        .await;
    assert!(refused.contains("is already used"), "{refused}");
    assert!(cluster.uploads().is_empty());
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
    assert_eq!(cluster.vcd_writes(), writes);
}
