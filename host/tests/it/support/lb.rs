//! Shared helpers of the load-balancer tests: vcdsim worlds sized for them,
//! engines in every mode, Services and nodes, and reading back what the
//! gateway holds and what the calls cost.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;

use vcd_ccm::lb::journal::JournalError;
use vcd_ccm::lb::tls::{SecretData, SecretReadError};
use vcd_ccm::lb::{
    AllocationJournal, ClusterIdentity, LbConfig, LoadBalancers, NodeSpec, OneArm, PortSpec,
    ServiceSpec, TlsSecrets,
};
use vcd_ccm::policy::builtin;
use vcd_ccm::policy::loader::{self, PolicySource};
use vcd_ccm::policy::model::Protocol;
use vcd_ccm::policy::registry::PolicySet;
use vcd_ccm::policy::{Limits, PolicyEngine, Registry};
use vcd_ccm::vcd::VcdClient;
use vcdsim::{Scenario, Sim};

use crate::support::{policies, vcd};

pub const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";
pub const CERT_ALIAS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";
pub use super::CLUSTER;
pub const INTERNAL_START: &str = "192.168.8.2";
pub const INTERNAL_END: &str = "192.168.8.250";

fn certificates() -> &'static str {
    "    certificates:
      - alias: my-cert
        certificate: \"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n\"
      - alias: other-cert
        certificate: \"-----BEGIN CERTIFICATE-----\\nMIIC\\n-----END CERTIFICATE-----\\n\"
"
}

/// The default world with a wide IP block, room for 200 virtual services
/// and two certificates.
pub fn blocks_scenario() -> Scenario {
    blocks_scenario_ranged("203.0.113.10-203.0.113.250")
}

