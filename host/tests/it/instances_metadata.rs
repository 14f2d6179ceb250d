//! `instance_metadata` against vcdsim: providerID, addresses, instance
//! type, zones and regions, by node name and by providerID.

use crate::support::instances::*;
use vcd_ccm::instances::{
    AddressPolicy, AddressType, ClusterVApps, HostnameSource, InstancesConfig, InstancesError,
    NicRole, NodeAddress, NodeRef, ZoneMap,
};

fn address(address_type: AddressType, address: &str) -> NodeAddress {
    NodeAddress::new(address_type, address)
}

/// `worker-0` plain; `multi-0` with three NICs (primary index 1), a sizing
/// policy and a computer name; `other-0` in another vApp.
fn cluster_yaml() -> String {
    world_yaml(&[(
        "vdc1",
        vec![
            (
                "cluster1",
                vec![
                    "{name: worker-0, cpus: 4, memoryMb: 8192, nics: [{network: net1, ip: 10.0.0.11}]}".into(),
                    "{name: odd-0, cpus: 1, memoryMb: 1536, nics: [{network: net1, ip: 10.0.0.12}]}".into(),
                    "{name: multi-0, sizingPolicy: 'Large (4 vCPU)', computerName: multi-host, primaryNic: 1, nics: [{network: storage, ip: 192.168.5.20}, {network: net1, ip: 10.0.0.20}, {network: public, ip: 198.51.100.20}, {network: public, ip: 198.51.100.21, connected: false}]}".into(),
                ],
            ),
            ("other", vec![worker("other-0", "10.0.0.30")]),
        ],
    )])
}

#[tokio::test]
async fn metadata_by_name_and_by_provider_id_agree() {
    let sim = start(&cluster_yaml()).await;
    let instances = instances(&sim, single_zone()).await;
    let by_name = instances
        .instance_metadata(&NodeRef::named("worker-0"))
        .await
        .unwrap();
    let expected_id = provider_id(&sim, "worker-0");
    assert_eq!(by_name.provider_id, expected_id);
    assert!(
        by_name
            .provider_id
            .starts_with("vmware-cloud-director://urn:vcloud:vm:")
    );
    assert_eq!(
        by_name.addresses,
        vec![
            address(AddressType::InternalIp, "10.0.0.11"),
            address(AddressType::Hostname, "worker-0"),
        ]
    );
    assert_eq!(
        by_name.instance_type.as_deref(),
        Some("vcd-vm.cpu-4.mem-8GiB")
    );
    assert_eq!(
        (by_name.zone.as_deref(), by_name.region.as_deref()),
        (None, None)
    );

    // The providerID wins over the name, and may be upper-case.
    let shouting = format!(
        "vmware-cloud-director://{}",
        vm_urn(&sim, "worker-0").to_uppercase()
    );
    let by_id = instances
        .instance_metadata(&NodeRef::named("renamed").with_provider_id(&shouting))
        .await
        .unwrap();
    assert_eq!(by_id, by_name);
}

#[tokio::test]
async fn vms_outside_the_cluster_vapp_and_bad_provider_ids_are_errors() {
    let sim = start(&cluster_yaml()).await;
    let instances = instances(&sim, single_zone()).await;
    let missing = instances
        .instance_metadata(&NodeRef::named("other-0"))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, InstancesError::NotFound { .. }),
        "{missing}"
    );
    assert_eq!(
        missing.to_string(),
        "no VM named 'other-0' among the VMs of vApp 'cluster1'"
    );
    let other_id = provider_id(&sim, "other-0");
    let missing = instances
        .instance_metadata(&NodeRef::named("other-0").with_provider_id(&other_id))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains(&other_id), "{missing}");

    let foreign = instances
        .instance_metadata(&NodeRef::named("worker-0").with_provider_id("aws:///eu-west-1a/i-0abc"))
        .await
        .unwrap_err();
    assert!(
        matches!(foreign, InstancesError::InvalidProviderId { .. }),
        "{foreign}"
    );
    // An empty providerID means "not set yet": the name is used.
    let by_name = instances
        .instance_metadata(&NodeRef::named("worker-0").with_provider_id(""))
        .await
        .unwrap();
    assert_eq!(by_name.provider_id, provider_id(&sim, "worker-0"));
}

#[tokio::test]
async fn addresses_follow_the_primary_nic_and_the_policy() {
    let sim = start(&cluster_yaml()).await;
    let node = NodeRef::named("multi-0");

    // Default: the primary NIC only (index 1, not the first NIC), VM name.
    let default = instances(&sim, single_zone()).await;
    assert_eq!(
        default.instance_metadata(&node).await.unwrap().addresses,
        vec![
            address(AddressType::InternalIp, "10.0.0.20"),
            address(AddressType::Hostname, "multi-0"),
        ]
    );

    // Other NICs as ExternalIP, but the storage network as InternalIP; the
    // disconnected NIC gives nothing; the hostname is the computer name.
    let mut config = single_zone();
    config.addresses = AddressPolicy {
        other_nics: NicRole::ExternalIp,
        by_network: [("storage".to_string(), NicRole::InternalIp)].into(),
        hostname: HostnameSource::ComputerName,
    };
    let custom = instances(&sim, config).await;
    assert_eq!(
        custom.instance_metadata(&node).await.unwrap().addresses,
        vec![
            address(AddressType::InternalIp, "10.0.0.20"),
            address(AddressType::InternalIp, "192.168.5.20"),
            address(AddressType::ExternalIp, "198.51.100.20"),
            address(AddressType::Hostname, "multi-host"),
        ]
    );

    let mut config = single_zone();
    config.addresses = AddressPolicy {
        other_nics: NicRole::InternalIp,
        by_network: [("public".to_string(), NicRole::Ignore)].into(),
        hostname: HostnameSource::None,
    };
    let quiet = instances(&sim, config).await;
    assert_eq!(
        quiet.instance_metadata(&node).await.unwrap().addresses,
        vec![
            address(AddressType::InternalIp, "10.0.0.20"),
            address(AddressType::InternalIp, "192.168.5.20"),
        ]
    );
}

