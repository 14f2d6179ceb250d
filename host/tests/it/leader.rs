//! Leader election against kubesim, with short timings: one candidate leads,
//! another takes over only once the Lease has gone unrenewed for the lease
//! duration, and the leader learns when it has lost the Lease.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use kubesim::KubeSim;
use prometheus_client::registry::Registry;
use vcd_ccm::controllers::EventRecorder;
use vcd_ccm::controllers::leader::{
    LeaderConfig, LeaderConfigError, LeaderElector, Leadership, LeadershipLost,
};

const LEASE_DURATION: Duration = Duration::from_secs(2);
const RENEW_DEADLINE: Duration = Duration::from_millis(1500);
const RETRY_PERIOD: Duration = Duration::from_millis(200);
/// The longest wait between two acquire attempts (client-go's jitter 1.2).
const MAX_ACQUIRE_WAIT: Duration = Duration::from_millis(440);
/// How long a step that takes at most a second or two may take before the
/// test calls it stuck: ten times that, so a loaded machine cannot fail
/// it. What must not happen early (a live Lease taken, leadership given up
/// before the renew deadline) is asserted exactly, from the Lease's times.
const STUCK: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(25);

fn quick(identity: &str) -> LeaderConfig {
    LeaderConfig {
        identity: identity.into(),
        lease_duration: LEASE_DURATION,
        renew_deadline: RENEW_DEADLINE,
        retry_period: RETRY_PERIOD,
        ..LeaderConfig::default()
    }
}

fn candidate(sim: &KubeSim, identity: &str) -> (LeaderElector, Registry) {
    let client = sim.client().unwrap();
    let recorder = EventRecorder::new(client.clone(), "cloud-controller-manager", identity);
    let mut metrics = Registry::default();
    let elector = LeaderElector::new(client, quick(identity), recorder, &mut metrics).unwrap();
    (elector, metrics)
}

fn spec(sim: &KubeSim) -> LeaseSpec {
    let lease: Lease = sim
        .get_typed(Some("kube-system"), "cloud-controller-manager")
        .unwrap()
        .expect("the Lease exists");
    lease.spec.expect("the Lease has a spec")
}

fn holder(spec: &LeaseSpec) -> &str {
    spec.holder_identity.as_deref().unwrap_or_default()
}

fn master_status(metrics: &Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, metrics).unwrap();
    text.lines()
        .find(|line| line.starts_with("leader_election_master_status{"))
        .unwrap_or_default()
        .to_string()
}

async fn lead(elector: &LeaderElector) -> Leadership {
    tokio::time::timeout(LEASE_DURATION, elector.acquire())
        .await
        .expect("a free Lease is acquired at once")
}

