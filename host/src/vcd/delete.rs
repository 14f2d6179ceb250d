//! Deletes that tell "already gone" from "not allowed". VCD answers 403 both
//! when the role lacks a right and when the object does not exist (or is in
//! another org), so a 403 on a delete is settled by reading the object
//! again: still there means the delete was refused, and the caller must not
//! report it as done.

use std::future::Future;

use super::client::ApiRequest;
use super::rights;
use super::serialize::write_on_gateway;
use super::tasks::write;
use super::{VcdClient, VcdError};

/// The right a delete needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteRight {
    /// Pools and virtual services.
    LoadBalancer,
    /// NAT rules.
    Nat,
    /// Application port profiles.
    PortProfiles,
    /// IP Space allocations.
    IpSpaces,
    /// Gateway firewall rules and IP sets.
    Firewall,
    /// Items of the org's certificate library.
    Certificates,
}

impl DeleteRight {
    /// The right's name in VCD.
    pub fn name(self) -> &'static str {
        match self {
            DeleteRight::LoadBalancer => rights::LOAD_BALANCER_CONFIGURE.name,
            DeleteRight::Nat => rights::NAT_CONFIGURE.name,
            // The CCM makes port profiles only for its firewall rules.
            DeleteRight::PortProfiles | DeleteRight::Firewall => rights::FIREWALL_CONFIGURE.name,
            DeleteRight::IpSpaces => rights::IP_SPACES_ALLOCATE.name,
            DeleteRight::Certificates => rights::CERTIFICATES_MANAGE.name,
        }
    }
}

/// Sends the DELETE (serialized per gateway when `gateway_id` is given).
/// Gone already is success; a 403 for an object `read` still finds is
/// [`VcdError::DeleteForbidden`].
pub(in crate::vcd) async fn delete_object<T, F, Fut>(
    client: &VcdClient,
    gateway_id: Option<&str>,
    request: ApiRequest,
    right: DeleteRight,
    read: F,
) -> Result<(), VcdError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, VcdError>>,
{
    let sent = match gateway_id {
        Some(gateway_id) => write_on_gateway(client, gateway_id, request).await,
        None => write(client, request).await,
    };
    match sent {
        Ok(_) | Err(VcdError::NotFound { .. }) => Ok(()),
        Err(VcdError::Forbidden {
            call,
            minor,
            message,
        }) => match read().await {
            Ok(_) => Err(VcdError::DeleteForbidden {
                call,
                right: right.name(),
                minor,
                message,
            }),
            Err(error) if error.is_not_found() => Ok(()),
            Err(error) => Err(error),
        },
        Err(error) => Err(error),
    }
}
