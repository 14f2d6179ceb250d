//! What the demo shows: Services → external IP → VCD objects, and Nodes →
//! providerID, zone, instance type; and whether everything has converged.

use std::fmt::Write;

use k8s_openapi::api::core::v1::{Event, Node, Service};
use kube::api::{Api, ListParams};
use vcdsim::Sim;

use crate::controllers::node::{INSTANCE_TYPE, ZONE, is_uninitialized};
use crate::controllers::service::internal_ip;

pub struct ServiceRow {
    pub key: String,
    pub ports: String,
    pub ip: Option<String>,
    pub virtual_services: usize,
    pub pools: usize,
    /// The smallest member count of the Service's pools.
    pub members: usize,
    /// Who the Service's gateway firewall rule lets in, once it has one.
    pub firewall: Option<String>,
    /// The library aliases of the certificates its virtual services serve.
    pub certificates: Vec<String>,
    /// The persistence types of its pools (`CLIENT_IP`, …), each once.
    pub persistence: Vec<String>,
    /// The names of its virtual services' HTTP rules, each once.
    pub http_rules: Vec<String>,
}

pub struct NodeRow {
    pub name: String,
    pub provider_id: Option<String>,
    pub internal_ip: Option<String>,
    pub zone: Option<String>,
    pub instance_type: Option<String>,
    pub tainted: bool,
}

pub struct Snapshot {
    pub services: Vec<ServiceRow>,
    pub nodes: Vec<NodeRow>,
}

impl Snapshot {
    pub async fn take(client: &kube::Client, sim: &Sim) -> Result<Snapshot, kube::Error> {
        let services = Api::<Service>::all(client.clone())
            .list(&ListParams::default())
            .await?;
        let nodes = Api::<Node>::all(client.clone())
            .list(&ListParams::default())
            .await?;
        Ok(Snapshot {
            services: services
                .items
                .iter()
                .filter(|s| {
                    s.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("LoadBalancer")
                })
                .map(|s| service_row(s, sim))
                .collect(),
            nodes: nodes.items.iter().map(node_row).collect(),
        })
    }

    /// Every Service has its address and one virtual service per port,
    /// every pool has every node, every node is initialised.
    pub fn converged(&self) -> bool {
        let nodes = self.nodes.len();
        self.services.iter().all(|s| {
            s.ip.is_some()
                && s.firewall.is_some()
                && s.virtual_services == s.ports.split(", ").count()
                && s.members == nodes
        }) && self
            .nodes
            .iter()
            .all(|n| n.provider_id.is_some() && n.internal_ip.is_some() && !n.tainted)
    }

    pub fn render(&self) -> String {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let mut out = String::new();
        // Wide enough for a dual-stack Service's two addresses.
        let ip_width = self
            .services
            .iter()
            .filter_map(|s| s.ip.as_ref().map(String::len))
            .fold(15, usize::max);
        let _ = writeln!(
            out,
            "{:<16} {:<22} {:<ip_width$} VCD OBJECTS",
            "SERVICE", "PORTS", "EXTERNAL-IP"
        );
        for s in &self.services {
            let _ = writeln!(
                out,
                "{:<16} {:<22} {:<ip_width$} {} virtual service(s), {} pool(s) with {} member(s), firewall: {}{}{}{}",
                s.key,
                s.ports,
                dash(&s.ip),
                s.virtual_services,
                s.pools,
                s.members,
                dash(&s.firewall),
                match s.certificates.as_slice() {
                    [] => String::new(),
                    aliases => format!(", TLS: {}", aliases.join(" ")),
                },
                match s.persistence.as_slice() {
                    [] => String::new(),
                    kinds => format!(", persistence: {}", kinds.join(" ")),
                },
                match s.http_rules.as_slice() {
                    [] => String::new(),
                    names => format!(", HTTP rules: {}", names.join(" ")),
                }
            );
        }
        let _ = writeln!(
            out,
            "\n{:<16} {:<13} {:<8} {:<24} PROVIDER-ID",
            "NODE", "INTERNAL-IP", "ZONE", "INSTANCE-TYPE"
        );
        for n in &self.nodes {
            let _ = writeln!(
                out,
                "{:<16} {:<13} {:<8} {:<24} {}{}",
                n.name,
                dash(&n.internal_ip),
                dash(&n.zone),
                dash(&n.instance_type),
                dash(&n.provider_id),
                if n.tainted { "  (uninitialized)" } else { "" }
            );
        }
        out
    }
}

