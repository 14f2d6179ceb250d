//! The service engine group a decision names (contract 0.3.0): the groups
//! offered to the policy with their room, and the room checked before any
//! write for the virtual services the Service would create in the group or
//! move into it.

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::{Names, PortKey};
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::service::ServiceSpec;
use crate::policy::model::ServiceEngineGroup;
use crate::vcd::resources::seg::SegAssignment;

/// The gateway's groups as the policy sees them.
pub fn offered(groups: &[SegAssignment]) -> Vec<ServiceEngineGroup> {
    groups
        .iter()
        .map(|g| ServiceEngineGroup {
            name: g.name().to_string(),
            free_virtual_services: g.free(),
        })
        .collect()
}

/// Refuses `wanted` when it lacks room for the Service's virtual services
/// that do not run there yet. The policy's checks already made sure the
/// gateway has the group.
pub fn check_room(
    service: &ServiceSpec,
    names: &Names,
    observed: &ServiceObjects,
    wanted: &str,
    groups: &[SegAssignment],
) -> Result<(), LbError> {
    let Some(group) = groups.iter().find(|g| g.name() == wanted) else {
        return Ok(());
    };
    let needed = service
        .ports
        .iter()
        .filter(|port| port.node_port.is_some_and(|p| p > 0))
        .filter(|port| {
            let name = names.virtual_service(PortKey {
                protocol: port.protocol,
                port: port.port,
            });
            let runs_there = observed.virtual_services.get(&name).is_some_and(|vs| {
                vs.object
                    .service_engine_group_ref
                    .as_ref()
                    .and_then(|r| r.name.as_deref())
                    == Some(wanted)
            });
            !runs_there
        })
        .count();
    let free = group.free() as usize;
    if needed <= free {
        return Ok(());
    }
    Err(LbError::EngineGroupFull {
        service: service.key(),
        group: wanted.to_string(),
        free,
        needed,
    })
}

/// [`check_room`] against the cached groups, and when they refuse,
/// against a fresh read: a refusal is never based on stale counts.
pub(in crate::lb) async fn check_engine_group_room(
    ctx: &Context,
    service: &ServiceSpec,
    names: &Names,
    observed: &ServiceObjects,
    wanted: &str,
    cached: &[SegAssignment],
) -> Result<(), LbError> {
    if check_room(service, names, observed, wanted, cached).is_ok() {
        return Ok(());
    }
    ctx.catalog.forget_engine_groups();
    let fresh = engine_groups(ctx, service).await?;
    check_room(service, names, observed, wanted, &fresh)
}

/// The gateway's groups, from the catalog.
pub(in crate::lb) async fn engine_groups(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<Vec<SegAssignment>, LbError> {
    ctx.catalog
        .engine_groups(&ctx.client, &ctx.gateway.id)
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "reading the gateway's service engine groups".into(),
        ))
}
