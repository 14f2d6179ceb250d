//! The cloud config: the upstream file and our manifests parse into the
//! expected client, load-balancer and node settings; bad files fail with
//! one precise line; secrets never show.

use std::path::{Path, PathBuf};

use vcd_ccm::config::{CloudConfig, ConfigError, DEFAULT_ZONES_FILE};
use vcd_ccm::instances::{AddressPolicy, ClusterVApps};
use vcd_ccm::lb::ranges::Ipv4Range;
use vcd_ccm::lb::{LbConfig, OneArm};
use vcd_ccm::vcd::{CredentialSource, Credentials, Secret};

const ORIGIN: &str = "/etc/kubernetes/vcloud/vcloud-ccm-config.yaml";

/// Every upstream key, as the upstream CCM's users write them.
const UPSTREAM: &str = r#"vcd:
  host: https://vcd.example.com/
  org: tenant1
  vdc: vdc1
  isZoneEnabledCluster: false
  userorg: users
loadbalancer:
  oneArm:
    startIP: "192.168.8.2"
    endIP: "192.168.8.100"
  ports:
    http: 80
    https: 443
  network: net1
  vipSubnet: 203.0.113.0/26
  enableVirtualServiceSharedIP: false
  certAlias: cluster1-cert
clusterid: urn:vcloud:entity:vmware:capvcdCluster:1234
vAppName: cluster1
"#;

