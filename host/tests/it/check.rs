//! `vcd-ccm check`, the real binary with `run`'s flags, against vcdsim
//! worlds that break one check each: the ✗ row and its fix, the checks
//! that depend on it skipped, exit status 1; a healthy setup is all ✓ with
//! exit status 0, in the table and in the JSON. And `vcd-ccm run` logs the
//! same checks at start.

use serde_json::Value;
use vcdsim::Scenario;
use vcdsim::scenario::ServiceAccountSpec;

use crate::support::check::{CHECKS, Setup};
use crate::support::poll::eventually;
use crate::support::run::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_setup_passes_every_check_in_the_table_and_the_json() {
    let setup = Setup::healthy().await;
    let checked = setup.check(&[]).await;
    assert!(
        checked.status.success(),
        "{}{}",
        checked.stdout,
        checked.stderr
    );
    for check in CHECKS {
        checked.passed(check);
    }
    assert!(checked.passed("login").contains("API version 39.1"));
    assert!(checked.passed("gateway").contains("edge1"));
    assert!(
        checked
            .passed("service-engine-group")
            .contains("seg1 runs 0 of 10")
    );
    assert!(checked.passed("addresses").contains("edge1: 40 free"));
    assert!(checked.passed("certificate").contains("my-cert"));
    assert!(checked.passed("rights").contains("holds the 8 rights"));
    assert!(checked.stdout.ends_with("13 passed, 0 failed, 0 skipped\n"));
    // Nothing was written.
    assert!(
        setup
            .vcd
            .requests()
            .iter()
            .all(|e| e.method == "GET" || e.path.starts_with("/cloudapi/1.0.0/sessions"))
    );

    let json = setup.check(&["--output=json"]).await;
    assert!(json.status.success());
    let document: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(document["passed"], true);
    let names: Vec<&str> = document["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "pass", "{c}");
            c["check"].as_str().expect("a name")
        })
        .collect();
    assert_eq!(names, CHECKS);
}

#[tokio::test]
async fn a_wrong_password_fails_the_login_and_skips_what_needs_it() {
    let setup = Setup::healthy().await;
    let password = "not-the-password-4711";
    std::fs::write(setup.credentials_dir.join("password"), password).expect("written");
    let checked = setup.check(&[]).await;
    checked.failed("login", "HTTP 401", "username and password");
    assert!(!checked.stdout.contains(password), "{}", checked.stdout);
    checked.skipped(&CHECKS[2..11], "needs a login");
    checked.passed("zones");
    checked.skipped(&["clock"], "needs a login");
}

#[tokio::test]
async fn an_unreachable_vcd_names_the_host() {
    let setup = Setup::healthy().await;
    setup.edit_config(|text| text.replace(setup.vcd.base_url(), "http://127.0.0.1:9"));
    let checked = setup.check(&[]).await;
    checked.failed(
        "login",
        "cannot talk to VCD",
        "vcd.host (http://127.0.0.1:9)",
    );
}

#[tokio::test]
async fn an_unreadable_cloud_config_skips_every_other_check() {
    let setup = Setup::healthy().await;
    setup.edit_config(|text| text.replace("vdc: vdc1", "vdc: vdc1\n  bogus: 1"));
    let checked = setup.check(&[]).await;
    checked.failed("config", "bogus", "cloud config");
    checked.skipped(&CHECKS[1..], "needs the cloud config");
}

#[tokio::test]
async fn a_wrong_org_vdc_or_network_fails_its_row() {
    let setup = Setup::healthy().await;
    setup.edit_config(|text| text.replace("  org: org1", "  org: org9"));
    let checked = setup.check(&[]).await;
    checked.failed("org", "org 'org9' not found", "Set vcd.org");
    checked.skipped(&["vdc", "network", "gateway"], "needs the org");
    checked.skipped(&["load-balancer", "addresses"], "needs the edge gateway");

    let setup = Setup::healthy().await;
    setup.edit_config(|text| text.replace("vdc: vdc1", "vdc: vdc9"));
    let checked = setup.check(&[]).await;
    checked.failed(
        "vdc",
        "VDC 'vdc9' not found",
        "Set vcd.vdc to a VDC of org org1",
    );
    checked.skipped(&["network", "gateway"], "needs the VDC");

    let setup = Setup::healthy().await;
    setup.edit_config(|text| text.replace("network: net1", "network: net9"));
    let checked = setup.check(&[]).await;
    checked.failed("network", "'net9' not found", "Set loadbalancer.network");
    checked.skipped(&["gateway"], "needs the network");
    checked.passed("clock");
}

