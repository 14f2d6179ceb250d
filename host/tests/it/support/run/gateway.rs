//! What vcdsim saw and holds: the load-balancer writes in its request log,
//! the answers a second writer provokes, and the pools and virtual
//! services tagged for this cluster.

use std::collections::BTreeSet;

use vcdsim::Sim;
use vcdsim::world::task::TaskStatus;

use super::{CLUSTER, LiveService};

pub const POOLS: &str = "/cloudapi/1.0.0/loadBalancer/pools";
pub const VIRTUAL_SERVICES: &str = "/cloudapi/1.0.0/loadBalancer/virtualServices";

/// POSTs to a collection (`POOLS` or `VIRTUAL_SERVICES`).
pub fn posts(vcd: &Sim, collection: &str) -> usize {
    vcd.requests()
        .iter()
        .filter(|e| e.method == "POST" && e.template == collection)
        .count()
}

/// Creates, updates and deletes of pools and virtual services.
pub fn lb_writes(vcd: &Sim) -> usize {
    vcd.requests()
        .iter()
        .filter(|e| e.method != "GET")
        .filter(|e| e.template.starts_with(POOLS) || e.template.starts_with(VIRTUAL_SERVICES))
        .count()
}

/// Every request but reads and logins, as `METHOD path`: what a process
/// wrote to VCD.
pub fn vcd_writes(vcd: &Sim) -> Vec<String> {
    vcd.requests()
        .iter()
        .filter(|e| e.method != "GET")
        .filter(|e| !e.template.contains("sessions") && !e.template.contains("/oauth/"))
        .map(|e| format!("{} {}", e.method, e.path))
        .collect()
}

/// Drift checks a process made so far: each reads the gateway's pools once
/// and queues every Service, so a claim that nothing happens can be held
/// across checks (and the syncs they queued) that ran.
pub fn drift_checks(vcd: &Sim) -> u64 {
    vcd.count("GET /cloudapi/1.0.0/edgeGateways/{id}/loadBalancer/poolSummaries")
}

/// Tasks VCD has accepted but not finished.
pub fn tasks_in_flight(vcd: &Sim) -> usize {
    vcd.with_world(|w| {
        w.tasks
            .iter()
            .filter(|t| matches!(t.status, TaskStatus::Queued | TaskStatus::Running))
            .count()
    })
}

/// 400 DUPLICATE_NAME and BUSY_ENTITY answers, and tasks that ended in
/// error: what two processes writing at once cause.
pub fn clashes(vcd: &Sim) -> Vec<String> {
    let mut found: Vec<String> = vcd
        .requests()
        .iter()
        .filter(|e| e.status == 400)
        .filter(|e| {
            let code = e.response_body["minorErrorCode"]
                .as_str()
                .unwrap_or_default();
            code == "DUPLICATE_NAME" || code == "BUSY_ENTITY"
        })
        .map(|e| {
            format!(
                "{} {} → 400 {}",
                e.method, e.path, e.response_body["message"]
            )
        })
        .collect();
    vcd.with_world(|w| {
        for task in w.tasks.iter().filter(|t| t.status == TaskStatus::Error) {
            let reason = task.error.as_ref().map(|e| e.message.as_str());
            found.push(format!(
                "task {} ({}) ended in error: {}",
                task.operation_name,
                task.owner.name,
                reason.unwrap_or_default()
            ));
        }
    });
    found
}

/// A pool, virtual service or NAT rule and its ownership tag.
#[derive(Debug)]
pub struct Tagged {
    pub kind: &'static str,
    pub name: String,
    pub tag: String,
    /// A virtual service's VIP and first port.
    pub vip: Option<(String, u32)>,
}

impl Tagged {
    fn owner_uid(&self) -> Option<&str> {
        self.tag
            .split(' ')
            .find_map(|field| field.strip_prefix("uid="))
    }
}

/// Every gateway object whose tag names this cluster.
pub fn cluster_objects(vcd: &Sim) -> Vec<Tagged> {
    let needle = format!("cluster={CLUSTER} ");
    vcd.with_world(|w| {
        let pools = w.pools.iter().map(|p| Tagged {
            kind: "pool",
            name: p.name.clone(),
            tag: p.description.clone().unwrap_or_default(),
            vip: None,
        });
        let virtual_services = w.virtual_services.iter().map(|vs| Tagged {
            kind: "virtual service",
            name: vs.name.clone(),
            tag: vs.description.clone().unwrap_or_default(),
            vip: Some((
                vs.virtual_ip_address.clone().unwrap_or_default(),
                vs.service_ports.first().map_or(0, |p| p.port_start),
            )),
        });
        let nat_rules = w.nat_rules.iter().map(|r| Tagged {
            kind: "nat rule",
            name: r.body.name.clone(),
            tag: r.body.description.clone().unwrap_or_default(),
            vip: None,
        });
        pools
            .chain(virtual_services)
            .chain(nat_rules)
            .filter(|o| o.tag.contains(&needle))
            .collect()
    })
}

/// `Ok` when the gateway holds, for each Service, exactly one pool and one
/// virtual service per port (on the Service's external IP) and nothing
/// tagged for this cluster names any other uid; else what differs.
pub fn check_converged(vcd: &Sim, services: &[(LiveService, String)]) -> Result<(), String> {
    let objects = cluster_objects(vcd);
    let live: BTreeSet<&str> = services.iter().map(|(s, _)| s.uid.as_str()).collect();
    if let Some(stray) = objects
        .iter()
        .find(|o| !o.owner_uid().is_some_and(|uid| live.contains(uid)))
    {
        return Err(format!(
            "{} {} is tagged for no live Service: {:?}",
            stray.kind, stray.name, stray.tag
        ));
    }
    for (service, ip) in services {
        let owned: Vec<&Tagged> = objects
            .iter()
            .filter(|o| o.owner_uid() == Some(service.uid.as_str()))
            .collect();
        let pools = owned.iter().filter(|o| o.kind == "pool").count();
        let mut vips: Vec<(String, u32)> = owned.iter().filter_map(|o| o.vip.clone()).collect();
        vips.sort();
        let mut wanted: Vec<(String, u32)> = service
            .ports
            .iter()
            .map(|port| (ip.clone(), u32::from(*port)))
            .collect();
        wanted.sort();
        if pools != service.ports.len() || vips != wanted {
            return Err(format!(
                "Service {}: {pools} pools and virtual services at {vips:?}, wanted {} pools and {wanted:?}",
                service.name,
                service.ports.len()
            ));
        }
    }
    Ok(())
}