fn service_row(service: &Service, sim: &Sim) -> ServiceRow {
    let meta = &service.metadata;
    let key = format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    );
    let ports = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .map(|ports| {
            ports
                .iter()
                .map(|p| format!("{}/{}", p.port, p.protocol.as_deref().unwrap_or("TCP")))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let ip = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .map(|ingress| {
            // One column: a dual-stack Service's addresses joined by a comma.
            ingress
                .iter()
                .filter_map(|i| i.ip.as_deref())
                .collect::<Vec<_>>()
                .join(",")
        })
        .filter(|ips| !ips.is_empty());
    let tag = format!(" uid={}", meta.uid.as_deref().unwrap_or("?"));
    let owned =
        |description: &Option<String>| description.as_deref().is_some_and(|d| d.contains(&tag));
    let firewall = sim.with_world(|w| {
        let rule = w
            .firewall_rules
            .iter()
            .find(|r| owned(&r.body.description))?;
        let sources: Vec<String> = rule
            .body
            .source_firewall_groups
            .iter()
            .flatten()
            .filter_map(|g| {
                w.firewall_groups
                    .iter()
                    .find(|s| s.body.id.as_deref() == Some(g.id.as_str()))
            })
            .flat_map(|s| s.body.ip_addresses.clone().unwrap_or_default())
            .collect();
        let from = if sources.is_empty() {
            "any".to_string()
        } else {
            sources.join(" ")
        };
        Some(format!("allow from {from}"))
    });
    let (virtual_services, pools, members) = sim.with_world(|w| {
        let pools: Vec<usize> = w
            .pools
            .iter()
            .filter(|p| owned(&p.description))
            .map(|p| w.pool_member_ips(p).len())
            .collect();
        let services = w
            .virtual_services
            .iter()
            .filter(|v| owned(&v.description))
            .count();
        (
            services,
            pools.len(),
            pools.iter().copied().min().unwrap_or(0),
        )
    });
    let certificates = sim.with_world(|w| {
        w.virtual_services
            .iter()
            .filter(|v| owned(&v.description))
            .filter_map(|v| v.certificate_ref.as_ref())
            .filter_map(|r| {
                w.certificates
                    .iter()
                    .find(|c| c.item.id.as_deref() == Some(r.id.as_str()))
                    .map(|c| c.item.alias.clone())
            })
            .collect()
    });
    let persistence = sim.with_world(|w| {
        let mut kinds: Vec<String> = w
            .pools
            .iter()
            .filter(|p| owned(&p.description))
            .filter_map(|p| p.persistence_profile.as_ref())
            .map(|profile| profile.profile_type.clone())
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    });
    let http_rules = sim.with_world(|w| {
        let mut names: Vec<String> = w
            .virtual_services
            .iter()
            .filter(|v| owned(&v.description))
            .filter_map(|v| {
                w.http_policies
                    .iter()
                    .find(|p| Some(&p.virtual_service_id) == v.id.as_ref())
            })
            .flat_map(|p| {
                let request = p.request_rules.iter().map(|r| r.name.clone());
                let response = p.response_rules.iter().map(|r| r.name.clone());
                request
                    .chain(response)
                    .chain(p.security_rules.iter().map(|r| r.name.clone()))
            })
            .collect();
        names.sort();
        names.dedup();
        names
    });
    ServiceRow {
        key,
        ports,
        ip,
        persistence,
        http_rules,
        virtual_services,
        pools,
        members,
        firewall,
        certificates,
    }
}

fn node_row(node: &Node) -> NodeRow {
    let label = |key: &str| {
        node.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .cloned()
    };
    NodeRow {
        name: node.metadata.name.clone().unwrap_or_default(),
        provider_id: node.spec.as_ref().and_then(|s| s.provider_id.clone()),
        internal_ip: internal_ip(node),
        zone: label(ZONE),
        instance_type: label(INSTANCE_TYPE),
        tainted: is_uninitialized(node),
    }
}

/// The Warning Events so far, one line each, for a demo that did not converge.
pub async fn warnings(client: &kube::Client) -> Result<String, kube::Error> {
    let events = Api::<Event>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    Ok(events
        .items
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .map(|e| {
            let object = &e.involved_object;
            format!(
                "  {}/{} {}: {}\n",
                object.namespace.as_deref().unwrap_or("-"),
                object.name.as_deref().unwrap_or("-"),
                e.reason.as_deref().unwrap_or_default(),
                e.message.as_deref().unwrap_or_default()
            )
        })
        .collect())
}
