//! A flood on the HTTPS port (random tokens on `/metrics`, random paths)
//! while Services are created: the reviews it causes go through the access
//! client and its own rate limit, not the controllers', so Services still
//! converge; unknown paths cost no review at all.
//!
//! The time for Services to get their IPs during the flood is held to the
//! time without it in the same run (a ratio, so a slow machine slows both);
//! `cargo test -p vcd-ccm --test it serve_flood -- --nocapture` prints both.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::manifests::cluster::{ManagedCluster, eventually};
use crate::support::nodes::kubelet_node;
use crate::support::vcd::metric_sum_in;

const FLOODERS: usize = 4;
/// Per flooder: requests with a fresh random token on `/metrics`, and as
/// many on random paths.
const FLOOD_TOKENS: usize = 40;
const SERVICES: usize = 3;
/// How much longer than without a flood Services may take during one: the
/// flood competes for the CPU and the API server, not for the controllers'
/// rate limit, which it would otherwise exhaust many times over.
const FLOOD_SLOWDOWN: u32 = 5;

fn random_token() -> String {
    format!("flood-{:032x}", rand_u128())
}

fn rand_u128() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    (u128::from(hasher.finish()) << 64) | u128::from(hasher.finish().rotate_left(17))
}

/// Creates `SERVICES` Services named `<prefix><n>` and waits for all their IPs.
async fn converge(cluster: &ManagedCluster, prefix: &str) -> Duration {
    let started = Instant::now();
    for n in 0..SERVICES {
        cluster
            .create_service("shop", &format!("{prefix}{n}"), &[80 + n as i32])
            .await;
    }
    for n in 0..SERVICES {
        let name = format!("{prefix}{n}");
        eventually(&format!("{name} has an IP"), || {
            cluster.external_ip("shop", &name)
        })
        .await;
    }
    started.elapsed()
}

fn tokenreviews(cluster: &ManagedCluster) -> usize {
    let requests = cluster.proxy.requests();
    requests
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/tokenreviews"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_random_tokens_and_paths_does_not_delay_services() {
    let shop = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    let nodes = [
        kubelet_node("control-plane-0", true, true),
        kubelet_node("worker-0", true, true),
    ];
    let cluster = ManagedCluster::start([vec![shop], nodes.to_vec()].concat()).await;
    eventually("this manager leads", || {
        (cluster.lease_holder()? == cluster.identity).then_some(())
    })
    .await;
    // Warm up: the load-balancer side set up, Nodes initialised.
    converge(&cluster, "warm").await;

    let quiet = converge(&cluster, "quiet").await;

    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let url = cluster.serving_url();
    let before = tokenreviews(&cluster);
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|_| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                for _ in 0..FLOOD_TOKENS {
                    let path = format!("/{}", rand_u128());
                    for path in ["/metrics", path.as_str()] {
                        let response = http
                            .get(format!("{url}{path}"))
                            .bearer_auth(random_token())
                            .send()
                            .await
                            .expect("an answer");
                        statuses.push((path == "/metrics", response.status().as_u16()));
                    }
                }
                statuses
            })
        })
        .collect();
    let flooded = converge(&cluster, "flooded").await;
    let flood_started = Instant::now();
    for flooder in flooders {
        for (known, status) in flooder.await.unwrap() {
            assert_eq!(status, if known { 401 } else { 404 });
        }
    }
    println!(
        "Services to IPs: {quiet:?} without a flood, {flooded:?} during a flood of {} random tokens and {} random paths (the flood ended {:?} after they converged)",
        FLOODERS * FLOOD_TOKENS,
        FLOODERS * FLOOD_TOKENS,
        flood_started.elapsed()
    );

    assert!(
        flooded < quiet * FLOOD_SLOWDOWN,
        "the flood delayed Services: {flooded:?} against {quiet:?} without it"
    );

    // One review per random token on /metrics; none for the random paths.
    let reviews = tokenreviews(&cluster) - before;
    assert_eq!(reviews, FLOODERS * FLOOD_TOKENS);

    cluster
        .kube
        .add_token("admin-token", "admin", &["system:masters"]);
    let metrics = http
        .get(format!("{url}/metrics"))
        .bearer_auth("admin-token")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let refused = metric_sum_in(
        &metrics,
        "vcd_ccm_access_reviews_total",
        &[r#"kind="token_review""#, r#"outcome="unauthenticated""#],
    );
    assert!(
        refused >= reviews as f64,
        "{refused} < {reviews}:\n{metrics}"
    );
    let waited = metric_sum_in(
        &metrics,
        "vcd_ccm_access_rate_limiter_duration_seconds_sum",
        &[],
    );
    assert!(
        waited > 0.0,
        "the flood waited in the access bucket:\n{metrics}"
    );
    // The controllers' throttled clients counted fewer POSTs than the flood
    // made reviews: the reviews did not go through their limiter.
    let controller_posts = metric_sum_in(
        &metrics,
        "rest_client_rate_limiter_duration_seconds_count",
        &[r#"verb="POST""#],
    );
    assert!(
        controller_posts < reviews as f64,
        "{controller_posts} POSTs through the controllers' limiter"
    );
}