#[tokio::test]
async fn the_second_candidate_takes_over_only_after_the_leader_stops_renewing() {
    let sim = KubeSim::start().await.unwrap();
    let (a, a_metrics) = candidate(&sim, "node-a_1");
    let leading_a = lead(&a).await;
    let created = spec(&sim);
    assert_eq!(holder(&created), "node-a_1");
    assert_eq!(created.lease_transitions, Some(0));
    assert_eq!(created.lease_duration_seconds, Some(2));
    assert!(created.acquire_time.is_some() && created.renew_time.is_some());
    assert!(leading_a.healthy());
    assert_eq!(
        master_status(&a_metrics),
        r#"leader_election_master_status{name="cloud-controller-manager"} 1"#
    );

    let (b, b_metrics) = candidate(&sim, "node-b_2");
    let b_waits = tokio::spawn(async move { (b.acquire().await, b_metrics) });

    // The leader renews every retry period while the second candidate waits.
    let mut renewals = vec![created.renew_time.clone()];
    let deadline = Instant::now() + STUCK;
    while renewals.len() < 4 {
        assert!(Instant::now() < deadline, "renewals seen: {renewals:?}");
        let now = spec(&sim);
        assert_eq!(holder(&now), "node-a_1");
        assert_eq!(
            now.acquire_time, created.acquire_time,
            "a renewal keeps acquireTime"
        );
        if renewals.last() != Some(&now.renew_time) {
            renewals.push(now.renew_time);
        }
        tokio::time::sleep(POLL).await;
    }
    assert!(
        !b_waits.is_finished(),
        "the second candidate took a live Lease"
    );

    drop(leading_a);
    let stopped = Instant::now();
    assert_eq!(
        master_status(&a_metrics),
        r#"leader_election_master_status{name="cloud-controller-manager"} 0"#
    );
    let mut last_renewal_by_a = None;
    let taken = loop {
        assert!(
            stopped.elapsed() < LEASE_DURATION + STUCK,
            "nobody took over the Lease"
        );
        let now = spec(&sim);
        if holder(&now) == "node-a_1" {
            last_renewal_by_a = now.renew_time;
        } else {
            break now;
        }
        tokio::time::sleep(POLL).await;
    };
    // b takes over at its first attempt a lease duration after it saw the
    // last renewal (at most one wait after a stopped): about 2.9 s here.
    println!(
        "taken over {:?} after the leader stopped (lease duration {LEASE_DURATION:?}, at most {MAX_ACQUIRE_WAIT:?} between attempts)",
        stopped.elapsed()
    );
    assert_eq!(holder(&taken), "node-b_2");
    assert_eq!(taken.lease_transitions, Some(1));
    let (Some(MicroTime(acquired)), Some(MicroTime(renewed_by_a))) =
        (taken.acquire_time.clone(), last_renewal_by_a)
    else {
        panic!("times missing: {taken:?}");
    };
    assert!(
        acquired.duration_since(renewed_by_a)
            >= jiff::SignedDuration::try_from(LEASE_DURATION).unwrap(),
        "taken at {acquired}, only {} after the last renewal at {renewed_by_a}",
        acquired.duration_since(renewed_by_a)
    );
    assert_eq!(taken.acquire_time, taken.renew_time);

    let (leading_b, b_metrics) = tokio::time::timeout(STUCK, b_waits)
        .await
        .expect("acquire returns once the Lease is written")
        .unwrap();
    assert!(leading_b.healthy());
    assert_eq!(
        master_status(&b_metrics),
        r#"leader_election_master_status{name="cloud-controller-manager"} 1"#
    );

    let events: Vec<Event> = sim.list_typed(Some("kube-system")).unwrap();
    for identity in ["node-a_1", "node-b_2"] {
        let message = format!("{identity} became leader");
        let event = events
            .iter()
            .find(|e| e.message.as_deref() == Some(message.as_str()))
            .unwrap_or_else(|| panic!("no Event {message:?} in {events:?}"));
        assert_eq!(event.reason.as_deref(), Some("LeaderElection"));
        assert_eq!(event.type_.as_deref(), Some("Normal"));
        assert_eq!(event.involved_object.kind.as_deref(), Some("Lease"));
        assert_eq!(
            event.involved_object.name.as_deref(),
            Some("cloud-controller-manager")
        );
        let component = event.source.as_ref().and_then(|s| s.component.as_deref());
        assert_eq!(component, Some("cloud-controller-manager"));
    }
}

#[tokio::test]
async fn an_expired_lease_is_taken_only_after_watching_it_unchanged_for_the_lease_duration() {
    let sim = KubeSim::start().await.unwrap();
    // Written an hour ago by the Lease's clock: only the local clock counts.
    let an_hour_ago = MicroTime(jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1));
    sim.seed_typed(&Lease {
        metadata: ObjectMeta {
            name: Some("cloud-controller-manager".into()),
            namespace: Some("kube-system".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("ghost".into()),
            lease_duration_seconds: Some(2),
            acquire_time: Some(an_hour_ago.clone()),
            renew_time: Some(an_hour_ago),
            lease_transitions: Some(4),
            ..LeaseSpec::default()
        }),
    })
    .unwrap();
    let (a, _metrics) = candidate(&sim, "node-a_1");
    let started = Instant::now();
    let _leading = tokio::time::timeout(LEASE_DURATION + STUCK, a.acquire())
        .await
        .expect("the Lease is taken once it has expired locally");
    let took = started.elapsed();
    assert!(took >= LEASE_DURATION, "took the Lease after only {took:?}");
    let taken = spec(&sim);
    assert_eq!(holder(&taken), "node-a_1");
    assert_eq!(taken.lease_transitions, Some(5));
}

