//! The node providerID, in the upstream CCM's format:
//! `vmware-cloud-director://urn:vcloud:vm:<uuid>`.

use super::errors::InstancesError;

const PROVIDER_ID_PREFIX: &str = "vmware-cloud-director://";
const VM_URN_PREFIX: &str = "urn:vcloud:vm:";

/// The providerID of the VM with this URN.
pub fn provider_id(vm_urn: &str) -> String {
    format!("{PROVIDER_ID_PREFIX}{vm_urn}")
}

/// The lower-case VM URN a providerID names. Like upstream, the part after
/// the prefix is trimmed and lower-cased; a bare UUID is accepted too.
pub fn vm_urn(provider_id: &str) -> Result<String, InstancesError> {
    let invalid = |reason: &str| InstancesError::InvalidProviderId {
        provider_id: provider_id.to_string(),
        reason: reason.to_string(),
    };
    let rest = provider_id
        .trim()
        .strip_prefix(PROVIDER_ID_PREFIX)
        .ok_or_else(|| invalid("it does not start with 'vmware-cloud-director://'"))?;
    let rest = rest.trim().to_ascii_lowercase();
    let uuid = rest.strip_prefix(VM_URN_PREFIX).unwrap_or(&rest);
    if !is_uuid(uuid) {
        return Err(invalid(&format!("'{uuid}' is not a VM UUID")));
    }
    Ok(format!("{VM_URN_PREFIX}{uuid}"))
}

/// 8-4-4-4-12 hex digits.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";

    #[test]
    fn round_trips_and_normalises() {
        let urn = format!("urn:vcloud:vm:{UUID}");
        assert_eq!(vm_urn(&provider_id(&urn)).unwrap(), urn);
        let shouting = format!(
            " vmware-cloud-director:// URN:VCLOUD:VM:{} ",
            UUID.to_uppercase()
        );
        assert_eq!(vm_urn(&shouting).unwrap(), urn);
        assert_eq!(
            vm_urn(&format!("vmware-cloud-director://{UUID}")).unwrap(),
            urn
        );
    }

    #[test]
    fn rejects_other_providers_and_bad_uuids() {
        for bad in [
            format!("aws:///eu-west-1a/{UUID}"),
            "vmware-cloud-director://".to_string(),
            "vmware-cloud-director://urn:vcloud:vm:not-a-uuid".to_string(),
            format!("vmware-cloud-director://urn:vcloud:vapp:{UUID}"),
        ] {
            let error = vm_urn(&bad).unwrap_err().to_string();
            assert!(error.contains(&bad), "{error}");
        }
    }
}