#[tokio::test]
async fn a_gateway_without_alb_or_a_free_service_engine_group_fails() {
    let setup = Setup::healthy().await;
    setup
        .vcd
        .with_world(|w| w.gateways[0].load_balancer.enabled = false);
    let checked = setup.check(&[]).await;
    checked.failed(
        "load-balancer",
        "edge1",
        "enable NSX ALB on edge gateway edge1",
    );
    checked.skipped(&["service-engine-group"], "needs NSX ALB");
    checked.passed("addresses");

    let setup = Setup::healthy().await;
    setup.vcd.with_world(|w| w.seg_assignments.clear());
    let checked = setup.check(&[]).await;
    checked.failed(
        "service-engine-group",
        "no service engine group is assigned to edge gateway edge1",
        "assign a service engine group",
    );

    let setup = Setup::healthy().await;
    setup
        .vcd
        .with_world(|w| w.seg_assignments[0].max_virtual_services = Some(0));
    let checked = setup.check(&[]).await;
    checked.failed(
        "service-engine-group",
        "seg1 runs 0 of 0 virtual services",
        "raise its maxVirtualServices",
    );
}

#[tokio::test]
async fn no_external_range_or_no_free_address_fails_the_addresses() {
    let outside = "  certAlias: my-cert\n  vipSubnet: 198.51.100.0/24\n";
    let setup = Setup::start(Scenario::default_scenario(), outside).await;
    let checked = setup.check(&[]).await;
    checked.failed(
        "addresses",
        "no external IP range within loadbalancer.vipSubnet 198.51.100.0-198.51.100.255",
        "widen loadbalancer.vipSubnet",
    );

    // The range holds the gateway's primary address only.
    let primary = "  certAlias: my-cert\n  vipSubnet: 203.0.113.10/32\n";
    let setup = Setup::start(Scenario::default_scenario(), primary).await;
    let checked = setup.check(&[]).await;
    checked.failed("addresses", "is in use", "sub-allocate more");
}

#[tokio::test]
async fn ip_spaces_report_what_is_left_and_fail_when_nothing_is() {
    let setup = Setup::start(Scenario::ip_space(), "").await;
    let checked = setup.check(&[]).await;
    let detail = checked.passed("addresses");
    assert!(detail.contains("public1: 5 to allocate"), "{detail}");
    assert!(
        checked
            .passed("certificate")
            .contains("certAlias is not set")
    );

    let setup = Setup::start(Scenario::ip_space(), "").await;
    setup.vcd.with_world(|w| w.gateways[0].ip_space_ids.clear());
    let checked = setup.check(&[]).await;
    checked.failed(
        "addresses",
        "no PUBLIC IP Space reaches edge gateway edge1",
        "PUBLIC IP Space",
    );
}

#[tokio::test]
async fn a_cert_alias_missing_from_the_library_fails() {
    let setup = Setup::start(Scenario::default_scenario(), "  certAlias: missing-cert\n").await;
    let checked = setup.check(&[]).await;
    checked.failed(
        "certificate",
        "certAlias missing-cert is not in the org's certificate library",
        "correct loadbalancer.certAlias",
    );
}

#[tokio::test]
async fn a_role_missing_a_right_is_named() {
    let setup = Setup::healthy().await;
    let revoked = "Organization vDC Gateway: Configure Load Balancer";
    setup.vcd.with_world(|w| {
        for role in &mut w.roles {
            role.rights.retain(|r| r != revoked);
        }
    });
    let checked = setup.check(&[]).await;
    checked.failed(
        "rights",
        &format!("lacks 1 of the 8 rights the CCM needs: \"{revoked}\""),
        "Add them to the role",
    );

    // One-arm mode needs the NAT right too; a role without any is told all.
    let one_arm = "  certAlias: my-cert\n  oneArm: {startIP: 192.168.8.2, endIP: 192.168.8.100}\n";
    let setup = Setup::start(Scenario::default_scenario(), one_arm).await;
    setup
        .vcd
        .with_world(|w| w.roles.iter_mut().for_each(|r| r.rights.clear()));
    let checked = setup.check(&[]).await;
    checked.failed("rights", "lacks 9 of the 9 rights", "rights bundle");
    assert!(
        checked
            .row("rights")
            .text
            .contains("Organization vDC Gateway: Configure NAT")
    );
}

