//! The contract versions a policy may implement, side by side: 0.4.0 (the
//! current `wit/`), 0.3.0, 0.2.0 and 0.1.0 (`wit/0.3.0/` …), the older
//! three frozen. A policy's version is the one whose `policy` interface it
//! exports; the host calls it with that version's record shapes
//! (`model::v0_3`, `model::v0_2`, `model::v0_1`).

/// A version of the `vcd:lb-policy` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// `vcd:lb-policy@0.1.0`.
    V0_1,
    /// `vcd:lb-policy@0.2.0`: source ranges, ready endpoints and transparent
    /// mode in the input, `preserve-client-ip` in the decision.
    V0_2,
    /// `vcd:lb-policy@0.3.0`: the Service's session affinity in the input,
    /// persistence per port in the decision.
    V0_3,
    /// `vcd:lb-policy@0.4.0`: tuned monitors, internal pools, the address's
    /// mode, hostname and retention, and a node selector.
    V0_4,
}

impl Contract {
    /// Every version the host serves, newest first (the order exports are looked for).
    pub const ALL: [Contract; 4] = [
        Contract::V0_4,
        Contract::V0_3,
        Contract::V0_2,
        Contract::V0_1,
    ];

    /// `0.1.0` to `0.4.0`.
    pub fn version(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1.0",
            Contract::V0_2 => "0.2.0",
            Contract::V0_3 => "0.3.0",
            Contract::V0_4 => "0.4.0",
        }
    }

    /// The interface a policy exports.
    pub fn policy_interface(self) -> String {
        format!("vcd:lb-policy/policy@{}", self.version())
    }

    /// The host functions a policy may import.
    pub fn host_interface(self) -> String {
        format!("vcd:lb-policy/host@{}", self.version())
    }

    /// The contract's types, which policies import.
    pub fn types_interface(self) -> String {
        format!("vcd:lb-policy/types@{}", self.version())
    }
}

impl std::fmt::Display for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "vcd:lb-policy@{}", self.version())
    }
}
