//! The call-count benchmark: vcdsim's per-endpoint counters for resolving
//! the cluster's placement at start, and for operations with a warm token.
//! Run with `--nocapture` to see the figures.

use crate::support::vcd::*;

fn print_counters(title: &str, sim: &vcdsim::Sim) {
    println!("{title}:");
    for (endpoint, count) in sim.counters() {
        println!("  {count:>3}  {endpoint}");
    }
}

#[tokio::test]
async fn start_up_and_warm_operations_cost_few_calls() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    placement(&client).await;
    let start = total_calls(&sim);
    print_counters(
        "start: versions + login + org + VDC + network + gateway",
        &sim,
    );
    println!("  total {start} calls (target <= 6)");
    assert!(start <= 6, "start-up took {start} calls");

    let gateway = placement(&client).await.gateway.id;
    sim.reset_log();
    let operations = 10;
    for _ in 0..operations {
        client.gateways().get(&gateway).await.unwrap();
        client
            .virtual_services()
            .find(&gateway, "ingress-vs-web")
            .await
            .unwrap();
        client
            .pools()
            .find(&gateway, "ingress-pool-web")
            .await
            .unwrap();
    }
    print_counters(
        "10 warm operations (gateway + VS lookup + pool lookup)",
        &sim,
    );
    let logins = login_calls(&sim);
    println!(
        "  auth calls per operation with a warm token: {}",
        logins as f64 / operations as f64
    );
    assert_eq!(logins, 0);
    assert_eq!(total_calls(&sim), 3 * operations, "one call per lookup");
}
