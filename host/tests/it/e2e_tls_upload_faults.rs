//! A TLS Secret's upload to the certificate library hit by a crash before
//! it lands, or by an answer lost after it landed, then a restart: the
//! Service converges with exactly one upload (the landed one is found by
//! its alias and tag, not uploaded twice), and its virtual service serves it.

use vcdsim::{FaultAction, FaultRule};

use crate::support::cluster::{Cluster, fast_config, wait_for};
use crate::support::crash::crash_before;
use crate::support::faults::assert_fired;
use crate::support::tls::{KeyPair, https_service};

const LIBRARY: &str = "/cloudapi/1.0.0/ssl/certificateLibrary";

async fn upload_interrupted_then_restarted(action: FaultAction) {
    let mut cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let pair = KeyPair::generate("web.example");
    cluster.put_tls_secret("default", "web-tls", &pair).await;
    cluster
        .vcd
        .add_fault(FaultRule::new(Some("POST"), LIBRARY, action).times(1));
    let uid = cluster
        .create_service("default", https_service("web", 30443, "web-tls"))
        .await;
    wait_for("the upload was attempted", || async {
        let posted = cluster
            .vcd
            .requests()
            .iter()
            .any(|r| r.method == "POST" && r.template == LIBRARY);
        posted.then_some(())
    })
    .await;
    assert_fired(&cluster.vcd, "the certificate upload's fault");
    // The process stops there; another one takes over.
    cluster.start_controller(fast_config()).await;
    cluster.wait_for_ip("default", "web").await;
    let uploads = cluster.uploads();
    assert_eq!(uploads.len(), 1, "one upload: {uploads:?}");
    assert_eq!(cluster.certificates_of(&uid), vec![uploads[0].0.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_before_the_upload_lands_converges_after_a_restart() {
    upload_interrupted_then_restarted(crash_before()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_upload_answer_is_found_again_not_uploaded_twice() {
    upload_interrupted_then_restarted(FaultAction::LoseAnswer).await;
}
