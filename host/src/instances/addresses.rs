//! A node's addresses from its VM's NICs: the primary NIC gives the
//! `InternalIP`; other NICs whatever the address policy says; plus a
//! `Hostname`. NICs without an IP and disconnected secondary NICs give none.

use std::fmt;

use super::config::{AddressPolicy, HostnameSource, NicRole};
use crate::vcd::resources::vm::Vm;

/// The kind of a node address (Kubernetes' `NodeAddressType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressType {
    /// `InternalIP`: the primary NIC's address, and other NICs' where the
    /// address policy says so.
    InternalIp,
    /// `ExternalIP`: other NICs' addresses where the address policy says so.
    ExternalIp,
    /// `Hostname`: the VM name or the guest's computer name.
    Hostname,
}

impl AddressType {
    /// The Kubernetes `NodeAddressType` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InternalIp => "InternalIP",
            Self::ExternalIp => "ExternalIP",
            Self::Hostname => "Hostname",
        }
    }
}

impl fmt::Display for AddressType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of the node's `status.addresses`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAddress {
    /// `type`.
    pub address_type: AddressType,
    /// An IPv4 address or a hostname.
    pub address: String,
}

impl NodeAddress {
    /// The address `address` of kind `address_type`.
    pub fn new(address_type: AddressType, address: impl Into<String>) -> Self {
        Self {
            address_type,
            address: address.into(),
        }
    }
}

/// The primary NIC first, then the others by NIC index, then the hostname;
/// without duplicates.
pub fn node_addresses(vm: &Vm, policy: &AddressPolicy) -> Vec<NodeAddress> {
    let mut addresses: Vec<NodeAddress> = Vec::new();
    let mut push = |address: NodeAddress| {
        if !address.address.is_empty() && !addresses.contains(&address) {
            addresses.push(address);
        }
    };
    let primary = vm.primary_nic();
    if let Some(ip) = primary.and_then(|nic| nic.ip_address.as_deref()) {
        push(NodeAddress::new(AddressType::InternalIp, ip));
    }
    let mut others: Vec<_> = vm
        .nics
        .iter()
        .filter(|nic| Some(nic.index) != primary.map(|p| p.index) && nic.connected)
        .collect();
    others.sort_by_key(|nic| nic.index);
    for nic in others {
        let address_type = match policy.role_of(nic.network.as_deref()) {
            NicRole::Ignore => continue,
            NicRole::InternalIp => AddressType::InternalIp,
            NicRole::ExternalIp => AddressType::ExternalIp,
        };
        if let Some(ip) = nic.ip_address.as_deref() {
            push(NodeAddress::new(address_type, ip));
        }
    }
    let hostname = match policy.hostname {
        HostnameSource::VmName => Some(vm.name.as_str()),
        HostnameSource::ComputerName => Some(vm.computer_name.as_deref().unwrap_or(&vm.name)),
        HostnameSource::None => None,
    };
    if let Some(hostname) = hostname {
        push(NodeAddress::new(AddressType::Hostname, hostname));
    }
    addresses
}