/// [`blocks_scenario`] with the gateway's external addresses in `range`
/// (its first is the primary IP).
pub fn blocks_scenario_ranged(range: &str) -> Scenario {
    let yaml = format!(
        "systemUsers:
  - {{name: admin, password: admin-password, apiTokens: [system-api-token-0123456789abcdef]}}
serviceEngineGroups:
  - {{name: seg1, reservationType: SHARED}}
orgs:
  - name: org1
    users:
      - {{name: k8s-cpi, password: k8s-cpi-password, apiTokens: [org1-api-token-0123456789abcdef]}}
    vdcs:
      - name: vdc1
        networks: [{{name: net1, gateway: edge1, cidr: 10.0.0.1/24, ranges: [\"10.0.0.10-10.0.0.200\"]}}]
    edgeGateways:
      - name: edge1
        vdc: vdc1
        subnets: [{{cidr: 203.0.113.1/24, primaryIp: 203.0.113.10, ranges: [\"{range}\"]}}]
        serviceEngineGroups: [{{name: seg1, maxVirtualServices: 400}}]
{certs}    entities:
      - entityType: urn:vcloud:type:vmware:capvcdCluster:1.3.0
        name: cluster1
        entity: {{kind: CAPVCDCluster, status: {{}}}}
",
        certs = certificates()
    );
    Scenario::from_yaml(&yaml).expect("the blocks scenario parses")
}

/// A gateway on a PUBLIC IP Space of 20 addresses (quota 10).
pub fn spaces_scenario() -> Scenario {
    let yaml = format!(
        "systemUsers:
  - {{name: admin, password: admin-password, apiTokens: [system-api-token-0123456789abcdef]}}
serviceEngineGroups:
  - {{name: seg1}}
ipSpaces:
  - name: public1
    type: PUBLIC
    ranges: [\"192.0.2.10-192.0.2.29\"]
    internalScope: [\"192.0.2.0/24\"]
    externalScope: 0.0.0.0/0
    defaultFloatingIpQuota: 10
orgs:
  - name: org1
    users:
      - {{name: k8s-cpi, password: k8s-cpi-password, apiTokens: [org1-api-token-0123456789abcdef]}}
    vdcs:
      - name: vdc1
        networks: [{{name: net1, gateway: edge1, cidr: 10.0.0.1/24}}]
    edgeGateways:
      - name: edge1
        vdc: vdc1
        ipSpaces: [public1]
        serviceEngineGroups: [{{name: seg1, maxVirtualServices: 400}}]
{certs}",
        certs = certificates()
    );
    Scenario::from_yaml(&yaml).expect("the IP Space scenario parses")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeKind {
    SharedVip,
    SharedVipOneArm,
    OneArm,
}

pub fn config(cluster: &str, mode: ModeKind) -> LbConfig {
    let mut config = LbConfig::new(cluster, "vdc1", "net1");
    let one_arm = Some(OneArm {
        start_ip: INTERNAL_START.into(),
        end_ip: INTERNAL_END.into(),
    });
    match mode {
        ModeKind::SharedVip => {}
        ModeKind::SharedVipOneArm => config.one_arm = one_arm,
        ModeKind::OneArm => {
            config.enable_virtual_service_shared_ip = false;
            config.one_arm = one_arm;
        }
    }
    config
}

pub fn policy_engine() -> Arc<PolicyEngine> {
    static ENGINE: OnceLock<Arc<PolicyEngine>> = OnceLock::new();
    ENGINE
        .get_or_init(|| PolicyEngine::new().expect("the policy engine starts"))
        .clone()
}

/// The default policy with the config's certAlias, as the only policy. Its
/// deadline leaves room for a loaded machine: these engines test the load
/// balancer, the sandbox's deadlines are tested on their own.
pub async fn default_registry(config: &LbConfig) -> Arc<Registry> {
    let source = PolicySource {
        name: builtin::DEFAULT_POLICY_NAME,
        bytes: builtin::DEFAULT_POLICY_WASM,
        pin: None,
        config: config.default_policy_config(),
        limits: Limits {
            timeout: std::time::Duration::from_secs(5),
            ..Limits::default()
        },
    };
    let policy = loader::load(&policy_engine(), source)
        .await
        .expect("the default policy loads");
    Arc::new(Registry::new(PolicySet::only_default(Arc::new(policy))))
}

/// The misbehaving test policy (`loop`, `trap`, `oom`, `ok`) as the only policy.
pub async fn misbehaving_registry(behaviour: &str) -> Arc<Registry> {
    // Only the loop is meant to meet the deadline: the others (running out
    // of memory takes a while) get room for a loaded machine.
    let limits = match behaviour {
        "loop" => Limits::default(),
        _ => Limits {
            timeout: std::time::Duration::from_secs(5),
            ..Limits::default()
        },
    };
    let policy = policies::misbehaving(&policy_engine(), behaviour, limits).await;
    Arc::new(Registry::new(PolicySet::only_default(Arc::new(policy))))
}

pub async fn client(sim: &Sim) -> VcdClient {
    vcd::tenant_client(sim).await
}

pub async fn engine(sim: &Sim, config: LbConfig) -> LoadBalancers {
    let registry = default_registry(&config).await;
    engine_with(sim, config, registry).await
}

pub async fn engine_with(sim: &Sim, config: LbConfig, registry: Arc<Registry>) -> LoadBalancers {
    engine_of(sim, config, registry, identity(KUBE_SYSTEM_UID)).await
}

/// The engine of the Kubernetes cluster whose kube-system Namespace has
/// `identity`, with the journal its Services keep (shared by its engines,
/// as annotations outlive a process).
pub async fn engine_of(
    sim: &Sim,
    config: LbConfig,
    registry: Arc<Registry>,
    identity: ClusterIdentity,
) -> LoadBalancers {
    let journal = journal_of(&identity);
    journal_engine(sim, config, registry, identity, journal).await
}

pub async fn journal_engine(
    sim: &Sim,
    config: LbConfig,
    registry: Arc<Registry>,
    identity: ClusterIdentity,
    journal: Arc<dyn AllocationJournal>,
) -> LoadBalancers {
    secrets_engine(
        sim,
        config,
        registry,
        identity,
        journal,
        Arc::new(NoSecrets),
    )
    .await
}

/// [`journal_engine`] reading the Secrets Services name through `secrets`.
pub async fn secrets_engine(
    sim: &Sim,
    config: LbConfig,
    registry: Arc<Registry>,
    identity: ClusterIdentity,
    journal: Arc<dyn AllocationJournal>,
    secrets: Arc<dyn TlsSecrets>,
) -> LoadBalancers {
    LoadBalancers::new(
        client(sim).await,
        registry,
        config,
        identity,
        journal,
        secrets,
    )
    .await
    .expect("the load balancer engine starts")
}

/// A cluster without Secrets: every one a Service names is missing.
pub struct NoSecrets;

impl TlsSecrets for NoSecrets {
    fn get<'a>(
        &'a self,
        _namespace: &'a str,
        _name: &'a str,
    ) -> BoxFuture<'a, Result<Option<SecretData>, SecretReadError>> {
        Box::pin(async { Ok(None) })
    }
}

/// Notes kept per Service uid, as the Services' annotations would keep them.
#[derive(Default)]
pub struct MemoryJournal(Mutex<HashMap<String, String>>);

impl AllocationJournal for MemoryJournal {
    fn noted(&self, service: &ServiceSpec) -> Option<String> {
        self.0.lock().unwrap().get(&service.uid).cloned()
    }

    fn note<'a>(
        &'a self,
        service: &'a ServiceSpec,
        note: String,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.lock().unwrap().insert(service.uid.clone(), note);
        Box::pin(async { Ok(()) })
    }
}

/// The journal of the cluster `identity` names, one per test thread's
/// clusters: engines restarted in a test see what earlier ones noted.
pub fn journal_of(identity: &ClusterIdentity) -> Arc<dyn AllocationJournal> {
    thread_local! {
        static JOURNALS: std::cell::RefCell<HashMap<String, Arc<MemoryJournal>>> =
            Default::default();
    }
    JOURNALS.with(|journals| {
        journals
            .borrow_mut()
            .entry(identity.as_str().to_string())
            .or_default()
            .clone()
    })
}

/// The kube-system uid of the cluster the `engine*` helpers stand for.
pub const KUBE_SYSTEM_UID: &str = "0b7c1e2a-5d4f-4e8a-9c3b-111111111111";

/// The kube-system uid of a second Kubernetes cluster on the same gateway.
pub const OTHER_KUBE_SYSTEM_UID: &str = "0b7c1e2a-5d4f-4e8a-9c3b-222222222222";

/// The engine of a second Kubernetes cluster on the same gateway.
pub async fn other_cluster_engine(sim: &Sim, config: LbConfig) -> LoadBalancers {
    let registry = default_registry(&config).await;
    engine_of(sim, config, registry, identity(OTHER_KUBE_SYSTEM_UID)).await
}

pub fn identity(uid: &str) -> ClusterIdentity {
    ClusterIdentity::from_namespace_uid(uid).expect("a uid")
}

pub fn tcp(port: u16, node_port: u16) -> PortSpec {
    PortSpec {
        name: format!("p{port}"),
        protocol: Protocol::Tcp,
        port,
        node_port: Some(node_port),
        app_protocol: None,
    }
}

pub fn udp(port: u16, node_port: u16) -> PortSpec {
    PortSpec {
        protocol: Protocol::Udp,
        ..tcp(port, node_port)
    }
}

pub fn service(namespace: &str, name: &str, uid: &str, ports: Vec<PortSpec>) -> ServiceSpec {
    ServiceSpec {
        namespace: namespace.into(),
        name: name.into(),
        uid: uid.into(),
        ports,
        ..ServiceSpec::default()
    }
}

/// Port 80 plain, port 443 terminating TLS with `my-cert`.
pub fn web_service(namespace: &str, name: &str, uid: &str) -> ServiceSpec {
    let mut svc = service(namespace, name, uid, vec![tcp(80, 30080), tcp(443, 30443)]);
    svc.annotations = BTreeMap::from([
        (SSL_PORTS.to_string(), "443".to_string()),
        (CERT_ALIAS.to_string(), "my-cert".to_string()),
    ]);
    svc
}

pub fn nodes(count: usize) -> Vec<NodeSpec> {
    (0..count)
        .map(|i| NodeSpec::new(format!("worker-{i}"), format!("10.0.0.{}", 11 + i)))
        .collect()
}

/// One gateway object as the tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub kind: &'static str,
    pub name: String,
    pub description: String,
    /// VIP (virtual service), external address (NAT), entries (IP set) or
    /// empty (pool).
    pub address: String,
}

/// Every pool, virtual service and NAT rule in the world.
pub fn objects(sim: &Sim) -> Vec<Object> {
    sim.with_world(|w| {
        let mut all = Vec::new();
        for vs in &w.virtual_services {
            all.push(Object {
                kind: "virtual service",
                name: vs.name.clone(),
                description: vs.description.clone().unwrap_or_default(),
                address: vs.virtual_ip_address.clone().unwrap_or_default(),
            });
        }
        for pool in &w.pools {
            all.push(Object {
                kind: "pool",
                name: pool.name.clone(),
                description: pool.description.clone().unwrap_or_default(),
                address: String::new(),
            });
        }
        for rule in &w.nat_rules {
            all.push(Object {
                kind: "nat rule",
                name: rule.body.name.clone(),
                description: rule.body.description.clone().unwrap_or_default(),
                address: rule.body.external_addresses.clone(),
            });
        }
        all
    })
}

/// The IP sets pools take their members from, with their entries.
pub fn member_sets(sim: &Sim) -> Vec<Object> {
    sim.with_world(|w| {
        let mut all = Vec::new();
        for set in w
            .firewall_groups
            .iter()
            .filter(|g| g.body.name.starts_with("ingress-nodes-"))
        {
            let mut entries = set.body.ip_addresses.clone().unwrap_or_default();
            entries.sort();
            all.push(Object {
                kind: "ip set",
                name: set.body.name.clone(),
                description: set.body.description.clone().unwrap_or_default(),
                address: entries.join(","),
            });
        }
        all
    })
}

/// Objects whose tag names `uid` (of any cluster).
pub fn objects_of(sim: &Sim, uid: &str) -> Vec<Object> {
    let needle = format!(" uid={uid}");
    objects(sim)
        .into_iter()
        .filter(|o| o.description.contains(&needle))
        .collect()
}

/// Objects whose tag names `cluster`.
pub fn objects_of_cluster(sim: &Sim, cluster: &str) -> Vec<Object> {
    let needle = format!("cluster={cluster} ");
    objects(sim)
        .into_iter()
        .filter(|o| o.description.contains(&needle))
        .collect()
}

/// IP Space allocations as (address, description).
pub fn allocations(sim: &Sim) -> Vec<(String, String)> {
    sim.with_world(|w| {
        w.ip_allocations
            .iter()
            .map(|a| (a.value.to_string(), a.description.clone()))
            .collect()
    })
}

pub fn is_task_poll(endpoint: &str) -> bool {
    endpoint.contains("/api/task/")
}

/// (reads, writes) since the last reset, task polls excluded.
pub fn calls(sim: &Sim) -> (u64, u64) {
    let mut reads = 0;
    let mut writes = 0;
    for (endpoint, count) in sim.counters() {
        if is_task_poll(&endpoint) {
            continue;
        }
        if endpoint.starts_with("GET ") {
            reads += count;
        } else {
            writes += count;
        }
    }
    (reads, writes)
}

/// The counters since the last reset, task polls excluded, one per line.
pub fn call_lines(sim: &Sim) -> String {
    sim.counters()
        .into_iter()
        .filter(|(endpoint, _)| !is_task_poll(endpoint))
        .map(|(endpoint, count)| format!("    {count:>3}  {endpoint}\n"))
        .collect()
}

/// Every write in the request log, in order: method, path, status and
/// the name or description the body carries, for a failure's message.
pub fn write_lines(sim: &Sim) -> String {
    sim.requests()
        .iter()
        .filter(|r| r.method != "GET" && !is_task_poll(&r.counter_key()))
        .map(|r| {
            let named = ["name", "description"]
                .iter()
                .find_map(|k| r.request_body.get(k).and_then(|v| v.as_str()))
                .unwrap_or_default();
            format!("    {} {} {} {named}\n", r.method, r.path, r.status)
        })
        .collect()
}

/// Rewrites the tags of `uid`'s objects and IP Space claims as a later
/// vcd-ccm might write them (tag format 99, with a word this version does
/// not know): what a rollback finds.
pub fn tag_in_a_later_format(sim: &Sim, uid: &str) {
    let needle = format!(" uid={uid}");
    let later = |text: &mut String| {
        if text.contains(&needle) {
            *text = text.replacen(" format=4 ", " format=99 ", 1) + " colour=red";
        }
    };
    sim.with_world(|w| {
        for vs in &mut w.virtual_services {
            vs.description.as_mut().map(later);
        }
        for pool in &mut w.pools {
            pool.description.as_mut().map(later);
        }
        for rule in &mut w.nat_rules {
            rule.body.description.as_mut().map(later);
        }
        for allocation in &mut w.ip_allocations {
            later(&mut allocation.description);
        }
        for set in &mut w.firewall_groups {
            set.body.description.as_mut().map(later);
        }
    });
}

/// Assigns the gateway a second service engine group, `name`, with room
/// for `max` virtual services, after the scenario's `seg1`.
pub fn add_engine_group(sim: &Sim, name: &str, max: u32) {
    use vcdsim::world::alb::{SegAssignment, ServiceEngineGroup};
    sim.with_world(|w| {
        let gateway_id = w.gateways[0].id.clone();
        let id = format!("urn:vcloud:serviceEngineGroup:{name}");
        w.service_engine_groups.push(ServiceEngineGroup {
            id: id.clone(),
            name: name.into(),
            reservation_type: "SHARED".into(),
            ha_mode: "ELASTIC_N_PLUS_M_BUFFER".into(),
            supported_feature_set: "PREMIUM".into(),
        });
        w.seg_assignments.push(SegAssignment {
            id: format!("urn:vcloud:serviceEngineGroupAssignment:{name}"),
            seg_id: id,
            gateway_id,
            max_virtual_services: Some(max),
            min_virtual_services: None,
        });
    });
}

/// Every listed pool member as (pool, address, enabled).
pub fn pool_members(sim: &Sim) -> std::collections::BTreeSet<(String, String, bool)> {
    sim.with_world(|w| {
        w.pools
            .iter()
            .flat_map(|p| {
                p.members
                    .iter()
                    .map(|m| (p.name.clone(), m.ip_address.clone(), m.enabled))
            })
            .collect()
    })
}
