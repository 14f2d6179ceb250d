//! client-go's shared-informer handlers on top of kube-runtime: a watch
//! keeps a [`Store`] and reports each change as added, updated (with the
//! previous object) or deleted, including the differences a re-list finds.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// What a watch event did to the cache, as handed to handlers.
pub enum Change<K> {
    /// A new object (or one seen again on a relist).
    Added(Arc<K>),
    /// An object changed.
    Updated {
        /// The cached object before.
        old: Arc<K>,
        /// The object now.
        new: Arc<K>,
    },
    /// An object went away; the last cached copy of it.
    Deleted(Arc<K>),
}

type Handler<K> = Box<dyn FnMut(&Change<K>) + Send>;

/// One watch and one cache, shared by every controller that registers a
/// handler before [`Informer::run`] (client-go's shared informer): the
/// Nodes are listed and held once, not once per controller.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    api: Api<K>,
    store: Store<K>,
    writer: Writer<K>,
    handlers: Vec<Handler<K>>,
    listed: watch::Sender<bool>,
}

/// Resolves once the informer's cache holds its first full list, for every
/// holder: kube-runtime's `Store::wait_until_ready` keeps one waker for all
/// clones of a store, so of several tasks waiting at once only the last to
/// poll is woken.
#[derive(Clone)]
pub struct Listed(watch::Receiver<bool>);

impl Listed {
    /// `false` when the informer stopped before listing.
    pub async fn wait(mut self) -> bool {
        self.0.wait_for(|listed| *listed).await.is_ok()
    }
}

impl<K> Informer<K>
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
    /// An informer over `api` (all namespaces for namespaced kinds, if `api` is `Api::all`).
    pub fn new(api: Api<K>) -> Self {
        let (store, writer) = reflector::store();
        Self {
            api,
            store,
            writer,
            handlers: Vec::new(),
            listed: watch::channel(false).0,
        }
    }

    /// The cache; complete once [`Informer::listed`] resolves.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// Resolves when the first full list is in the cache.
    pub fn listed(&self) -> Listed {
        Listed(self.listed.subscribe())
    }

    /// Called for every change, after the cache holds it.
    pub fn on_change(&mut self, handler: impl FnMut(&Change<K>) + Send + 'static) {
        self.handlers.push(Box::new(handler));
    }

    /// Keeps the cache and calls the handlers until dropped.
    pub async fn run(self) {
        let Self {
            api,
            writer,
            mut handlers,
            listed,
            ..
        } = self;
        let mut notify = |change: Change<K>| {
            for handler in &mut handlers {
                handler(&change);
            }
        };
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
                    applied(&mut known, object, &mut notify);
                }
                watcher::Event::InitDone => {
                    let present: std::collections::HashSet<_> = relisted.drain(..).collect();
                    let gone: Vec<_> = known
                        .keys()
                        .filter(|k| !present.contains(*k))
                        .cloned()
                        .collect();
                    for key in gone {
                        if let Some(old) = known.remove(&key) {
                            notify(Change::Deleted(old));
                        }
                    }
                    listed.send_replace(true);
                }
                watcher::Event::Apply(object) => applied(&mut known, object, &mut notify),
                watcher::Event::Delete(object) => {
                    let key = ObjectRef::from_obj(&object);
                    let old = known.remove(&key).unwrap_or_else(|| Arc::new(object));
                    notify(Change::Deleted(old));
                }
            }
        }
    }
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
