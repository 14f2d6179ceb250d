//! API version negotiation: VCD lists what it supports at `/api/versions`;
//! we use the highest of those inside our configured range, so one build
//! works across VCD releases without sending a version VCD would refuse.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use super::errors::VcdError;

/// A VCD API version such as `37.2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ApiVersion {
    /// The major version, e.g. `37` (VCD 10.4).
    pub major: u32,
    /// The minor version, e.g. `2` in `37.2`.
    pub minor: u32,
}

impl ApiVersion {
    /// The version `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }
}

impl Ord for ApiVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor).cmp(&(other.major, other.minor))
    }
}

impl PartialOrd for ApiVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Text that does not parse as an [`ApiVersion`] (`major.minor`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an API version like 37.2")]
pub struct BadVersion(String);

impl FromStr for ApiVersion {
    type Err = BadVersion;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadVersion(text.to_string());
        let (major, minor) = text.trim().split_once('.').ok_or_else(bad)?;
        Ok(Self {
            major: major.parse().map_err(|_| bad())?,
            minor: minor.parse().map_err(|_| bad())?,
        })
    }
}

/// The inclusive range of API versions this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionRange {
    /// The lowest version the client speaks.
    pub min: ApiVersion,
    /// The highest version the client speaks.
    pub max: ApiVersion,
}

impl Default for VersionRange {
    /// VCD 10.3 (36.0) to 10.6.1 (39.1): the releases whose CloudAPI shapes
    /// the typed models follow; 37.2 to 39.1 are tested end to end.
    fn default() -> Self {
        Self {
            min: ApiVersion::new(36, 0),
            max: ApiVersion::new(39, 1),
        }
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}–{}", self.min, self.max)
    }
}

/// The body of `GET /api/versions` in its JSON form.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SupportedVersions {
    #[serde(default)]
    pub version_info: Vec<VersionInfo>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionInfo {
    pub version: String,
}

/// The highest offered version inside `range`. Versions VCD lists in a form
/// we cannot parse (alpha versions) are ignored; the error names all of them.
pub fn negotiate(offered: &[String], range: VersionRange) -> Result<ApiVersion, VcdError> {
    offered
        .iter()
        .filter_map(|v| v.parse::<ApiVersion>().ok())
        .filter(|v| *v >= range.min && *v <= range.max)
        .max()
        .ok_or_else(|| VcdError::NoCommonVersion {
            offered: offered.join(", "),
            range: range.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn picks_the_highest_version_inside_the_range() {
        let range = VersionRange::default();
        let versions = offered(&[
            "35.0",
            "36.3",
            "37.2",
            "38.1",
            "39.1",
            "40.0",
            "41.0.0-alpha",
        ]);
        assert_eq!(negotiate(&versions, range).unwrap(), ApiVersion::new(39, 1));
        let only_39 = offered(&["39.0", "39.1"]);
        assert_eq!(negotiate(&only_39, range).unwrap(), ApiVersion::new(39, 1));
        let older = offered(&["35.0", "36.0", "37.2"]);
        assert_eq!(negotiate(&older, range).unwrap(), ApiVersion::new(37, 2));
    }

    #[test]
    fn no_overlap_names_what_vcd_offered() {
        let error = negotiate(&offered(&["33.0", "34.0"]), VersionRange::default()).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("33.0, 34.0"), "{text}");
        assert!(text.contains("36.0–39.1"), "{text}");
    }

    #[test]
    fn versions_compare_numerically() {
        assert!("37.10".parse::<ApiVersion>().unwrap() > "37.2".parse().unwrap());
        assert!("x".parse::<ApiVersion>().is_err());
    }
}