fn parse(text: &str) -> Result<CloudConfig, ConfigError> {
    CloudConfig::from_yaml_with_env(text, ORIGIN, None)
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn manifest(name: &str) -> serde_yaml_ng::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../manifests")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

#[test]
fn the_upstream_config_converts_into_every_setting() {
    let config = parse(UPSTREAM).unwrap();
    let secret_dir = tempfile::tempdir().unwrap();

    let client = config.client_config(secret_dir.path()).unwrap();
    assert_eq!(client.host, "https://vcd.example.com");
    assert_eq!(client.org, "tenant1");
    match &client.credentials {
        CredentialSource::Files { dir, user_org } => {
            assert_eq!(dir, secret_dir.path());
            assert_eq!(user_org, "users", "vcd.userorg names the user's org");
        }
        other => panic!("expected the Secret's files, got {other:?}"),
    }
    assert!(!client.tls.insecure);
    assert_eq!(client.tls.ca_bundle, None);
    assert_eq!(client.rate_limit, None);

    assert_eq!(
        config.lb_config(),
        LbConfig {
            cluster_id: "urn:vcloud:entity:vmware:capvcdCluster:1234".into(),
            vdc: "vdc1".into(),
            network: "net1".into(),
            enable_virtual_service_shared_ip: false,
            one_arm: Some(OneArm {
                start_ip: "192.168.8.2".into(),
                end_ip: "192.168.8.100".into(),
            }),
            vip_subnet: Some(Ipv4Range {
                first: "203.0.113.0".parse().unwrap(),
                last: "203.0.113.63".parse().unwrap(),
            }),
            cert_alias: Some("cluster1-cert".into()),
            manage_firewall: false,
            internal: Vec::new(),
            internal_space: None,
            kube_proxy_health_check: false,
            claim_unused_allocations: false,
        }
    );

    let instances = config.instances_config().unwrap();
    assert_eq!(instances.vapps, ClusterVApps::Named("cluster1".into()));
    assert!(instances.zones.is_empty());
    assert_eq!(instances.region, None);
    assert_eq!(instances.addresses, AddressPolicy::default());
}

#[test]
fn the_manifests_parse_and_their_secret_loads() {
    let config_map = manifest("cloud-config.yaml");
    assert_eq!(config_map["metadata"]["name"], "vcloud-ccm-configmap");
    assert_eq!(config_map["metadata"]["namespace"], "kube-system");
    let text = config_map["data"]["vcloud-ccm-config.yaml"]
        .as_str()
        .unwrap();
    let config = parse(text).unwrap();
    assert_eq!(config.cluster_id(), "CLUSTER_ID");
    assert_eq!(config.lb_config().network, "NETWORK");
    assert_eq!(config.zones_file(), Path::new(DEFAULT_ZONES_FILE));

    let secret = manifest("secret.yaml");
    assert_eq!(secret["metadata"]["name"], "vcloud-basic-auth");
    assert_eq!(secret["metadata"]["namespace"], "kube-system");
    // Mounted as files, as the kubelet does, the Secret gives a login.
    let dir = tempfile::tempdir().unwrap();
    for key in ["username", "password", "refreshToken"] {
        let value = secret["stringData"][key].as_str().unwrap();
        std::fs::write(dir.path().join(key), value).unwrap();
    }
    let client = config.client_config(dir.path()).unwrap();
    assert_eq!(
        client.credentials.load().unwrap(),
        Credentials::Password {
            org: "ORG".into(),
            user: "USER".into(),
            password: Secret::new("PASSWORD"),
        }
    );
}

#[test]
fn unknown_keys_are_named_with_their_full_path_and_line() {
    let typo = UPSTREAM.replace("  vipSubnet:", "  vipSubnett:");
    assert_eq!(
        error(&typo),
        format!(
            "cloud config {ORIGIN}, line 15: loadbalancer.vipSubnett: unknown key; allowed: enabled, oneArm, ports, certAlias, network, vipSubnet, enableVirtualServiceSharedIP, manageFirewall, internal, claimUnusedAllocations, kubeProxyHealthCheck"
        )
    );
    let top = format!("{UPSTREAM}vappName: x\n");
    assert!(
        error(&top).contains(
            "line 20: vappName: unknown key; allowed: vcd, loadbalancer, clusterid, vAppName, nodes"
        ),
        "{}",
        error(&top)
    );
    // The upstream sample's stale keys are refused, as upstream's strict parser does.
    let stale = UPSTREAM.replace("  vdc: vdc1\n", "  vdc: vdc1\n  network: net1\n");
    assert!(error(&stale).contains("vcd.network: unknown key; allowed: host, org, vdc"));
}

#[test]
fn wrong_types_name_the_path_the_value_and_what_is_allowed() {
    let text = UPSTREAM.replace("isZoneEnabledCluster: false", "isZoneEnabledCluster: yes");
    assert_eq!(
        error(&text),
        format!(
            "cloud config {ORIGIN}, line 5: vcd.isZoneEnabledCluster: invalid type: string \"yes\", expected a boolean"
        )
    );
    let text = UPSTREAM.replace("    http: 80", "    http: eighty");
    assert!(
        error(&text).contains("line 12: loadbalancer.ports.http: invalid type: string \"eighty\"")
    );
    let text = format!("{UPSTREAM}nodes:\n  hostname: vm\n");
    assert!(
        error(&text).contains("nodes.hostname: \"vm\" is not one of VMName, ComputerName, None")
    );
}

#[test]
fn missing_required_keys_are_named() {
    for (line, key) in [
        ("  host: https://vcd.example.com/\n", "vcd.host"),
        ("  org: tenant1\n", "vcd.org"),
        ("  network: net1\n", "loadbalancer.network"),
        ("vAppName: cluster1\n", "vAppName"),
    ] {
        let text = UPSTREAM.replace(line, "");
        let message = error(&text);
        assert!(
            message.starts_with(&format!("cloud config {ORIGIN}: {key}: required: ")),
            "{message}"
        );
    }
    let text = UPSTREAM.replace("    endIP: \"192.168.8.100\"\n", "");
    assert!(error(&text).contains("loadbalancer.oneArm.endIP: required"));
}

#[test]
fn bad_addresses_are_refused_with_their_line() {
    let text = UPSTREAM.replace("\"192.168.8.2\"", "\"10.0.0\"");
    assert_eq!(
        error(&text),
        format!(
            "cloud config {ORIGIN}, line 9: loadbalancer.oneArm.startIP: \"10.0.0\" is not an IPv4 address"
        )
    );
    let text = UPSTREAM.replace("203.0.113.0/26", "203.0.113.0/33");
    assert!(error(&text).contains(
        "line 15: loadbalancer.vipSubnet: \"203.0.113.0/33\" is not an IPv4 CIDR such as 203.0.113.0/26"
    ));
    let text = UPSTREAM.replace("https://vcd.example.com/", "vcd.example.com");
    assert!(error(&text).contains("line 2: vcd.host: \"vcd.example.com\" is not a URL"));
    let reversed = UPSTREAM.replace("192.168.8.2\"", "192.168.8.200\"");
    assert!(error(&reversed).contains("startIP 192.168.8.200 is after endIP 192.168.8.100"));
}

#[test]
fn without_the_shared_ip_feature_one_arm_is_required() {
    let text = UPSTREAM.replace(
        "  oneArm:\n    startIP: \"192.168.8.2\"\n    endIP: \"192.168.8.100\"\n",
        "",
    );
    assert_eq!(
        error(&text),
        format!(
            "cloud config {ORIGIN}: without loadbalancer.enableVirtualServiceSharedIP, loadbalancer.oneArm (startIP, endIP) must be set"
        )
    );
    let shared = text.replace(
        "enableVirtualServiceSharedIP: false",
        "enableVirtualServiceSharedIP: true",
    );
    assert!(parse(&shared).is_ok());
}

#[test]
fn the_cluster_id_falls_back_to_the_environment_value() {
    let text = UPSTREAM.replace(
        "clusterid: urn:vcloud:entity:vmware:capvcdCluster:1234\n",
        "",
    );
    let config = CloudConfig::from_yaml_with_env(&text, ORIGIN, Some("urn:env:1")).unwrap();
    assert_eq!(config.cluster_id(), "urn:env:1");
    assert_eq!(config.lb_config().cluster_id, "urn:env:1");
    let empty = text.clone() + "clusterid: \"\"\n";
    let config = CloudConfig::from_yaml_with_env(&empty, ORIGIN, Some("urn:env:1")).unwrap();
    assert_eq!(
        config.cluster_id(),
        "urn:env:1",
        "an empty clusterid falls back too"
    );
    let config = CloudConfig::from_yaml_with_env(UPSTREAM, ORIGIN, Some("urn:env:1")).unwrap();
    assert_eq!(
        config.cluster_id(),
        "urn:vcloud:entity:vmware:capvcdCluster:1234"
    );
    let config = CloudConfig::from_yaml_with_env(&text, ORIGIN, Some("")).unwrap();
    assert_eq!(
        config.cluster_id(),
        "",
        "an empty clusterid is accepted, as upstream accepts it"
    );
}

fn with_file_credentials(extra: &str) -> CloudConfig {
    parse(&UPSTREAM.replace("  userorg: users\n", extra)).unwrap()
}

#[test]
fn credentials_come_from_the_secret_else_the_file_else_fail() {
    let absent = PathBuf::from("/nonexistent/vcloud/basic-auth");
    let config = with_file_credentials("  user: admin\n  secret: pw\n");
    let source = config.client_config(&absent).unwrap().credentials;
    assert!(matches!(
        source.load().unwrap(),
        Credentials::Password { org, user, password }
            if org == "tenant1" && user == "admin" && password == Secret::new("pw")
    ));

    let config = with_file_credentials("  refreshtoken: tok\n  userorg: users\n");
    let source = config.client_config(&absent).unwrap().credentials;
    assert_eq!(
        source.load().unwrap(),
        Credentials::ApiToken {
            org: "users".into(),
            token: Secret::new("tok")
        }
    );

    // A mounted Secret wins over the file's values.
    let dir = tempfile::tempdir().unwrap();
    let source = config.client_config(dir.path()).unwrap().credentials;
    assert!(matches!(source, CredentialSource::Files { .. }));

    let config = with_file_credentials("");
    let message = config.client_config(&absent).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "cloud config {ORIGIN}: no VCD credentials: the directory /nonexistent/vcloud/basic-auth does not exist (mount the vcloud-basic-auth Secret there) and the cloud config sets neither vcd.refreshtoken nor vcd.user with vcd.secret"
        )
    );
}

