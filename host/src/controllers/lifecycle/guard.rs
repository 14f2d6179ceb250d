//! The mass-deletion guard: when to delete no Node at all in a pass.
//!
//! VCD answers the VM query with what the role may see, so after a rights
//! change or a vApp rename every VM looks gone at once. Upstream then deletes
//! every NotReady Node. The rule here, for a pass in which `deleting` of the
//! `nodes` cached Nodes are NotReady with their VM not found:
//!
//! 1. the inventory holds no VM at all → hold every deletion;
//! 2. else, more than one Node would go and `deleting > fraction × nodes`
//!    → hold every deletion;
//! 3. else delete them.
//!
//! One Node is never held by the fraction, so a cluster of one or two Nodes
//! still loses a Node whose VM is gone while the inventory sees other VMs.

use std::fmt;

/// `--max-node-deletion-fraction`: the largest share of the Nodes one pass
/// may delete when more than one would go, in (0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeletionFraction(f64);

/// A `--max-node-deletion-fraction` outside (0, 1].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{0} is not a fraction in (0, 1]: give the largest share of the Nodes one pass may delete, e.g. 0.5 (1 turns the fraction check off)"
)]
pub struct FractionError(f64);

impl DeletionFraction {
    /// `value` if it is in (0, 1] (NaN is not).
    pub fn new(value: f64) -> Result<Self, FractionError> {
        if value > 0.0 && value <= 1.0 {
            Ok(Self(value))
        } else {
            Err(FractionError(value))
        }
    }

    /// The fraction, in (0, 1].
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Default for DeletionFraction {
    /// Half the Nodes.
    fn default() -> Self {
        Self(0.5)
    }
}

/// Why a pass deletes nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// The VM inventory is empty while Nodes exist.
    EmptyInventory {
        /// The vApps searched, for the message.
        scope: String,
    },
    /// More Nodes would go than the fraction allows.
    TooMany {
        /// NotReady Nodes whose VM was not found.
        deleting: usize,
        /// Every cached Node.
        nodes: usize,
        /// `--max-node-deletion-fraction`.
        fraction: DeletionFraction,
    },
}

impl Hold {
    /// The rule above; `vms` is the inventory's size.
    pub fn check(
        deleting: usize,
        nodes: usize,
        vms: usize,
        scope: &str,
        fraction: DeletionFraction,
    ) -> Option<Hold> {
        if deleting == 0 {
            return None;
        }
        if vms == 0 {
            return Some(Hold::EmptyInventory {
                scope: scope.to_string(),
            });
        }
        // Rounding of the product matters only exactly at the limit.
        let too_many = deleting > 1 && deleting as f64 > fraction.get() * nodes as f64;
        too_many.then_some(Hold::TooMany {
            deleting,
            nodes,
            fraction,
        })
    }

    /// A short reason, for the log line.
    pub fn reason(&self) -> &'static str {
        match self {
            Hold::EmptyInventory { .. } => "empty VM inventory",
            Hold::TooMany { .. } => "too many deletions at once",
        }
    }

    /// The Warning Event's message for the held Node `name`.
    pub fn message(&self, name: &str) -> String {
        // An empty inventory is held whatever the fraction.
        let or_raise = match self {
            Hold::EmptyInventory { .. } => "",
            Hold::TooMany { .. } => " or raise --max-node-deletion-fraction",
        };
        format!(
            "Not deleting node {name} although its VM was not found: {self}. No Node is deleted \
             while this lasts. Check that the VCD role of the credentials may still see the \
             cluster's VMs and that the cloud config's vAppName names the cluster's vApp; if the \
             VMs really are gone, delete the Nodes with kubectl{or_raise}"
        )
    }
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hold::EmptyInventory { scope } => write!(
                f,
                "the VM inventory of {scope} is empty, which more likely means VCD hides the VMs than that every VM is gone"
            ),
            Hold::TooMany {
                deleting,
                nodes,
                fraction,
            } => {
                // Two decimals at most: 0.333 shows as 33.3%, not 33.300000000000004%.
                let percent = (fraction.get() * 10_000.0).round() / 100.0;
                write!(
                    f,
                    "{deleting} of {nodes} Nodes would be deleted in one pass, above the limit of {percent}% set by --max-node-deletion-fraction"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(deleting: usize, nodes: usize, vms: usize, fraction: f64) -> Option<Hold> {
        let fraction = DeletionFraction::new(fraction).unwrap();
        Hold::check(deleting, nodes, vms, "vApp 'c'", fraction)
    }

    #[test]
    fn the_fraction_is_in_zero_exclusive_to_one_inclusive() {
        for good in [1e-9, 0.5, 1.0] {
            assert_eq!(
                DeletionFraction::new(good).map(DeletionFraction::get),
                Ok(good)
            );
        }
        for bad in [0.0, -0.5, 1.01, f64::NAN, f64::INFINITY] {
            assert!(DeletionFraction::new(bad).is_err(), "{bad}");
        }
        let error = DeletionFraction::new(1.5).unwrap_err().to_string();
        assert!(
            error.starts_with("1.5 is not a fraction in (0, 1]"),
            "{error}"
        );
        assert_eq!(DeletionFraction::default().get(), 0.5);
    }

    #[test]
    fn an_empty_inventory_holds_any_deletion() {
        let held = check(1, 1, 0, 1.0);
        assert_eq!(
            held,
            Some(Hold::EmptyInventory {
                scope: "vApp 'c'".into()
            })
        );
        assert!(check(3, 10, 0, 0.5).is_some());
        // Nothing to delete: nothing to hold, whatever the inventory.
        assert_eq!(check(0, 3, 0, 0.5), None);
    }

    #[test]
    fn more_than_the_fraction_is_held_but_never_a_single_node() {
        // (deleting, nodes, fraction, held)
        let cases = [
            (1, 1, 0.5, false),
            (1, 2, 0.1, false),
            (2, 2, 0.5, true),
            (2, 4, 0.5, false),
            (3, 4, 0.5, true),
            (3, 4, 1.0, false),
            (4, 4, 1.0, false),
            (2, 3, 0.66, true),
            (2, 3, 0.67, false),
        ];
        for (deleting, nodes, fraction, held) in cases {
            let hold = check(deleting, nodes, 5, fraction);
            assert_eq!(hold.is_some(), held, "{deleting} of {nodes} at {fraction}");
        }
    }

    #[test]
    fn the_message_says_why_and_what_to_check() {
        let hold = check(3, 4, 5, 0.333).unwrap();
        let message = hold.message("worker-1");
        assert!(
            message.starts_with(
                "Not deleting node worker-1 although its VM was not found: 3 of 4 Nodes would be \
                 deleted in one pass, above the limit of 33.3% set by --max-node-deletion-fraction."
            ),
            "{message}"
        );
        assert!(message.contains("VCD role"), "{message}");
        assert!(message.contains("vAppName"), "{message}");
        let empty = check(1, 1, 0, 0.5).unwrap().message("worker-1");
        assert!(
            empty.contains("the VM inventory of vApp 'c' is empty"),
            "{empty}"
        );
        assert!(message.ends_with("or raise --max-node-deletion-fraction"));
        assert!(empty.ends_with("delete the Nodes with kubectl"), "{empty}");
    }
}