#[tokio::test]
async fn a_missing_or_invalid_zones_file_or_an_unknown_vdc_fails() {
    let setup = Setup::healthy().await;
    let path = setup.zones(None);
    let checked = setup.check(&[]).await;
    checked.failed(
        "zones",
        "cannot read the zones file",
        &path.display().to_string(),
    );

    let setup = Setup::healthy().await;
    setup.zones(Some("zones:\n  - name: z1\n    vdc: vdc1\n"));
    let checked = setup.check(&[]).await;
    checked.failed("zones", "is not valid", "Mount the zones ConfigMap");

    let setup = Setup::healthy().await;
    setup.zones(Some(
        "zones:\n  - {name: z1, ovdcName: vdc1}\n  - {name: z2, ovdcName: vdc7}\n",
    ));
    let checked = setup.check(&[]).await;
    checked.failed(
        "zones",
        "zone z2: VDC 'vdc7' not found",
        "Correct ovdcName of zone z2",
    );

    let setup = Setup::healthy().await;
    setup.zones(Some("zones:\n  - {name: z1, ovdcName: vdc1}\n"));
    let checked = setup.check(&[]).await;
    assert!(
        checked
            .passed("zones")
            .contains("1 VDCs in zones, each found in the org")
    );
}

/// The offset a clock row states (`VCD's clock is 9m 59s ahead …`), in
/// seconds, and its direction. VCD's `Date` has whole seconds, so a skew of
/// exactly 10 minutes may read a second either side.
fn stated_offset(text: &str) -> (u64, &str) {
    let rest = text
        .split("VCD's clock is ")
        .nth(1)
        .unwrap_or_else(|| panic!("no offset in {text}"));
    let mut seconds = 0;
    for word in rest.split_whitespace() {
        let unit = |suffix: char, scale: u64| {
            word.strip_suffix(suffix)
                .and_then(|n| n.parse::<u64>().ok())
                .map(|n| n * scale)
        };
        match unit('h', 3600).or(unit('m', 60)).or(unit('s', 1)) {
            Some(part) => seconds += part,
            None => return (seconds, word),
        }
    }
    panic!("no direction in {text}")
}

