//! `vcd-ccm demo --once`: the whole product on its embedded simulators
//! converges and says so.

use std::process::Command;

#[test]
fn demo_once_converges_and_exits_zero() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("demo.kubeconfig");
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["demo", "--once", "--timeout", "60s", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        output.status
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("Converged in "))
        .unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    assert!(
        summary.contains("7 Services have external IPs (9 virtual services, 9 pools on edge1), 3 Nodes initialised"),
        "{summary}"
    );
    for service in [
        "default/web",
        "default/shop",
        "default/store",
        "default/dns",
        "default/dns-tcp",
        "default/portal",
        "tenant-a/game",
    ] {
        assert!(
            stdout.contains(service),
            "{service} in the table:\n{stdout}"
        );
    }
    let store = stdout
        .lines()
        .rfind(|l| l.starts_with("default/store"))
        .unwrap_or_else(|| panic!("no store row:\n{stdout}"));
    assert!(
        store.contains(", TLS: ") && store.contains("-default-store-tls-"),
        "the Secret's upload serves: {store}"
    );
    let shop = stdout
        .lines()
        .rfind(|l| l.starts_with("default/shop"))
        .unwrap_or_else(|| panic!("no shop row:\n{stdout}"));
    assert!(
        shop.ends_with(", persistence: CLIENT_IP, HTTP rules: https-redirect"),
        "sessionAffinity ClientIP keeps clients on one node, plain HTTP is redirected: {shop}"
    );
    let address_of = |service: &str| {
        let row = stdout
            .lines()
            .rfind(|l| l.split_whitespace().next() == Some(service))
            .unwrap_or_else(|| panic!("no {service} row:\n{stdout}"));
        row.split_whitespace().nth(2).map(str::to_string)
    };
    assert_eq!(
        address_of("default/dns"),
        address_of("default/dns-tcp"),
        "the sharing pair has one address:\n{stdout}"
    );
    let portal = address_of("default/portal").unwrap_or_default();
    let families: Vec<bool> = portal
        .split(',')
        .filter_map(|ip| ip.parse::<std::net::IpAddr>().ok())
        .map(|ip| ip.is_ipv6())
        .collect();
    assert_eq!(
        families,
        vec![false, true],
        "the dual-stack Service has an IPv4 and an IPv6 address: {portal}"
    );
    assert!(
        stdout.contains("zone-a"),
        "nodes carry their zone:\n{stdout}"
    );
    let written = std::fs::read_to_string(&kubeconfig).expect("the kubeconfig is written");
    assert!(written.contains("server: http://127.0.0.1:"), "{written}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn demo_once_on_the_dc_group_scenario_serves_nodes_of_two_vdcs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args([
            "demo",
            "--once",
            "--scenario",
            "dc-group",
            "--timeout",
            "60s",
        ])
        .arg("--kubeconfig-out")
        .arg(dir.path().join("demo.kubeconfig"))
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("Converged in "))
        .unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    assert!(
        summary.contains("7 Services have external IPs") && summary.contains("3 Nodes initialised"),
        "{summary}"
    );
    let zone_of = |node: &str| {
        stdout
            .lines()
            .rfind(|l| l.split_whitespace().next() == Some(node))
            .and_then(|row| row.split_whitespace().nth(2).map(str::to_string))
    };
    assert_eq!(
        zone_of("worker-0").as_deref(),
        Some("zone-a"),
        "vdc1:\n{stdout}"
    );
    assert_eq!(
        zone_of("worker-1").as_deref(),
        Some("zone-b"),
        "vdc2:\n{stdout}"
    );
}

#[test]
fn demo_once_that_cannot_converge_in_time_exits_non_zero_and_says_why() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .args(["demo", "--once", "--timeout", "0s", "--kubeconfig-out"])
        .arg(dir.path().join("demo.kubeconfig"))
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not converged after 0ns; last state:"),
        "{stderr}"
    );
    assert!(stderr.contains("Warning Events:"), "{stderr}");
}
