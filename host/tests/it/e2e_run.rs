//! The real `vcd-ccm run` binary against vcdsim and kubesim: a bad
//! configuration stops it at once with one line; two replicas elect one
//! leader, which alone writes to VCD and hands over when killed; a leader
//! whose Lease is taken exits with status 1; and a process killed while VCD
//! tasks are in flight converges when started again.
//!
//! `cargo test -p vcd-ccm --test it e2e_run -- --nocapture` prints the
//! measured handover and convergence times.

mod dc_group;
mod default_rules;
mod default_settings;
mod degraded;
mod distributed_only;
mod flags;
mod handover;
mod health;
mod hostile_policies;
pub(crate) mod internal;
mod ip_mode;
mod logs;
mod monitors;
mod node_groups;
mod node_sets;
mod plan;
mod retained;
mod service_accounts;
mod stuck_leader;
mod task_supervision;
mod tls_rotation;
mod vcd_loss;
mod versions;

use std::time::Duration;

use crate::support::objects::ServiceEdits;
use crate::support::poll::wait_until;
use crate::support::run::gateway::{
    POOLS, VIRTUAL_SERVICES, check_converged, clashes, cluster_objects, lb_writes, posts,
    tasks_in_flight,
};
use crate::support::run::process::{CcmProcess, Logging};
use crate::support::run::{LiveService, RunFiles, World};

/// Fast leader election, so a takeover after a kill takes seconds where
/// the default timing is not what a test is about.
const FAST_ELECTION: [&str; 3] = [
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=500ms",
];

/// From spawning a process to its being ready, or leading.
const START: Duration = Duration::from_secs(30);
/// A bad configuration is found before anything is contacted.
const QUICK_EXIT: Duration = Duration::from_secs(5);
/// With the default 15 s lease, the survivor takes the Lease once it has
/// seen it unchanged for 15 s, checking every 2 s × [1, 1.1): at most
/// 15 + 2 × 2.2 s after the leader's death.
const HANDOVER_EARLIEST: Duration = Duration::from_secs(12);
const HANDOVER_LATEST: Duration = Duration::from_secs(20);
/// Reconciling a few Services, retries with the 5 s backoff included.
const CONVERGE: Duration = Duration::from_secs(90);

// --- A bad configuration: one line naming the file, key or flag. ---

