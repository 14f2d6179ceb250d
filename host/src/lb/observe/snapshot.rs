//! The gateway snapshot: the summaries of the gateway's virtual services,
//! pools and NAT rules, and its used addresses (NAT rules in every mode, so
//! a Service's DNAT rules left by an earlier one-arm configuration are
//! found, except on a distributed-only gateway, which has none), read once and shared by every
//! reconcile, so a Service's reconcile reads nothing that grows with
//! the gateway. Our own writes are recorded into it as they land; a failed
//! write (a duplicate, a conflict, a 404: VCD knows better) drops it, and
//! it is read again once older than the refresh period, which bounds how
//! long a change made outside this process goes unseen.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::lb::observe::objects::GatewayView;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::PoolSummary;
use crate::vcd::resources::virtual_service::VirtualServiceSummary;
use crate::vcd::{VcdClient, VcdError};

/// How long a read of the gateway is trusted: a change made in VCD outside
/// this process (by hand, by another tool) is seen by the reconciles that
/// start after this long at most.
pub const GATEWAY_REFRESH: Duration = Duration::from_secs(60);

/// A write that landed, as it changes the gateway's summaries.
#[derive(Debug, Clone)]
pub enum Change {
    VirtualService(VirtualServiceSummary),
    Pool(PoolSummary),
    NatRule(NatRule),
    /// An object of any family, by id, is gone.
    Removed(String),
}

#[derive(Debug)]
struct Held {
    read_at: Instant,
    view: Arc<GatewayView>,
}

#[derive(Debug, Default)]
struct State {
    held: Option<Held>,
    /// Changes recorded while a read is in flight: the read may have been
    /// answered before they landed, so they are replayed onto it.
    reading: Option<Vec<Change>>,
}

/// One gateway's shared view.
#[derive(Debug)]
pub struct GatewaySnapshot {
    state: Mutex<State>,
    /// One read at a time: Services reconciled together share it.
    reader: tokio::sync::Mutex<()>,
    max_age: Duration,
    /// Whether the gateway has NAT rules to read.
    nat: bool,
}

impl GatewaySnapshot {
    pub fn new(max_age: Duration, nat: bool) -> Self {
        Self {
            state: Mutex::default(),
            reader: tokio::sync::Mutex::new(()),
            max_age,
            nat,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn fresh(&self) -> Option<Arc<GatewayView>> {
        let state = self.state();
        let held = state.held.as_ref()?;
        (held.read_at.elapsed() < self.max_age).then(|| held.view.clone())
    }

    /// The gateway's objects: the shared view while fresh, else one read
    /// (waited for, not repeated, by reconciles that ask meanwhile).
    pub async fn view(
        &self,
        client: &VcdClient,
        gateway_id: &str,
    ) -> Result<Arc<GatewayView>, VcdError> {
        if let Some(view) = self.fresh() {
            return Ok(view);
        }
        let _reader = self.reader.lock().await;
        if let Some(view) = self.fresh() {
            return Ok(view);
        }
        self.state().reading = Some(Vec::new());
        let read_at = Instant::now();
        let read = GatewayView::read(client, gateway_id, self.nat).await;
        let mut state = self.state();
        let pending = state.reading.take().unwrap_or_default();
        let mut view = read?;
        for change in pending {
            view.apply(change);
        }
        let view = Arc::new(view);
        state.held = Some(Held {
            read_at,
            view: view.clone(),
        });
        tracing::debug!(
            gateway = gateway_id,
            virtual_services = view.virtual_services.len(),
            pools = view.pools.len(),
            nat_rules = view.nat_rules.len(),
            "read the gateway's load balancer objects"
        );
        Ok(view)
    }

    /// Records a write that landed.
    pub fn record(&self, change: Change) {
        let mut state = self.state();
        if let Some(pending) = state.reading.as_mut() {
            pending.push(change.clone());
        }
        if let Some(held) = state.held.as_mut() {
            Arc::make_mut(&mut held.view).apply(change);
        }
    }

    /// Records what a read of some objects found (a verification read),
    /// whoever owns them.
    pub fn learn(&self, virtual_services: &[VirtualServiceSummary]) {
        for vs in virtual_services {
            self.record(Change::VirtualService(vs.clone()));
        }
    }

    /// Forgets the view: the next reconcile reads the gateway again.
    pub fn invalidate(&self) {
        self.state().held = None;
    }

    /// A view read now (the sweep's, which the reconciles then share).
    pub async fn refreshed(
        &self,
        client: &VcdClient,
        gateway_id: &str,
    ) -> Result<Arc<GatewayView>, VcdError> {
        self.invalidate();
        self.view(client, gateway_id).await
    }
}

impl GatewayView {
    /// Applies one landed write: an object replaces the one with its id
    /// (or its name, unique per gateway for virtual services and pools),
    /// or is added.
    fn apply(&mut self, change: Change) {
        match change {
            Change::VirtualService(vs) => {
                upsert(&mut self.virtual_services, vs, |v| (&v.id, &v.name))
            }
            Change::Pool(pool) => upsert(&mut self.pools, pool, |p| (&p.id, &p.name)),
            // NAT rule names are not unique in VCD: by id only.
            Change::NatRule(rule) => {
                self.nat_rules.retain(|r| r.id != rule.id);
                self.nat_rules.push(rule);
            }
            Change::Removed(id) => {
                self.virtual_services.retain(|v| v.id != id);
                self.pools.retain(|p| p.id != id);
                self.nat_rules
                    .retain(|r| r.id.as_deref() != Some(id.as_str()));
            }
        }
    }
}

fn upsert<T>(items: &mut Vec<T>, item: T, key: impl Fn(&T) -> (&String, &String)) {
    let (id, name) = key(&item);
    match items.iter().position(|i| {
        let (i_id, i_name) = key(i);
        i_id == id || i_name == name
    }) {
        Some(at) => items[at] = item,
        None => items.push(item),
    }
}