#[test]
fn zone_enabled_clusters_need_the_zones_file() {
    let dir = tempfile::tempdir().unwrap();
    let zones = dir.path().join("vcloud-cse-zones.yaml");
    let text = UPSTREAM.replace("isZoneEnabledCluster: false", "isZoneEnabledCluster: true")
        + &format!("nodes:\n  zonesFile: {}\n", zones.display());
    let config = parse(&text).unwrap();
    let message = config.instances_config().unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "cloud config {ORIGIN}: vcd.isZoneEnabledCluster is true, so the zones file is required: cannot read the zones file {}",
            zones.display()
        )),
        "{message}"
    );

    std::fs::write(
        &zones,
        "zoneType: dcgroup\nzones:\n- {name: zone-a, ovdcName: vdc1}\n",
    )
    .unwrap();
    let instances = config.instances_config().unwrap();
    assert_eq!(instances.vapps, ClusterVApps::ZonePrefix("cluster1".into()));
    assert_eq!(instances.zones.zone_of("vdc1"), Some("zone-a"));

    // Without nodes.zonesFile, upstream's fixed path is the one read.
    let default =
        parse(&UPSTREAM.replace("isZoneEnabledCluster: false", "isZoneEnabledCluster: true"))
            .unwrap();
    assert_eq!(default.zones_file(), Path::new(DEFAULT_ZONES_FILE));
}

