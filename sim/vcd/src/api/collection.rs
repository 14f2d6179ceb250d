//! The read side every resource family shares: a [`Collection`] says where
//! its items live in the world, who sees one and how it is shown; the
//! handlers here list and get any collection the same way, so VCD's
//! answers (403 for what a caller may not see, pages, default sort) are
//! one code path. Writes are in `task_writes`.

use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::Value;

use super::{Params, context_params, list, list_parsed};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::paging::{PageLimits, STANDARD, Sort};
use crate::respond;
use crate::state::AppState;
use crate::world::{Keyed, World, find};

/// A family of resources addressed by id, e.g. ALB pools.
pub trait Collection {
    type Item: Keyed + Clone + Send + 'static;

    /// Every item, visible or not, in the world's order.
    fn all(world: &World) -> &[Self::Item];

    /// Whether the principal may read the item.
    fn visible(world: &World, principal: &Principal, item: &Self::Item) -> bool;

    /// The item as `GET …/{id}` answers it.
    fn view(world: &World, item: &Self::Item) -> Value;

    /// The error for an id that names no item; most families answer a
    /// missing item as they answer an invisible one.
    fn missing(id: &str) -> ApiError {
        ApiError::forbidden(id)
    }

    /// The item `id` names, if the principal sees it; an item it does not
    /// see is a 403.
    fn find_visible<'a>(
        world: &'a World,
        principal: &Principal,
        id: &str,
    ) -> ApiResult<&'a Self::Item> {
        let item = find(Self::all(world), id).ok_or_else(|| Self::missing(id))?;
        if !Self::visible(world, principal, item) {
            return Err(ApiError::forbidden(id));
        }
        Ok(item)
    }
}

/// Whether the principal sees what is on the gateway: it is the gateway's
/// org's.
pub fn sees_gateway(world: &World, principal: &Principal, gateway_id: &str) -> bool {
    world
        .gateway_org(gateway_id)
        .is_some_and(|org| principal.sees(org))
}

/// A collection with a paged, filtered list endpoint.
pub trait Listed: Collection {
    /// The list's path under `/cloudapi/1.0.0`, e.g. `/vdcGroups`.
    const LIST_PATH: &'static str;
    /// The page's model name, e.g. `VdcGroups`.
    const MODEL: &'static str;
    const LIMITS: PageLimits = STANDARD;

    /// The order of a list that names no sort.
    fn default_sort() -> Option<Sort> {
        Some(Sort::ascending("name"))
    }

    /// Whether the item is in the principal's list; for most families the
    /// items it may read.
    fn listed(world: &World, principal: &Principal, item: &Self::Item) -> bool {
        Self::visible(world, principal, item)
    }

    /// The item as the list shows it; some lists show a summary.
    fn list_view(world: &World, item: &Self::Item) -> Value {
        Self::view(world, item)
    }
}

/// A list that takes the `_context==<urn>` pseudo-filter.
pub trait InContext: Listed {
    /// Whether the item is usable in the context `context` names.
    fn in_context(world: &World, context: &str, item: &Self::Item) -> bool;
}

/// `GET` of the list.
pub async fn list_items<C: Listed>(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        C::all(&world)
            .iter()
            .filter(|item| C::listed(&world, &principal, item))
            .map(|item| C::list_view(&world, item))
            .collect()
    };
    list(
        &state,
        C::LIST_PATH,
        &params,
        C::LIMITS,
        items,
        C::default_sort(),
        C::MODEL,
    )
}

/// `GET` of the list, narrowed to the items usable in `_context`.
pub async fn list_items_in_context<C: InContext>(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let (list_params, context) = context_params(&params, C::LIMITS)?;
    let items = {
        let world = state.world();
        C::all(&world)
            .iter()
            .filter(|item| C::listed(&world, &principal, item))
            .filter(|item| {
                context
                    .as_deref()
                    .is_none_or(|c| C::in_context(&world, c, item))
            })
            .map(|item| C::list_view(&world, item))
            .collect()
    };
    Ok(list_parsed(
        &state,
        C::LIST_PATH,
        &list_params,
        items,
        C::default_sort(),
        C::MODEL,
    ))
}

/// The page of a list within one item, e.g. a gateway's used IPs.
pub struct Sublist {
    /// The path under `/cloudapi/1.0.0`.
    pub path: String,
    pub model: &'static str,
    pub default_sort: Option<Sort>,
}

/// `GET` of a list within the item `id` names, of what `items` finds
/// there; 403 if the principal does not see the item.
pub fn list_within<C: Collection>(
    state: &AppState,
    principal: &Principal,
    id: &str,
    params: &Params,
    sublist: Sublist,
    items: impl FnOnce(&World, &C::Item) -> Vec<Value>,
) -> ApiResult<Response> {
    let items = {
        let world = state.world();
        items(&world, C::find_visible(&world, principal, id)?)
    };
    let Sublist {
        path,
        model,
        default_sort,
    } = sublist;
    list(state, &path, params, STANDARD, items, default_sort, model)
}

/// `GET …/{id}`.
pub async fn get_item<C: Collection>(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let item = C::find_visible(&world, &principal, &id)?;
    Ok(respond::ok(&C::view(&world, item)))
}
