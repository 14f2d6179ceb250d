//! Turns a request path into what it addresses.

use crate::error::ApiError;
use crate::resources::{self, ResourceType};
use crate::rules::Endpoint;

/// What an `/api/...` or `/apis/...` path addresses.
#[derive(Debug)]
pub enum Target {
    /// `/apis/{group}`: the group's versions.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`: the resource list.
    GroupVersion { group: String, version: String },
    /// A collection, in one namespace or (for namespaced kinds) across all.
    Collection {
        resource: &'static ResourceType,
        namespace: Option<String>,
    },
    /// One object, or its `/status`.
    Object {
        resource: &'static ResourceType,
        namespace: Option<String>,
        name: String,
        endpoint: Endpoint,
    },
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Parses the part after `/api/`.
pub fn parse_core(rest: &str) -> Result<Target, ApiError> {
    let segs = segments(rest);
    match segs.split_first() {
        Some((&"v1", tail)) => parse_resource_path("", "v1", tail),
        _ => Err(ApiError::UnknownResource),
    }
}

/// Parses the part after `/apis/`.
pub fn parse_group(rest: &str) -> Result<Target, ApiError> {
    let segs = segments(rest);
    match segs.as_slice() {
        [group] if resources::groups().contains(group) => Ok(Target::Group(group.to_string())),
        [group, version, tail @ ..] => parse_resource_path(group, version, tail),
        _ => Err(ApiError::UnknownResource),
    }
}

fn parse_resource_path(group: &str, version: &str, tail: &[&str]) -> Result<Target, ApiError> {
    let find = |plural: &str| resources::find(group, version, plural);
    if tail.is_empty() {
        return if resources::in_group_version(group, version).next().is_some() {
            Ok(Target::GroupVersion {
                group: group.into(),
                version: version.into(),
            })
        } else {
            Err(ApiError::UnknownResource)
        };
    }
    // `namespaces/{ns}/{resource}...` addresses a namespaced resource; otherwise
    // the path names a resource directly (a namespace object is `namespaces/{name}`).
    let namespaced = match tail {
        ["namespaces", ns, plural, rest @ ..] => find(plural)
            .filter(|r| r.namespaced)
            .map(|r| (r, Some(ns.to_string()), rest)),
        _ => None,
    };
    let (resource, namespace, rest) = match namespaced {
        Some(found) => found,
        None => {
            let resource = find(tail[0]).ok_or(ApiError::UnknownResource)?;
            (resource, None, &tail[1..])
        }
    };
    if namespace.is_none() && resource.namespaced && !rest.is_empty() {
        return Err(ApiError::UnknownResource);
    }
    match rest {
        [] => Ok(Target::Collection {
            resource,
            namespace,
        }),
        [name] => Ok(Target::Object {
            resource,
            namespace,
            name: name.to_string(),
            endpoint: Endpoint::Main,
        }),
        [name, "status"] if resource.has_status => Ok(Target::Object {
            resource,
            namespace,
            name: name.to_string(),
            endpoint: Endpoint::Status,
        }),
        _ => Err(ApiError::UnknownResource),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_paths_are_told_apart_from_namespaced_resources() {
        match parse_core("v1/namespaces/default").unwrap() {
            Target::Object { resource, name, .. } => {
                assert_eq!(resource.plural, "namespaces");
                assert_eq!(name, "default");
            }
            other => panic!("unexpected {other:?}"),
        }
        match parse_core("v1/namespaces/kube-system/services/a/status").unwrap() {
            Target::Object {
                resource,
                namespace,
                endpoint,
                ..
            } => {
                assert_eq!(resource.plural, "services");
                assert_eq!(namespace.as_deref(), Some("kube-system"));
                assert_eq!(endpoint, Endpoint::Status);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            parse_core("v1/namespaces/x/status").unwrap(),
            Target::Object {
                endpoint: Endpoint::Status,
                ..
            }
        ));
        assert!(parse_group("coordination.k8s.io/v1/namespaces/a/leases/b/status").is_err());
        assert!(matches!(
            parse_core("v1/services").unwrap(),
            Target::Collection {
                namespace: None,
                ..
            }
        ));
    }
}