/// Runs `vcd-ccm run` as an operator would (default logging) and returns
/// its one stderr line, after checking it failed quickly without a panic.
async fn refused_start(world: &World, files: &RunFiles, extra: &[&str]) -> String {
    let mut args = files.args();
    args.extend(extra.iter().map(Into::into));
    let mut ccm = CcmProcess::spawn("refused", world.dir.path(), args, None, Logging::Default);
    let (status, _) = ccm.exit_within(QUICK_EXIT).await;
    let stderr = ccm.stderr();
    assert!(!status.success(), "{status}; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "a panic:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "wanted one line on stderr, got:\n{stderr}");
    lines[0].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_cloud_config_key_is_named_with_file_and_line() {
    let world = World::start().await;
    let good = std::fs::read_to_string(&world.files.cloud_config).unwrap();
    let mut files = world.files.clone();
    files.cloud_config = world.dir.path().join("unknown-key.yaml");
    let bad = good.replace("  vdc: vdc1\n", "  vdc: vdc1\n  vdcc: vdc2\n");
    std::fs::write(&files.cloud_config, bad).unwrap();
    let line = refused_start(&world, &files, &[]).await;
    let wanted = format!(
        "vcd-ccm: cloud config {}, line 5: vcd.vdcc: unknown key",
        files.cloud_config.display()
    );
    assert!(line.starts_with(&wanted), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cloud_config_is_named() {
    let world = World::start().await;
    let mut files = world.files.clone();
    files.cloud_config = world.dir.path().join("absent.yaml");
    let line = refused_start(&world, &files, &[]).await;
    let wanted = format!(
        "vcd-ccm: cloud config {}: cannot read: ",
        files.cloud_config.display()
    );
    assert!(line.starts_with(&wanted), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misspelt_or_impossible_flags_are_named() {
    let world = World::start().await;
    let line = refused_start(&world, &world.files, &["--controllers=servce"]).await;
    assert!(
        line.starts_with(
            "vcd-ccm: --controllers: \"servce\" is not in the list of known controllers"
        ),
        "{line}"
    );
    let line = refused_start(&world, &world.files, &["--load-balancer-class=gold"]).await;
    assert!(
        line.contains(
            "\"gold\" has no domain prefix; write a domain-prefixed name such as vcd-ccm.io/gold"
        ),
        "{line}"
    );
    let line = refused_start(&world, &world.files, &["--serve-classless=false"]).await;
    assert!(
        line.starts_with(
            "vcd-ccm: --serve-classless=false with no --load-balancer-class serves no Service"
        ),
        "{line}"
    );
    let line = refused_start(&world, &world.files, &["--kube-api-qps=0"]).await;
    assert!(
        line.starts_with("vcd-ccm: --kube-api-qps: 0 is not a rate"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_api_rate_holds_requests_back() {
    let world = World::start().await;
    let replica = world.spawn(
        "slow",
        &[
            "--kube-api-qps=2",
            "--kube-api-burst=1",
            "--leader-elect=false",
        ],
    );
    wait_until("the replica to be ready", START, || async {
        replica.ready().await
    })
    .await;
    // The caches' first lists alone are more than one request at 2/s.
    let (_, metrics) = replica.get("/metrics").await.expect("the metrics");
    let waited: f64 = metrics
        .lines()
        .filter(|line| line.starts_with("rest_client_rate_limiter_duration_seconds_sum{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(
        waited >= 0.5,
        "requests waited {waited} s in all:\n{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_that_cannot_be_used_is_named() {
    let world = World::start().await;
    let not_a_kubeconfig = world.dir.path().join("not-a-kubeconfig");
    std::fs::write(&not_a_kubeconfig, "colour: blue\n").unwrap();
    let unreadable = [
        world.dir.path().join("absent-kubeconfig"),
        world.dir.path().to_path_buf(), // a directory
        not_a_kubeconfig,
    ];
    for kubeconfig in unreadable {
        let mut files = world.files.clone();
        files.kubeconfig = kubeconfig;
        let line = refused_start(&world, &files, &[]).await;
        let wanted = format!("vcd-ccm: kubeconfig {}: ", files.kubeconfig.display());
        assert!(line.starts_with(&wanted), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparsable_kubeconfig_is_named_on_one_line() {
    let world = World::start().await;
    let mut files = world.files.clone();
    files.kubeconfig = world.dir.path().join("unparsable-kubeconfig");
    std::fs::write(&files.kubeconfig, "clusters: [\n").unwrap();
    let line = refused_start(&world, &files, &[]).await;
    let wanted = format!("vcd-ccm: kubeconfig {}: ", files.kubeconfig.display());
    assert!(line.starts_with(&wanted), "{line}");
}

// --- What the gateway holds once the Services are reconciled. ---

/// Waits until every Service has its external IP and the gateway holds
/// exactly their objects; returns the Services with their IPs.
async fn converged(
    world: &World,
    services: &[LiveService],
) -> (Vec<(LiveService, String)>, Duration) {
    wait_until(
        "the gateway to hold exactly the Services' objects",
        CONVERGE,
        || async {
            let mut with_ips = Vec::new();
            for service in services {
                with_ips.push((service.clone(), world.external_ip(&service.name).await?));
            }
            check_converged(&world.vcd, &with_ips)?;
            Ok(with_ips)
        },
    )
    .await
}

/// One create per port, of pools and of virtual services, no other write
/// to them, and no answer that only a second writer provokes.
fn assert_written_once(world: &World, ports: usize) {
    assert_eq!(posts(&world.vcd, POOLS), ports, "pool creates");
    assert_eq!(
        posts(&world.vcd, VIRTUAL_SERVICES),
        ports,
        "virtual service creates"
    );
    assert_eq!(
        lb_writes(&world.vcd),
        2 * ports,
        "pool and virtual service writes"
    );
    assert_eq!(clashes(&world.vcd), Vec::<String>::new());
}

// --- Leader election with the default timings (15 s / 10 s / 2 s). ---

/// `leader_election_master_status` is 1.
async fn leading(replica: &CcmProcess) -> Result<(), String> {
    let status = replica.master_status().await?;
    if status == 1.0 {
        Ok(())
    } else {
        Err(format!(
            "{} reports leader_election_master_status {status}",
            replica.name
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_elect_one_leader_which_hands_over_when_killed() {
    let world = World::start().await;
    // Nodes first: pools are created with their members, never updated.
    world.add_nodes().await;
    let mut replicas = [world.spawn("replica-a", &[]), world.spawn("replica-b", &[])];
    let ((leader, holder), _) =
        wait_until("one leader among two ready replicas", START, || async {
            let holder = world.lease_holder().await?;
            let mut leading = Vec::new();
            for (index, replica) in replicas.iter().enumerate() {
                replica.ready().await?;
                if replica.master_status().await? == 1.0 {
                    leading.push(index);
                }
            }
            match leading[..] {
                [index] => Ok((index, holder)),
                _ => Err(format!("replicas {leading:?} report leading")),
            }
        })
        .await;
    let follower = 1 - leader;
    assert!(
        replicas[leader].stderr().contains(&holder),
        "the Lease holder {holder} is not {}",
        replicas[leader].name
    );
    assert!(
        !replicas[follower]
            .stderr()
            .contains("acquired the leader lease")
    );

    let mut services = Vec::new();
    for name in ["alpha", "bravo"] {
        services.push(world.create_service(name, &[80, 443]).await);
    }
    converged(&world, &services).await;
    assert_written_once(&world, 4);
    assert_eq!(replicas[leader].master_status().await, Ok(1.0));
    assert_eq!(replicas[follower].master_status().await, Ok(0.0));

    replicas[leader].kill();
    let (new_holder, handover) = wait_until(
        "the survivor to take the Lease",
        HANDOVER_LATEST,
        || async {
            match world.lease_holder().await? {
                same if same == holder => Err(format!("the killed leader {holder} still holds it")),
                other => Ok(other),
            }
        },
    )
    .await;
    println!(
        "leader handover after SIGKILL: {:.1} s (lease 15 s, renew 10 s, retry 2 s)",
        handover.as_secs_f64()
    );
    assert!(
        handover >= HANDOVER_EARLIEST,
        "taken after {handover:?}, before the Lease expired"
    );
    let survivor = &replicas[follower];
    assert!(
        survivor.stderr().contains(&new_holder),
        "{new_holder} is not the survivor"
    );
    wait_until("the survivor to report leading", START, || async {
        leading(survivor).await
    })
    .await;

    services.push(world.create_service("charlie", &[8080, 8443]).await);
    let (_, took) = converged(&world, &services).await;
    println!(
        "a Service created after the handover converged in {:.1} s",
        took.as_secs_f64()
    );
    assert_written_once(&world, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_lease_is_taken_exits_with_status_1() {
    let world = World::start().await;
    let mut ccm = world.spawn("leader", &[]);
    wait_until("the only replica to lead", START, || async {
        world.lease_holder().await?;
        leading(&ccm).await
    })
    .await;
    let rival = "rival-host_00000000-0000-4000-8000-000000000000";
    world.take_lease(rival).await;
    // It notices at its next renewal, every 2 s.
    let (status, took) = ccm.exit_within(Duration::from_secs(12)).await;
    println!(
        "exited {:.1} s after its Lease was taken",
        took.as_secs_f64()
    );
    assert_eq!(status.code(), Some(1), "{status}");
    let stderr = ccm.stderr();
    assert!(stderr.contains("leaderelection lost"), "{stderr}");
    assert!(
        stderr.contains(rival),
        "the reason names the new holder:\n{stderr}"
    );
    assert_eq!(
        world.lease_holder().await.as_deref(),
        Ok(rival),
        "the Lease was written back"
    );
}

// --- SIGKILL while VCD tasks are in flight, then a fresh process. ---
// One kill point through the binary: the crash matrices (`lb_crash_matrix`
// and its siblings) stop a reconcile at every write in the process.

const SERVICES: [&str; 3] = ["alpha", "bravo", "charlie"];
const PORTS: [u16; 2] = [80, 443];
/// Long enough that a write is still in flight when the kill lands.
const TASK_MS: u64 = 400;

async fn restart_after_write(kill_after: usize) {
    let world = World::start().await;
    world.vcd.set_knobs(|k| k.task_duration_ms = TASK_MS);
    world.add_nodes().await;
    // Without leader election the fresh process need not wait for the
    // killed one's Lease to expire.
    let mut first = world.spawn("first", &["--leader-elect=false"]);
    wait_until("the first process to be ready", START, || first.ready()).await;
    let mut services = Vec::new();
    for name in SERVICES {
        services.push(world.create_service(name, &PORTS).await);
    }
    let what = format!("gateway write {kill_after}");
    wait_until(&what, CONVERGE, || async {
        match lb_writes(&world.vcd) {
            n if n >= kill_after => Ok(()),
            n => Err(format!("{n} writes so far")),
        }
    })
    .await;
    first.kill();
    let in_flight = tasks_in_flight(&world.vcd);
    let creates = posts(&world.vcd, POOLS) + posts(&world.vcd, VIRTUAL_SERVICES);
    let all = 2 * SERVICES.len() * PORTS.len();
    assert!(
        in_flight > 0,
        "killed after write {kill_after} with no VCD task in flight"
    );
    assert!(creates < all, "all {all} creates were made before the kill");

    // Runs until the test ends.
    let _second = world.spawn("second", &["--leader-elect=false"]);
    let (_, took) = converged(&world, &services).await;
    println!(
        "killed after gateway write {kill_after} ({in_flight} task in flight, {creates}/{all} creates): \
         converged {:.1} s after the restart",
        took.as_secs_f64()
    );

    for name in SERVICES {
        world.delete_service("default", name).await;
    }
    let (_, took) = wait_until(
        "the Services and their objects to be gone",
        CONVERGE,
        || async {
            for name in SERVICES {
                if world.service_exists(name).await {
                    return Err(format!("Service {name} still exists"));
                }
            }
            match cluster_objects(&world.vcd).first() {
                Some(left) => Err(format!(
                    "{} {} is still tagged for the cluster",
                    left.kind, left.name
                )),
                None => Ok(()),
            }
        },
    )
    .await;
    println!(
        "killed after gateway write {kill_after}: deleting the Services cleared the gateway in {:.1} s",
        took.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_after_the_third_gateway_write_converges_on_restart() {
    restart_after_write(3).await;
}
