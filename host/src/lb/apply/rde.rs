//! The CAPVCD cluster RDE's `status.cpi`: the load balancers' virtual IPs
//! and the latest events and errors, like the upstream CCM (bounded lists,
//! ETag with a fresh read on 412). A cluster id that is empty, starts with
//! `NO_RDE_`, or names no CAPVCD entity turns this off. Failures here are
//! logged and never fail load-balancer work.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;

use crate::vcd::VcdClient;

/// Upstream's rolling window for `eventSet` and `errorSet`.
const MAX_ENTRIES: usize = 10;
/// Each entry's detail text, escaped and cut like an Event's message.
const DETAIL_BYTES: usize = crate::text::EVENT_MESSAGE_BYTES;
const CAPVCD_TYPE: &str = "urn:vcloud:type:vmware:capvcdCluster:";

/// One change to record.
#[derive(Debug, Clone)]
pub enum RdeRecord {
    /// The Service's load balancer was created or changed (`event` is
    /// `CreatedLoadbalancer` or `UpdatedLoadbalancer`).
    Ensured {
        service: String,
        ip: String,
        event: &'static str,
    },
    Deleted {
        service: String,
        ip: Option<String>,
    },
    /// `name` is upstream's error name, e.g. `CreateLoadbalancerError`.
    Failed {
        service: String,
        name: &'static str,
        message: String,
    },
}

pub struct RdeStatus {
    client: VcdClient,
    entity_id: Option<String>,
    is_capvcd: OnceCell<bool>,
}

/// RFC 3339 UTC time of `now` (civil-from-days, no calendar crate needed).
fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn push_bounded(list: &mut Value, entry: Value) {
    if !list.is_array() {
        *list = json!([]);
    }
    if let Some(items) = list.as_array_mut() {
        items.push(entry);
        let excess = items.len().saturating_sub(MAX_ENTRIES);
        items.drain(..excess);
    }
}

fn entry(name: &str, service: &str, key: &str, message: &str) -> Value {
    json!({
        "name": name,
        "occurredAt": rfc3339_now(),
        "vcdResourceId": "",
        "vcdResourceName": service,
        "additionalDetails": {key: crate::text::sanitize(message, DETAIL_BYTES)},
    })
}

/// Applies `record` to an entity document.
fn apply(entity: &mut Value, record: &RdeRecord) {
    if !entity.is_object() {
        *entity = json!({});
    }
    let status = entity
        .as_object_mut()
        .map(|e| e.entry("status").or_insert_with(|| json!({})));
    let Some(status) = status else { return };
    if !status.is_object() {
        *status = json!({});
    }
    let Some(cpi) = status
        .as_object_mut()
        .map(|s| s.entry("cpi").or_insert_with(|| Value::Object(Map::new())))
    else {
        return;
    };
    if !cpi.is_object() {
        *cpi = json!({});
    }
    cpi["name"] = json!("cloud-controller-manager");
    cpi["version"] = json!(env!("CARGO_PKG_VERSION"));
    let mut ips: Vec<String> = cpi["virtualIPs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    match record {
        RdeRecord::Ensured { service, ip, event } => {
            if !ips.contains(ip) {
                ips.push(ip.clone());
            }
            let message = format!("load balancer for Service {service} at {ip}");
            push_bounded(
                &mut cpi["eventSet"],
                entry(event, service, "Detailed Event", &message),
            );
            if let Some(errors) = cpi["errorSet"].as_array_mut() {
                errors.retain(|e| e["vcdResourceName"].as_str() != Some(service));
            }
        }
        RdeRecord::Deleted { service, ip } => {
            ips.retain(|known| Some(known) != ip.as_ref());
            let message = format!("load balancer for Service {service} deleted");
            push_bounded(
                &mut cpi["eventSet"],
                entry("DeletedLoadbalancer", service, "Detailed Event", &message),
            );
            if let Some(errors) = cpi["errorSet"].as_array_mut() {
                errors.retain(|e| e["vcdResourceName"].as_str() != Some(service));
            }
        }
        RdeRecord::Failed {
            service,
            name,
            message,
        } => push_bounded(
            &mut cpi["errorSet"],
            entry(name, service, "Detailed Error", message),
        ),
    }
    cpi["virtualIPs"] = json!(ips);
}

impl RdeStatus {
    pub fn new(client: VcdClient, cluster_id: &str) -> Self {
        let entity_id =
            (cluster_id.starts_with("urn:vcloud:entity:")).then(|| cluster_id.to_string());
        Self {
            client,
            entity_id,
            is_capvcd: OnceCell::new(),
        }
    }

    /// Records `record`; any failure is logged only.
    pub async fn record(&self, record: RdeRecord) {
        let Some(id) = self.entity_id.as_deref() else {
            return;
        };
        let capvcd = self
            .is_capvcd
            .get_or_try_init(|| async {
                let (entity, _) = self.client.entities().get(id).await?;
                Ok::<bool, crate::vcd::VcdError>(
                    entity
                        .entity_type
                        .as_deref()
                        .is_some_and(|t| t.starts_with(CAPVCD_TYPE)),
                )
            })
            .await;
        match capvcd {
            Ok(true) => {}
            Ok(false) => return,
            Err(error) => {
                tracing::warn!(%error, "cannot read the cluster RDE; its status.cpi is not updated");
                return;
            }
        }
        let result = self
            .client
            .entities()
            .update(id, |entity| {
                apply(entity, &record);
                Ok(())
            })
            .await;
        if let Err(error) = result {
            tracing::warn!(%error, "cannot update status.cpi of the cluster RDE");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_bounded_lists_and_clear_errors_on_success() {
        let mut entity = json!({"kind": "CAPVCDCluster"});
        for i in 0..12 {
            let failed = RdeRecord::Failed {
                service: "ns/web".into(),
                name: "CreateLoadbalancerError",
                message: format!("attempt {i}"),
            };
            apply(&mut entity, &failed);
        }
        assert_eq!(
            entity["status"]["cpi"]["errorSet"]
                .as_array()
                .unwrap()
                .len(),
            10
        );
        let ensured = RdeRecord::Ensured {
            service: "ns/web".into(),
            ip: "203.0.113.20".into(),
            event: "CreatedLoadbalancer",
        };
        apply(&mut entity, &ensured);
        let cpi = &entity["status"]["cpi"];
        assert_eq!(cpi["errorSet"].as_array().unwrap().len(), 0);
        assert_eq!(cpi["virtualIPs"], json!(["203.0.113.20"]));
        apply(
            &mut entity,
            &RdeRecord::Deleted {
                service: "ns/web".into(),
                ip: Some("203.0.113.20".into()),
            },
        );
        assert_eq!(entity["status"]["cpi"]["virtualIPs"], json!([]));
        assert_eq!(entity["kind"], "CAPVCDCluster");
    }

    #[test]
    fn error_details_are_escaped_and_bounded() {
        let mut entity = json!({});
        let failed = RdeRecord::Failed {
            service: "ns/web".into(),
            name: "CreateLoadbalancerError",
            message: format!("policy said\n{}", "x".repeat(1 << 20)),
        };
        apply(&mut entity, &failed);
        let detail = entity["status"]["cpi"]["errorSet"][0]["additionalDetails"]["Detailed Error"]
            .as_str()
            .unwrap();
        assert!(detail.len() <= DETAIL_BYTES, "{} bytes", detail.len());
        assert!(detail.starts_with("policy said\\n"), "{detail}");
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let now = rfc3339_now();
        assert_eq!(now.len(), 20);
        assert!(now.starts_with("20") && now.ends_with('Z'));
    }
}
