//! Every resource operation of the client against vcdsim: placement,
//! gateway IPs, IP Spaces, SEGs, port profiles, pools, virtual services,
//! NAT rules, certificates, RDEs and the VM inventory.

use crate::support::vcd::*;
use serde_json::json;
use vcd_ccm::vcd::reference::EntityRef;
use vcd_ccm::vcd::resources::nat::NatRule;
use vcd_ccm::vcd::resources::pool::Pool;
use vcd_ccm::vcd::resources::profiles::{ApplicationPort, PortProfile};
use vcd_ccm::vcd::resources::virtual_service::VirtualService;
use vcd_ccm::vcd::resources::vm::{PowerState, VmScope};
use vcd_ccm::vcd::{VcdClient, VcdError};
use vcdsim::Scenario;

fn pool_body(name: &str, gateway: &EntityRef) -> Pool {
    serde_json::from_value(json!({
        "name": name,
        "defaultPort": 30080,
        "algorithm": "ROUND_ROBIN",
        "members": [{"ipAddress": "10.0.0.11", "port": 30080}, {"ipAddress": "10.0.0.12", "port": 30080}],
        "healthMonitors": [{"type": "TCP"}],
        "gatewayRef": gateway,
    }))
    .unwrap()
}

fn service_body(
    name: &str,
    gateway: &EntityRef,
    pool: &Pool,
    seg: &EntityRef,
    vip: &str,
) -> VirtualService {
    serde_json::from_value(json!({
        "name": name,
        "virtualIpAddress": vip,
        "loadBalancerPoolRef": {"name": pool.name, "id": pool.id},
        "gatewayRef": gateway,
        "serviceEngineGroupRef": seg,
        "servicePorts": [{"portStart": 80, "tcpUdpProfile": {"type": "TCP_PROXY"}}],
        "applicationProfile": {"name": "System-L4-Application", "type": "L4", "systemDefined": true},
    }))
    .unwrap()
}

async fn gateway_ref(client: &VcdClient) -> EntityRef {
    let placement = placement(client).await;
    EntityRef::new(placement.gateway.name, placement.gateway.id)
}

#[tokio::test]
async fn placement_resolves_org_vdc_network_and_gateway_once() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let placement = placement(&client).await;
    assert_eq!(placement.org.name.as_deref(), Some("org1"));
    assert_eq!(placement.vdc.name.as_deref(), Some("vdc1"));
    assert_eq!(placement.network.name, "net1");
    assert!(placement.network.is_nsxt());
    assert_eq!(placement.gateway.name, "edge1");
    assert!(placement.gateway.is_realized());
    let calls = total_calls(&sim);
    placement_again(&client).await;
    assert_eq!(
        total_calls(&sim),
        calls + 2,
        "org and VDC cached; the network and gateway read again"
    );

    let missing = client
        .tenancy()
        .network(&placement.vdc, "no-such-net")
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("org VDC network 'no-such-net' not found"),
        "{missing}"
    );
    let vdc_by_id = client
        .tenancy()
        .vdc(&placement.org, &placement.vdc.id)
        .await
        .unwrap();
    assert_eq!(vdc_by_id, placement.vdc);
}

async fn placement_again(client: &VcdClient) {
    client.tenancy().placement("vdc1", "net1").await.unwrap();
}

#[tokio::test]
async fn gateway_ranges_and_used_ips() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = placement(&client).await.gateway;
    assert!(!gateway.uses_ip_spaces());
    let ranges = gateway.external_ip_ranges();
    assert_eq!(ranges.len(), 1);
    assert!(ranges[0].contains("203.0.113.30"));
    assert_eq!(gateway.primary_ips(), vec!["203.0.113.10".to_string()]);
    let used = client
        .gateways()
        .used_ip_addresses(&gateway.id)
        .await
        .unwrap();
    assert!(
        used.iter()
            .any(|u| u.ip_address == "203.0.113.10" && u.category.as_deref() == Some("PRIMARY_IP"))
    );
}

