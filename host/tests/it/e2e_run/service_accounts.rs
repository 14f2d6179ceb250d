//! A VCD service account's one-time refresh token through `vcd-ccm run`:
//! only the leader exchanges it, each new token reaches the credential
//! Secret before the access token is used, a standby that takes over after
//! a SIGKILL continues with the stored token, and a token VCD refuses is a
//! log line, a `/readyz` failure and a Warning Event on the Secret. No token
//! ever reaches the log, at TRACE level either.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Secret};
use kube::Api;
use kube::api::{ListParams, PostParams};
use serde_json::json;
use vcdsim::Scenario;
use vcdsim::scenario::ServiceAccountSpec;

use super::{FAST_ELECTION, START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::process::CcmProcess;

const ACCOUNT: &str = "k8s-ccm";
const FIRST_TOKEN: &str = "service-account-token-0";
/// `expires_in` 2 s: the client logs in again every 1.8 s while it works.
const ACCESS_TOKEN_MS: u64 = 2000;
const REFRESHES: u64 = 10;

/// vcdsim with the service account, the credential files and the Secret
/// holding its first token, and the scenario's workers as Nodes.
async fn world_with_service_account() -> World {
    let mut scenario = Scenario::default_scenario();
    scenario.service_accounts.push(ServiceAccountSpec {
        name: ACCOUNT.to_string(),
        org: scenario.orgs[0].name.clone(),
        roles: vec!["Organization Administrator".to_string()],
        refresh_token: FIRST_TOKEN.to_string(),
        access_token_ttl_ms: Some(ACCESS_TOKEN_MS),
    });
    let world = World::start_on(scenario).await;
    std::fs::write(
        world.files.credentials_dir.join("refreshToken"),
        FIRST_TOKEN,
    )
    .expect("the mounted refreshToken");
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "vcloud-basic-auth", "namespace": "kube-system"},
        "stringData": {"refreshToken": FIRST_TOKEN},
    }))
    .expect("a Secret");
    secrets(&world)
        .create(&PostParams::default(), &secret)
        .await
        .expect("the credential Secret is created");
    world.add_nodes().await;
    world.create_service("web", &[80]).await;
    world
}

fn secrets(world: &World) -> Api<Secret> {
    Api::namespaced(world.client.clone(), "kube-system")
}

/// The refresh token the credential Secret holds.
async fn stored(world: &World) -> String {
    let secret = secrets(world)
        .get("vcloud-basic-auth")
        .await
        .expect("the Secret");
    let data = secret.data.unwrap_or_default();
    String::from_utf8(data["refreshToken"].0.clone()).expect("UTF-8")
}

/// (current token, every voided one, exchanges, reuses of voided tokens).
fn account(world: &World) -> (Option<String>, Vec<String>, u64, u64) {
    world.vcd.with_world(|w| {
        let a = vcdsim::world::service_account::find_account(w, ACCOUNT).expect("the account");
        (
            a.refresh_token.clone(),
            a.voided.clone(),
            a.exchanges,
            a.reuses,
        )
    })
}

/// Everything at TRACE but the policy compiler's own tracing (hundreds of
/// megabytes of machine code listings, where no token can be), which would
/// otherwise make most of the test's time.
const TRACE: &str =
    "trace,cranelift_codegen=info,cranelift_frontend=info,regalloc2=info,wasmtime_cranelift=info";

fn spawn(world: &World, name: &str) -> CcmProcess {
    // Work that reaches VCD every half second: a drift read of the gateway.
    let mut flags = vec![
        "--node-status-update-frequency=500ms",
        "--drift-repair-period=500ms",
    ];
    flags.extend(FAST_ELECTION);
    world.spawn_with_env(name, &flags, &[("RUST_LOG", TRACE)])
}

