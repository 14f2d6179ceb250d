//! Policies from an OCI registry, against Debian's `docker-registry` on
//! loopback: `vcd-ccm policy push` publishes, `policy inspect` and
//! `policy test` pull by digest; credentials come from a Docker config and
//! never show; bytes that do not match their digests are refused and
//! nothing is served from them. `e2e` runs `vcd-ccm run` on an image
//! policy read with a pull Secret; the JavaScript template (componentize-js,
//! about 12 MB) decides a Service under `vcd-ccm run` from the registry; a
//! pull Secret that is missing, of the wrong type or for another registry
//! refuses the entry, naming the Secret, and the previous version serves.
//!
//! `cargo test -p vcd-ccm --test it policy_oci -- --nocapture` prints the
//! push and pull times.

mod e2e;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Instant;

use crate::support::registry::{PASSWORD, TestRegistry};
use vcd_ccm::policy::PolicyEngine;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::directory;
use vcd_ccm::policy::loader::{self, sha256_hex};
use vcd_ccm::policy::registry::PolicyState;

/// The example provider policy, built by the test build.
pub fn example() -> PathBuf {
    PathBuf::from(format!("{ARTIFACTS_DIR}/namespace_pools.wasm"))
}

/// The built-in default policy's component: a second, different policy.
pub fn default_component() -> PathBuf {
    PathBuf::from(format!("{ARTIFACTS_DIR}/default_policy.wasm"))
}

/// `vcd-ccm ARGS` with no Docker config of the user's in the way.
pub fn vcd_ccm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(args)
        .env_remove("REGISTRY_AUTH_FILE")
        .env("HOME", "/nonexistent")
        .output()
        .expect("vcd-ccm runs")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Pushes `component` to `target` and returns the pinned reference printed.
pub fn push(component: &Path, target: &str, extra: &[&str]) -> String {
    push_with_env(component, target, extra, &[])
}

/// The same, with `env` added to the push's environment.
fn push_with_env(component: &Path, target: &str, extra: &[&str], env: &[(&str, &Path)]) -> String {
    let mut args = vec!["policy", "push", component.to_str().unwrap(), target];
    args.extend(extra);
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(&args)
        .env_remove("REGISTRY_AUTH_FILE")
        .env("HOME", "/nonexistent")
        .envs(env.iter().copied())
        .output()
        .expect("vcd-ccm runs");
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "push failed: {stderr}");
    let reference = stdout.trim().to_string();
    assert!(reference.contains("@sha256:"), "{reference}");
    reference
}

/// The example and the default component pushed to one repository of an
/// authenticated registry: the two digests an entry moves between.
pub fn push_two_digests(registry: &TestRegistry) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("config.json");
    std::fs::write(&auth, registry.docker_config()).unwrap();
    let flag = format!("--registry-auth={}", auth.display());
    let target = registry.reference("policies/pools");
    let first = push(&example(), &target, &[&flag]);
    let second = push(&default_component(), &target, &[&flag]);
    (first, second)
}

