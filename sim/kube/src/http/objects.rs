//! Object endpoints: get, list, watch, create, update, patch, delete, deletecollection.

use super::AppState;
use super::discovery;
use super::query::Query;
use super::table;
use super::target::{self, Target};
use super::watch::{self, WatchRequest};
use crate::error::ApiError;
use crate::faults::WriteVerb;
use crate::object;
use crate::patch::PatchKind;
use crate::resources::ResourceType;
use crate::selectors::FieldSelector;
use crate::store::{DeleteOptions, DeleteOutcome, Written};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The parts of a request the object endpoints read.
struct ApiRequest {
    method: Method,
    query: Query,
    headers: HeaderMap,
    body: Bytes,
}

pub async fn core(
    State(app): State<AppState>,
    Path(rest): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    respond(&app, target::parse_core(&rest), method, &uri, headers, body)
}

pub async fn grouped(
    State(app): State<AppState>,
    Path(rest): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    respond(
        &app,
        target::parse_group(&rest),
        method,
        &uri,
        headers,
        body,
    )
}

fn respond(
    app: &AppState,
    target: Result<Target, ApiError>,
    method: Method,
    uri: &Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = Query::parse(uri).and_then(|query| {
        let request = ApiRequest {
            method,
            query,
            headers,
            body,
        };
        dispatch(app, target?, &request)
    });
    result.unwrap_or_else(IntoResponse::into_response)
}

fn json_response(code: StatusCode, body: Value) -> Response {
    (code, axum::Json(body)).into_response()
}

fn written(written: Written) -> Response {
    let code = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    json_response(code, written.object)
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("error decoding request body: {e}")))
}

/// Decodes a create/update body: JSON or YAML. Protobuf (what kubectl's imperative
/// generators send) is answered with 415.
fn parse_object(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    match content_type.split(';').next().unwrap_or_default().trim() {
        "application/json" | "" | "*/*" => parse_json(body),
        "application/yaml" => serde_yaml_ng::from_slice(body)
            .map_err(|e| ApiError::BadRequest(format!("error decoding YAML request body: {e}"))),
        _ => Err(ApiError::UnsupportedMediaType(
            "application/json, application/yaml".into(),
        )),
    }
}

fn check_fault(app: &AppState, resource: &ResourceType, verb: WriteVerb) -> Result<(), ApiError> {
    app.faults
        .take_write_fault(resource.plural, verb)
        .map_or(Ok(()), Err)
}

