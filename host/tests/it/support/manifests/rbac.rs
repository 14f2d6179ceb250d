//! The RBAC side of the least-privilege test: API requests as the
//! (group, resource, verb) an authorizer sees, and what `rbac.yaml` grants a
//! ServiceAccount, as Kubernetes' RBAC authorizer evaluates it.
//!
//! Wildcards (`*`) are deliberately not understood: a `*` is compared as a
//! literal, is never issued, and so fails the test as an unused grant.

use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use kubesim::RequestRecord;

use super::documents::Document;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    /// `""` for the core group.
    pub group: String,
    /// With its subresource: `services/status`.
    pub resource: String,
    pub verb: String,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(f, "{group} {} {}", self.resource, self.verb)
    }
}

/// One API request, as RBAC sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ApiCall {
    pub access: Access,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

/// `<access>[ in <namespace>][ (<name>)]`, for calls and grants alike.
fn write_scoped(
    f: &mut fmt::Formatter<'_>,
    access: &Access,
    namespace: &Option<String>,
    name: &Option<String>,
) -> fmt::Result {
    write!(f, "{access}")?;
    if let Some(namespace) = namespace {
        write!(f, " in {namespace}")?;
    }
    if let Some(name) = name {
        write!(f, " ({name})")?;
    }
    Ok(())
}

impl fmt::Display for ApiCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scoped(f, &self.access, &self.namespace, &self.name)
    }
}

/// Subresources of a namespace, which the path form `namespaces/{name}/…`
/// shares with namespaced resources (as in the API server's RequestInfo).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

impl ApiCall {
    /// The call a request is, or `Err(path)` for a path outside the
    /// resource API (`/version`, discovery).
    pub fn of(record: &RequestRecord) -> Result<ApiCall, String> {
        let parts: Vec<&str> = record.path.split('/').filter(|p| !p.is_empty()).collect();
        let (group, mut rest) = match parts.as_slice() {
            ["api", "v1", rest @ ..] => ("", rest),
            ["apis", group, _version, rest @ ..] => (*group, rest),
            _ => return Err(record.path.clone()),
        };
        let mut namespace = None;
        if let ["namespaces", name, next, ..] = rest
            && !NAMESPACE_SUBRESOURCES.contains(next)
        {
            namespace = Some(name.to_string());
            rest = &rest[2..];
        }
        let (resource, name, subresource) = match rest {
            [resource] => (*resource, None, None),
            [resource, name] => (*resource, Some(name.to_string()), None),
            [resource, name, sub] => (*resource, Some(name.to_string()), Some(*sub)),
            _ => return Err(record.path.clone()),
        };
        let watch = record
            .query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1");
        let verb = match (record.method.as_str(), &name) {
            ("GET", _) if watch => "watch",
            ("GET", Some(_)) => "get",
            ("GET", None) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", Some(_)) => "delete",
            ("DELETE", None) => "deletecollection",
            _ => return Err(format!("{} {}", record.method, record.path)),
        };
        // As the API server's RBAC: a list or watch narrowed to one name
        // by a field selector is a request on that name.
        let name = name.or_else(|| {
            record.query.split('&').find_map(|pair| {
                let selector = pair.strip_prefix("fieldSelector=")?;
                selector
                    .replace("%3D", "=")
                    .strip_prefix("metadata.name=")
                    .filter(|name| !name.contains([',', '%']))
                    .map(str::to_string)
            })
        });
        Ok(ApiCall {
            access: Access {
                group: group.to_string(),
                resource: match subresource {
                    Some(sub) => format!("{resource}/{sub}"),
                    None => resource.to_string(),
                },
                verb: verb.to_string(),
            },
            namespace,
            name,
        })
    }
}

/// One (group, resource, verb) a rule grants, where, and on which name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub access: Access,
    /// `None`: every namespace and cluster-scoped objects (ClusterRole via
    /// ClusterRoleBinding); `Some`: the Role's namespace only.
    pub namespace: Option<String>,
    /// `None`: any object.
    pub name: Option<String>,
    /// The rule it comes from, for messages.
    pub source: String,
}

impl Grant {
    pub fn permits(&self, call: &ApiCall) -> bool {
        self.access == call.access
            && (self.namespace.is_none() || self.namespace == call.namespace)
            && (self.name.is_none() || self.name == call.name)
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_scoped(f, &self.access, &self.namespace, &self.name)?;
        write!(f, " [{}]", self.source)
    }
}

