//! The `vcdsim` binary: prints and writes its connection details, serves,
//! and exits cleanly on SIGINT (Ctrl-C).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn binary_serves_writes_its_env_file_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("vcdsim.env");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vcdsim"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--task-duration",
            "10ms",
            "--env-file",
        ])
        .arg(&env_file)
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

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let status = runtime.block_on(async {
        reqwest::Client::new()
            .get(format!("{url}/api/versions"))
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(status, reqwest::StatusCode::OK);

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