async fn exchanges_reach(world: &World, count: u64) {
    let limit = Duration::from_millis(ACCESS_TOKEN_MS * (count + 10));
    wait_until(&format!("{count} exchanges"), limit, || async {
        let (_, _, exchanges, _) = account(world);
        (exchanges >= count)
            .then_some(())
            .ok_or_else(|| format!("{exchanges} exchanges"))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_alone_rotates_the_token_and_a_standby_continues_after_a_kill() {
    let world = world_with_service_account().await;
    let mut a = spawn(&world, "a");
    let mut b = spawn(&world, "b");
    let ((), _) = wait_until("a leader", START, || async {
        match (leading(&a).await, leading(&b).await) {
            (Ok(()), _) | (_, Ok(())) => Ok(()),
            (Err(e), _) => Err(e),
        }
    })
    .await;
    let a_leads = leading(&a).await.is_ok();
    let (leader, standby) = if a_leads {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    wait_until("the standby to be ready", START, || async {
        standby.ready().await
    })
    .await;

    exchanges_reach(&world, REFRESHES).await;
    assert!(
        !standby.stderr().contains("logging in to VCD"),
        "the standby logged in:\n{}",
        standby.stderr()
    );
    // Kill the leader while the Secret holds the current token (the usual
    // state: it is behind only between VCD's answer and the write). Frozen,
    // the leader cannot exchange between the look and the kill.
    let (frozen, world_ref) = (&*leader, &world);
    let before = wait_until(
        "the Secret to hold the current token",
        START,
        move || async move {
            frozen.freeze();
            let (current, _, exchanges, _) = account(world_ref);
            let held = stored(world_ref).await;
            if current.as_deref() == Some(held.as_str()) {
                return Ok(exchanges);
            }
            frozen.resume();
            Err("the Secret is behind".to_string())
        },
    )
    .await
    .0;
    leader.kill();
    let killed = Instant::now();
    let ((), takeover) = wait_until("the standby to lead", START, || async {
        leading(standby).await
    })
    .await;
    exchanges_reach(&world, before + 3).await;
    let (current, voided, after, reuses) = account(&world);
    eprintln!(
        "exchanges: {before} before the kill, {after} in all; takeover {:?} after the kill (lease 4 s)",
        takeover.min(killed.elapsed())
    );
    assert_eq!(reuses, 0, "a voided token was sent");
    wait_until("the Secret to hold the latest token", START, || async {
        let (current, ..) = account(&world);
        (current.as_deref() == Some(stored(&world).await.as_str()))
            .then_some(())
            .ok_or_else(|| "behind".to_string())
    })
    .await;
    assert!(current.is_some());

    // No token reached either replica's log, at TRACE level.
    standby.kill();
    for replica in [&a, &b] {
        let log = replica.stderr();
        assert!(log.lines().count() > 100, "{}: a TRACE log", replica.name);
        for token in voided.iter().chain(current.iter()) {
            assert!(
                !log.contains(token.as_str()),
                "{}: a refresh token is logged",
                replica.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_logged_fails_readyz_and_warns_on_the_secret() {
    let world = world_with_service_account().await;
    // Voided before the CCM starts, as by a replica killed mid-write.
    world
        .vcd
        .with_world(|w| vcdsim::world::service_account::revoke_token(w, FIRST_TOKEN));
    let ccm = world.spawn("alone", &["--leader-elect=false"]);
    wait_until("/readyz to name the refused token", START, || async {
        match ccm.ready().await {
            Err(e)
                if e.contains("[-]vcd-credentials")
                    && e.contains("Secret kube-system/vcloud-basic-auth") =>
            {
                Ok(())
            }
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let log = ccm.stderr();
    assert!(
        log.contains("VCD refused the refresh token in Secret kube-system/vcloud-basic-auth"),
        "{log}"
    );
    let events: Api<Event> = Api::namespaced(world.client.clone(), "kube-system");
    let (warning, _) = wait_until("the Warning Event on the Secret", START, || async {
        let listed = events
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        listed
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("RefreshTokenRefused"))
            .ok_or_else(|| "no Event yet".to_string())
    })
    .await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.involved_object.kind.as_deref(), Some("Secret"));
    assert_eq!(
        warning.involved_object.name.as_deref(),
        Some("vcloud-basic-auth")
    );
    let message = warning.message.unwrap_or_default();
    assert!(
        message.contains("an org administrator issues a new one"),
        "{message}"
    );

    // The administrator issues a new token and writes it to the Secret.
    let issued = world
        .vcd
        .with_world(|w| vcdsim::world::service_account::issue_token(w, ACCOUNT))
        .expect("a new token");
    let mut secret = secrets(&world)
        .get("vcloud-basic-auth")
        .await
        .expect("the Secret");
    secret.data = None;
    secret.string_data = Some([("refreshToken".to_string(), issued)].into());
    secrets(&world)
        .replace("vcloud-basic-auth", &PostParams::default(), &secret)
        .await
        .expect("the Secret is replaced");
    wait_until(
        "ready with the new token",
        Duration::from_secs(40),
        || async { ccm.ready().await },
    )
    .await;
    assert!(account(&world).2 >= 1, "the new token was exchanged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_credentials_secret_keeps_new_tokens_in_memory_only() {
    let world = world_with_service_account().await;
    let mut flags = vec!["--credentials-secret=", "--drift-repair-period=500ms"];
    flags.extend(FAST_ELECTION);
    let ccm = world.spawn("no-write-back", &flags);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    exchanges_reach(&world, 3).await;
    wait_until("ready", START, || ccm.ready()).await;
    assert_eq!(account(&world).3, 0, "a voided token was sent");
    assert_eq!(
        stored(&world).await,
        FIRST_TOKEN,
        "the Secret keeps the token it had"
    );
}
