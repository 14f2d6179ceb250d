//! The allocation journal. VCD cannot mark an IP Space allocation when it is
//! made: `allocate` takes a type and a value, and the claim (`USED_MANUAL`
//! with the ownership tag) is a second call. An allocation left between the
//! two by a crash or a lost answer carries nothing that says whose it is,
//! and an unmarked allocation may as well be someone's reservation. So the
//! space and the address are noted on the Service first, durably; a later
//! reconcile claims an unmarked allocation of exactly that address, and a
//! delete releases it.

use std::net::IpAddr;

use futures::future::BoxFuture;

pub use crate::lb::errors::JournalError;
use crate::lb::service::ServiceSpec;

/// The annotation the service controller keeps the note in.
pub const ANNOTATION: &str = "vcd-ccm.io/ip-space-allocation";

/// Where notes about allocations in progress are kept.
pub trait AllocationJournal: Send + Sync {
    /// The note kept for the Service, if any.
    fn noted(&self, service: &ServiceSpec) -> Option<String>;

    /// Keeps `note` durably; returns once it is stored.
    fn note<'a>(
        &'a self,
        service: &'a ServiceSpec,
        note: String,
    ) -> BoxFuture<'a, Result<(), JournalError>>;
}

/// One note: an allocation of `ip` in the IP Space `space_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Noted {
    pub space_id: String,
    pub ip: IpAddr,
}

impl Noted {
    pub fn format(&self) -> String {
        format!("{} {}", self.space_id, self.ip)
    }

    /// Reads a note; anything else (an annotation edited by hand) is `None`.
    pub fn parse(text: &str) -> Option<Noted> {
        let (space_id, ip) = text.trim().split_once(' ')?;
        if !space_id.starts_with("urn:vcloud:ipSpace:") {
            return None;
        }
        Some(Noted {
            space_id: space_id.to_string(),
            ip: ip.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_and_hand_edits_are_ignored() {
        let noted = Noted {
            space_id: "urn:vcloud:ipSpace:1".into(),
            ip: "192.0.2.20".parse().unwrap(),
        };
        assert_eq!(Noted::parse(&noted.format()), Some(noted));
        let v6 = Noted {
            space_id: "urn:vcloud:ipSpace:6".into(),
            ip: "2001:db8::20".parse().unwrap(),
        };
        assert_eq!(Noted::parse(&v6.format()), Some(v6));
        for text in [
            "",
            "192.0.2.20",
            "urn:vcloud:ipSpace:1 x",
            "space 192.0.2.20",
        ] {
            assert_eq!(Noted::parse(text), None, "{text:?}");
        }
    }
}
