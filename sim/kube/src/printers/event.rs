//! Events: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and the rest in wide output.

use super::{Column, Printer, age};
use crate::object::{self, str_at};
use jiff::Timestamp;
use serde_json::{Value, json};

pub static EVENTS: Printer = Printer {
    columns: &[
        Column::text(
            "Last Seen",
            "The time at which the most recent occurrence of this event was recorded.",
        ),
        Column::text(
            "Type",
            "Type of this event (Normal, Warning), new types could be added in the future",
        ),
        Column::text(
            "Reason",
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        ),
        Column::text("Object", "The object that this event is about."),
        Column::text(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].",
        )
        .wide(),
        Column::text(
            "Source",
            "The component reporting this event. Should be a short machine understandable string.",
        )
        .wide(),
        Column::text(
            "Message",
            "A human-readable description of the status of this operation.",
        ),
        Column::text(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        )
        .wide(),
        Column::text("Count", "The number of times this event has occurred.").wide(),
        Column::NAME.wide(),
    ],
    cells,
};

/// Cells from a core/v1 Event (the stored form of both Event APIs).
fn cells(event: &Value, now: Timestamp) -> Vec<Value> {
    let text = |path: &str| str_at(event, path).unwrap_or_default();
    let first_seen = match str_at(event, "firstTimestamp") {
        Some(first) => age::since(Some(first), now),
        None => age::since(str_at(event, "eventTime"), now),
    };
    let mut last_seen = match str_at(event, "lastTimestamp") {
        Some(last) => age::since(Some(last), now),
        None => first_seen.clone(),
    };
    let count = match event.get("series").filter(|s| !s.is_null()) {
        Some(series) => {
            last_seen = age::since(str_at(series, "lastObservedTime"), now);
            series
                .get("count")
                .and_then(Value::as_i64)
                .unwrap_or_default()
        }
        // Singleton events of the events.k8s.io API carry no count.
        None => event
            .get("count")
            .and_then(Value::as_i64)
            .filter(|count| *count != 0)
            .unwrap_or(1),
    };
    vec![
        json!(last_seen),
        json!(text("type")),
        json!(text("reason")),
        json!(involved_object(event)),
        json!(text("involvedObject.fieldPath")),
        json!(source(event)),
        json!(text("message").trim()),
        json!(first_seen),
        json!(count),
        json!(object::name(event)),
    ]
}

/// `service/web`: the lower-cased kind, and the name when there is one.
fn involved_object(event: &Value) -> String {
    let kind = str_at(event, "involvedObject.kind")
        .unwrap_or_default()
        .to_lowercase();
    match str_at(event, "involvedObject.name").filter(|name| !name.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    }
}

/// `component, host`, falling back to the reporting controller and instance.
fn source(event: &Value) -> String {
    let first_nonempty = |paths: [&str; 2]| {
        paths
            .into_iter()
            .filter_map(|path| str_at(event, path))
            .find(|value| !value.is_empty())
            .unwrap_or_default()
    };
    let component = first_nonempty(["source.component", "reportingComponent"]);
    match first_nonempty(["source.host", "reportingInstance"]) {
        "" => component.to_string(),
        instance => format!("{component}, {instance}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_event_prints_its_object_times_and_count() {
        let event = json!({
            "metadata": {"name": "web.17a", "namespace": "default"},
            "involvedObject": {"kind": "Service", "name": "web", "namespace": "default"},
            "reason": "EnsuredLoadBalancer",
            "message": "Ensured load balancer\n",
            "type": "Normal",
            "source": {"component": "service-controller"},
            "firstTimestamp": "2024-05-01T11:50:00Z",
            "lastTimestamp": "2024-05-01T11:59:30Z",
            "count": 3,
        });
        let now = "2024-05-01T12:00:00Z".parse().unwrap();
        assert_eq!(
            cells(&event, now),
            vec![
                json!("30s"),
                json!("Normal"),
                json!("EnsuredLoadBalancer"),
                json!("service/web"),
                json!(""),
                json!("service-controller"),
                json!("Ensured load balancer"),
                json!("10m"),
                json!(3),
                json!("web.17a"),
            ]
        );
        assert_eq!(EVENTS.columns.len(), cells(&event, now).len());
    }

    #[test]
    fn a_new_api_event_uses_event_time_series_and_reporting_fields() {
        let event = json!({
            "metadata": {"name": "web.17b"},
            "involvedObject": {"kind": "Node"},
            "eventTime": "2024-05-01T11:58:30.000000Z",
            "reportingComponent": "vcd-ccm",
            "reportingInstance": "vcd-ccm-0",
        });
        let now = "2024-05-01T12:00:00Z".parse().unwrap();
        let printed = cells(&event, now);
        assert_eq!(printed[0], "90s");
        assert_eq!(printed[3], "node");
        assert_eq!(printed[5], "vcd-ccm, vcd-ccm-0");
        assert_eq!(printed[8], 1);
        let mut repeated = event.clone();
        repeated["series"] = json!({"count": 4, "lastObservedTime": "2024-05-01T11:59:50.000000Z"});
        let printed = cells(&repeated, now);
        assert_eq!(printed[0], "10s");
        assert_eq!(printed[7], "90s");
        assert_eq!(printed[8], 4);
    }
}
