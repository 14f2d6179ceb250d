//! Objects a later vcd-ccm wrote: their ownership tag's format is newer
//! than this version knows ([`FORMAT`]). They are left alone everywhere
//! (no update, no delete, their address never taken); each is logged once
//! per process, and the sweep counts them by kind.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use crate::lb::ownership::{FORMAT, NewerTag};

/// The kinds of object a tag is found on, as metric labels.
pub const KINDS: [&str; 7] = [
    "virtual_service",
    "pool",
    "nat_rule",
    "ip_space_allocation",
    "firewall_rule",
    "ip_set",
    "port_profile",
];

/// One object whose tag is of a newer format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewerObject {
    /// One of [`KINDS`].
    pub kind: &'static str,
    /// Its name (an IP Space allocation's address).
    pub name: String,
    pub tag: NewerTag,
}

impl NewerObject {
    /// The object, if `description` is a newer format's tag.
    pub fn of(kind: &'static str, name: &str, description: Option<&str>) -> Option<Self> {
        Some(Self {
            kind,
            name: name.to_string(),
            tag: NewerTag::parse(description?)?,
        })
    }

    /// `virtual service ingress-vs-…`, for messages.
    pub fn describe(&self) -> String {
        format!("{} {}", self.kind.replace('_', " "), self.name)
    }
}

/// How many of `objects` are of each kind found.
pub fn count_by_kind(objects: &[NewerObject]) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for object in objects {
        *counts.entry(object.kind).or_default() += 1;
    }
    counts
}

/// The objects already logged, so each is logged once per process.
#[derive(Debug, Default)]
pub struct NewerFormats {
    logged: Mutex<HashSet<(&'static str, String)>>,
}

impl NewerFormats {
    /// Logs `object` the first time it is met.
    pub fn notice(&self, object: &NewerObject) {
        let first = self
            .logged
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert((object.kind, object.name.clone()));
        if first {
            tracing::warn!(
                kind = object.kind,
                object = %object.name,
                service = object.tag.service.as_deref().unwrap_or("?"),
                format = object.tag.format,
                known = FORMAT,
                "an object written by a newer vcd-ccm (its ownership tag's format is newer than this version knows): left alone, never updated or deleted, its address not taken"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_object_is_logged_once_and_counted_by_kind() {
        let newer = |kind, name: &str| {
            NewerObject::of(kind, name, Some("vcd-ccm format=99 uid=1")).expect("newer")
        };
        let objects = [
            newer("pool", "p1"),
            newer("pool", "p2"),
            newer("nat_rule", "n1"),
        ];
        let counts = count_by_kind(&objects);
        assert_eq!(counts, BTreeMap::from([("nat_rule", 1), ("pool", 2)]));
        assert_eq!(
            NewerObject::of(
                "pool",
                "p",
                Some("vcd-ccm format=4 cluster=c service=a/b uid=1")
            ),
            None
        );
        let formats = NewerFormats::default();
        formats.notice(&objects[0]);
        formats.notice(&objects[0]);
        assert_eq!(formats.logged.lock().unwrap().len(), 1);
        assert_eq!(objects[2].describe(), "nat rule n1");
    }
}
