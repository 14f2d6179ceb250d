//! Nodes: STATUS, ROLES, VERSION, and addresses and system info in wide output.

use super::{Column, NONE, Printer, age, age_cell};
use crate::object::{self, str_at};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const ADDRESSES_DESCRIPTION: &str =
    "List of addresses reachable to the node. Queried from cloud provider, if available.";

pub static NODES: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text("Status", "The status of the node"),
        Column::text("Roles", "The roles of the node"),
        Column::AGE,
        Column::text("Version", "Kubelet Version reported by the node."),
        Column::text("Internal-IP", ADDRESSES_DESCRIPTION).wide(),
        Column::text("External-IP", ADDRESSES_DESCRIPTION).wide(),
        Column::text(
            "OS-Image",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        )
        .wide(),
        Column::text(
            "Kernel-Version",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        )
        .wide(),
        Column::text(
            "Container-Runtime",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        )
        .wide(),
    ],
    cells,
};

/// Labels `node-role.kubernetes.io/<role>` name a role each.
const ROLE_LABEL_PREFIX: &str = "node-role.kubernetes.io/";
/// The older label whose value names the role.
const ROLE_LABEL: &str = "kubernetes.io/role";

fn cells(node: &Value, now: Timestamp) -> Vec<Value> {
    let node_info = |field: &str| {
        str_at(node, &format!("status.nodeInfo.{field}"))
            .filter(|value| !value.is_empty())
            .unwrap_or(age::UNKNOWN)
    };
    vec![
        json!(object::name(node)),
        json!(status(node)),
        json!(roles(node)),
        age_cell(node, now),
        json!(str_at(node, "status.nodeInfo.kubeletVersion").unwrap_or_default()),
        json!(address(node, "InternalIP")),
        json!(address(node, "ExternalIP")),
        json!(node_info("osImage")),
        json!(node_info("kernelVersion")),
        json!(node_info("containerRuntimeVersion")),
    ]
}

/// `Ready`, `NotReady` or `Unknown` from the Ready condition, then
/// `SchedulingDisabled` for a cordoned node.
fn status(node: &Value) -> String {
    let conditions = object::get_path(node, "status.conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // The last Ready condition wins, as the real printer indexes conditions by type.
    let ready = conditions
        .iter()
        .rev()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"));
    let mut status = vec![
        match ready.and_then(|c| c.get("status")).and_then(Value::as_str) {
            Some("True") => "Ready",
            Some(_) => "NotReady",
            None => "Unknown",
        },
    ];
    if object::get_path(node, "spec.unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

fn roles(node: &Value) -> String {
    let roles: BTreeSet<&str> = object::labels(node)
        .into_iter()
        .filter_map(|(key, value)| match key.strip_prefix(ROLE_LABEL_PREFIX) {
            Some(role) => Some(role),
            None if key == ROLE_LABEL => Some(value),
            None => None,
        })
        .filter(|role| !role.is_empty())
        .collect();
    if roles.is_empty() {
        NONE.to_string()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

/// The first address of this type.
fn address<'a>(node: &'a Value, kind: &str) -> &'a str {
    object::get_path(node, "status.addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|a| a.get("type").and_then(Value::as_str) == Some(kind))
        .and_then(|a| a.get("address").and_then(Value::as_str))
        .unwrap_or(NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(ready: Option<&str>) -> Value {
        let conditions: Vec<Value> = ready
            .map(|status| json!({"type": "Ready", "status": status}))
            .into_iter()
            .collect();
        json!({
            "metadata": {"name": "worker-1", "creationTimestamp": "2024-05-01T11:00:00Z"},
            "status": {"conditions": conditions},
        })
    }

    #[test]
    fn status_follows_the_ready_condition() {
        assert_eq!(status(&node(Some("True"))), "Ready");
        assert_eq!(status(&node(Some("False"))), "NotReady");
        assert_eq!(status(&node(Some("Unknown"))), "NotReady");
        assert_eq!(status(&node(None)), "Unknown");
        let mut cordoned = node(Some("True"));
        cordoned["spec"] = json!({"unschedulable": true});
        assert_eq!(status(&cordoned), "Ready,SchedulingDisabled");
        let mut pressured = node(Some("True"));
        pressured["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"type": "MemoryPressure", "status": "True"}));
        assert_eq!(status(&pressured), "Ready");
    }

    #[test]
    fn roles_come_from_role_labels() {
        let mut labelled = node(None);
        labelled["metadata"]["labels"] = json!({
            "node-role.kubernetes.io/worker": "",
            "node-role.kubernetes.io/control-plane": "",
            "node-role.kubernetes.io/": "",
            "kubernetes.io/role": "edge",
            "kubernetes.io/hostname": "worker-1",
        });
        assert_eq!(roles(&labelled), "control-plane,edge,worker");
        assert_eq!(roles(&node(None)), "<none>");
    }

    #[test]
    fn a_row_has_every_column_in_order() {
        let mut ready = node(Some("True"));
        ready["status"]["addresses"] = json!([
            {"type": "Hostname", "address": "worker-1"},
            {"type": "InternalIP", "address": "10.0.0.11"},
        ]);
        ready["status"]["nodeInfo"] = json!({"kubeletVersion": "v1.31.0", "osImage": "Photon OS"});
        let now = "2024-05-01T12:00:00Z".parse().unwrap();
        assert_eq!(
            cells(&ready, now),
            vec![
                json!("worker-1"),
                json!("Ready"),
                json!("<none>"),
                json!("60m"),
                json!("v1.31.0"),
                json!("10.0.0.11"),
                json!("<none>"),
                json!("Photon OS"),
                json!("<unknown>"),
                json!("<unknown>"),
            ]
        );
        assert_eq!(cells(&node(None), now)[4], "");
        assert_eq!(NODES.columns.len(), cells(&ready, now).len());
    }
}