#[tokio::test]
async fn a_clock_minutes_off_fails_and_says_how_far() {
    let setup = Setup::healthy().await;
    setup.vcd.set_knobs(|k| k.clock_skew_ms = 10 * 60 * 1000);
    let checked = setup.check(&[]).await;
    checked.failed("clock", "VCD's clock is ", "NTP");
    let row = checked.row("clock");
    let (seconds, direction) = stated_offset(&row.text);
    assert!((599..=601).contains(&seconds), "{seconds} s");
    assert_eq!(direction, "ahead");

    let setup = Setup::healthy().await;
    setup.vcd.set_knobs(|k| k.clock_skew_ms = -90 * 1000);
    let checked = setup.check(&["--output=json"]).await;
    assert_eq!(checked.status.code(), Some(1));
    let document: Value = serde_json::from_str(&checked.stdout).expect("JSON");
    assert_eq!(document["passed"], false);
    let clock = &document["checks"][12];
    assert_eq!(clock["check"], "clock");
    assert_eq!(clock["status"], "fail");
    let (seconds, direction) = stated_offset(clock["detail"].as_str().unwrap());
    assert!((89..=91).contains(&seconds), "{clock}");
    assert_eq!(direction, "behind", "{clock}");
    assert!(clock["fix"].as_str().unwrap().contains("NTP"), "{clock}");
    assert_eq!(document["summary"]["failed"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_logs_the_same_checks_at_start() {
    let world = World::start().await;
    let config = std::fs::read_to_string(&world.files.cloud_config).expect("the cloud config");
    std::fs::write(
        &world.files.cloud_config,
        config.replace("certAlias: my-cert", "certAlias: missing-cert"),
    )
    .expect("the cloud config is written");
    let ccm = world.spawn("preflight", &[]);
    let lines = eventually("a log line per preflight check", || {
        let stderr = ccm.stderr();
        let lines: Vec<String> = stderr
            .lines()
            .filter(|l| l.contains("preflight check"))
            .map(str::to_string)
            .collect();
        (lines.len() == CHECKS.len()).then_some(lines)
    })
    .await;
    for (line, check) in lines.iter().zip(CHECKS) {
        assert!(line.contains(&format!("check=\"{check}\"")), "{line}");
        let expected = if check == "certificate" {
            "WARN"
        } else {
            "INFO"
        };
        assert!(line.contains(expected), "{line}");
    }
    assert!(lines[9].contains("preflight check failed") && lines[9].contains("missing-cert"));
    assert!(lines[9].contains("fix="), "{}", lines[9]);
}

/// A service account's one-time token: the check's login voids it, so the
/// check stores its successor in the token file, or does not log in where
/// it cannot.
#[tokio::test]
async fn a_service_account_token_is_replaced_in_the_file_or_left_unused() {
    const FIRST: &str = "check-account-token-0123456789ab";
    let mut scenario = Scenario::default_scenario();
    scenario.service_accounts.push(ServiceAccountSpec {
        name: "ccm-check".to_string(),
        org: scenario.orgs[0].name.clone(),
        roles: vec!["Organization Administrator".to_string()],
        refresh_token: FIRST.to_string(),
        access_token_ttl_ms: None,
    });
    let setup = Setup::start(scenario, "  certAlias: my-cert\n").await;
    let token_file = setup.credentials_dir.join("refreshToken");
    std::fs::write(&token_file, FIRST).expect("written");
    let current = || {
        setup.vcd.with_world(|w| {
            let account =
                vcdsim::world::service_account::find_account(w, "ccm-check").expect("the account");
            (account.refresh_token.clone(), account.reuses)
        })
    };

    for round in 1..=2 {
        let checked = setup.check(&[]).await;
        assert!(
            checked.status.success(),
            "round {round}:\n{}{}",
            checked.stdout,
            checked.stderr
        );
        checked.passed("login");
        let stored = std::fs::read_to_string(&token_file).expect("the token file");
        let (live, reuses) = current();
        assert_eq!(
            Some(stored.trim().to_string()),
            live,
            "round {round}: the file holds VCD's current token"
        );
        assert_ne!(stored.trim(), FIRST);
        assert_eq!(reuses, 0, "no voided token was sent");
        assert!(!checked.stdout.contains(stored.trim()) && !checked.stderr.contains(stored.trim()));
    }

    // Files the check cannot write to (a read-only mount; here the file it
    // probes with is taken by a directory, which root cannot write over
    // either): no exchange, and the login row says why.
    let before = current();
    std::fs::create_dir(setup.credentials_dir.join(".vcd-ccm-check-probe"))
        .expect("the probe's place is taken");
    let checked = setup.check(&[]).await;
    assert!(!checked.status.success());
    checked.failed("login", "one-time token", "writable copy");
    checked.skipped(&CHECKS[2..11], "needs a login");
    assert_eq!(current(), before, "the token was not exchanged");
}

#[tokio::test]
async fn internal_addresses_are_listed_and_a_public_space_named_private_fails() {
    let scenario = crate::e2e_run::internal::with_private_space;
    let setup = Setup::start(scenario(), "  internal: {ipSpace: private1}\n").await;
    let checked = setup.check(&[]).await;
    let addresses = checked.passed("addresses");
    assert!(addresses.contains("private1"), "{addresses}");

    let setup = Setup::start(scenario(), "  internal: {ipSpace: public1}\n").await;
    setup.check(&[]).await.failed(
        "addresses",
        "it is a PUBLIC IP Space; internal addresses come from a PRIVATE one",
        "Name a PRIVATE IP Space of the org",
    );
}
