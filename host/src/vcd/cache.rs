//! Lookups that do not change while the process runs (org and VDC ids),
//! cached so they cost VCD calls once per process instead of once per
//! operation. The network and gateway are read again by each setup attempt:
//! a provider may fix them (uplinks, IP Spaces) between attempts.

use std::collections::HashMap;
use std::sync::Mutex;

use super::reference::EntityRef;

#[derive(Debug, Default)]
pub struct LookupCache {
    orgs: Mutex<HashMap<String, EntityRef>>,
    vdcs: Mutex<HashMap<(String, String), EntityRef>>,
}

fn get<K: std::hash::Hash + Eq, V: Clone>(map: &Mutex<HashMap<K, V>>, key: &K) -> Option<V> {
    map.lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .get(key)
        .cloned()
}

fn put<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, V>>, key: K, value: V) {
    map.lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .insert(key, value);
}

impl LookupCache {
    pub fn org(&self, name: &str) -> Option<EntityRef> {
        get(&self.orgs, &name.to_string())
    }

    pub fn put_org(&self, name: &str, org: EntityRef) {
        put(&self.orgs, name.to_string(), org);
    }

    pub fn vdc(&self, org_id: &str, name_or_id: &str) -> Option<EntityRef> {
        get(&self.vdcs, &(org_id.to_string(), name_or_id.to_string()))
    }

    pub fn put_vdc(&self, org_id: &str, name_or_id: &str, vdc: EntityRef) {
        put(
            &self.vdcs,
            (org_id.to_string(), name_or_id.to_string()),
            vdc,
        );
    }
}
