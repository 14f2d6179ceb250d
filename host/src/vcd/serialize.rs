//! Per-gateway write serialisation. VCD answers `BUSY_ENTITY` to a second
//! write on a gateway while the first one's task runs; holding one lock per
//! gateway for the whole write (request and task) keeps this process from
//! tripping over itself. Other writers still cause `BUSY_ENTITY`, which the
//! retry layer absorbs.

use super::client::{ApiRequest, VcdClient};
use super::errors::VcdError;
use super::task::Task;
use super::tasks::write;

/// A write scoped to a gateway (NAT, pool, virtual service): sent and
/// its task awaited while holding the gateway's write slot.
pub(in crate::vcd) async fn write_on_gateway(
    client: &VcdClient,
    gateway_id: &str,
    request: ApiRequest,
) -> Result<Option<Task>, VcdError> {
    let _slot = client.gateway_locks().acquire(gateway_id).await;
    write(client, request).await
}
