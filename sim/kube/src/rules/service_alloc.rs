//! ClusterIP and NodePort allocation for Services.
//!
//! Allocations are derived from the stored Services themselves, so there is no
//! separate ledger to keep in step; the lowest free value is picked, which keeps
//! tests deterministic where the real server picks at random.

use super::Peers;
use crate::error::FieldError;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::ops::RangeInclusive;

/// The default `--service-node-port-range`.
pub const NODE_PORT_RANGE: RangeInclusive<u64> = 30000..=32767;
/// The default `--service-cluster-ip-range`, 10.96.0.0/12.
const CLUSTER_IP_BASE: u32 = u32::from_be_bytes([10, 96, 0, 0]);
const CLUSTER_IP_PREFIX: u32 = 12;

fn in_cluster_range(ip: Ipv4Addr) -> bool {
    let mask = u32::MAX << (32 - CLUSTER_IP_PREFIX);
    u32::from(ip) & mask == CLUSTER_IP_BASE
}

fn used_cluster_ips(peers: &Peers) -> HashSet<Ipv4Addr> {
    peers
        .iter()
        .filter_map(|svc| svc.pointer("/spec/clusterIP").and_then(Value::as_str))
        .filter_map(|ip| ip.parse().ok())
        .collect()
}

/// Node ports held by other Services, including health-check node ports.
fn used_node_ports(peers: &Peers) -> HashSet<u64> {
    let mut used = HashSet::new();
    for svc in peers.iter() {
        used.extend(node_ports(svc));
        if let Some(port) = svc
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
        {
            used.insert(port);
        }
    }
    used
}

fn node_ports(svc: &Value) -> impl Iterator<Item = u64> + '_ {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|port| port.get("nodePort").and_then(Value::as_u64))
        .filter(|port| *port != 0)
}

/// Sets `spec.clusterIP`/`clusterIPs` when empty; checks a requested address.
pub fn allocate_cluster_ip(svc: &mut Value, peers: &Peers) -> Result<(), FieldError> {
    let requested = svc
        .pointer("/spec/clusterIP")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ip = match requested.as_str() {
        "None" => None,
        "" => {
            let used = used_cluster_ips(peers);
            let size = 1u32 << (32 - CLUSTER_IP_PREFIX);
            // Skip the network address; the broadcast address is never reached in practice.
            let free = (1..size - 1)
                .map(|offset| Ipv4Addr::from(CLUSTER_IP_BASE + offset))
                .find(|ip| !used.contains(ip))
                .ok_or_else(|| FieldError::invalid("spec.clusterIP", "\"\"", "range is full"))?;
            Some(free)
        }
        text => {
            let ip: Ipv4Addr = text.parse().map_err(|_| {
                FieldError::invalid(
                    "spec.clusterIP",
                    format!("\"{text}\""),
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                )
            })?;
            if !in_cluster_range(ip) {
                return Err(FieldError::invalid(
                    "spec.clusterIPs",
                    format!("[]string{{\"{text}\"}}"),
                    "failed to allocate IP: the provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12",
                ));
            }
            if used_cluster_ips(peers).contains(&ip) {
                return Err(FieldError::invalid(
                    "spec.clusterIPs",
                    format!("[]string{{\"{text}\"}}"),
                    "failed to allocate IP: provided IP is already allocated",
                ));
            }
            Some(ip)
        }
    };
    let text = ip.map_or_else(|| "None".to_string(), |ip| ip.to_string());
    svc["spec"]["clusterIP"] = json!(text);
    svc["spec"]["clusterIPs"] = json!([text]);
    Ok(())
}

/// Fills every missing `nodePort` and checks requested ones against the range and
/// against ports other Services hold.
pub fn allocate_node_ports(svc: &mut Value, peers: &Peers) -> Result<(), Vec<FieldError>> {
    let mut used = used_node_ports(peers);
    let mut errors = Vec::new();
    let ports = svc
        .pointer_mut("/spec/ports")
        .and_then(Value::as_array_mut)
        .map(Vec::as_mut_slice)
        .unwrap_or_default();
    // Requested ports first, so a later allocation never takes one of them.
    for (i, port) in ports.iter().enumerate() {
        let Some(requested) = port
            .get("nodePort")
            .and_then(Value::as_u64)
            .filter(|p| *p != 0)
        else {
            continue;
        };
        if !NODE_PORT_RANGE.contains(&requested) {
            errors.push(FieldError::invalid(
                format!("spec.ports[{i}].nodePort"),
                requested,
                "provided port is not in the valid range. The range of valid ports is 30000-32767",
            ));
        } else if !used.insert(requested) {
            errors.push(FieldError::invalid(
                format!("spec.ports[{i}].nodePort"),
                requested,
                "provided port is already allocated",
            ));
        }
    }
    for port in ports.iter_mut() {
        if port.get("nodePort").and_then(Value::as_u64).unwrap_or(0) != 0 {
            continue;
        }
        match NODE_PORT_RANGE.clone().find(|p| !used.contains(p)) {
            Some(free) => {
                used.insert(free);
                port["nodePort"] = json!(free);
            }
            None => errors.push(FieldError::invalid(
                "spec.ports",
                "nodePort",
                "range is full",
            )),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Allocates `spec.healthCheckNodePort` when it is needed and missing.
pub fn allocate_health_check_port(svc: &mut Value, peers: &Peers) -> Result<(), FieldError> {
    let current = svc
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let mut used = used_node_ports(peers);
    used.extend(node_ports(svc));
    if current != 0 {
        return if NODE_PORT_RANGE.contains(&current) && !used.contains(&current) {
            Ok(())
        } else {
            Err(FieldError::invalid(
                "spec.healthCheckNodePort",
                current,
                "provided port is not in the valid range or is already allocated",
            ))
        };
    }
    let free = NODE_PORT_RANGE
        .clone()
        .find(|p| !used.contains(p))
        .ok_or_else(|| FieldError::invalid("spec.healthCheckNodePort", 0, "range is full"))?;
    svc["spec"]["healthCheckNodePort"] = json!(free);
    Ok(())
}
