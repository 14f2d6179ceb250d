//! Who a bearer token is, and what RBAC lets them do: the answers behind
//! TokenReview and SubjectAccessReview, for components that delegate
//! authentication and authorization to the API server.
//!
//! Tokens are registered through [`crate::KubeSim`]; authorization
//! evaluates the stored ClusterRoleBindings and ClusterRoles as the RBAC
//! authorizer does (Roles and RoleBindings are not served). The group
//! `system:masters` may do everything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Subject};

/// Registered bearer tokens.
#[derive(Clone, Default)]
pub struct Tokens(Arc<Mutex<HashMap<String, UserInfo>>>);

impl Tokens {
    pub fn add(&self, token: &str, user: UserInfo) {
        self.lock().insert(token.to_string(), user);
    }

    pub fn user(&self, token: &str) -> Option<UserInfo> {
        self.lock().get(token).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, UserInfo>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The user a ServiceAccount's token authenticates as.
pub fn service_account_user(namespace: &str, name: &str) -> UserInfo {
    UserInfo {
        username: Some(format!("system:serviceaccount:{namespace}:{name}")),
        uid: Some(uuid::Uuid::new_v4().to_string()),
        groups: Some(vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ]),
        extra: None,
    }
}

/// The RBAC decision: `Some(reason)` when allowed.
pub fn authorize(
    spec: &SubjectAccessReviewSpec,
    roles: &[ClusterRole],
    bindings: &[ClusterRoleBinding],
) -> Option<String> {
    let user = spec.user.as_deref().unwrap_or_default();
    let groups = spec.groups.as_deref().unwrap_or_default();
    if groups.iter().any(|g| g == "system:masters") {
        return Some("allowed: the group system:masters may do everything".into());
    }
    bindings.iter().find_map(|binding| {
        let name = binding.metadata.name.as_deref().unwrap_or_default();
        let role_name = &binding.role_ref.name;
        let subject = binding
            .subjects
            .iter()
            .flatten()
            .find(|s| names(s, user, groups))?;
        let role = roles
            .iter()
            .find(|r| binding.role_ref.kind == "ClusterRole" && r.metadata.name.as_ref() == Some(role_name))?;
        role.rules
            .iter()
            .flatten()
            .any(|rule| grants(rule, spec))
            .then(|| {
                format!(
                    "RBAC: allowed by ClusterRoleBinding \"{name}\" of ClusterRole \"{role_name}\" to {} \"{}\"",
                    subject.kind, subject.name
                )
            })
    })
}

fn names(subject: &Subject, user: &str, groups: &[String]) -> bool {
    match subject.kind.as_str() {
        "User" => subject.name == user,
        "Group" => groups.contains(&subject.name),
        "ServiceAccount" => {
            let namespace = subject.namespace.as_deref().unwrap_or_default();
            user == format!("system:serviceaccount:{namespace}:{}", subject.name)
        }
        _ => false,
    }
}

fn grants(rule: &PolicyRule, spec: &SubjectAccessReviewSpec) -> bool {
    let has = |list: &Option<Vec<String>>, value: &str| {
        list.iter()
            .flatten()
            .any(|item| item == "*" || item == value)
    };
    if let Some(path) = &spec.non_resource_attributes {
        let verb = path.verb.as_deref().unwrap_or_default();
        let path = path.path.as_deref().unwrap_or_default();
        let covers = |url: &String| match url.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => url == path,
        };
        return rule.verbs.iter().any(|v| v == "*" || v == verb)
            && rule.non_resource_urls.iter().flatten().any(covers);
    }
    let Some(resource) = &spec.resource_attributes else {
        return false;
    };
    let verb = resource.verb.as_deref().unwrap_or_default();
    let plural = match resource.subresource.as_deref() {
        Some(sub) if !sub.is_empty() => {
            format!("{}/{sub}", resource.resource.as_deref().unwrap_or_default())
        }
        _ => resource.resource.clone().unwrap_or_default(),
    };
    let named = match resource.name.as_deref() {
        Some(name) if !name.is_empty() => rule
            .resource_names
            .as_ref()
            .is_none_or(|names| names.is_empty() || names.iter().any(|n| n == name)),
        _ => rule.resource_names.as_ref().is_none_or(Vec::is_empty),
    };
    rule.verbs.iter().any(|v| v == "*" || v == verb)
        && has(
            &rule.api_groups,
            resource.group.as_deref().unwrap_or_default(),
        )
        && has(&rule.resources, &plural)
        && named
}