#[tokio::test]
async fn the_leader_loses_leadership_when_another_holder_is_written_into_the_lease() {
    let sim = KubeSim::start().await.unwrap();
    let (a, a_metrics) = candidate(&sim, "node-a_1");
    let leading = lead(&a).await;
    let lost = leading.lost();

    let leases: Api<Lease> = Api::namespaced(sim.client().unwrap(), "kube-system");
    let written = Instant::now();
    loop {
        let mut lease = leases.get("cloud-controller-manager").await.unwrap();
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let now = MicroTime(jiff::Timestamp::now());
        spec.holder_identity = Some("intruder".into());
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now);
        match leases
            .replace("cloud-controller-manager", &PostParams::default(), &lease)
            .await
        {
            Ok(_) => break,
            // The leader renewed in between; read again.
            Err(kube::Error::Api(status)) if status.is_conflict() => continue,
            Err(other) => panic!("cannot write the Lease: {other}"),
        }
    }
    let reason = tokio::time::timeout(STUCK, lost)
        .await
        .expect("the leader notices the new holder at its next renewal");
    assert_eq!(
        reason,
        LeadershipLost::TakenOver {
            lease: "kube-system/cloud-controller-manager".into(),
            holder: "intruder".into(),
        },
        "after {:?}",
        written.elapsed()
    );
    assert_eq!(
        holder(&spec(&sim)),
        "intruder",
        "the old leader wrote over it"
    );
    assert_eq!(
        master_status(&a_metrics),
        r#"leader_election_master_status{name="cloud-controller-manager"} 0"#
    );
}

#[tokio::test]
async fn the_leader_loses_leadership_when_renewals_fail_past_the_renew_deadline() {
    let sim = KubeSim::start().await.unwrap();
    let (a, _metrics) = candidate(&sim, "node-a_1");
    let leading = lead(&a).await;
    sim.faults().fail_writes("leases", 100_000, 500);
    let failing = Instant::now();
    let reason = tokio::time::timeout(RENEW_DEADLINE + STUCK, leading.lost())
        .await
        .expect("leadership is given up once the renew deadline passes");
    let took = failing.elapsed();
    assert!(
        matches!(&reason, LeadershipLost::NotRenewed { deadline, last_error, .. }
            if *deadline == RENEW_DEADLINE && last_error.contains("injected 500")),
        "{reason:?}"
    );
    // A round that began just before the writes started failing still runs
    // for the whole renew deadline.
    assert!(
        took >= RENEW_DEADLINE - RETRY_PERIOD,
        "gave up after only {took:?}"
    );
    // Not yet stuck for the lease duration plus 20 s.
    assert!(leading.healthy());
    assert!(sim.faults().writes_failed() > 0, "no renewal was refused");
    sim.faults().clear();
}

#[test]
fn timings_that_client_go_refuses_are_refused() {
    let too_long_deadline = LeaderConfig {
        renew_deadline: LEASE_DURATION,
        ..quick("a")
    };
    assert!(matches!(
        too_long_deadline.validate(),
        Err(LeaderConfigError::RenewDeadlineNotShorter { .. })
    ));
    let too_long_retry = LeaderConfig {
        retry_period: Duration::from_millis(1300),
        ..quick("a")
    };
    assert!(matches!(
        too_long_retry.validate(),
        Err(LeaderConfigError::RetryPeriodTooLong { .. })
    ));
    assert_eq!(
        LeaderConfig {
            identity: String::new(),
            ..quick("a")
        }
        .validate(),
        Err(LeaderConfigError::EmptyIdentity)
    );
    assert_eq!(quick("a").validate(), Ok(()));
}

#[test]
fn the_defaults_are_upstreams() {
    let config = LeaderConfig::default();
    assert_eq!(config.namespace, "kube-system");
    assert_eq!(config.name, "cloud-controller-manager");
    assert_eq!(config.lease_duration, Duration::from_secs(15));
    assert_eq!(config.renew_deadline, Duration::from_secs(10));
    assert_eq!(config.retry_period, Duration::from_secs(2));
    assert_eq!(config.validate(), Ok(()));
    let (host, id) = config
        .identity
        .rsplit_once('_')
        .expect("identity is <hostname>_<uuid>");
    assert_eq!(host, hostname::get().unwrap().to_string_lossy());
    let id = uuid::Uuid::parse_str(id).expect("a uuid");
    assert_eq!(id.get_version_num(), 4);
    assert_ne!(LeaderConfig::default().identity, config.identity);
}
