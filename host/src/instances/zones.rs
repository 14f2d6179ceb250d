//! The VDC → zone map, read from the upstream CCM's zones ConfigMap
//! (`vcloud-capvcd-zones`, key `vcloud-cse-zones.yaml`):
//!
//! ```yaml
//! zoneType: dcgroup      # not interpreted, as upstream
//! zones:
//!   - name: zone-a
//!     ovdcName: vdc-a
//! ```
//!
//! Parsing is strict like upstream's: unknown keys are errors. It is also
//! stricter where upstream silently lets the last entry win: an empty name
//! and a VDC listed twice are errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Why the zones file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ZonesError {
    /// The file cannot be read.
    #[error("cannot read the zones file {path}: {source}")]
    Read {
        /// The zones file's path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not YAML of the expected shape (unknown keys included).
    #[error("the zones file {origin} is not valid: {detail}")]
    Syntax {
        /// What names the file in messages (its path).
        origin: String,
        /// The YAML parser's message.
        detail: String,
    },
    /// An entry's zone name or VDC name is empty.
    #[error("the zones file {origin}: zones[{index}] has an empty {field}")]
    EmptyField {
        /// What names the file in messages (its path).
        origin: String,
        /// The entry's position in `zones`.
        index: usize,
        /// `name` or `ovdcName`.
        field: &'static str,
    },
    /// A VDC is listed in two entries; it can be in one zone only.
    #[error(
        "the zones file {origin}: VDC '{vdc}' is listed twice, in zone '{first}' (zones[{first_index}]) and zone '{second}' (zones[{second_index}]); a VDC belongs to one zone"
    )]
    DuplicateVdc {
        /// What names the file in messages (its path).
        origin: String,
        /// The VDC's name.
        vdc: String,
        /// The zone of the first entry listing the VDC.
        first: String,
        /// The first entry's position in `zones`.
        first_index: usize,
        /// The zone of the second entry listing the VDC.
        second: String,
        /// The second entry's position in `zones`.
        second_index: usize,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ZonesFile {
    /// Accepted and, like upstream, not interpreted.
    #[serde(default, rename = "zoneType")]
    _zone_type: Option<String>,
    zones: Vec<ZoneEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ZoneEntry {
    name: String,
    ovdc_name: String,
}

/// Which zone each VDC (by name or URN) is in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneMap {
    by_vdc: BTreeMap<String, String>,
}

impl ZoneMap {
    /// Reads and parses the zones file at `path`.
    pub fn load(path: &Path) -> Result<Self, ZonesError> {
        let text = std::fs::read_to_string(path).map_err(|source| ZonesError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses the zones file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ZonesError> {
        let file: ZonesFile =
            serde_yaml_ng::from_str(text).map_err(|error| ZonesError::Syntax {
                origin: origin.to_string(),
                detail: error.to_string(),
            })?;
        let mut by_vdc: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for (index, entry) in file.zones.into_iter().enumerate() {
            let empty = |field| ZonesError::EmptyField {
                origin: origin.to_string(),
                index,
                field,
            };
            if entry.name.trim().is_empty() {
                return Err(empty("name"));
            }
            if entry.ovdc_name.trim().is_empty() {
                return Err(empty("ovdcName"));
            }
            if let Some((first_index, first)) = by_vdc.get(&entry.ovdc_name) {
                return Err(ZonesError::DuplicateVdc {
                    origin: origin.to_string(),
                    vdc: entry.ovdc_name,
                    first: first.clone(),
                    first_index: *first_index,
                    second: entry.name,
                    second_index: index,
                });
            }
            by_vdc.insert(entry.ovdc_name, (index, entry.name));
        }
        Ok(Self {
            by_vdc: by_vdc
                .into_iter()
                .map(|(vdc, (_, zone))| (vdc, zone))
                .collect(),
        })
    }

    /// The zone of the VDC named `vdc`.
    pub fn zone_of(&self, vdc: &str) -> Option<&str> {
        self.by_vdc.get(vdc).map(String::as_str)
    }

    /// The zone of a VM's VDC, listed by name or else by URN (URNs compare
    /// case-insensitively, as VCD treats them).
    pub fn zone_of_vdc(&self, name: Option<&str>, urn: Option<&str>) -> Option<&str> {
        name.and_then(|name| self.zone_of(name)).or_else(|| {
            let urn = urn?;
            self.by_vdc
                .iter()
                .find(|(vdc, _)| vdc.eq_ignore_ascii_case(urn))
                .map(|(_, zone)| zone.as_str())
        })
    }

    /// Each VDC (as the file names it) with its zone.
    pub fn vdcs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_vdc
            .iter()
            .map(|(vdc, zone)| (vdc.as_str(), zone.as_str()))
    }

    /// Whether no VDC has a zone; nodes then get no zone label.
    pub fn is_empty(&self) -> bool {
        self.by_vdc.is_empty()
    }
}