#[test]
fn secrets_never_show_in_debug_or_errors() {
    let config = with_file_credentials(
        "  user: admin\n  secret: hunter2-pw\n  refreshtoken: s3cret-token\n",
    );
    let absent = Path::new("/nonexistent/basic-auth");
    let client = config.client_config(absent).unwrap();
    let dumps = format!(
        "{config:?} {client:?} {:?}",
        client.credentials.load().unwrap()
    );
    assert!(
        !dumps.contains("hunter2-pw") && !dumps.contains("s3cret-token"),
        "{dumps}"
    );
    assert!(dumps.contains("<redacted>"));

    for wrong in [
        "  secret: [hunter2-pw]\n",
        "  refreshtoken: {t: s3cret-token}\n",
    ] {
        let message = error(&UPSTREAM.replace("  userorg: users\n", wrong));
        assert!(message.contains("(the value is not shown)"), "{message}");
        assert!(
            !message.contains("hunter2-pw") && !message.contains("s3cret-token"),
            "{message}"
        );
    }
    let message = error(&UPSTREAM.replace(
        "https://vcd.example.com/",
        "https://admin:hunter2-pw@vcd.example.com",
    ));
    assert!(
        message.contains("vcd.host: must not contain '@'"),
        "{message}"
    );
    assert!(!message.contains("hunter2-pw"), "{message}");
}

#[test]
fn files_are_read_and_named_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vcloud-ccm-config.yaml");
    let missing = CloudConfig::from_file(&path).unwrap_err().to_string();
    assert!(
        missing.starts_with(&format!("cloud config {}: cannot read: ", path.display())),
        "{missing}"
    );
    std::fs::write(&path, UPSTREAM).unwrap();
    let config = CloudConfig::from_file(&path).unwrap();
    assert_eq!(config.origin(), path.display().to_string());
    std::fs::write(&path, UPSTREAM.replace("  org: tenant1", " org: tenant1")).unwrap();
    let syntax = CloudConfig::from_file(&path).unwrap_err().to_string();
    assert_eq!(
        syntax,
        format!(
            "cloud config {}: did not find expected key at line 3 column 2, while parsing a block mapping",
            path.display()
        )
    );
}

#[test]
fn the_readme_example_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let section = readme.split("## A complete example").nth(1).unwrap();
    let example = section.split("```yaml\n").nth(1).unwrap();
    let example = example.split("```").next().unwrap();
    let config = parse(example).unwrap();
    assert_eq!(
        config
            .lb_config()
            .vip_subnet
            .map(|range| range.address_count()),
        Some(64)
    );
    let secret_dir = tempfile::tempdir().unwrap();
    let client = config.client_config(secret_dir.path()).unwrap();
    assert_eq!(client.rate_limit, Some(20.0));
    let instances = config.instances_config().unwrap();
    assert_eq!(instances.region.as_deref(), Some("eu-west"));
}
