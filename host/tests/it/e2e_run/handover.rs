//! A rolling replacement of both replicas while Services are created and
//! deleted, as `kubectl rollout restart` does it: on SIGTERM a replica
//! starts no new sync, lets the running ones finish, releases the Lease and
//! exits 0, and a standby leads at once instead of after the Lease expires.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, ListParams};

use super::{START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::{
    POOLS, VIRTUAL_SERVICES, clashes, lb_writes, posts, tasks_in_flight,
};
use crate::support::run::process::CcmProcess;

/// One Service created this often while the replicas are replaced.
const CREATE_EVERY: Duration = Duration::from_millis(400);
/// Live Services at most: the scenario's service engine group holds ten
/// virtual services, and a deleted Service frees its own only once synced.
const LIVE: usize = 6;
/// Within the default 20 s grace period, with room.
const EXIT: Duration = Duration::from_secs(25);
/// The default lease duration. A Lease left to expire stops syncs at least
/// this long; a released one is taken at the standby's next attempt (2 s
/// apart), so both bounds below hold with room on a loaded machine.
const LEASE_DURATION: Duration = Duration::from_secs(15);
/// The longest stretch without a sync while a Service waits.
const GAP_LIMIT: Duration = LEASE_DURATION;
/// From the leader's exit to the next leader in the Lease.
const TAKEOVER_LIMIT: Duration = LEASE_DURATION;

/// When each Service was created and when its address first showed.
#[derive(Default)]
struct Timeline {
    created: Mutex<HashMap<String, Instant>>,
    addressed: Mutex<HashMap<String, Instant>>,
}

impl Timeline {
    fn has_address(&self, name: &str) -> bool {
        self.addressed.lock().unwrap().contains_key(name)
    }

    fn addressed(&self) -> usize {
        self.addressed.lock().unwrap().len()
    }

    /// Waits until `more` Services got their address after this call.
    async fn more_addressed(&self, more: usize) {
        let from = self.addressed();
        wait_until("more Services to get their address", START, || async {
            match self.addressed() - from {
                n if n >= more => Ok(()),
                n => Err(format!("{n} of {more}")),
            }
        })
        .await;
    }

    /// The longest wait for an address, and the longest stretch with a
    /// Service waiting in which no Service got one.
    fn gaps(&self) -> (Duration, Duration) {
        let created = self.created.lock().unwrap();
        let addressed = self.addressed.lock().unwrap();
        let longest_wait = addressed
            .iter()
            .map(|(name, at)| at.duration_since(created[name]))
            .max()
            .unwrap_or_default();
        let mut syncs: Vec<Instant> = addressed.values().copied().collect();
        syncs.sort();
        let longest_gap = syncs
            .windows(2)
            .map(|pair| {
                // Only while something waited: a quiet queue is no gap.
                let waiting_since = created
                    .iter()
                    .filter(|(name, at)| **at < pair[1] && addressed[*name] >= pair[1])
                    .map(|(_, at)| *at)
                    .min();
                match waiting_since {
                    Some(since) => pair[1].duration_since(since.max(pair[0])),
                    None => Duration::ZERO,
                }
            })
            .max()
            .unwrap_or_default();
        (longest_wait, longest_gap)
    }
}

/// Creates a one-port Service every [`CREATE_EVERY`] and deletes the
/// oldest once [`LIVE`] exist and it has its address, until `stop`.
async fn churn(world: &World, timeline: &Timeline, stop: &AtomicBool) -> usize {
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    let mut live = std::collections::VecDeque::new();
    let mut created = 0;
    while !stop.load(Ordering::Relaxed) {
        let name = format!("churn-{created}");
        world.create_service(&name, &[80]).await;
        timeline
            .created
            .lock()
            .unwrap()
            .insert(name.clone(), Instant::now());
        live.push_back(name);
        created += 1;
        if live.len() > LIVE && timeline.has_address(&live[0]) {
            let oldest = live.pop_front().expect("a live Service");
            services
                .delete(&oldest, &DeleteParams::default())
                .await
                .expect("the Service is deleted");
        }
        tokio::time::sleep(CREATE_EVERY).await;
    }
    created
}

/// Notes when each Service's address first shows, until `stop`.
async fn observe(world: &World, timeline: &Timeline, stop: &AtomicBool) {
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    while !stop.load(Ordering::Relaxed) {
        if let Ok(list) = services.list(&ListParams::default()).await {
            let now = Instant::now();
            let mut addressed = timeline.addressed.lock().unwrap();
            for service in list {
                let has_ip = service
                    .status
                    .and_then(|s| s.load_balancer?.ingress)
                    .is_some_and(|ingress| !ingress.is_empty());
                if has_ip && let Some(name) = service.metadata.name {
                    addressed.entry(name).or_insert(now);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn ready(replica: &CcmProcess) {
    wait_until(&format!("{} to be ready", replica.name), START, || async {
        replica.ready().await
    })
    .await;
}

/// SIGTERMs `replica`, checks it exits 0 within the grace period, and
/// returns how long the Lease had no live holder after its exit when it
/// led (`None` when it was a standby).
async fn replace(world: &World, replica: &mut CcmProcess) -> Option<Duration> {
    let holder = world.lease_holder().await.expect("a Lease holder");
    let led = leading(replica).await.is_ok();
    replica.terminate();
    let (status, took) = replica.exit_within(EXIT).await;
    assert!(
        status.success(),
        "{} exited with {status} on SIGTERM:\n{}",
        replica.name,
        replica.stderr()
    );
    println!(
        "{} ({}) stopped {:.2} s after SIGTERM",
        replica.name,
        if led { "leader" } else { "standby" },
        took.as_secs_f64()
    );
    if !led {
        return None;
    }
    assert!(
        replica.stderr().contains("released the leader lease"),
        "{} led but did not release the Lease:\n{}",
        replica.name,
        replica.stderr()
    );
    let (_, takeover) = wait_until("another replica to lead", TAKEOVER_LIMIT, || async {
        match world.lease_holder().await {
            Ok(new) if new != holder => Ok(new),
            Ok(_) => Err(format!("{holder} still holds the Lease")),
            Err(error) => Err(error),
        }
    })
    .await;
    println!(
        "the next leader took the Lease {:.2} s after {} exited",
        takeover.as_secs_f64(),
        replica.name
    );
    Some(takeover)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_replacement_of_both_replicas_keeps_services_syncing() {
    let world = World::start().await;
    world.add_nodes().await;
    let mut old = [world.spawn("old-a", &[]), world.spawn("old-b", &[])];
    let (leader, _) = wait_until("one of two replicas to lead", START, || async {
        for (index, replica) in old.iter().enumerate() {
            replica.ready().await?;
            if leading(replica).await.is_ok() {
                return Ok(index);
            }
        }
        Err("no replica leads yet".to_string())
    })
    .await;
    // The leader goes first, then the replica that took over from it.
    old.swap(0, leader);

    let timeline = Timeline::default();
    let (stop_churn, stop_observing) = (AtomicBool::new(false), AtomicBool::new(false));
    let mut new = Vec::new();
    let rollout = async {
        // Syncing before, during and after the replacement.
        timeline.more_addressed(2).await;
        let mut takeovers = Vec::new();
        for (step, replica) in old.iter_mut().enumerate() {
            let replacement = world.spawn(&format!("new-{step}"), &[]);
            ready(&replacement).await;
            new.push(replacement);
            takeovers.extend(replace(&world, replica).await);
        }
        timeline.more_addressed(2).await;
        stop_churn.store(true, Ordering::Relaxed);
        takeovers
    };
    let settle = async {
        let created = churn(&world, &timeline, &stop_churn).await;
        wait_until("every Service to have its address", START, || async {
            let waiting = (0..created)
                .map(|i| format!("churn-{i}"))
                .filter(|name| !timeline.has_address(name))
                .count();
            match waiting {
                0 => Ok(()),
                n => Err(format!("{n} Services wait for an address")),
            }
        })
        .await;
        stop_observing.store(true, Ordering::Relaxed);
        created
    };
    let (takeovers, created, ()) =
        tokio::join!(rollout, settle, observe(&world, &timeline, &stop_observing));

    assert!(!takeovers.is_empty(), "no leader was replaced");
    let (longest_wait, longest_gap) = timeline.gaps();
    println!(
        "rolling replacement of 2 replicas, {created} Services created: longest gap between syncs {:.2} s, longest wait for an address {:.2} s",
        longest_gap.as_secs_f64(),
        longest_wait.as_secs_f64()
    );
    assert!(
        longest_gap < GAP_LIMIT,
        "syncs stopped for {longest_gap:?} during the replacement"
    );
    // Nothing was cut half-way and done again by the next leader.
    assert_eq!(posts(&world.vcd, POOLS), created, "pool creates");
    assert_eq!(
        posts(&world.vcd, VIRTUAL_SERVICES),
        created,
        "virtual service creates"
    );
    assert_eq!(clashes(&world.vcd), Vec::<String>::new());
}

/// Each VCD task takes this long, so a sync is mid-way when SIGTERM lands.
const SLOW_TASK_MS: u64 = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_running_at_sigterm_finishes_before_the_lease_is_released() {
    let world = World::start().await;
    world.vcd.set_knobs(|k| k.task_duration_ms = SLOW_TASK_MS);
    world.add_nodes().await;
    let mut replica = world.spawn("only", &[]);
    wait_until("the replica to lead", START, || leading(&replica)).await;
    world.create_service("in-flight", &[80, 443]).await;
    wait_until("the first gateway write", START, || async {
        match lb_writes(&world.vcd) {
            0 => Err("no write yet".to_string()),
            _ => Ok(()),
        }
    })
    .await;

    replica.terminate();
    let (status, took) = replica.exit_within(EXIT).await;
    let log = replica.stderr();
    assert!(status.success(), "exited with {status}:\n{log}");
    println!(
        "SIGTERM during a sync of 4 VCD writes of {SLOW_TASK_MS} ms each: exited {:.1} s later",
        took.as_secs_f64()
    );
    // The sync ran to its end: every object, and the address in the status.
    assert_eq!(
        tasks_in_flight(&world.vcd),
        0,
        "a VCD task was left running"
    );
    assert_eq!(posts(&world.vcd, POOLS), 2, "pool creates");
    assert_eq!(
        posts(&world.vcd, VIRTUAL_SERVICES),
        2,
        "virtual service creates"
    );
    assert!(
        world.external_ip("in-flight").await.is_ok(),
        "no address:\n{log}"
    );
    assert!(log.contains("the running syncs finished"), "{log}");
    assert_eq!(
        world.lease_holder().await,
        Err("the Lease has no holder yet".to_string()),
        "the Lease was not released"
    );
}
