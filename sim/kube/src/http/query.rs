//! Query parameters of list, watch and write requests.

use crate::error::ApiError;
use crate::resources::ResourceType;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::store::ListOptions;
use axum::http::Uri;
use std::collections::HashMap;

/// The decoded query string of one request.
#[derive(Debug, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(uri: &Uri) -> Result<Self, ApiError> {
        if uri.query().is_none() {
            return Ok(Self::default());
        }
        axum::extract::Query::<HashMap<String, String>>::try_from_uri(uri)
            .map(|q| Self(q.0))
            .map_err(|e| ApiError::BadRequest(format!("invalid query string: {e}")))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean parameter: `true` or `1`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    pub fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }

    pub fn number(&self, key: &str) -> Result<Option<u64>, ApiError> {
        self.get(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| ApiError::BadRequest(format!("invalid {key}: {v:?}")))
            })
            .transpose()
    }

    /// The selection a list, watch or deletecollection asks for.
    pub fn list_options(
        &self,
        resource: &ResourceType,
        namespace: Option<String>,
    ) -> Result<ListOptions, ApiError> {
        Ok(ListOptions {
            namespace,
            labels: self
                .get("labelSelector")
                .map(LabelSelector::parse)
                .transpose()?
                .unwrap_or_default(),
            fields: self
                .get("fieldSelector")
                .map(|f| FieldSelector::parse(f, resource))
                .transpose()?
                .unwrap_or_default(),
            limit: self
                .number("limit")?
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            continue_token: self.get("continue").map(str::to_string),
        })
    }
}
