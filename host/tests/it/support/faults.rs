//! Showing that an injected fault fired: a test that disturbs a run and
//! then checks the outcome proves nothing if its fault never matched.

use vcdsim::Sim;

/// Ends the faults in force on `sim` and fails the test, naming `step`,
/// unless each fired at least once.
pub fn assert_fired(sim: &Sim, step: &str) {
    let taken = sim.take_faults();
    assert!(!taken.is_empty(), "{step}: no fault was injected");
    for rule in &taken {
        assert!(
            rule.fired > 0,
            "{step}: the fault {} {} ({:?}) never fired (matched {} calls)",
            rule.method.as_deref().unwrap_or("*"),
            rule.path,
            rule.action,
            rule.matched,
        );
    }
}
