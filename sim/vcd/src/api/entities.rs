//! Runtime defined entities: GET/PUT/DELETE with ETag and If-Match
//! (a stale ETag gets 412), creation through `entityTypes/{type}` as a
//! task, and the list by type.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::collection::Collection;
use super::task_writes::{submit_checked, task_owner};
use super::{Params, list, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{STANDARD, Sort};
use crate::respond;
use crate::seed::entity_urn;
use crate::state::AppState;
use crate::tasks::TaskRequest;
use crate::world::library::{DefinedEntity, Entity};
use crate::world::{World, find_mut, remove};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/entities/{id}",
            get(get_entity).put(update_entity).delete(delete_entity),
        )
        .route("/cloudapi/1.0.0/entityTypes/{type_id}", post(create_entity))
        .route(
            "/cloudapi/1.0.0/entities/types/{vendor}/{nss}/{version}",
            get(list_by_type),
        )
}

fn with_etag(mut response: Response, entity: &Entity) -> Response {
    if let Ok(value) = HeaderValue::from_str(&entity.etag()) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

pub(super) struct Entities;

impl Collection for Entities {
    type Item = Entity;

    fn all(world: &World) -> &[Entity] {
        &world.entities
    }

    fn visible(_world: &World, principal: &Principal, entity: &Entity) -> bool {
        principal.sees(&entity.org_id)
    }

    /// The body as stored, with its org and `entityState`.
    fn view(world: &World, entity: &Entity) -> Value {
        let mut body = entity.body.clone();
        body.org = Some(world.org_ref(&entity.org_id));
        let mut view = json!(body);
        view["entityState"] = json!(body.state);
        view
    }
}

async fn get_entity(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let entity = Entities::find_visible(&world, &principal, &id)?;
    Ok(with_etag(
        respond::ok(&Entities::view(&world, entity)),
        entity,
    ))
}

async fn update_entity(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let update: DefinedEntity = parse_body(&body)?;
    let mut world = state.world();
    let current = Entities::find_visible(&world, &principal, &id)?;
    let if_match = headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok());
    if if_match.is_some_and(|tag| tag != current.etag() && tag != "*") {
        return Err(ApiError::precondition_failed());
    }
    let entity = find_mut(&mut world.entities, &id).ok_or_else(|| ApiError::forbidden(&id))?;
    // id, type, owner and org are read-only.
    entity.body.name = update.name;
    entity.body.entity = update.entity;
    entity.body.external_id = update.external_id;
    entity.revision += 1;
    let entity = entity.clone();
    Ok(with_etag(
        respond::ok(&Entities::view(&world, &entity)),
        &entity,
    ))
}

async fn delete_entity(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let mut world = state.world();
    let entity_id = Entities::find_visible(&world, &principal, &id)?
        .body
        .id
        .clone()
        .unwrap_or_default();
    remove(&mut world.entities, &entity_id);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `urn:vcloud:type:<vendor>:<nss>:<version>` has six parts.
fn check_type_id(type_id: &str) -> ApiResult<()> {
    let parts: Vec<&str> = type_id.split(':').collect();
    if parts.len() == 6 && parts[..3] == ["urn", "vcloud", "type"] {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "{type_id} is not an entity type URN."
        )))
    }
}

async fn create_entity(
    State(state): State<AppState>,
    principal: Principal,
    Path(type_id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    check_type_id(&type_id)?;
    let mut entity: DefinedEntity = parse_body(&body)?;
    let org_id = principal
        .view
        .clone()
        .unwrap_or_else(|| principal.org.id.clone());
    let id = entity_urn(&type_id);
    entity.id = Some(id.clone());
    entity.entity_type = Some(type_id);
    entity.state = Some("PRE_CREATED".to_string());
    entity.owner = Some(principal.user.clone());
    let request = TaskRequest {
        operation_name: "createDefinedEntity",
        operation: format!("Creating entity {}", entity.name),
        gateway_id: None,
        owner: task_owner(format!("/entities/{id}"), &id, &entity.name),
        org_id: org_id.clone(),
    };
    let apply = move |world: &mut World| {
        world.entities.push(Entity {
            org_id,
            revision: 1,
            body: entity,
        });
        Ok(())
    };
    submit_checked(&state, &principal, request, |_| Ok(()), apply).await
}

async fn list_by_type(
    State(state): State<AppState>,
    principal: Principal,
    Path((vendor, nss, version)): Path<(String, String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let type_id = format!("urn:vcloud:type:{vendor}:{nss}:{version}");
    let items = {
        let world = state.world();
        world
            .entities
            .iter()
            .filter(|e| {
                principal.sees(&e.org_id) && e.body.entity_type.as_deref() == Some(type_id.as_str())
            })
            .map(|e| Entities::view(&world, e))
            .collect()
    };
    let path = format!("/entities/types/{vendor}/{nss}/{version}");
    list(
        &state,
        &path,
        &params,
        STANDARD,
        items,
        Some(Sort::ascending("name")),
        "DefinedEntities",
    )
}
