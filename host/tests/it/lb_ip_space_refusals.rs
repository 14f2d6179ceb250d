//! An IP Space refusing the address a reconcile allocates (taken meanwhile,
//! perhaps by an org whose allocations this one cannot see; the quota
//! spent): the allocation is the pass's first write, so nothing else was
//! written, and the Service moves on to the next address; after four
//! refusals in a row the reconcile fails naming the space and VCD's message.

use vcd_ccm::lb::LbError;
use vcdsim::{FaultAction, FaultRule, LogEntry, Sim};

use crate::support::faults::assert_fired;
use crate::support::lb::*;
use crate::support::vcd;

const ALLOCATE: &str = "/cloudapi/1.0.0/ipSpaces/{id}/allocate";

fn refusals() -> FaultRule {
    FaultRule::new(
        Some("POST"),
        ALLOCATE,
        FaultAction::FailTask {
            minor_error_code: "BAD_REQUEST".into(),
            message: "The IP address is already allocated.".into(),
        },
    )
}

/// The addresses the reconcile asked the space for, in order.
fn asked(sim: &Sim) -> Vec<String> {
    sim.requests()
        .iter()
        .filter(|e: &&LogEntry| e.method == "POST" && e.template == ALLOCATE)
        .map(|e| {
            e.request_body["value"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_refused_allocation_moves_the_service_to_the_next_address() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    sim.add_fault(refusals().times(1));
    let svc = web_service("default", "web", "uid-refused");
    let status = lb.ensure(&svc, &nodes(2)).await.expect("the next address");
    assert_fired(&sim, "the first allocation refused");
    let asked = asked(&sim);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_ne!(asked[0], asked[1], "{asked:?}");
    assert_eq!(status.ingress[0].ip, asked[1]);
    let claimed: Vec<(String, String)> = allocations(&sim)
        .into_iter()
        .filter(|(_, description)| description.contains("uid-refused"))
        .collect();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    assert_eq!(claimed[0].0, asked[1]);
}

#[tokio::test]
async fn four_refusals_in_a_row_fail_the_reconcile_and_write_nothing_else() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    sim.add_fault(refusals());
    let svc = web_service("default", "web", "uid-refused");
    let error = lb.ensure(&svc, &nodes(2)).await.unwrap_err();
    assert_fired(&sim, "every allocation refused");
    let asked = asked(&sim);
    assert_eq!(asked.len(), 4, "{asked:?}");
    let distinct: std::collections::HashSet<&String> = asked.iter().collect();
    assert_eq!(
        distinct.len(),
        4,
        "each pass asks for another address: {asked:?}"
    );
    match &error {
        LbError::AllocationRefused { ip, space, .. } => {
            assert_eq!(ip.map(|ip| ip.to_string()).as_ref(), asked.last());
            assert_eq!(space, "public1");
        }
        other => panic!("{other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("IP Space public1 refused to allocate")
            && message.contains("already allocated"),
        "{message}"
    );
    assert!(objects(&sim).is_empty(), "{:?}", objects(&sim));
    assert!(allocations(&sim).is_empty(), "{:?}", allocations(&sim));
}