#[tokio::test]
async fn instance_type_is_the_sizing_policy_else_cpu_and_memory() {
    let sim = start(&cluster_yaml()).await;
    let instances = instances(&sim, single_zone()).await;
    let type_of = async |name: &str| {
        instances
            .instance_metadata(&NodeRef::named(name))
            .await
            .unwrap()
            .instance_type
    };
    assert_eq!(type_of("multi-0").await.as_deref(), Some("Large--4-vCPU"));
    assert_eq!(
        type_of("worker-0").await.as_deref(),
        Some("vcd-vm.cpu-4.mem-8GiB")
    );
    assert_eq!(
        type_of("odd-0").await.as_deref(),
        Some("vcd-vm.cpu-1.mem-1536MiB")
    );
}

#[tokio::test]
async fn single_zone_gets_its_zone_from_the_map_and_the_configured_region() {
    let sim = start(&cluster_yaml()).await;
    let mut config = single_zone();
    config.zones = ZoneMap::parse(
        "zoneType: dcgroup\nzones:\n  - {name: zone-a, ovdcName: vdc1}\n",
        "test",
    )
    .unwrap();
    config.region = Some("eu-west".into());
    let instances = instances(&sim, config).await;
    let metadata = instances
        .instance_metadata(&NodeRef::named("worker-0"))
        .await
        .unwrap();
    assert_eq!(metadata.zone.as_deref(), Some("zone-a"));
    assert_eq!(metadata.region.as_deref(), Some("eu-west"));
}

#[tokio::test]
async fn multi_zone_reads_every_zone_vapp_and_maps_vdcs_to_zones() {
    let yaml = world_yaml(&[
        (
            "vdc-a",
            vec![
                (
                    "placeholder-a",
                    vec![worker("a-0", "10.1.0.10"), worker("a-1", "10.1.0.11")],
                ),
                ("decoy", vec![worker("decoy-0", "10.1.0.99")]),
            ],
        ),
        (
            "vdc-b",
            vec![("placeholder-b", vec![worker("b-0", "10.2.0.10")])],
        ),
        (
            "vdc-c",
            vec![("placeholder-c", vec![worker("c-0", "10.3.0.10")])],
        ),
    ]);
    let sim = start(&yaml).await;
    // CAPVCD names a zone's vApp `<cluster>_<VDC uuid>_<machine deployment>`;
    // the decoy carries vdc-b's uuid but lives in vdc-a, and vdc-c's vApp
    // belongs to another cluster whose name only starts like ours.
    sim.with_world(|w| {
        let uuid = |vdc: &str| {
            let id = &w.vdcs.iter().find(|v| v.name == vdc).unwrap().id;
            id.rsplit(':').next().unwrap().to_string()
        };
        let names = [
            ("placeholder-a", format!("cluster1_{}_md0", uuid("vdc-a"))),
            ("placeholder-b", format!("cluster1_{}_md0", uuid("vdc-b"))),
            ("decoy", format!("cluster1_{}_md9", uuid("vdc-b"))),
            ("placeholder-c", format!("cluster10_{}_md0", uuid("vdc-c"))),
        ];
        for (old, new) in names {
            w.vapps.iter_mut().find(|a| a.name == old).unwrap().name = new;
        }
    });
    let mut config = InstancesConfig::new(ClusterVApps::ZonePrefix("cluster1".into()));
    config.zones = ZoneMap::parse(
        "zoneType: dcgroup\nzones:\n  - {name: zone-a, ovdcName: vdc-a}\n  - {name: zone-b, ovdcName: vdc-b}\n",
        "test",
    )
    .unwrap();
    config.region = Some("region-1".into());
    let instances = instances(&sim, config).await;
    sim.reset_log();
    for (node, zone) in [("a-0", "zone-a"), ("a-1", "zone-a"), ("b-0", "zone-b")] {
        let metadata = instances
            .instance_metadata(&NodeRef::named(node))
            .await
            .unwrap();
        assert_eq!(metadata.zone.as_deref(), Some(zone), "{node}");
        assert_eq!(metadata.region.as_deref(), Some("region-1"));
    }
    // One query and one GET per zone vApp, for all three nodes.
    assert_eq!((sim.count(QUERY), sim.count(VAPP_OR_VM)), (1, 2));
    for outsider in ["decoy-0", "c-0"] {
        let error = instances
            .instance_metadata(&NodeRef::named(outsider))
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the vApps named 'cluster1_<VDC uuid>…'"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_config_without_a_vapp_name_is_refused() {
    let sim = start(&cluster_yaml()).await;
    let client = client(&sim).await;
    let error = vcd_ccm::instances::Instances::new(
        client,
        InstancesConfig::new(ClusterVApps::Named(" ".into())),
    )
    .err()
    .unwrap();
    assert!(error.to_string().contains("vAppName"), "{error}");
}
