//! Content negotiation for server-side printing: a GET whose Accept header asks for
//! `as=Table` is answered with a `meta.k8s.io` Table instead of the objects.

use super::query::Query;
use crate::error::ApiError;
use crate::printers::{self, IncludeObject, TableOptions, TableVersion};
use crate::resources::ResourceType;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// The Table options if the client prefers a Table, or `None` for plain objects.
///
/// Media ranges are taken in the client's order; the first one kubesim can serve
/// decides. kubectl sends a Table range first and plain JSON as the fallback.
pub fn requested(headers: &HeaderMap, query: &Query) -> Result<Option<TableOptions>, ApiError> {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    for range in accept {
        match table_version(range) {
            Ok(Some(version)) => {
                return Ok(Some(TableOptions {
                    version,
                    include_object: include_object(query)?,
                }));
            }
            Ok(None) => return Ok(None),
            // A Table in a version kubesim does not know: try the next range.
            Err(()) => {}
        }
    }
    Ok(None)
}

/// `Ok(Some)` for a servable Table range, `Ok(None)` for a range asking for
/// objects, `Err` for a Table range in an unknown group or version.
fn table_version(range: &str) -> Result<Option<TableVersion>, ()> {
    let parameters: Vec<(&str, &str)> = range
        .split(';')
        .skip(1)
        .filter_map(|p| p.split_once('='))
        .map(|(key, value)| (key.trim(), value.trim()))
        .collect();
    let value_of = |name: &str| {
        parameters
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| *value)
    };
    if value_of("as") != Some("Table") {
        return Ok(None);
    }
    match (value_of("g"), value_of("v")) {
        (Some("meta.k8s.io"), Some("v1")) => Ok(Some(TableVersion::V1)),
        (Some("meta.k8s.io"), Some("v1beta1")) => Ok(Some(TableVersion::V1Beta1)),
        _ => Err(()),
    }
}

fn include_object(query: &Query) -> Result<IncludeObject, ApiError> {
    match query.get("includeObject") {
        None | Some("Metadata") => Ok(IncludeObject::Metadata),
        Some("Object") => Ok(IncludeObject::Object),
        Some("None") => Ok(IncludeObject::None),
        Some(other) => Err(ApiError::BadRequest(format!(
            "unrecognized includeObject value: \"{other}\""
        ))),
    }
}

/// A list (`{Kind}List`) as a Table response.
pub fn list(resource: &ResourceType, list: &Value, options: TableOptions) -> Response {
    let table = printers::list_table(resource, list, options, jiff::Timestamp::now());
    respond(&table, options)
}

/// One object as a one-row Table response.
pub fn object(resource: &ResourceType, object: &Value, options: TableOptions) -> Response {
    let now = jiff::Timestamp::now();
    let table = printers::object_table(resource, object, options, true, now);
    respond(&table, options)
}

fn respond(table: &Value, options: TableOptions) -> Response {
    let content_type = format!(
        "application/json;as=Table;v={};g=meta.k8s.io",
        options.version.as_str()
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        table.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

    fn negotiate(accept: &str, query: &str) -> Result<Option<TableOptions>, ApiError> {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        let uri: axum::http::Uri = format!("/api/v1/services?{query}").parse().unwrap();
        requested(&headers, &Query::parse(&uri).unwrap())
    }

    #[test]
    fn kubectl_gets_a_v1_table_with_metadata_rows() {
        assert_eq!(
            negotiate(KUBECTL_ACCEPT, "").unwrap(),
            Some(TableOptions {
                version: TableVersion::V1,
                include_object: IncludeObject::Metadata,
            })
        );
        let spaced = "application/json; as=Table; g=meta.k8s.io; v=v1beta1";
        let options = negotiate(spaced, "includeObject=Object").unwrap().unwrap();
        assert_eq!(options.version, TableVersion::V1Beta1);
        assert_eq!(options.include_object, IncludeObject::Object);
    }

    #[test]
    fn plain_json_first_or_unknown_table_versions_get_objects() {
        assert_eq!(negotiate("application/json", "").unwrap(), None);
        assert_eq!(
            negotiate(&format!("application/json,{KUBECTL_ACCEPT}"), "").unwrap(),
            None
        );
        let unknown = "application/json;as=Table;v=v2;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(unknown, "").unwrap(), None);
        assert_eq!(negotiate("", "").unwrap(), None);
    }

    #[test]
    fn unknown_include_object_values_are_bad_requests() {
        let error = negotiate(KUBECTL_ACCEPT, "includeObject=All").unwrap_err();
        assert_eq!(error.code(), 400);
        assert_eq!(
            negotiate("application/json", "includeObject=All").unwrap(),
            None
        );
    }
}
