//! The Service's objects as the gateway holds them, refused when a later
//! vcd-ccm's objects of it are there.

use std::sync::Arc;

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::newer_format::NewerObject;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::ownership::FORMAT;
use crate::lb::service::ServiceSpec;

pub(in crate::lb) async fn observe(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<(Arc<GatewayView>, ServiceObjects), LbError> {
    let view = ctx.gateway_view(&service.key()).await?;
    let owner = ctx.owner(service);
    // A later vcd-ccm's objects of this Service: hands off, before
    // anything is planned (its names would collide with ours anyway).
    let newer: Vec<NewerObject> = view
        .newer_objects()
        .into_iter()
        .filter(|o| o.tag.names_service_of(&owner))
        .collect();
    if let Some(first) = newer.first() {
        newer.iter().for_each(|o| ctx.newer_formats.notice(o));
        let objects: Vec<String> = newer.iter().map(NewerObject::describe).collect();
        return Err(LbError::NewerFormat {
            service: service.key(),
            objects: objects.join(", "),
            format: first.tag.format,
            known: FORMAT,
        });
    }
    let observed = view.owned_by(&owner);
    Ok((view, observed))
}
