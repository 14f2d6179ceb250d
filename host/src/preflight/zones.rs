//! The zones file of a zone-enabled cluster: read and parsed as the node
//! side reads it at start, and each VDC it names found in the org.

use super::findings::{Failure, Step, bounded};
use crate::config::CloudConfig;
use crate::instances::ClusterVApps;
use crate::vcd::VcdClient;
use crate::vcd::reference::EntityRef;

/// The zones check; `org` is `None` when the org was not found, and then
/// the VDCs are not looked up.
pub(super) async fn check(
    cloud: &CloudConfig,
    client: Option<&VcdClient>,
    org: Option<&EntityRef>,
) -> Step<()> {
    let path = cloud.zones_file();
    let config = cloud.instances_config().map_err(|e| {
        Failure::new(
            e,
            format!(
                "Mount the zones ConfigMap (vcloud-capvcd-zones, key vcloud-cse-zones.yaml) at {} (nodes.zonesFile), with zones: [{{name, ovdcName}}], or set vcd.isZoneEnabledCluster to false",
                path.display()
            ),
        )
    })?;
    if !matches!(config.vapps, ClusterVApps::ZonePrefix(_)) {
        return Ok((
            (),
            "vcd.isZoneEnabledCluster is false: no zones file is read".to_string(),
        ));
    }
    let zones: Vec<(String, String)> = config
        .zones
        .vdcs()
        .map(|(vdc, zone)| (vdc.to_string(), zone.to_string()))
        .collect();
    let read = format!("{}: {} VDCs in zones", path.display(), zones.len());
    let (Some(client), Some(org)) = (client, org) else {
        return Ok((
            (),
            format!("{read}; their VDCs are not looked up, the org was not found"),
        ));
    };
    for (vdc, zone) in &zones {
        bounded(client.tenancy().vdc(org, vdc))
            .await?
            .map_err(|e| {
                Failure::new(
                    format!("zone {zone}: {e}"),
                    format!(
                        "Correct ovdcName of zone {zone} in {}: it must name a VDC of the org",
                        path.display()
                    ),
                )
            })?;
    }
    Ok(((), format!("{read}, each found in the org")))
}