/// The example suite with its `policy` pointing at `reference`.
fn suite_for(dir: &Path, reference: &str) -> PathBuf {
    let original =
        std::fs::read_to_string("../policies/examples/namespace-pools/tests/namespace-pools.yaml")
            .expect("the example suite");
    let suite = original
        .lines()
        .map(|line| {
            if line.starts_with("policy:") {
                format!("policy: {reference}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let path = dir.join("namespace-pools.yaml");
    std::fs::write(&path, suite).expect("the suite is written");
    path
}

#[test]
fn a_pushed_component_is_pulled_by_digest_inspected_and_tested() {
    let Some(registry) = TestRegistry::start() else {
        return;
    };
    let target = format!("{}:v1", registry.reference("policies/pools"));
    let started = Instant::now();
    let reference = push(&example(), &target, &[]);
    println!(
        "push of the example ({} bytes): {:?}",
        std::fs::metadata(example()).unwrap().len(),
        started.elapsed()
    );
    let prefix = format!("{}@sha256:", registry.reference("policies/pools"));
    assert!(reference.starts_with(&prefix), "{reference}");
    // The same component pushes to the same digest: no timestamp in it.
    assert_eq!(push(&example(), &target, &[]), reference);

    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    let component = std::fs::read(example()).unwrap();
    assert!(
        stdout.contains(&format!("sha256:    {}", sha256_hex(&component))),
        "{stdout}"
    );
    assert!(stdout.contains("accepted:  yes"), "{stdout}");
    assert!(
        stdout.contains(&format!("component: {reference}")),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let suite = suite_for(dir.path(), &reference);
    let output = vcd_ccm(&["policy", "test", suite.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.trim_end().ends_with(" passed, 0 failed"), "{stdout}");
    assert!(!stdout.contains("\n0 passed"), "{stdout}");

    // A tag alone is refused, saying how to pin it.
    let output = vcd_ccm(&["policy", "inspect", &target]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.contains("has no digest") && stderr.contains("@sha256:<64 hex>"),
        "{stderr}"
    );
}

#[test]
fn credentials_come_from_the_docker_config_and_never_show() {
    let Some(registry) = TestRegistry::start_with_auth() else {
        return;
    };
    let target = registry.reference("policies/pools");
    let anonymous = vcd_ccm(&["policy", "push", example().to_str().unwrap(), &target]);
    let (_, stderr) = text(&anonymous);
    assert!(!anonymous.status.success());
    assert!(
        stderr.contains(&format!(
            "registry {} refused access to policies/pools (401, anonymously)",
            registry.host
        )),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, registry.docker_config()).unwrap();
    let flag = format!("--registry-auth={}", config.display());
    let reference = push(&example(), &target, &[&flag]);
    let inspected = vcd_ccm(&["policy", "inspect", &reference, &flag]);
    let (stdout, stderr) = text(&inspected);
    assert!(inspected.status.success(), "{stdout}{stderr}");
    // $REGISTRY_AUTH_FILE is the default when the flag is not given.
    let by_variable = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["policy", "inspect", &reference])
        .env("REGISTRY_AUTH_FILE", &config)
        .output()
        .unwrap();
    assert!(by_variable.status.success(), "{:?}", text(&by_variable));

    // A wrong password is refused, and no password is printed.
    let wrong = registry
        .docker_config()
        .replace(&base64_of(PASSWORD), &base64_of("wrong"));
    std::fs::write(&config, wrong).unwrap();
    let refused = vcd_ccm(&["policy", "inspect", &reference, &flag]);
    let (stdout, stderr) = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("(401, with credentials)"), "{stderr}");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(PASSWORD) && !shown.contains("wrong"),
            "{shown}"
        );
    }
}

fn base64_of(password: &str) -> String {
    use base64::Engine as _;
    let user = crate::support::registry::USER;
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

#[test]
fn bytes_that_do_not_match_their_digest_are_refused_and_never_served() {
    let Some(registry) = TestRegistry::start() else {
        return;
    };
    let reference = push(&example(), &registry.reference("policies/pools"), &[]);
    // The registry's copy of the layer is changed, its size kept.
    let component = std::fs::read(example()).unwrap();
    let mut other = component.clone();
    let middle = other.len() / 2;
    other[middle] ^= 0xff;
    let layer = registry.blob_file(&sha256_hex(&component));
    std::fs::write(&layer, &other).unwrap();

    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "has sha256:{}, not the sha256:{} it was asked for by",
            sha256_hex(&other),
            sha256_hex(&component)
        )),
        "{stderr}"
    );
    // A longer layer than the manifest says is cut off at its size.
    let longer = [component.as_slice(), b"more"].concat();
    std::fs::write(&layer, &longer).unwrap();
    let (_, stderr) = text(&vcd_ccm(&["policy", "inspect", &reference]));
    assert!(
        stderr.contains(&format!(
            "is {} bytes, over the limit of {} bytes",
            longer.len(),
            component.len()
        )),
        "{stderr}"
    );
    std::fs::write(&layer, &other).unwrap();

    // In the CCM's policy directory: refused, nothing served from it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policies.yaml"),
        format!("policies:\n- name: pools\n  image: {reference}\n  selector: {{allowAnnotation: true}}\n"),
    )
    .unwrap();
    let engine = PolicyEngine::new().unwrap();
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let (set, report) = engine
        .block_on(directory::load(&engine, dir.path(), default, None))
        .unwrap();
    assert_eq!(report.pulls_failed, ["pools"]);
    let PolicyState::Failed(reason) = &set.provider("pools").unwrap().state else {
        panic!("a tampered layer is not served");
    };
    assert!(reason.contains("it was asked for by"), "{reason}");

    // A tampered manifest fails its own digest.
    let manifest_hex = reference.rsplit_once("@sha256:").unwrap().1;
    std::fs::write(registry.blob_file(manifest_hex), b"{\"schemaVersion\": 2}").unwrap();
    let output = vcd_ccm(&["policy", "inspect", &reference]);
    let (_, stderr) = text(&output);
    assert!(
        stderr.contains(&format!("manifest sha256:{manifest_hex} has sha256:")),
        "{stderr}"
    );
}