/// Everything the manifests grant the ServiceAccount `namespace/name`
/// through its bindings, one [`Grant`] per group × resource × verb × name.
pub fn grants_of(documents: &[Document], namespace: &str, name: &str) -> Vec<Grant> {
    let is_subject = |subjects: &Option<Vec<k8s_openapi::api::rbac::v1::Subject>>| {
        subjects.iter().flatten().any(|s| {
            s.kind == "ServiceAccount"
                && s.name == name
                && s.namespace.as_deref() == Some(namespace)
        })
    };
    let mut grants = Vec::new();
    for document in documents {
        match document.kind.as_str() {
            "ClusterRoleBinding" => {
                let binding: ClusterRoleBinding = document.typed();
                if is_subject(&binding.subjects) {
                    assert_eq!(binding.role_ref.kind, "ClusterRole");
                    let role: ClusterRole =
                        super::documents::find(documents, "ClusterRole", &binding.role_ref.name);
                    let source = format!("ClusterRole {}", binding.role_ref.name);
                    expand(role.rules.as_deref(), None, &source, &mut grants);
                }
            }
            "RoleBinding" => {
                let binding: RoleBinding = document.typed();
                if is_subject(&binding.subjects) {
                    // Only Roles are bound here: a ClusterRole bound by a
                    // RoleBinding would need its own expansion.
                    assert_eq!(binding.role_ref.kind, "Role");
                    let role: Role =
                        super::documents::find(documents, "Role", &binding.role_ref.name);
                    assert_eq!(role.metadata.namespace, binding.metadata.namespace);
                    let source = format!("Role {}", binding.role_ref.name);
                    expand(
                        role.rules.as_deref(),
                        role.metadata.namespace,
                        &source,
                        &mut grants,
                    );
                }
            }
            _ => {}
        }
    }
    grants
}

fn expand(
    rules: Option<&[PolicyRule]>,
    namespace: Option<String>,
    source: &str,
    out: &mut Vec<Grant>,
) {
    for rule in rules.unwrap_or_default() {
        assert!(
            rule.non_resource_urls.is_none(),
            "{source}: non-resource URLs are not expected"
        );
        let names: Vec<Option<String>> = match &rule.resource_names {
            Some(names) => names.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        for group in rule.api_groups.iter().flatten() {
            for resource in rule.resources.iter().flatten() {
                for verb in &rule.verbs {
                    for name in &names {
                        out.push(Grant {
                            access: Access {
                                group: group.clone(),
                                resource: resource.clone(),
                                verb: verb.clone(),
                            },
                            namespace: namespace.clone(),
                            name: name.clone(),
                            source: source.to_string(),
                        });
                    }
                }
            }
        }
    }
}

/// The calls among `records`; a request outside the resource API fails
/// the test, since RBAC here grants none.
pub fn calls_of(records: &[RequestRecord]) -> BTreeSet<ApiCall> {
    let (calls, other): (Vec<_>, Vec<_>) = records.iter().map(ApiCall::of).partition(Result::is_ok);
    let other: Vec<String> = other.into_iter().filter_map(Result::err).collect();
    assert!(
        other.is_empty(),
        "requests outside the resource API: {other:?}"
    );
    calls.into_iter().filter_map(Result::ok).collect()
}

/// Every call is granted and every grant is used; on failure, prints both
/// differences. A Role's grants must be used in exactly its namespace.
pub fn assert_grants_match(calls: &BTreeSet<ApiCall>, grants: &[Grant]) {
    let denied: Vec<String> = calls
        .iter()
        .filter(|call| !grants.iter().any(|g| g.permits(call)))
        .map(ToString::to_string)
        .collect();
    let unused: Vec<String> = grants
        .iter()
        .filter(|grant| !calls.iter().any(|call| grant.permits(call)))
        .map(ToString::to_string)
        .collect();
    assert!(
        denied.is_empty() && unused.is_empty(),
        "rbac.yaml differs from the manager's calls.\nissued but not granted:\n  {}\ngranted but never issued:\n  {}",
        denied.join("\n  "),
        unused.join("\n  "),
    );
    for grant in grants.iter().filter(|g| g.namespace.is_some()) {
        let used: BTreeSet<Option<String>> = calls
            .iter()
            .filter(|call| call.access == grant.access)
            .map(|call| call.namespace.clone())
            .collect();
        assert_eq!(used, BTreeSet::from([grant.namespace.clone()]), "{grant}");
    }
}
