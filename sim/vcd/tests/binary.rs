//! The `vcdsim` binary: prints and writes its connection details, serves,
//! and exits cleanly on SIGINT (Ctrl-C).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts the binary with `extra` arguments; returns it with the URL it printed.
fn start(extra: &[&str], env_file: &std::path::Path) -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vcdsim"))
        .args(["--listen", "127.0.0.1:0", "--task-duration", "10ms"])
        .args(extra)
        .arg("--env-file")
        .arg(env_file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("vcdsim starts");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .strip_prefix("VCDSIM_URL=")
        .expect("the URL comes first")
        .to_string();
    (child, url)
}

/// GET /api/versions with `client`; the status code.
fn versions_status(client: reqwest::Client, url: &str) -> reqwest::StatusCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        client
            .get(format!("{url}/api/versions"))
            .send()
            .await
            .unwrap()
            .status()
    })
}

/// Sends SIGINT and waits for a clean exit.
fn interrupt(mut child: std::process::Child) {
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "vcdsim did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn binary_serves_writes_its_env_file_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("vcdsim.env");
    let (child, url) = start(&[], &env_file);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let deadline = Instant::now() + Duration::from_secs(10);
    while !env_file.exists() {
        assert!(Instant::now() < deadline, "the env file was not written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let env = std::fs::read_to_string(&env_file).unwrap();
    for key in [
        "VCDSIM_ORG=org1",
        "VCDSIM_USER=k8s-cpi",
        "VCDSIM_PASSWORD=",
        "VCDSIM_REFRESH_TOKEN=",
        "VCDSIM_SYSTEM_USER=admin",
    ] {
        assert!(env.contains(key), "{key} in {env}");
    }

    assert_eq!(
        versions_status(reqwest::Client::new(), &url),
        reqwest::StatusCode::OK
    );
    interrupt(child);
}

#[test]
fn binary_serves_https_with_a_ca_it_writes_out() {
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("vcdsim.env");
    let ca_file = dir.path().join("ca.pem");
    let (child, url) = start(&["--tls", "--ca-out", ca_file.to_str().unwrap()], &env_file);
    assert!(url.starts_with("https://"), "{url}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !env_file.exists() {
        assert!(Instant::now() < deadline, "the env file was not written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let env = std::fs::read_to_string(&env_file).unwrap();
    assert!(
        env.contains(&format!("VCDSIM_CA_FILE={}", ca_file.display())),
        "{env}"
    );
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&ca_file).unwrap()).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .unwrap();
    assert_eq!(versions_status(client, &url), reqwest::StatusCode::OK);
    interrupt(child);
}
