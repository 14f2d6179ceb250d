//! Services: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), and SELECTOR in wide output.

use super::{Column, NONE, Printer, age, age_cell, strings};
use crate::object::{self, str_at};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub static SERVICES: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text(
            "Type",
            "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
        ),
        Column::text(
            "Cluster-IP",
            "clusterIP is the IP address of the service and is usually assigned randomly.",
        ),
        Column::text(
            "External-IP",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
        ),
        Column::text(
            "Port(s)",
            "The list of ports that are exposed by this service.",
        ),
        Column::AGE,
        Column::text(
            "Selector",
            "Route service traffic to pods with label keys and values matching this selector.",
        )
        .wide(),
    ],
    cells,
};

/// Shown for a LoadBalancer Service whose load balancer has no address yet.
const PENDING: &str = "<pending>";

fn cells(service: &Value, now: Timestamp) -> Vec<Value> {
    let ports = port_list(service);
    vec![
        json!(object::name(service)),
        json!(str_at(service, "spec.type").unwrap_or_default()),
        json!(cluster_ip(service)),
        json!(external_ip(service)),
        json!(if ports.is_empty() {
            NONE
        } else {
            ports.as_str()
        }),
        age_cell(service, now),
        json!(selector(service)),
    ]
}

fn cluster_ip(service: &Value) -> &str {
    strings(service, "spec.clusterIPs")
        .first()
        .copied()
        .or_else(|| str_at(service, "spec.clusterIP"))
        .filter(|ip| !ip.is_empty())
        .unwrap_or(NONE)
}

/// Load balancer addresses first, then `spec.externalIPs`.
fn external_ip(service: &Value) -> String {
    let external_ips = strings(service, "spec.externalIPs");
    let listed_or = |addresses: Vec<&str>, empty: &str| {
        if addresses.is_empty() {
            empty.to_string()
        } else {
            addresses.join(",")
        }
    };
    match str_at(service, "spec.type").unwrap_or_default() {
        "ClusterIP" | "NodePort" => listed_or(external_ips, NONE),
        "LoadBalancer" => {
            let mut addresses = ingress_addresses(service);
            addresses.extend(external_ips);
            listed_or(addresses, PENDING)
        }
        "ExternalName" => str_at(service, "spec.externalName")
            .unwrap_or_default()
            .to_string(),
        _ => age::UNKNOWN.to_string(),
    }
}

/// Each ingress's IP, or its hostname when it has no IP: sorted, without repeats.
fn ingress_addresses(service: &Value) -> Vec<&str> {
    let ingress = object::get_path(service, "status.loadBalancer.ingress")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    ingress
        .iter()
        .filter_map(|item| nonempty(item, "ip").or_else(|| nonempty(item, "hostname")))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn nonempty<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `80/TCP`, or `80:30080/TCP` when a NodePort is allocated, comma-joined.
fn port_list(service: &Value) -> String {
    let ports = object::get_path(service, "spec.ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let printed: Vec<String> = ports
        .iter()
        .map(|port| {
            let number = port.get("port").and_then(Value::as_i64).unwrap_or_default();
            let protocol = port
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("TCP");
            match port.get("nodePort").and_then(Value::as_i64) {
                Some(node_port) if node_port > 0 => format!("{number}:{node_port}/{protocol}"),
                _ => format!("{number}/{protocol}"),
            }
        })
        .collect();
    printed.join(",")
}

/// `key=value` pairs sorted and comma-joined, as `labels.FormatLabels` prints them.
fn selector(service: &Value) -> String {
    let mut pairs: Vec<String> = object::get_path(service, "spec.selector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| value.as_str().map(|value| format!("{key}={value}")))
        .collect();
    pairs.sort();
    if pairs.is_empty() {
        NONE.to_string()
    } else {
        pairs.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(spec: Value, status: Value) -> Value {
        json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-05-01T11:55:00Z"},
            "spec": spec,
            "status": status,
        })
    }

    fn load_balancer(ingress: Value) -> Value {
        service(
            json!({"type": "LoadBalancer"}),
            json!({"loadBalancer": {"ingress": ingress}}),
        )
    }

    #[test]
    fn ports_show_node_ports_and_protocols() {
        let svc = service(
            json!({"type": "NodePort", "ports": [
                {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                {"port": 443, "nodePort": 30443, "protocol": "TCP"},
                {"port": 53, "protocol": "UDP"},
            ]}),
            json!({}),
        );
        assert_eq!(port_list(&svc), "80:30080/TCP,443:30443/TCP,53/UDP");
        assert_eq!(port_list(&service(json!({}), json!({}))), "");
    }

    #[test]
    fn load_balancers_without_ingress_are_pending() {
        assert_eq!(external_ip(&load_balancer(json!([]))), "<pending>");
        let no_status = service(json!({"type": "LoadBalancer"}), json!({}));
        assert_eq!(external_ip(&no_status), "<pending>");
    }

    #[test]
    fn ingress_addresses_are_sorted_and_hostnames_fill_in_for_missing_ips() {
        let svc = load_balancer(json!([
            {"ip": "192.0.2.20"},
            {"hostname": "lb.example.com"},
            {"ip": "192.0.2.10", "hostname": "ignored.example.com"},
            {"ip": "192.0.2.10"},
        ]));
        assert_eq!(external_ip(&svc), "192.0.2.10,192.0.2.20,lb.example.com");
    }

    #[test]
    fn external_ips_follow_ingress_addresses() {
        let mut svc = load_balancer(json!([{"ip": "192.0.2.10"}]));
        svc["spec"]["externalIPs"] = json!(["198.51.100.1"]);
        assert_eq!(external_ip(&svc), "192.0.2.10,198.51.100.1");
        svc["status"] = json!({});
        assert_eq!(external_ip(&svc), "198.51.100.1");
        let cluster_ip = service(json!({"type": "ClusterIP"}), json!({}));
        assert_eq!(external_ip(&cluster_ip), "<none>");
        let node_port = service(
            json!({"type": "NodePort", "externalIPs": ["198.51.100.1", "198.51.100.2"]}),
            json!({}),
        );
        assert_eq!(external_ip(&node_port), "198.51.100.1,198.51.100.2");
        let external = service(
            json!({"type": "ExternalName", "externalName": "db.example.com"}),
            json!({}),
        );
        assert_eq!(external_ip(&external), "db.example.com");
    }

    #[test]
    fn a_row_has_every_column_in_order() {
        let svc = service(
            json!({
                "type": "LoadBalancer",
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
                "selector": {"tier": "front", "app": "web"},
                "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
            }),
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}),
        );
        let now = "2024-05-01T12:00:00Z".parse().unwrap();
        assert_eq!(
            cells(&svc, now),
            vec![
                json!("web"),
                json!("LoadBalancer"),
                json!("10.96.0.10"),
                json!("192.0.2.10"),
                json!("80:30080/TCP"),
                json!("5m"),
                json!("app=web,tier=front"),
            ]
        );
        let bare = service(json!({"type": "ClusterIP", "clusterIP": "None"}), json!({}));
        let bare_cells = cells(&bare, now);
        assert_eq!(bare_cells[2], "None");
        assert_eq!(bare_cells[4], "<none>");
        assert_eq!(bare_cells[6], "<none>");
        assert_eq!(SERVICES.columns.len(), bare_cells.len());
    }
}
