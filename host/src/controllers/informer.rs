//! client-go's shared-informer handlers on top of kube-runtime: a watch
//! keeps a [`Store`] and reports each change as added, updated (with the
//! previous object) or deleted, including the differences a re-list finds.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

pub enum Change<K> {
    Added(Arc<K>),
    Updated { old: Arc<K>, new: Arc<K> },
    Deleted,
}

/// Starts nothing by itself: returns the store and the future that keeps it
/// and calls `on_change`; the store is ready after the first full list.
pub fn informer<K>(
    api: Api<K>,
    mut on_change: impl FnMut(Change<K>) + Send + 'static,
) -> (Store<K>, impl Future<Output = ()> + Send + 'static)
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    ObjectRef<K>: Hash + Eq,
{
    let (store, writer) = reflector::store();
    let run = async move {
        let mut known: HashMap<ObjectRef<K>, Arc<K>> = HashMap::new();
        let mut relisted: Vec<ObjectRef<K>> = Vec::new();
        let mut events = watcher(api, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .boxed();
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    tracing::warn!(kind = %K::kind(&()), %error, "watch failed; retrying");
                    continue;
                }
            };
            match event {
                watcher::Event::Init => relisted.clear(),
                watcher::Event::InitApply(object) => {
                    relisted.push(ObjectRef::from_obj(&object));
                    applied(&mut known, object, &mut on_change);
                }
                watcher::Event::InitDone => {
                    let listed: std::collections::HashSet<_> = relisted.drain(..).collect();
                    let gone: Vec<_> = known
                        .keys()
                        .filter(|k| !listed.contains(*k))
                        .cloned()
                        .collect();
                    for key in gone {
                        if known.remove(&key).is_some() {
                            on_change(Change::Deleted);
                        }
                    }
                }
                watcher::Event::Apply(object) => applied(&mut known, object, &mut on_change),
                watcher::Event::Delete(object) => {
                    let key = ObjectRef::from_obj(&object);
                    known.remove(&key);
                    on_change(Change::Deleted);
                }
            }
        }
    };
    (store, run)
}

fn applied<K>(
    known: &mut HashMap<ObjectRef<K>, Arc<K>>,
    object: K,
    on_change: &mut impl FnMut(Change<K>),
) where
    K: Resource<DynamicType = ()>,
    ObjectRef<K>: Hash + Eq,
{
    let new = Arc::new(object);
    match known.insert(ObjectRef::from_obj(&new), new.clone()) {
        None => on_change(Change::Added(new)),
        Some(old) => on_change(Change::Updated { old, new }),
    }
}