/// One virtual service as VCD holds it: its port, application profile
/// type, certificate alias, and its pool's algorithm and monitor types.
#[derive(Debug, PartialEq)]
struct Held {
    port: u32,
    profile: String,
    certificate: Option<String>,
    algorithm: Option<String>,
    monitors: Vec<String>,
}

fn held(
    port: u32,
    profile: &str,
    certificate: Option<&str>,
    algorithm: &str,
    monitor: &str,
) -> Held {
    Held {
        port,
        profile: profile.into(),
        certificate: certificate.map(str::to_string),
        algorithm: Some(algorithm.into()),
        monitors: vec![monitor.into()],
    }
}

/// The virtual services of the Service `uid`, by port.
fn virtual_services(world: &crate::support::run::World, uid: &str) -> Vec<Held> {
    let needle = format!(" uid={uid}");
    let mut found: Vec<Held> = world.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .filter(|vs| {
                vs.description
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&needle)
            })
            .map(|vs| {
                let pool = w
                    .pools
                    .iter()
                    .find(|p| p.id.as_deref() == Some(vs.load_balancer_pool_ref.id.as_str()));
                let certificate = vs.certificate_ref.as_ref().map(|r| {
                    w.certificates
                        .iter()
                        .find(|c| c.item.id.as_deref() == Some(r.id.as_str()))
                        .map_or_else(|| format!("unknown {}", r.id), |c| c.item.alias.clone())
                });
                Held {
                    port: vs.service_ports.first().map_or(0, |p| p.port_start),
                    profile: vs.application_profile.profile_type.clone(),
                    certificate,
                    algorithm: pool.and_then(|p| p.algorithm.clone()),
                    monitors: pool.map_or_else(Vec::new, |p| {
                        p.health_monitors
                            .iter()
                            .map(|m| m.monitor_type.clone())
                            .collect()
                    }),
                }
            })
            .collect()
    });
    found.sort_by_key(|h| h.port);
    found
}

