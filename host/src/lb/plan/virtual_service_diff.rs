//! The writes of one port's virtual service and its HTTP rule lists. A
//! list is written when its digest differs from the one the virtual
//! service's tag records, after the virtual service (an L4 one may need to
//! become HTTP first), and the tag is written last: a crash in between
//! leaves the old digests recorded, so the next reconcile writes the lists
//! again. A virtual service without rules is written as it always was. A
//! drift check reads the lists of the virtual services whose tags record
//! rules and writes back a list edited by hand.

use crate::lb::observe::objects::ServiceObjects;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::http_rules::{EMPTY, Recorded};
use crate::lb::plan::op::Op;
use crate::lb::plan::summary_drift;
use crate::vcd::resources::http_policy::RuleKind;
use crate::vcd::resources::virtual_service::VirtualService;
use crate::vcd::{VcdClient, VcdError};

/// A rule list VCD holds that is not what the virtual service's tag
/// records: edited by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedList {
    pub virtual_service: String,
    pub kind: RuleKind,
}

/// The lists with rules of the virtual services whose tags record the
/// desired lists, read back and compared (a drift check: the summaries do
/// not show rules). A virtual service whose tag records other lists is
/// written anyway, and one without rules is not read, so a drift check
/// costs a read per list only where rules are.
pub async fn edited_lists(
    client: &VcdClient,
    desired: &[DesiredPort],
    observed: &ServiceObjects,
) -> Result<Vec<EditedList>, VcdError> {
    let mut edited = Vec::new();
    for port in desired {
        let name = &port.virtual_service.name;
        let Some(seen) = observed.virtual_services.get(name) else {
            continue;
        };
        let want = port.rules.recorded();
        let had = seen.tag.spec.as_deref().map(|s| Recorded::split(s).1);
        if had.as_ref() != Some(&want) {
            continue;
        }
        for (i, kind) in RuleKind::ALL.into_iter().enumerate() {
            if want.0[i] == EMPTY {
                continue;
            }
            let held = client.http_policies().rules(&seen.object.id, kind).await?;
            if held != port.rules.list(kind) {
                edited.push(EditedList {
                    virtual_service: name.clone(),
                    kind,
                });
            }
        }
    }
    Ok(edited)
}

/// `vs` with its tag's `spec` word recording `lists` instead.
fn recording(vs: &VirtualService, lists: &Recorded) -> VirtualService {
    let mut vs = vs.clone();
    if let Some((owner, spec)) = vs
        .description
        .as_deref()
        .and_then(|d| d.rsplit_once(" spec="))
    {
        let (own, _) = Recorded::split(spec);
        vs.description = Some(format!("{owner} spec={}", lists.spec(own)));
    }
    vs
}

/// The writes that create `vs` with its rule lists.
fn create(port: &DesiredPort, ops: &mut Vec<Op>) {
    let vs = &port.virtual_service;
    let lists = Recorded::default().differing(&port.rules.recorded());
    if lists.is_empty() {
        ops.push(Op::CreateVirtualService(vs.clone()));
        return;
    }
    ops.push(Op::CreateVirtualService(recording(
        vs,
        &Recorded::default(),
    )));
    put_lists(port, &lists, ops);
    ops.push(Op::RecordVirtualService {
        id: None,
        vs: vs.clone(),
    });
}

fn put_lists(
    port: &DesiredPort,
    kinds: &[crate::vcd::resources::http_policy::RuleKind],
    ops: &mut Vec<Op>,
) {
    for kind in kinds {
        ops.push(Op::PutHttpRules {
            vs: port.virtual_service.name.clone(),
            rules: port.rules.list(*kind),
        });
    }
}

/// Adds the writes that turn the observed virtual service of `port` (if
/// any) into the desired one.
/// `edited` are lists a drift check found changed by hand: written again
/// as the tag records them.
pub fn diff(
    port: &DesiredPort,
    observed: &ServiceObjects,
    edited: &[EditedList],
    ops: &mut Vec<Op>,
) {
    let vs = &port.virtual_service;
    let Some(seen) = observed.virtual_services.get(&vs.name) else {
        return create(port, ops);
    };
    if seen.object.virtual_ip_address != vs.virtual_ip_address
        || seen.object.ipv6_virtual_ip_address != vs.ipv6_virtual_ip_address
    {
        // A VIP others share cannot move: the virtual service is replaced.
        ops.push(Op::DeleteVirtualService {
            id: seen.object.id.clone(),
            name: seen.object.name.clone(),
        });
        return create(port, ops);
    }
    let mut vs = vs.clone();
    // An update keeps the group the virtual service runs on unless the
    // decision names one.
    if vs.service_engine_group_ref.name.is_none()
        && let Some(current) = &seen.object.service_engine_group_ref
    {
        vs.service_engine_group_ref = current.clone();
    }
    let had = seen
        .tag
        .spec
        .as_deref()
        .map(|spec| Recorded::split(spec).1)
        .unwrap_or_default();
    let lists = had.differing(&port.rules.recorded());
    // The virtual service as it stands once written, before its lists.
    let first = match lists.is_empty() {
        true => vs.clone(),
        false => recording(&vs, &had),
    };
    if !seen.tag.written_as(first.description.as_deref())
        || summary_drift::virtual_service_changed(&seen.object, &first)
    {
        ops.push(Op::UpdateVirtualService {
            id: seen.object.id.clone(),
            vs: first,
        });
    }
    let repairs: Vec<_> = edited
        .iter()
        .filter(|e| e.virtual_service == vs.name && !lists.contains(&e.kind))
        .map(|e| e.kind)
        .collect();
    put_lists(port, &repairs, ops);
    if !lists.is_empty() {
        put_lists(port, &lists, ops);
        ops.push(Op::RecordVirtualService {
            id: Some(seen.object.id.clone()),
            vs,
        });
    }
}