fn dispatch(app: &AppState, target: Target, request: &ApiRequest) -> Result<Response, ApiError> {
    let store = &app.store;
    let query = &request.query;
    let dry_run = query.dry_run();
    match (target, &request.method) {
        (Target::Group(group), &Method::GET) => {
            Ok(json_response(StatusCode::OK, discovery::group(&group)))
        }
        (Target::GroupVersion { group, version }, &Method::GET) => Ok(json_response(
            StatusCode::OK,
            discovery::resource_list(&group, &version),
        )),
        (
            Target::Collection {
                resource,
                namespace,
            },
            &Method::GET,
        ) => {
            let selection = query.list_options(resource, namespace)?;
            let table = table::requested(&request.headers, query)?;
            if query.flag("watch") {
                return Ok(watch::serve(
                    app,
                    WatchRequest::from_query(resource, selection, query, table)?,
                ));
            }
            let list = store.list(resource, &selection)?;
            Ok(match table {
                Some(options) => table::list(resource, &list, options),
                None => json_response(StatusCode::OK, list),
            })
        }
        (
            Target::Collection {
                resource,
                namespace,
            },
            &Method::POST,
        ) => {
            if resource.namespaced && namespace.is_none() {
                return Err(ApiError::MethodNotAllowed);
            }
            check_fault(app, resource, WriteVerb::Create)?;
            let body = parse_object(&request.headers, &request.body)?;
            Ok(written(store.create(
                resource,
                namespace.as_deref(),
                body,
                dry_run,
            )?))
        }
        (
            Target::Collection {
                resource,
                namespace,
            },
            &Method::DELETE,
        ) => {
            check_fault(app, resource, WriteVerb::Delete)?;
            let selection = query.list_options(resource, namespace)?;
            let options = delete_options(query, &request.body)?;
            Ok(json_response(
                StatusCode::OK,
                store.delete_collection(resource, &selection, &options)?,
            ))
        }
        (
            Target::Object {
                resource,
                namespace,
                name,
                ..
            },
            &Method::GET,
        ) => {
            let table = table::requested(&request.headers, query)?;
            if query.flag("watch") {
                let mut selection = query.list_options(resource, namespace)?;
                selection.fields =
                    FieldSelector::parse(&format!("metadata.name={name}"), resource)?;
                return Ok(watch::serve(
                    app,
                    WatchRequest::from_query(resource, selection, query, table)?,
                ));
            }
            let object = store.get(resource, namespace.as_deref(), &name)?;
            Ok(match table {
                Some(options) => table::object(resource, &object, options),
                None => json_response(StatusCode::OK, object),
            })
        }
        (
            Target::Object {
                resource,
                namespace,
                name,
                endpoint,
            },
            &Method::PUT,
        ) => {
            check_fault(app, resource, WriteVerb::Update)?;
            let body = parse_object(&request.headers, &request.body)?;
            Ok(written(store.update(
                resource,
                namespace.as_deref(),
                &name,
                endpoint,
                body,
                dry_run,
            )?))
        }
        (
            Target::Object {
                resource,
                namespace,
                name,
                endpoint,
            },
            &Method::PATCH,
        ) => {
            check_fault(app, resource, WriteVerb::Patch)?;
            let content_type = request
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let kind = PatchKind::from_content_type(content_type)?;
            let patch = kind.parse_body(&request.body)?;
            Ok(written(store.patch(
                resource,
                namespace.as_deref(),
                &name,
                endpoint,
                kind,
                &patch,
                dry_run,
            )?))
        }
        (
            Target::Object {
                resource,
                namespace,
                name,
                endpoint: crate::rules::Endpoint::Main,
            },
            &Method::DELETE,
        ) => {
            check_fault(app, resource, WriteVerb::Delete)?;
            let options = delete_options(query, &request.body)?;
            let outcome = store.delete(resource, namespace.as_deref(), &name, &options)?;
            Ok(json_response(
                StatusCode::OK,
                delete_response(resource, outcome),
            ))
        }
        _ => Err(ApiError::MethodNotAllowed),
    }
}

const PROPAGATION_POLICIES: [&str; 3] = ["Orphan", "Background", "Foreground"];

/// DeleteOptions from the body (if any) and the query string.
fn delete_options(query: &Query, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        parse_json(body)?
    };
    let policy = body
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or_else(|| query.get("propagationPolicy"));
    if let Some(policy) = policy
        && !PROPAGATION_POLICIES.contains(&policy)
    {
        return Err(ApiError::BadRequest(format!(
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"{policy}\""
        )));
    }
    let body_dry_run = body
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|values| values.iter().any(|v| v == "All"));
    let precondition = |field: &str| {
        body.pointer(&format!("/preconditions/{field}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Ok(DeleteOptions {
        dry_run: query.dry_run() || body_dry_run,
        precondition_uid: precondition("uid"),
        precondition_resource_version: precondition("resourceVersion"),
    })
}

/// The object, or for kinds whose registry says so once it is gone, a Success status.
fn delete_response(resource: &ResourceType, outcome: DeleteOutcome) -> Value {
    if !outcome.finished || resource.rules.returns_deleted_object() {
        return outcome.object;
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": object::name(&outcome.object),
            "group": resource.group,
            "kind": resource.plural,
            "uid": object::uid(&outcome.object).unwrap_or_default(),
        },
    })
}