/// The JavaScript template (componentize-js, about 12 MB) pushed to the
/// registry and named by digest decides, under `vcd-ccm run`, the Service
/// that asks for it: TCP ports `l4-tcp` with least-connections, 443 HTTPS
/// with the certificate of its settings. A Service beside it, decided by
/// the built-in default, gets round-robin and plain L4 on both ports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_javascript_policy_from_the_registry_decides_a_service_under_run() {
    use crate::support::poll::wait_until;
    use crate::support::run::World;
    use crate::support::toolchains::{self, Lang};
    use serde_json::json;
    use std::time::Duration;

    const WAIT: Duration = Duration::from_secs(120);
    let Some(registry) = TestRegistry::start() else {
        return;
    };
    let component =
        tokio::task::spawn_blocking(|| toolchains::project(Lang::Javascript).component())
            .await
            .unwrap();
    let size = std::fs::metadata(&component).unwrap().len();
    assert!(size > 8 << 20, "the componentize-js build is {size} bytes");
    // The push compiles the component as the CCM would; sharing its
    // compile cache spares the CCM compiling the same 12 MB again.
    let cache = tempfile::tempdir().unwrap();
    let cache_env = [("VCD_CCM_COMPILE_CACHE", cache.path())];
    let started = Instant::now();
    let reference = push_with_env(
        &component,
        &registry.reference("policies/edge-pools"),
        &[],
        &cache_env,
    );
    println!(
        "push of the JavaScript template ({size} bytes): {:?}",
        started.elapsed()
    );

    let world = World::start().await;
    std::fs::create_dir_all(&world.files.policy_dir).unwrap();
    std::fs::write(
        world.files.policy_dir.join("policies.yaml"),
        format!(
            "policies:
  - name: edge-pools
    image: {reference}
    config: {{pool: edge1, certificate: my-cert}}
    selector: {{allowAnnotation: true}}
"
        ),
    )
    .unwrap();
    world.add_nodes().await;
    let started = Instant::now();
    let ccm = world.spawn_with_env(
        "oci-javascript",
        &[],
        &[("VCD_CCM_COMPILE_CACHE", cache.path().to_str().unwrap())],
    );
    let shop = world
        .create_annotated_service(
            "shop",
            &[80, 443],
            json!({"vcd-ccm.io/policy": "edge-pools"}),
        )
        .await;
    let web = world.create_service("web", &[80, 443]).await;
    let (ip, _) = wait_until("shop's address", WAIT, || world.external_ip("shop")).await;
    println!(
        "JavaScript image policy pulled, its code read from the compile cache, shop served in {:?}",
        started.elapsed()
    );
    assert!(ip.starts_with("203.0.113."), "{ip} is not of pool edge1");
    wait_until("web's address", WAIT, || world.external_ip("web")).await;

    // Both virtual services of a Service exist once its address is set.
    assert_eq!(
        virtual_services(&world, &shop.uid),
        [
            held(80, "L4", None, "LEAST_CONNECTIONS", "TCP"),
            held(443, "HTTPS", Some("my-cert"), "LEAST_CONNECTIONS", "HTTP"),
        ],
        "the JavaScript policy decided shop"
    );
    assert_eq!(
        virtual_services(&world, &web.uid),
        [
            held(80, "L4", None, "ROUND_ROBIN", "TCP"),
            held(443, "L4", None, "ROUND_ROBIN", "TCP"),
        ],
        "the built-in default decided web"
    );
    let stderr = ccm.stderr();
    assert!(
        stderr.contains("policy loaded") && stderr.contains("edge-pools"),
        "{stderr}"
    );
    // The pulled bytes are the pushed ones: their code came from the cache.
    assert!(
        stderr.contains("policy code ready") && stderr.contains(r#"source="compile cache""#),
        "{stderr}"
    );
}

/// Secrets in `kube-system` of a kubesim, read the way the CCM reads
/// `pullSecret`s: one good, one of the wrong type holding the right
/// credentials, one for another registry only.
struct SecretWorld {
    images: vcd_ccm::policy::oci::ImageSource,
    _kube: kubesim::KubeSim,
    /// Serves kubesim and drives the client; dropped last.
    _runtime: tokio::runtime::Runtime,
}

/// A password only the Secret for another registry holds.
const ELSEWHERE_PASSWORD: &str = "elsewhere-registry-password";

fn secret_world(registry: &TestRegistry) -> SecretWorld {
    use k8s_openapi::api::core::v1::Secret;
    use kube::Api;
    use kube::api::PostParams;
    use serde_json::json;
    use vcd_ccm::policy::oci::{ImageSource, SecretReader};

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let kube = runtime.block_on(kubesim::KubeSim::start()).unwrap();
    let client = {
        let _entered = runtime.enter();
        kube.client().unwrap()
    };
    let elsewhere = {
        use base64::Engine as _;
        let auth = base64::engine::general_purpose::STANDARD
            .encode(format!("someone:{ELSEWHERE_PASSWORD}"));
        json!({"auths": {"registry.example.com": {"auth": auth}}}).to_string()
    };
    let secrets = [
        (
            "registry-pull",
            "kubernetes.io/dockerconfigjson",
            registry.docker_config(),
        ),
        ("opaque-pull", "Opaque", registry.docker_config()),
        (
            "elsewhere-pull",
            "kubernetes.io/dockerconfigjson",
            elsewhere,
        ),
    ];
    let api: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    for (name, kind, config) in secrets {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "kube-system"},
            "type": kind,
            "stringData": {".dockerconfigjson": config},
        }))
        .unwrap();
        runtime
            .block_on(api.create(&PostParams::default(), &secret))
            .unwrap_or_else(|e| panic!("Secret {name}: {e}"));
    }
    SecretWorld {
        images: ImageSource::new(SecretReader {
            client,
            namespace: "kube-system".into(),
        }),
        _kube: kube,
        _runtime: runtime,
    }
}

