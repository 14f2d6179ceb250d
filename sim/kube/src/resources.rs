//! The resource types kubesim serves, and how each is stored and discovered.

use crate::rules::{
    ConfigMapRules, CoreEventRules, EventsV1Rules, KindRules, NamespaceRules, NodeRules,
    PlainRules, SecretRules, ServiceRules,
};

/// One REST resource (a group/version/plural) and its per-kind behaviour.
pub struct ResourceType {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    /// Whether a `/status` subresource separates status writes from spec writes.
    pub has_status: bool,
    /// Objects of resources sharing a bucket are one stored set (the two Event APIs).
    pub bucket: &'static str,
    /// Field selector labels beyond `metadata.name`/`metadata.namespace`, with the
    /// dotted path each reads in the served (wire) form.
    pub field_labels: &'static [(&'static str, &'static str)],
    /// Strategic-merge-patch strategies for this kind's lists, by dotted path;
    /// lists not named here (and not in metadata) are replaced whole.
    pub list_merges: &'static [(&'static str, ListMerge)],
    pub rules: &'static dyn KindRules,
}

/// How strategic merge patch combines a list with the patch's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMerge {
    /// A list of scalars merged as a set (`patchStrategy:"merge"` on `[]string`).
    Set,
    /// A list of maps merged by the named key (`patchMergeKey`).
    Key(&'static str),
}

impl std::fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ResourceType({})", self.api_version())
    }
}

impl ResourceType {
    /// `v1` or `coordination.k8s.io/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The dotted path a field selector label reads, if the label is supported.
    pub fn field_path(&self, label: &str) -> Option<&'static str> {
        match label {
            "metadata.name" => Some("metadata.name"),
            "metadata.namespace" => Some("metadata.namespace"),
            _ => self
                .field_labels
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, path)| *path),
        }
    }
}

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Verbs every resource supports (namespaces have no deletecollection).
pub fn verbs(resource: &ResourceType) -> Vec<&'static str> {
    VERBS
        .iter()
        .copied()
        .filter(|v| resource.plural != "namespaces" || *v != "deletecollection")
        .collect()
}

const INVOLVED: [(&str, &str); 10] = [
    ("involvedObject.kind", "involvedObject.kind"),
    ("involvedObject.namespace", "involvedObject.namespace"),
    ("involvedObject.name", "involvedObject.name"),
    ("involvedObject.uid", "involvedObject.uid"),
    ("involvedObject.apiVersion", "involvedObject.apiVersion"),
    (
        "involvedObject.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("involvedObject.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("source", "source.component"),
    ("type", "type"),
];

const REGARDING: [(&str, &str); 9] = [
    ("regarding.kind", "regarding.kind"),
    ("regarding.namespace", "regarding.namespace"),
    ("regarding.name", "regarding.name"),
    ("regarding.uid", "regarding.uid"),
    ("regarding.apiVersion", "regarding.apiVersion"),
    ("regarding.resourceVersion", "regarding.resourceVersion"),
    ("regarding.fieldPath", "regarding.fieldPath"),
    ("reason", "reason"),
    ("type", "type"),
];

pub static RESOURCES: [ResourceType; 11] = [
    ResourceType {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        namespaced: false,
        short_names: &["ns"],
        categories: &[],
        has_status: true,
        bucket: "namespaces",
        field_labels: &[("status.phase", "status.phase")],
        list_merges: &[("status.conditions", ListMerge::Key("type"))],
        rules: &NamespaceRules,
    },
    ResourceType {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        singular: "node",
        namespaced: false,
        short_names: &["no"],
        categories: &[],
        has_status: true,
        bucket: "nodes",
        field_labels: &[("spec.unschedulable", "spec.unschedulable")],
        list_merges: &[
            ("spec.podCIDRs", ListMerge::Set),
            ("status.addresses", ListMerge::Key("type")),
            ("status.conditions", ListMerge::Key("type")),
        ],
        rules: &NodeRules,
    },
    ResourceType {
        group: "",
        version: "v1",
        kind: "Service",
        plural: "services",
        singular: "service",
        namespaced: true,
        short_names: &["svc"],
        categories: &["all"],
        has_status: true,
        bucket: "services",
        field_labels: &[
            ("spec.clusterIP", "spec.clusterIP"),
            ("spec.type", "spec.type"),
        ],
        list_merges: &[
            ("spec.ports", ListMerge::Key("port")),
            ("status.conditions", ListMerge::Key("type")),
        ],
        rules: &ServiceRules,
    },
    ResourceType {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        singular: "configmap",
        namespaced: true,
        short_names: &["cm"],
        categories: &[],
        has_status: false,
        bucket: "configmaps",
        field_labels: &[],
        list_merges: &[],
        rules: &ConfigMapRules,
    },
    ResourceType {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        singular: "secret",
        namespaced: true,
        short_names: &[],
        categories: &[],
        has_status: false,
        bucket: "secrets",
        field_labels: &[("type", "type")],
        list_merges: &[],
        rules: &SecretRules,
    },
    ResourceType {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        has_status: false,
        bucket: "events",
        field_labels: &INVOLVED,
        list_merges: &[],
        rules: &CoreEventRules,
    },
    ResourceType {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        singular: "lease",
        namespaced: true,
        short_names: &[],
        categories: &[],
        has_status: false,
        bucket: "leases",
        field_labels: &[],
        list_merges: &[],
        rules: &PlainRules,
    },
    ResourceType {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        has_status: false,
        bucket: "events",
        field_labels: &REGARDING,
        list_merges: &[],
        rules: &EventsV1Rules,
    },
    // Written by tests in the role of the EndpointSlice controller.
    ResourceType {
        group: "discovery.k8s.io",
        version: "v1",
        kind: "EndpointSlice",
        plural: "endpointslices",
        singular: "endpointslice",
        namespaced: true,
        short_names: &[],
        categories: &[],
        has_status: false,
        bucket: "endpointslices",
        field_labels: &[("addressType", "addressType")],
        list_merges: &[],
        rules: &PlainRules,
    },
    // RBAC, for SubjectAccessReview (see `access.rs`).
    ResourceType {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRole",
        plural: "clusterroles",
        singular: "clusterrole",
        namespaced: false,
        short_names: &[],
        categories: &[],
        has_status: false,
        bucket: "clusterroles",
        field_labels: &[],
        list_merges: &[],
        rules: &PlainRules,
    },
    ResourceType {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        namespaced: false,
        short_names: &[],
        categories: &[],
        has_status: false,
        bucket: "clusterrolebindings",
        field_labels: &[],
        list_merges: &[],
        rules: &PlainRules,
    },
];

/// The resource at `group`/`version`/`plural`, if served.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceType> {
    RESOURCES
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The resource serving objects of `apiVersion` and `kind`.
pub fn by_kind(api_version: &str, kind: &str) -> Option<&'static ResourceType> {
    RESOURCES
        .iter()
        .find(|r| r.api_version() == api_version && r.kind == kind)
}

/// Resources in one group/version, in a stable order.
pub fn in_group_version<'a>(
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static ResourceType> + 'a {
    RESOURCES
        .iter()
        .filter(move |r| r.group == group && r.version == version)
}

/// The API groups other than core, each once, in first-seen order.
pub fn groups() -> Vec<&'static str> {
    let mut groups: Vec<&'static str> = Vec::new();
    for r in RESOURCES.iter().filter(|r| !r.group.is_empty()) {
        if !groups.contains(&r.group) {
            groups.push(r.group);
        }
    }
    groups
}
