//! Who may write a Service's load balancer now: one task per Service (its
//! sync and its node update write the same VCD objects), and one per
//! sharing key while an address is chosen, so two Services of one group
//! synced at the same moment do not each take an address of their own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::OwnedMutexGuard;

type Locks = Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>;

/// The locks by name: a Service's key (`namespace/name`) or a sharing
/// group's (`sharing-key <key>`, which no Service key can be).
#[derive(Default)]
pub(super) struct WriteLocks(Locks);

/// Held while a Service's load balancer is written; a group's lock is
/// forgotten when let go, once nobody else holds or waits for it.
pub(super) struct Held {
    service: Option<OwnedMutexGuard<()>>,
    group: Option<(String, OwnedMutexGuard<()>)>,
    locks: Locks,
}

impl Drop for Held {
    fn drop(&mut self) {
        // The Service's own lock first: it was taken last.
        self.service.take();
        if let Some((name, guard)) = self.group.take() {
            drop(guard);
            forget_unused(&self.locks, &name);
        }
    }
}

fn map(locks: &Locks) -> MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
    locks.lock().unwrap_or_else(|p| p.into_inner())
}

fn forget_unused(locks: &Locks, name: &str) {
    let mut map = map(locks);
    if map
        .get(name)
        .is_some_and(|lock| Arc::strong_count(lock) == 1)
    {
        map.remove(name);
    }
}

impl WriteLocks {
    async fn take(&self, name: &str) -> OwnedMutexGuard<()> {
        let lock = map(&self.0).entry(name.to_string()).or_default().clone();
        lock.lock_owned().await
    }

    /// The Service's lock, after its sharing group's when it has a key.
    /// Always in that order, so a task holding a Service's lock never
    /// waits for a group's and no two tasks wait on each other.
    pub(super) async fn hold(&self, service: &str, sharing_key: Option<&str>) -> Held {
        let group = match sharing_key {
            Some(key) => {
                let name = format!("{GROUP_PREFIX}{key}");
                let guard = self.take(&name).await;
                Some((name, guard))
            }
            None => None,
        };
        Held {
            service: Some(self.take(service).await),
            group,
            locks: self.0.clone(),
        }
    }

    /// Forgets a Service's lock once nobody holds or waits for it (it is
    /// no longer synced).
    pub(super) fn forget_unused(&self, service: &str) {
        forget_unused(&self.0, service);
    }
}

/// Group locks are named apart from Services' `namespace/name` keys.
const GROUP_PREFIX: &str = "sharing-key ";

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn services_of_one_group_take_turns_and_others_do_not_wait() {
        let locks = Arc::new(WriteLocks::default());
        let first = locks.hold("default/dns", Some("dns")).await;
        let waiting = {
            let locks = locks.clone();
            tokio::spawn(async move { locks.hold("default/dns-tcp", Some("dns")).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !waiting.is_finished(),
            "the second sharer waits for the first"
        );
        let other = tokio::time::timeout(
            Duration::from_secs(1),
            locks.hold("default/web", Some("web")),
        )
        .await;
        assert!(other.is_ok(), "another group does not wait");
        drop(first);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the second sharer goes once the first is done")
            .expect("no panic");
    }

    #[tokio::test]
    async fn a_groups_lock_is_forgotten_once_released_and_a_services_on_request() {
        let locks = WriteLocks::default();
        let held = locks.hold("default/a", Some("k")).await;
        locks.forget_unused("default/a");
        assert_eq!(map(&locks.0).len(), 2, "held locks stay");
        drop(held);
        assert_eq!(
            map(&locks.0).keys().collect::<Vec<_>>(),
            ["default/a"],
            "the group's lock goes, the Service's stays"
        );
        locks.forget_unused("default/a");
        assert!(map(&locks.0).is_empty());
    }
}