/// A `pullSecret` that does not exist, is not of type
/// `kubernetes.io/dockerconfigjson`, or has no entry for the image's
/// registry refuses the entry with a message naming the Secret and what
/// would work; the previous version keeps serving, and no credential shows.
#[test]
fn a_pull_secret_that_cannot_be_used_refuses_the_entry_and_the_previous_version_serves() {
    let Some(registry) = TestRegistry::start_with_auth() else {
        return;
    };
    let (first, second) = push_two_digests(&registry);
    let secrets = secret_world(&registry);

    let policies = tempfile::tempdir().unwrap();
    let write = |reference: &str, secret: &str| {
        std::fs::write(
            policies.path().join("policies.yaml"),
            format!(
                "policies:\n- name: pools\n  image: {reference}\n  pullSecret: {secret}\n  selector: {{allowAnnotation: true}}\n"
            ),
        )
        .unwrap();
    };
    let engine = PolicyEngine::new().unwrap();
    let default = Arc::new(
        engine
            .block_on(loader::load_default(
                &engine,
                "{}".into(),
                Default::default(),
            ))
            .unwrap(),
    );
    let load = |previous| {
        engine
            .block_on(directory::load_with_images(
                &engine,
                policies.path(),
                &secrets.images,
                default.clone(),
                previous,
            ))
            .unwrap()
    };
    let example_sha = sha256_hex(&std::fs::read(example()).unwrap());
    let serving =
        |set: &vcd_ccm::policy::registry::PolicySet| match &set.provider("pools").unwrap().state {
            PolicyState::Ready(policy) => Some(policy.digest().to_string()),
            PolicyState::Failed(_) => None,
        };

    write(&first, "registry-pull");
    let (good, report) = load(None);
    assert_eq!(report.loaded, ["pools"], "{:?}", report.failed);
    assert_eq!(serving(&good).as_deref(), Some(example_sha.as_str()));

    let host = &registry.host;
    let cases = [
        (
            "missing-pull",
            format!(
                "pullSecret kube-system/missing-pull: does not exist; create a kubernetes.io/dockerconfigjson Secret of that name in namespace kube-system (kubectl create secret docker-registry missing-pull --namespace kube-system --docker-server={host} …) or change pullSecret"
            ),
        ),
        (
            "opaque-pull",
            "pullSecret kube-system/opaque-pull: has type \"Opaque\", not kubernetes.io/dockerconfigjson (kubectl create secret docker-registry makes one)".to_string(),
        ),
        (
            "elsewhere-pull",
            format!(
                "pullSecret kube-system/elsewhere-pull: has no credentials for registry {host} (it has: registry.example.com); add an auths entry for {host} to its .dockerconfigjson, or name a Secret that has one"
            ),
        ),
    ];
    let credentials = [
        PASSWORD.to_string(),
        base64_of(PASSWORD),
        ELSEWHERE_PASSWORD.to_string(),
    ];
    for (secret, expected) in cases {
        // The entry moves to a digest never pulled, with the Secret.
        write(&second, secret);
        let (set, report) = load(Some(&good));
        assert!(report.loaded.is_empty(), "{secret}: {:?}", report.loaded);
        assert_eq!(report.pulls_failed, ["pools"], "{secret}");
        let [(name, reason)] = report.failed.as_slice() else {
            panic!("{secret}: {:?}", report.failed);
        };
        assert_eq!(
            (name.as_str(), reason.as_str()),
            ("pools", expected.as_str())
        );
        assert_eq!(
            serving(&set).as_deref(),
            Some(example_sha.as_str()),
            "{secret}: the previous version keeps serving"
        );
        assert_eq!(
            set.provider("pools").unwrap().entry.image.as_deref(),
            Some(first.as_str()),
            "{secret}: the previous entry is kept"
        );
        // With no previous version the entry is failed, for the same reason.
        let (set, _) = load(None);
        let PolicyState::Failed(failed) = &set.provider("pools").unwrap().state else {
            panic!("{secret}: served with no usable pullSecret");
        };
        assert_eq!(failed.as_ref(), expected, "{secret}");
        for credential in &credentials {
            assert!(
                !reason.contains(credential.as_str()),
                "{secret}: a credential: {reason}"
            );
        }
    }
    // The good Secret still pulls the new digest: nothing was cached wrong.
    write(&second, "registry-pull");
    let (set, report) = load(Some(&good));
    assert_eq!(report.loaded, ["pools"], "{:?}", report.failed);
    assert_ne!(serving(&set).as_deref(), Some(example_sha.as_str()));
}
