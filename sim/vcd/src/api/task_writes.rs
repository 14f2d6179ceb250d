//! Writes as VCD makes them: a task, checked at once (a cheap failure
//! answers 400 before any 202) and checked again when it completes,
//! against the world of that moment, before its change is applied. A
//! [`Writable`] collection names its tasks; `create`, `replace` and the
//! `delete_item` handler are its writes.

use axum::extract::{Path, State};
use axum::response::Response;

use super::collection::Collection;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::task::TaskOwner;
use crate::world::{Keyed, World, find_mut, remove};

/// The task owner of a CloudAPI object at `href_path`.
pub fn task_owner(href_path: String, id: &str, name: &str) -> TaskOwner {
    TaskOwner {
        id: id.to_string(),
        name: name.to_string(),
        href_path,
        media_type: "application/json".to_string(),
    }
}

/// Submits `request` as a task that runs `check` now and again on
/// completion, then `apply`; answers `202` with the task's `Location`.
pub async fn submit_checked(
    state: &AppState,
    principal: &Principal,
    request: TaskRequest,
    check: impl Fn(&World) -> ApiResult<()> + Clone + Send + 'static,
    apply: impl FnOnce(&mut World) -> ApiResult<()> + Send + 'static,
) -> ApiResult<Response> {
    let effect_check = check.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        effect_check(world)?;
        apply(world)?;
        Ok(None)
    });
    let task_id = tasks::submit(state, principal, request, check, effect).await?;
    Ok(respond::accepted(state, &task_id))
}

/// The task names of a family's writes, e.g. `createLoadBalancerPool`.
pub struct Operations {
    pub create: &'static str,
    pub update: &'static str,
    pub delete: &'static str,
}

/// Where a write's task runs: the gateway it serialises on (`BUSY_ENTITY`),
/// if any, and the org it is recorded for.
pub struct Placement {
    pub gateway_id: Option<String>,
    pub org_id: String,
}

impl Placement {
    /// A write of something on an edge gateway.
    pub fn on_gateway(world: &World, gateway_id: &str) -> Self {
        Self {
            gateway_id: Some(gateway_id.to_string()),
            org_id: world
                .gateway_org(gateway_id)
                .unwrap_or_default()
                .to_string(),
        }
    }
}

/// What a write does to its item; it names the task.
pub enum Verb {
    Create,
    Update,
    Delete,
}

/// A collection whose writes are tasks owned by the item written.
pub trait Writable: Collection {
    /// The item as task operations name it, e.g. `load balancer pool`.
    const NOUN: &'static str;
    /// Where the items are under `/cloudapi/1.0.0`, e.g.
    /// `/loadBalancer/pools`; an item's tasks name `{PATH}/{id}` as owner.
    const PATH: &'static str;
    const OPERATIONS: Operations;

    fn all_mut(world: &mut World) -> &mut Vec<Self::Item>;

    fn name(item: &Self::Item) -> &str;

    /// Where the item's tasks run.
    fn placement(world: &World, principal: &Principal, item: &Self::Item) -> Placement;

    /// The item `id` names if the principal may change it; by default any
    /// item it sees.
    fn writable<'a>(
        world: &'a World,
        principal: &Principal,
        id: &str,
    ) -> ApiResult<&'a Self::Item> {
        Self::find_visible(world, principal, id)
    }

    /// The error of an update whose item went away while its task waited.
    fn gone(id: &str) -> ApiError {
        ApiError::forbidden(id)
    }

    /// Whether the item may be deleted (e.g. nothing uses it).
    fn check_removable(_world: &World, _item: &Self::Item) -> ApiResult<()> {
        Ok(())
    }

    /// Drops what belonged to a deleted item.
    fn on_removed(_world: &mut World, _id: &str) {}
}

/// A task on `item`, e.g. "Creating load balancer pool web".
pub async fn submit<C: Writable>(
    state: &AppState,
    principal: &Principal,
    verb: Verb,
    item: &C::Item,
    placement: Placement,
    check: impl Fn(&World) -> ApiResult<()> + Clone + Send + 'static,
    apply: impl FnOnce(&mut World) -> ApiResult<()> + Send + 'static,
) -> ApiResult<Response> {
    let (operation_name, doing) = match verb {
        Verb::Create => (C::OPERATIONS.create, "Creating"),
        Verb::Update => (C::OPERATIONS.update, "Updating"),
        Verb::Delete => (C::OPERATIONS.delete, "Deleting"),
    };
    let request = TaskRequest {
        operation_name,
        operation: format!("{doing} {} {}", C::NOUN, C::name(item)),
        gateway_id: placement.gateway_id,
        owner: task_owner(
            format!("{}/{}", C::PATH, item.key()),
            item.key(),
            C::name(item),
        ),
        org_id: placement.org_id,
    };
    submit_checked(state, principal, request, check, apply).await
}

/// Creates `item` (its id already given) once `check` passes.
pub async fn create<C: Writable>(
    state: &AppState,
    principal: &Principal,
    item: C::Item,
    placement: Placement,
    check: impl Fn(&World) -> ApiResult<()> + Clone + Send + 'static,
) -> ApiResult<Response> {
    let created = item.clone();
    let apply = move |world: &mut World| {
        C::all_mut(world).push(created);
        Ok(())
    };
    submit::<C>(
        state,
        principal,
        Verb::Create,
        &item,
        placement,
        check,
        apply,
    )
    .await
}

/// Replaces the stored item of `item`'s id once `check` passes.
pub async fn replace<C: Writable>(
    state: &AppState,
    principal: &Principal,
    item: C::Item,
    placement: Placement,
    check: impl Fn(&World) -> ApiResult<()> + Clone + Send + 'static,
) -> ApiResult<Response> {
    let replacement = item.clone();
    let apply = move |world: &mut World| {
        let id = replacement.key().to_string();
        let stored = find_mut(C::all_mut(world), &id).ok_or_else(|| C::gone(&id))?;
        *stored = replacement;
        Ok(())
    };
    submit::<C>(
        state,
        principal,
        Verb::Update,
        &item,
        placement,
        check,
        apply,
    )
    .await
}

/// `DELETE …/{id}`: a task that removes the item if it is still removable.
pub async fn delete_item<C: Writable>(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (item, placement) = {
        let world = state.world();
        let item = C::writable(&world, &principal, &id)?;
        (item.clone(), C::placement(&world, &principal, item))
    };
    let (checked, id) = (item.clone(), item.key().to_string());
    let check = move |world: &World| C::check_removable(world, &checked);
    let apply = move |world: &mut World| {
        remove(C::all_mut(world), &id);
        C::on_removed(world, &id);
        Ok(())
    };
    submit::<C>(
        &state,
        &principal,
        Verb::Delete,
        &item,
        placement,
        check,
        apply,
    )
    .await
}
