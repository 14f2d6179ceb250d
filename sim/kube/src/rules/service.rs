//! Services: defaults, validation, immutable fields and IP/port allocation.

use super::service_alloc::{allocate_cluster_ip, allocate_health_check_port, allocate_node_ports};
use super::{Endpoint, KindRules, NameRule, Peers, check};
use crate::error::FieldError;
use crate::object::{map_entry, str_at};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::net::IpAddr;

pub struct ServiceRules;

const TYPES: [&str; 4] = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];

fn service_type(svc: &Value) -> &str {
    str_at(svc, "spec.type").unwrap_or("ClusterIP")
}

fn needs_node_ports(svc: &Value) -> bool {
    match service_type(svc) {
        "NodePort" => true,
        "LoadBalancer" => svc
            .pointer("/spec/allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

fn needs_health_check_port(svc: &Value) -> bool {
    service_type(svc) == "LoadBalancer"
        && str_at(svc, "spec.externalTrafficPolicy") == Some("Local")
}

/// `SetDefaults_Service` for the fields clients observe.
fn apply_defaults(svc: &mut Value) {
    let spec = map_entry(svc, "spec");
    spec.entry("type").or_insert_with(|| json!("ClusterIP"));
    spec.entry("sessionAffinity")
        .or_insert_with(|| json!("None"));
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if kind != "ExternalName" {
        spec.entry("internalTrafficPolicy")
            .or_insert_with(|| json!("Cluster"));
        spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
        spec.entry("ipFamilyPolicy")
            .or_insert_with(|| json!("SingleStack"));
    }
    if kind == "NodePort" || kind == "LoadBalancer" {
        spec.entry("externalTrafficPolicy")
            .or_insert_with(|| json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        spec.entry("allocateLoadBalancerNodePorts")
            .or_insert_with(|| json!(true));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert_with(|| json!("TCP"));
            let target_missing = port.get("targetPort").is_none_or(|t| t.is_null() || t == 0);
            if target_missing && let Some(number) = port.get("port").cloned() {
                port.insert("targetPort".into(), number);
            }
        }
    }
    default_ingress_ip_mode(svc);
}

/// With LoadBalancerIPMode GA, an ingress `ip` without `ipMode` defaults to `VIP`.
fn default_ingress_ip_mode(svc: &mut Value) {
    if service_type(svc) != "LoadBalancer" {
        return;
    }
    if let Some(ingress) = svc
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut)
    {
        for entry in ingress.iter_mut().filter_map(Value::as_object_mut) {
            if entry.contains_key("ip") && !entry.contains_key("ipMode") {
                entry.insert("ipMode".into(), json!("VIP"));
            }
        }
    }
}

fn check_port_number(errors: &mut Vec<FieldError>, field: String, value: &Value) {
    match value.as_i64() {
        Some(1..=65535) => {}
        _ => errors.push(FieldError::invalid(
            field,
            value,
            "must be between 1 and 65535, inclusive",
        )),
    }
}

fn check_spec(svc: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let kind = service_type(svc);
    if !TYPES.contains(&kind) {
        errors.push(FieldError::not_supported("spec.type", kind, &TYPES));
        return errors;
    }
    if kind == "ExternalName"
        && str_at(svc, "spec.externalName")
            .unwrap_or_default()
            .is_empty()
    {
        errors.push(FieldError::required("spec.externalName"));
    }
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let headless = str_at(svc, "spec.clusterIP") == Some("None");
    if ports.is_empty() && kind != "ExternalName" && !headless {
        errors.push(FieldError::required("spec.ports"));
    }
    let mut names = HashSet::new();
    let mut port_keys = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = |field: &str| format!("spec.ports[{i}].{field}");
        let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
        if ports.len() > 1 && name.is_empty() {
            errors.push(FieldError::required(at("name")));
        }
        if !name.is_empty() && !names.insert(name) {
            errors.push(FieldError::duplicate(at("name"), format!("\"{name}\"")));
        }
        check_port_number(
            &mut errors,
            at("port"),
            port.get("port").unwrap_or(&Value::Null),
        );
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP");
        if !PROTOCOLS.contains(&protocol) {
            errors.push(FieldError::not_supported(
                at("protocol"),
                protocol,
                &PROTOCOLS,
            ));
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or_default();
        if !port_keys.insert((number, protocol)) {
            errors.push(FieldError::duplicate(
                format!("spec.ports[{i}]"),
                format!("{{{number} {protocol}}}"),
            ));
        }
        if let Some(target) = port.get("targetPort").filter(|t| t.is_number()) {
            check_port_number(&mut errors, at("targetPort"), target);
        }
        let node_port = port.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
        if node_port != 0 && !matches!(kind, "NodePort" | "LoadBalancer") {
            errors.push(FieldError::forbidden(
                at("nodePort"),
                format!("may not be used when `type` is '{kind}'"),
            ));
        }
    }
    if svc
        .pointer("/spec/loadBalancerClass")
        .is_some_and(|c| !c.is_null())
        && kind != "LoadBalancer"
    {
        errors.push(FieldError::forbidden(
            "spec.loadBalancerClass",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    errors
}

fn check_status(svc: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ingress = svc
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, entry) in ingress.iter().enumerate() {
        let at = |field: &str| format!("status.loadBalancer.ingress[{i}].{field}");
        let ip = entry.get("ip").and_then(Value::as_str);
        if let Some(ip) = ip
            && ip.parse::<IpAddr>().is_err()
        {
            errors.push(FieldError::invalid(
                at("ip"),
                format!("\"{ip}\""),
                "must be a valid IP address",
            ));
        }
        if let Some(hostname) = entry.get("hostname").and_then(Value::as_str)
            && hostname.parse::<IpAddr>().is_ok()
        {
            errors.push(FieldError::invalid(
                at("hostname"),
                format!("\"{hostname}\""),
                "must be a DNS name, not an IP address",
            ));
        }
        match entry.get("ipMode").and_then(Value::as_str) {
            None => {}
            Some(_) if ip.is_none() => errors.push(FieldError::required(at("ip"))),
            Some("VIP" | "Proxy") => {}
            Some(other) => errors.push(FieldError::not_supported(
                at("ipMode"),
                other,
                &["VIP", "Proxy"],
            )),
        }
    }
    errors
}

/// Keeps allocated values the client left out, and drops type-dependent fields
/// the client did not change when the type no longer uses them.
fn carry_over_allocations(old: &Value, new: &mut Value) {
    let old_ip = str_at(old, "spec.clusterIP")
        .unwrap_or_default()
        .to_string();
    if str_at(new, "spec.clusterIP").unwrap_or_default().is_empty() && !old_ip.is_empty() {
        new["spec"]["clusterIP"] = json!(old_ip);
        if let Some(ips) = old.pointer("/spec/clusterIPs") {
            new["spec"]["clusterIPs"] = ips.clone();
        }
    }
    let old_ports: Vec<&Value> = old
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let keep_node_ports = needs_node_ports(new);
    if let Some(ports) = new.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut() {
            let same = |p: &&&Value| {
                p.get("port") == port.get("port") && p.get("protocol") == port.get("protocol")
            };
            let previous = old_ports
                .iter()
                .find(same)
                .and_then(|p| p.get("nodePort"))
                .cloned();
            let current = port.get("nodePort").and_then(Value::as_u64).unwrap_or(0);
            if keep_node_ports
                && current == 0
                && let Some(previous) = previous
            {
                port["nodePort"] = previous;
            } else if !keep_node_ports
                && current != 0
                && previous.as_ref().and_then(Value::as_u64) == Some(current)
                && let Some(map) = port.as_object_mut()
            {
                map.remove("nodePort");
            }
        }
    }
    if !needs_health_check_port(new)
        && let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("healthCheckNodePort") == old.pointer("/spec/healthCheckNodePort")
    {
        spec.remove("healthCheckNodePort");
    } else if needs_health_check_port(new)
        && new.pointer("/spec/healthCheckNodePort").is_none()
        && let Some(port) = old.pointer("/spec/healthCheckNodePort")
    {
        new["spec"]["healthCheckNodePort"] = port.clone();
    }
}

fn check_immutable(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let old_ip = str_at(old, "spec.clusterIP").unwrap_or_default();
    let new_ip = str_at(new, "spec.clusterIP").unwrap_or_default();
    let to_or_from_external =
        service_type(old) == "ExternalName" || service_type(new) == "ExternalName";
    if !old_ip.is_empty() && old_ip != new_ip && !to_or_from_external {
        errors.push(FieldError::immutable(
            "spec.clusterIPs[0]",
            format!("\"{new_ip}\""),
        ));
    }
    let old_class = old
        .pointer("/spec/loadBalancerClass")
        .filter(|c| !c.is_null());
    let new_class = new
        .pointer("/spec/loadBalancerClass")
        .filter(|c| !c.is_null());
    if service_type(old) == "LoadBalancer"
        && service_type(new) == "LoadBalancer"
        && old_class != new_class
    {
        errors.push(FieldError::immutable(
            "spec.loadBalancerClass",
            new_class.unwrap_or(&Value::Null),
        ));
    }
    errors
}

fn allocate(svc: &mut Value, peers: &Peers) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if service_type(svc) != "ExternalName"
        && let Err(e) = allocate_cluster_ip(svc, peers)
    {
        errors.push(e);
    }
    if needs_node_ports(svc)
        && let Err(e) = allocate_node_ports(svc, peers)
    {
        errors.extend(e);
    }
    if needs_health_check_port(svc)
        && let Err(e) = allocate_health_check_port(svc, peers)
    {
        errors.push(e);
    }
    errors
}

impl KindRules for ServiceRules {
    fn name_rule(&self) -> NameRule {
        NameRule::Rfc1035Label
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn prepare_create(&self, svc: &mut Value, peers: &Peers) -> Result<(), Vec<FieldError>> {
        svc["status"] = json!({"loadBalancer": {}});
        apply_defaults(svc);
        check(check_spec(svc))?;
        check(allocate(svc, peers))
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        endpoint: Endpoint,
        peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        if endpoint == Endpoint::Status {
            default_ingress_ip_mode(new);
            return check(check_status(new));
        }
        carry_over_allocations(old, new);
        apply_defaults(new);
        let mut errors = check_spec(new);
        errors.extend(check_immutable(old, new));
        check(errors)?;
        check(allocate(new, peers))
    }
}