#[tokio::test]
async fn ip_space_allocate_claim_and_release() {
    let sim = sim_from(Scenario::ip_space()).await;
    let client = tenant_client(&sim).await;
    let gateway = placement(&client).await.gateway;
    assert!(gateway.uses_ip_spaces());
    let suggestions = client
        .ip_spaces()
        .floating_ip_suggestions(&gateway.id)
        .await
        .unwrap();
    assert_eq!(suggestions.len(), 1);
    let space_id = suggestions[0].ip_space_ref.id.clone();
    let space = client.ip_spaces().get(&space_id).await.unwrap();
    assert_eq!(space.space_type, "PUBLIC");
    assert_eq!(space.ip_space_ranges.unwrap().ip_ranges.len(), 1);
    assert!(
        client
            .ip_spaces()
            .summaries()
            .await
            .unwrap()
            .iter()
            .any(|s| s.id == space_id)
    );

    let allocated = client
        .ip_spaces()
        .allocate_floating_ip(&space_id, None)
        .await
        .unwrap();
    let allocation = client
        .ip_spaces()
        .find_allocation(&space_id, &allocated.value)
        .await
        .unwrap()
        .expect("the new allocation");
    assert_eq!(allocation.id, allocated.id);
    let marker = "cluster-c1-namespace-default-service-web";
    let claimed = client
        .ip_spaces()
        .claim_allocation(&space_id, &allocation, marker)
        .await
        .unwrap();
    assert_eq!(claimed.usage_state.as_deref(), Some("USED_MANUAL"));
    assert!(
        claimed.extra.contains_key("orgRef"),
        "unknown fields are kept"
    );
    let found = client
        .ip_spaces()
        .claimed_allocations(&space_id)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].description.as_deref(), Some(marker));

    let specific = client
        .ip_spaces()
        .allocate_floating_ip(&space_id, Some("192.0.2.14"))
        .await
        .unwrap();
    assert_eq!(specific.value, "192.0.2.14");

    client
        .ip_spaces()
        .release_allocation(&space_id, &claimed)
        .await
        .unwrap();
    assert!(
        client
            .ip_spaces()
            .find_allocation(&space_id, &allocated.value)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        client
            .ip_spaces()
            .claimed_allocations(&space_id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_quota_error_ends_the_allocate_task() {
    let sim = sim_from(Scenario::ip_space()).await;
    let client = tenant_client(&sim).await;
    let gateway = placement(&client).await.gateway;
    let space_id = client
        .ip_spaces()
        .floating_ip_suggestions(&gateway.id)
        .await
        .unwrap()[0]
        .ip_space_ref
        .id
        .clone();
    for _ in 0..3 {
        client
            .ip_spaces()
            .allocate_floating_ip(&space_id, None)
            .await
            .unwrap();
    }
    let error = client
        .ip_spaces()
        .allocate_floating_ip(&space_id, None)
        .await
        .unwrap_err();
    assert!(matches!(error, VcdError::TaskFailed { .. }), "{error}");
    assert!(error.to_string().contains("quota"), "{error}");
}

#[tokio::test]
async fn service_engine_group_with_capacity() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_ref(&client).await;
    let assignments = client
        .service_engine_groups()
        .assignments(&gateway.id)
        .await
        .unwrap();
    assert_eq!(assignments.len(), 1);
    assert!(assignments[0].has_capacity());
    let seg = client
        .service_engine_groups()
        .pick(&gateway.id)
        .await
        .unwrap();
    assert_eq!(seg.name.as_deref(), Some("seg1"));
}

#[tokio::test]
async fn port_profiles_system_lookup_and_tenant_lifecycle() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let placement = placement(&client).await;
    let http = client
        .port_profiles()
        .find("SYSTEM", "HTTP")
        .await
        .unwrap()
        .expect("system HTTP");
    assert_eq!(http.scope, "SYSTEM");
    assert!(
        client
            .port_profiles()
            .find("TENANT", "appPort_x")
            .await
            .unwrap()
            .is_none()
    );

    let ports = vec![ApplicationPort {
        protocol: "TCP".into(),
        destination_ports: vec!["8443".into()],
    }];
    let wanted = PortProfile::tenant("appPort_x", &placement.org, &placement.vdc, ports);
    let created = client.port_profiles().create(&wanted).await.unwrap();
    assert_eq!(created.scope, "TENANT");
    let mut changed = created.clone();
    changed.application_ports[0].destination_ports = vec!["9443".into()];
    let updated = client.port_profiles().update(&changed).await.unwrap();
    assert_eq!(
        updated.application_ports[0].destination_ports,
        vec!["9443".to_string()]
    );
    let id = updated.id.clone().unwrap();
    client.port_profiles().delete(&id).await.unwrap();
    assert!(
        client
            .port_profiles()
            .get(&id)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn pools_and_virtual_services_lifecycle() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_ref(&client).await;
    let seg = client
        .service_engine_groups()
        .pick(&gateway.id)
        .await
        .unwrap();

    let pool_id = client
        .pools()
        .create(&pool_body("ingress-pool-web", &gateway))
        .await
        .unwrap();
    let pool = client.pools().get(&pool_id).await.unwrap();
    assert_eq!(pool.members.len(), 2);
    assert!(
        pool.extra.contains_key("healthStatus"),
        "computed fields are kept"
    );
    let summary = client
        .pools()
        .find(&gateway.id, "ingress-pool-web")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(summary.id.clone()), pool.id);
    assert_eq!(
        client.pools().summaries(&gateway.id).await.unwrap().len(),
        1
    );

    let service_id = client
        .virtual_services()
        .create(&service_body(
            "ingress-vs-web",
            &gateway,
            &pool,
            &seg,
            "203.0.113.20",
        ))
        .await
        .unwrap();
    let found = client
        .virtual_services()
        .find(&gateway.id, "ingress-vs-web")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.virtual_ip_address.as_deref(), Some("203.0.113.20"));
    assert_eq!(found.health_status.as_deref(), Some("UP"));
    assert_eq!(
        client
            .virtual_services()
            .summaries(&gateway.id)
            .await
            .unwrap()
            .len(),
        1
    );

    let mut fewer_members = client.pools().get(&pool_id).await.unwrap();
    fewer_members.members.truncate(1);
    client
        .pools()
        .update(&pool_id, &fewer_members)
        .await
        .unwrap();
    assert_eq!(client.pools().get(&pool_id).await.unwrap().members.len(), 1);

    let mut moved = client.virtual_services().get(&service_id).await.unwrap();
    moved.service_ports[0].port_start = 8080;
    client
        .virtual_services()
        .update(&service_id, &moved)
        .await
        .unwrap();
    let moved = client.virtual_services().get(&service_id).await.unwrap();
    assert_eq!(moved.service_ports[0].port_start, 8080);

    let in_use = client
        .pools()
        .delete(&gateway.id, &pool_id)
        .await
        .unwrap_err();
    assert!(
        matches!(
            in_use,
            VcdError::TaskFailed { .. } | VcdError::Rejected { .. }
        ),
        "{in_use}"
    );
    client
        .virtual_services()
        .delete(&gateway.id, &service_id)
        .await
        .unwrap();
    client.pools().delete(&gateway.id, &pool_id).await.unwrap();
    assert!(
        client
            .pools()
            .find(&gateway.id, "ingress-pool-web")
            .await
            .unwrap()
            .is_none()
    );
    client
        .pools()
        .delete(&gateway.id, &pool_id)
        .await
        .expect("deleting twice is fine");
}

