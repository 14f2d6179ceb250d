//! Test hooks that change the world the way things outside the API do:
//! VMs powering off, vanishing or moving between VDCs, pool members going down, nodes failing
//! health probes, tokens revoked, a provider turning a gateway's transparent mode on or off.

use super::compute::{PowerState, SizingPolicy, Vm};
use super::{World, find, find_mut, remove};
use crate::ids::new_urn;
use crate::scenario::VmSpec;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("no {kind} with id {id}")]
    NotFound { kind: &'static str, id: String },
    #[error("health must be UP, DOWN or UNKNOWN, got {0}")]
    Health(String),
}

fn not_found(kind: &'static str, id: &str) -> HookError {
    HookError::NotFound {
        kind,
        id: id.to_string(),
    }
}

impl World {
    pub fn set_vm_power(&mut self, vm_id: &str, power: PowerState) -> Result<(), HookError> {
        let vm = find_mut(&mut self.vms, vm_id).ok_or_else(|| not_found("VM", vm_id))?;
        vm.power = power;
        Ok(())
    }

    /// Adds a VM to a vApp; returns its URN.
    pub fn add_vm(&mut self, vapp_id: &str, spec: &VmSpec) -> Result<String, HookError> {
        let vapp = find(&self.vapps, vapp_id).ok_or_else(|| not_found("vApp", vapp_id))?;
        let vm = vm_from_spec(spec, &vapp.id);
        let id = vm.id.clone();
        self.vms.push(vm);
        Ok(id)
    }

    pub fn remove_vm(&mut self, vm_id: &str) -> Result<(), HookError> {
        if remove(&mut self.vms, vm_id) {
            Ok(())
        } else {
            Err(not_found("VM", vm_id))
        }
    }

    /// Moves a VM into another vApp, as VCD's VM move between VDCs does: the
    /// VM keeps its id, name, NICs and addresses.
    pub fn move_vm(&mut self, vm_id: &str, vapp_id: &str) -> Result<(), HookError> {
        let vapp = find(&self.vapps, vapp_id).ok_or_else(|| not_found("vApp", vapp_id))?;
        let vapp_id = vapp.id.clone();
        let vm = find_mut(&mut self.vms, vm_id).ok_or_else(|| not_found("VM", vm_id))?;
        vm.vapp_id = vapp_id;
        Ok(())
    }

    pub fn set_member_health(
        &mut self,
        pool_id: &str,
        ip: &str,
        health: &str,
    ) -> Result<(), HookError> {
        if !["UP", "DOWN", "UNKNOWN"].contains(&health) {
            return Err(HookError::Health(health.to_string()));
        }
        let pool = find(&self.pools, pool_id).ok_or_else(|| not_found("pool", pool_id))?;
        if !self.pool_member_ips(pool).iter().any(|m| m == ip) {
            return Err(not_found("pool member", ip));
        }
        let pool = find_mut(&mut self.pools, pool_id).ok_or_else(|| not_found("pool", pool_id))?;
        pool.member_health
            .insert(ip.to_string(), health.to_string());
        Ok(())
    }

    /// Sets whether the node at `ip` answers health probes on `port`: a
    /// pool member there is DOWN while the pool has a tenant HTTP or HTTPS
    /// monitor probing that port and `healthy` is false.
    pub fn set_probe(&mut self, ip: &str, port: u16, healthy: bool) {
        self.probes
            .insert((super::member_health::probe_address(ip), port), healthy);
    }

    /// Sets whether virtual services on the gateway may enable transparent
    /// mode (the provider's `transparentModeEnabled` in its LB settings).
    pub fn set_transparent_mode(
        &mut self,
        gateway_id: &str,
        enabled: bool,
    ) -> Result<(), HookError> {
        let gateway = find_mut(&mut self.gateways, gateway_id)
            .ok_or_else(|| not_found("gateway", gateway_id))?;
        gateway.load_balancer.transparent_mode_enabled = enabled;
        Ok(())
    }

    /// Revokes an access token or an API token.
    pub fn revoke_token(&mut self, token: &str) -> Result<(), HookError> {
        if let Some(access) = self.access_tokens.get_mut(token) {
            access.revoked = true;
            return Ok(());
        }
        if super::service_account::revoke_token(self, token) {
            return Ok(());
        }
        let api = self
            .api_tokens
            .iter_mut()
            .find(|t| t.value == token)
            .ok_or_else(|| not_found("token", token))?;
        api.revoked = true;
        Ok(())
    }
}

/// A VM from its scenario form; MAC addresses are generated when absent.
pub fn vm_from_spec(spec: &VmSpec, vapp_id: &str) -> Vm {
    let nics = spec
        .nics
        .iter()
        .map(|nic| {
            let mut nic = nic.clone();
            if nic.mac.is_empty() {
                let bytes = uuid::Uuid::new_v4().into_bytes();
                nic.mac = format!(
                    "00:50:56:{:02x}:{:02x}:{:02x}",
                    bytes[0], bytes[1], bytes[2]
                );
            }
            nic
        })
        .collect();
    Vm {
        id: new_urn("vm"),
        vapp_id: vapp_id.to_string(),
        name: spec.name.clone(),
        power: spec.power,
        cpus: spec.cpus,
        memory_mb: spec.memory_mb,
        guest_os: spec.guest_os.clone(),
        nics,
        primary_nic: spec.primary_nic,
        sizing_policy: spec.sizing_policy.as_ref().map(|name| SizingPolicy {
            id: new_urn("vdcComputePolicy"),
            name: name.clone(),
        }),
        computer_name: spec
            .computer_name
            .clone()
            .unwrap_or_else(|| spec.name.clone()),
    }
}
