//! Draining (contract 0.3.0, `port-traffic.drain-seconds`): a node leaving
//! a pool stays in it, disabled, until the drain period ends, so NSX ALB
//! sends it no new connections and lets the open ones finish (up to the
//! pool's `gracefulTimeoutPeriod`). The deadline is recorded in the pool's
//! tag, `spec=<digest>.<deadline in Unix seconds>`, so a restarted process
//! resumes the drain rather than cutting it short or starting it again.
//! The pool is read only when its members change or a drain is under way.

use std::collections::HashSet;

use crate::lb::observe::objects::ServiceObjects;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::objects::retag_pool;
use crate::vcd::resources::pool::PoolMember;
use crate::vcd::{VcdClient, VcdError};

/// A pool tag's `spec` word: the pool's digest and, during a drain, its deadline.
pub fn split(spec: &str) -> (&str, Option<u64>) {
    match spec.split_once('.') {
        Some((digest, until)) => (digest, until.parse().ok()),
        None => (spec, None),
    }
}

/// Keeps the members leaving each draining port's pool in the desired
/// pool, disabled, until their deadline; returns the earliest deadline
/// still ahead (when the Service should be reconciled again).
pub async fn hold_leaving(
    client: &VcdClient,
    desired: &mut [DesiredPort],
    observed: &ServiceObjects,
    now: u64,
) -> Result<Option<u64>, VcdError> {
    let mut next = None;
    for port in desired.iter_mut() {
        let pool = &mut port.pool;
        let drain = u64::from(port.drain_seconds);
        if drain == 0 || pool.member_group_ref.is_some() {
            continue;
        }
        let Some(seen) = observed.pools.get(&pool.name) else {
            continue;
        };
        let draining = seen.tag.spec.as_deref().and_then(|s| split(s).1);
        if draining.is_none() && seen.tag.written_as(pool.description.as_deref()) {
            continue;
        }
        let held = client.pools().get(&seen.object.id).await?;
        let wanted: HashSet<&str> = pool.members.iter().map(|m| m.ip_address.as_str()).collect();
        let leaving: Vec<PoolMember> = held
            .members
            .into_iter()
            .filter(|m| !wanted.contains(m.ip_address.as_str()))
            .collect();
        let newly = leaving.iter().any(|m| m.enabled).then_some(now + drain);
        let until = draining.max(newly).filter(|until| *until > now);
        let Some(until) = until.filter(|_| !leaving.is_empty()) else {
            continue;
        };
        pool.members.extend(leaving.into_iter().map(|m| PoolMember {
            enabled: false,
            ..m
        }));
        retag_pool(pool, &format!(".{until}"));
        next = Some(next.map_or(until, |n: u64| n.min(until)));
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_word_carries_a_deadline_only_during_a_drain() {
        assert_eq!(split("ab12cd34"), ("ab12cd34", None));
        assert_eq!(
            split("ab12cd34.1795000000"),
            ("ab12cd34", Some(1_795_000_000))
        );
    }
}