#[tokio::test]
async fn nat_rules_lifecycle_with_versions() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_ref(&client).await;
    let rule: NatRule = serde_json::from_value(json!({
        "name": "dnat-ingress-vs-web",
        "type": "DNAT",
        "externalAddresses": "203.0.113.21",
        "internalAddresses": "192.168.8.2",
        "dnatExternalPort": "80",
    }))
    .unwrap();
    let id = client.nat_rules().create(&gateway.id, &rule).await.unwrap();
    let created = client.nat_rules().get(&gateway.id, &id).await.unwrap();
    assert!(created.version.is_some());
    assert_eq!(client.nat_rules().list(&gateway.id).await.unwrap().len(), 1);

    let mut changed = created.clone();
    changed.internal_addresses = "192.168.8.3".into();
    client
        .nat_rules()
        .update(&gateway.id, &id, &changed)
        .await
        .unwrap();
    let updated = client.nat_rules().get(&gateway.id, &id).await.unwrap();
    assert_eq!(updated.internal_addresses, "192.168.8.3");
    assert_ne!(updated.version, created.version);

    let stale = client
        .nat_rules()
        .update(&gateway.id, &id, &changed)
        .await
        .unwrap_err();
    assert!(!stale.is_busy(), "a stale version is refused: {stale}");
    let unversioned = NatRule {
        version: None,
        ..updated.clone()
    };
    assert!(
        client
            .nat_rules()
            .update(&gateway.id, &id, &unversioned)
            .await
            .is_err()
    );

    client.nat_rules().delete(&gateway.id, &id).await.unwrap();
    assert!(
        client
            .nat_rules()
            .list(&gateway.id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn certificates_by_alias() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let certificate = client
        .certificates()
        .find("my-cert")
        .await
        .unwrap()
        .expect("my-cert");
    assert_eq!(certificate.reference().name.as_deref(), Some("my-cert"));
    assert!(client.certificates().find("other").await.unwrap().is_none());
    assert_eq!(client.certificates().list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn entities_update_with_etag_and_retry_on_412() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let entity_id = sim.with_world(|world| world.entities[0].body.id.clone().unwrap());
    let (entity, etag) = client.entities().get(&entity_id).await.unwrap();
    assert_eq!(entity.entity["kind"], "CAPVCDCluster");
    assert!(!etag.is_empty());

    let mut raced = false;
    let updated = client
        .entities()
        .update(&entity_id, |document| {
            if !raced {
                // Another writer changes the entity between our GET and PUT.
                raced = true;
                sim.with_world(|world| world.entities[0].revision += 1);
            }
            document["status"]["cpi"] = json!({"virtualIPs": ["203.0.113.20"]});
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(
        updated.entity["status"]["cpi"]["virtualIPs"][0],
        "203.0.113.20"
    );
    assert_eq!(updated.entity["kind"], "CAPVCDCluster");
    assert_eq!(
        sim.count("PUT /cloudapi/1.0.0/entities/{id}"),
        2,
        "one 412, then success"
    );
}

#[tokio::test]
async fn vm_inventory_by_vapp_and_by_id() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let records = client
        .vms()
        .query(&VmScope::VApp("cluster1".into()))
        .await
        .unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(client.vms().query(&VmScope::Org).await.unwrap().len(), 3);
    assert!(
        client
            .vms()
            .query(&VmScope::VApp("other".into()))
            .await
            .unwrap()
            .is_empty()
    );
    let worker = records.iter().find(|r| r.name == "worker-0").unwrap();
    let vm = client.vms().get(&worker.id().unwrap()).await.unwrap();
    assert_eq!(vm.name, "worker-0");
    assert_eq!(vm.power, PowerState::PoweredOn);
    assert_eq!(
        vm.primary_nic().and_then(|n| n.ip_address.as_deref()),
        Some("10.0.0.11")
    );
    assert_eq!(client.vms().vapp_of(&vm).await.unwrap().name, "cluster1");

    sim.with_world(|world| {
        world.set_vm_power(&vm.id, vcdsim::world::compute::PowerState::PoweredOff)
    })
    .unwrap();
    assert_eq!(
        client.vms().get(&vm.id).await.unwrap().power,
        PowerState::PoweredOff
    );
    sim.with_world(|world| world.remove_vm(&vm.id)).unwrap();
    let gone = client.vms().get(&vm.id).await.unwrap_err();
    assert!(
        gone.is_not_found() && gone.to_string().contains("VAPP_VM_VIEW"),
        "{gone}"
    );
}

#[tokio::test]
async fn vapp_with_vms_carries_sizing_computer_name_and_nics() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let vapp_id = sim.with_world(|w| w.vapps[0].id.clone());
    let spec: vcdsim::scenario::VmSpec = serde_json::from_value(json!({
        "name": "gpu-0", "cpus": 8, "memoryMb": 32768, "sizingPolicy": "gpu.large",
        "computerName": "gpu-host-0", "primaryNic": 1,
        "nics": [{"network": "net1", "ip": "10.0.0.50"}, {"network": "net1", "ip": "10.0.0.51"}],
    }))
    .unwrap();
    sim.with_world(|w| w.add_vm(&vapp_id, &spec)).unwrap();

    let records = client
        .vms()
        .query(&VmScope::VAppPrefix("clus".into()))
        .await
        .unwrap();
    assert_eq!(records.len(), 4);
    assert!(
        client
            .vms()
            .query(&VmScope::VAppPrefix("other".into()))
            .await
            .unwrap()
            .is_empty()
    );
    let record = records.iter().find(|r| r.name == "gpu-0").unwrap();
    assert_eq!(record.vdc_name.as_deref(), Some("vdc1"));
    assert!(record.vdc.as_deref().unwrap().contains("/api/vdc/"));

    let vapp = client
        .vms()
        .vapp_with_vms(record.container.as_deref().unwrap())
        .await
        .unwrap();
    assert_eq!(vapp.name, "cluster1");
    assert_eq!(vapp.vms.len(), 4);
    let gpu = vapp.vms.iter().find(|vm| vm.name == "gpu-0").unwrap();
    assert_eq!(gpu.sizing_policy.as_deref(), Some("gpu.large"));
    assert_eq!(gpu.computer_name.as_deref(), Some("gpu-host-0"));
    assert_eq!((gpu.cpus, gpu.memory_mb), (Some(8), Some(32768)));
    assert_eq!(
        gpu.primary_nic().and_then(|n| n.ip_address.as_deref()),
        Some("10.0.0.51")
    );
    let worker = vapp.vms.iter().find(|vm| vm.name == "worker-0").unwrap();
    assert_eq!(worker.sizing_policy, None);
    assert_eq!(worker.computer_name.as_deref(), Some("worker-0"));
}
