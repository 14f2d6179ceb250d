//! Hostile provider policies under the real `vcd-ccm run`: one sleeps in a
//! WASI call past its deadline, one returns an 8 MiB error, one answers with
//! text that would forge log lines. The Services they govern get bounded,
//! escaped Warning Events; every other Service converges as usual.
//!
//! `cargo test -p vcd-ccm --test e2e_run hostile -- --nocapture` prints how
//! long the default-policy Services took.

use std::time::Duration;

use crate::support::poll::wait_until;
use crate::support::run::World;
use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::ListParams;
use serde_json::json;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::sha256_hex;

/// Three Services, retries with the 5 s backoff included.
const CONVERGE: Duration = Duration::from_secs(60);
const COMPILES: Duration = Duration::from_secs(300);

/// The misbehaving fixture installed three times, each chosen by annotation.
fn install_hostile_policies(world: &World) {
    let dir = &world.files.policy_dir;
    std::fs::create_dir_all(dir).expect("the policy directory is created");
    let wasm = std::fs::read(format!("{ARTIFACTS_DIR}/misbehaving.wasm")).expect("built");
    std::fs::write(dir.join("misbehaving.wasm"), &wasm).expect("copied");
    let pin = sha256_hex(&wasm);
    let entry = |name: &str, behaviour: &str| {
        format!(
            "- name: {name}
  file: misbehaving.wasm
  sha256: {pin}
  config: {behaviour}
  timeoutMs: 200
  selector: {{allowAnnotation: true}}
"
        )
    };
    let manifest = format!(
        "policies:\n{}{}{}",
        entry("sleeper", "sleep"),
        entry("flooder", "error-flood"),
        entry("forger", "forged-text"),
    );
    std::fs::write(dir.join("policies.yaml"), manifest).expect("the manifest is written");
}

/// The Warning Events of Service `name`, messages only.
async fn warnings(world: &World, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(world.client.clone(), "default");
    let listed = events
        .list(&ListParams::default())
        .await
        .expect("Events are listed");
    listed
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .filter_map(|e| e.message)
        .collect()
}

