//! Kinds with short tables: Namespaces, ConfigMaps, Secrets, Leases, and the
//! default table the real server gives kinds without a printer.

use super::{Column, Printer, age_cell, map_len};
use crate::object::{self, str_at};
use jiff::Timestamp;
use serde_json::{Value, json};

pub static NAMESPACES: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text("Status", "The status of the namespace"),
        Column::AGE,
    ],
    cells: |namespace, now| {
        vec![
            json!(object::name(namespace)),
            json!(str_at(namespace, "status.phase").unwrap_or_default()),
            age_cell(namespace, now),
        ]
    },
};

pub static CONFIG_MAPS: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text(
            "Data",
            "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'.",
        ),
        Column::AGE,
    ],
    cells: |config_map, now| {
        let entries = map_len(config_map, "data") + map_len(config_map, "binaryData");
        vec![
            json!(object::name(config_map)),
            json!(entries),
            age_cell(config_map, now),
        ]
    },
};

pub static SECRETS: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text(
            "Type",
            "Used to facilitate programmatic handling of secret data.",
        ),
        Column::text(
            "Data",
            "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'.",
        ),
        Column::AGE,
    ],
    cells: |secret, now| {
        vec![
            json!(object::name(secret)),
            json!(str_at(secret, "type").unwrap_or_default()),
            json!(map_len(secret, "data")),
            age_cell(secret, now),
        ]
    },
};

pub static LEASES: Printer = Printer {
    columns: &[
        Column::NAME,
        Column::text(
            "Holder",
            "holderIdentity contains the identity of the holder of a current lease.",
        ),
        Column::AGE,
    ],
    cells: |lease, now| {
        vec![
            json!(object::name(lease)),
            json!(str_at(lease, "spec.holderIdentity").unwrap_or_default()),
            age_cell(lease, now),
        ]
    },
};

/// The real server's default table (`rest.NewDefaultTableConvertor`): the creation
/// time itself rather than an age.
pub static DEFAULT: Printer = Printer {
    columns: &[
        Column::NAME,
        Column {
            name: "Created At",
            type_name: "date",
            ..Column::AGE
        },
    ],
    cells: default_cells,
};

fn default_cells(object: &Value, _now: Timestamp) -> Vec<Value> {
    vec![
        json!(object::name(object)),
        // An unset time prints as Go's zero time, as there.
        json!(str_at(object, "metadata.creationTimestamp").unwrap_or("0001-01-01T00:00:00Z")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2024-05-01T12:00:00Z";
    const CREATED: &str = "2024-05-01T11:59:55Z";

    fn print(printer: &Printer, object: Value) -> Vec<Value> {
        let mut object = object;
        object["metadata"] = json!({"name": "x", "creationTimestamp": CREATED});
        let cells = (printer.cells)(&object, NOW.parse().unwrap());
        assert_eq!(cells.len(), printer.columns.len());
        cells
    }

    #[test]
    fn short_tables_count_data_and_show_holders_and_phases() {
        assert_eq!(
            print(&NAMESPACES, json!({"status": {"phase": "Active"}})),
            vec![json!("x"), json!("Active"), json!("5s")]
        );
        assert_eq!(
            print(
                &CONFIG_MAPS,
                json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}})
            ),
            vec![json!("x"), json!(3), json!("5s")]
        );
        assert_eq!(
            print(&SECRETS, json!({"type": "Opaque", "data": {"a": "MQ=="}})),
            vec![json!("x"), json!("Opaque"), json!(1), json!("5s")]
        );
        assert_eq!(
            print(&LEASES, json!({"spec": {"holderIdentity": "vcd-ccm-0"}})),
            vec![json!("x"), json!("vcd-ccm-0"), json!("5s")]
        );
        assert_eq!(print(&LEASES, json!({}))[1], "");
        assert_eq!(print(&DEFAULT, json!({})), vec![json!("x"), json!(CREATED)]);
    }
}