async fn warning_containing(world: &World, name: &str, needle: &str) -> String {
    let (message, _) = wait_until(
        &format!("a Warning on {name} containing {needle:?}"),
        CONVERGE,
        || async {
            let found = warnings(world, name).await;
            found
                .iter()
                .find(|m| m.contains(needle))
                .cloned()
                .ok_or_else(|| format!("Warnings so far: {found:?}"))
        },
    )
    .await;
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_policies_touch_only_their_own_services() {
    let world = World::start().await;
    install_hostile_policies(&world);
    world.add_nodes().await;
    // One service worker (the Go CCM's default): a policy call that never
    // returned would stop every Service.
    let ccm = world.spawn("hostile", &["--concurrent-service-syncs=1"]);
    for (name, policy) in [
        ("asleep", "sleeper"),
        ("flooded", "flooder"),
        ("forged", "forger"),
    ] {
        world
            .create_annotated_service(name, &[80], json!({"vcd-ccm.io/policy": policy}))
            .await;
    }
    let plain = ["web", "api", "shop"];
    for name in plain {
        world.create_service(name, &[80, 443]).await;
    }
    for name in plain {
        let (ip, took) = wait_until(&format!("{name}'s external IP"), CONVERGE, || {
            world.external_ip(name)
        })
        .await;
        println!("{name}: {ip} after {took:?}, beside three hostile policies");
    }

    let asleep = warning_containing(&world, "asleep", "deadline").await;
    assert!(asleep.contains("policy sleeper"), "{asleep}");
    let flooded = warning_containing(&world, "flooded", "65536 bytes").await;
    assert!(flooded.len() <= 1024, "{} bytes", flooded.len());
    let forged = warning_containing(&world, "forged", "forged line").await;
    assert!(
        forged.contains("refused\\nINFO forged line \\u{1b}[2J"),
        "{forged}"
    );
    for name in ["asleep", "flooded", "forged"] {
        assert!(
            world.external_ip(name).await.is_err(),
            "{name} got an address"
        );
    }

    // Several retries later (each hostile Service once more at least) the
    // log is still small and has no forged lines.
    let retries = ccm.metric("workqueue_retries_total").await.unwrap();
    wait_until("each hostile Service retried again", CONVERGE, || async {
        let now = ccm.metric("workqueue_retries_total").await?;
        (now >= retries + 3.0)
            .then_some(())
            .ok_or_else(|| format!("{} more retries", now - retries))
    })
    .await;
    let log = ccm.stderr();
    assert!(log.len() < 256 << 10, "{} bytes of log", log.len());
    assert!(
        !log.lines().any(|line| line.starts_with("INFO forged line")),
        "a policy forged a log line:\n{log}"
    );
    assert!(
        !log.contains("\u{1b}[2J"),
        "a policy's escape reached the log"
    );
}

/// Python and JavaScript hostile policies under `vcd-ccm run`: the sandbox
/// holds them as it holds Rust ones, and every other Service converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_javascript_hostile_policies_touch_only_their_own_services() {
    use crate::support::toolchains::{self, Lang};
    // What the policies try to reach: nothing may connect.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("bound").port();

    let world = World::start().await;
    let dir = &world.files.policy_dir;
    std::fs::create_dir_all(dir).expect("the policy directory is created");
    let mut manifest = String::from("policies:\n");
    for lang in [Lang::Python, Lang::Javascript] {
        let wasm = std::fs::read(toolchains::hostile(lang)).expect("built");
        let file = format!("hostile-{lang:?}.wasm").to_lowercase();
        std::fs::write(dir.join(&file), &wasm).expect("copied");
        let pin = sha256_hex(&wasm);
        let behaviours: &[&str] = match lang {
            Lang::Python => &["connect", "loop"],
            Lang::Javascript => &["fetch", "oom"],
        };
        for behaviour in behaviours {
            manifest += &format!(
                "- name: {behaviour}
  file: {file}
  sha256: {pin}
  config: {{do: {behaviour}, port: {port}}}
  timeoutMs: 1000
  selector: {{allowAnnotation: true}}
"
            );
        }
    }
    std::fs::write(dir.join("policies.yaml"), manifest).expect("the manifest is written");
    world.add_nodes().await;
    let ccm = world.spawn("hostile-languages", &["--concurrent-service-syncs=1"]);
    // Compiling the two components takes seconds on an idle machine and many
    // times that on a loaded one: the bound only tells a stuck start.
    wait_until(
        "the policies compiled and the process ready",
        COMPILES,
        || ccm.ready(),
    )
    .await;
    let hostile = ["connect", "loop", "fetch", "oom"];
    for policy in hostile {
        world
            .create_annotated_service(policy, &[80], json!({"vcd-ccm.io/policy": policy}))
            .await;
    }
    for name in ["web", "api"] {
        world.create_service(name, &[80, 443]).await;
    }
    for name in ["web", "api"] {
        let (ip, took) = wait_until(&format!("{name}'s external IP"), CONVERGE, || {
            world.external_ip(name)
        })
        .await;
        println!("{name}: {ip} after {took:?}, beside Python and JavaScript hostile policies");
    }
    for (name, needle) in [
        ("connect", "connect denied: PermissionError"),
        ("loop", "1s deadline"),
        ("fetch", "fetch pending"),
        ("oom", "33554432-byte limit"),
    ] {
        let warning = warning_containing(&world, name, needle).await;
        assert!(warning.len() <= 1024, "{} bytes", warning.len());
        assert!(
            world.external_ip(name).await.is_err(),
            "{name} got an address"
        );
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a policy reached the loopback server: {other:?}"),
    }
    drop(ccm);
}
