//! client-go's shared-informer handlers on top of kube-runtime: a watch
//! keeps a [`Store`] and reports each change as added, updated (with the
//! previous object) or deleted, including the differences a re-list finds.

use std::collections::HashSet;
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
    trim: fn(&mut K),
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
            trim: |_| {},
        }
    }

    /// Drops what `trim` removes from every object before it is cached,
    /// besides the managed fields every object loses: what no controller
    /// reads is not held for each of thousands of objects.
    pub fn trimmed(mut self, trim: fn(&mut K)) -> Self {
        self.trim = trim;
        self
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
    ///
    /// The cache holds the one copy of each object: a handler's `old` is
    /// what the cache held before the event, its `new` the cache's own
    /// entry, so 5,000 Nodes are held once, not once more beside the cache.
    pub async fn run(self) {
        let Self {
            api,
            mut writer,
            mut handlers,
            listed,
            trim,
            ..
        } = self;
        let cache = writer.as_reader();
        let mut notify = |change: Change<K>| {
            for handler in &mut handlers {
                handler(&change);
            }
        };
        let mut relisted: HashSet<ObjectRef<K>> = HashSet::new();
        // Managed fields are often half of a real object; no controller reads them.
        let mut events = watcher(api, watcher::Config::default())
            .default_backoff()
            .modify(move |object| {
                object.meta_mut().managed_fields = None;
                trim(object);
            })
            .boxed();
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    tracing::warn!(kind = %K::kind(&()), %error, "watch failed; retrying");
                    continue;
                }
            };
            let key = match &event {
                watcher::Event::Apply(object)
                | watcher::Event::InitApply(object)
                | watcher::Event::Delete(object) => Some(ObjectRef::from_obj(object)),
                watcher::Event::Init | watcher::Event::InitDone => None,
            };
            let old = key.as_ref().and_then(|key| cache.get(key));
            let gone = match &event {
                watcher::Event::Init => {
                    relisted.clear();
                    Vec::new()
                }
                watcher::Event::InitApply(_) => {
                    relisted.extend(key.clone());
                    Vec::new()
                }
                watcher::Event::InitDone => unlisted(&cache, &mut relisted),
                watcher::Event::Apply(_) | watcher::Event::Delete(_) => Vec::new(),
            };
            writer.apply_watcher_event(&event);
            match event {
                watcher::Event::Init => {}
                // A relist fills a buffer the cache swaps in when it is
                // done: until then `new` is the event's own object.
                watcher::Event::InitApply(object) => notify(changed(old, Arc::new(object))),
                watcher::Event::InitDone => {
                    for old in gone {
                        notify(Change::Deleted(old));
                    }
                    listed.send_replace(true);
                }
                watcher::Event::Apply(_) => {
                    if let Some(new) = key.and_then(|key| cache.get(&key)) {
                        notify(changed(old, new));
                    }
                }
                watcher::Event::Delete(object) => {
                    notify(Change::Deleted(old.unwrap_or_else(|| Arc::new(object))));
                }
            }
        }
    }
}

/// What the cache holds that a relist did not find; empties `relisted`.
fn unlisted<K>(cache: &Store<K>, relisted: &mut HashSet<ObjectRef<K>>) -> Vec<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
    ObjectRef<K>: Hash + Eq,
{
    let gone = cache
        .state()
        .into_iter()
        .filter(|object| !relisted.contains(&ObjectRef::from_obj(&**object)))
        .collect();
    relisted.clear();
    gone
}

/// Added without an `old`, else updated.
fn changed<K>(old: Option<Arc<K>>, new: Arc<K>) -> Change<K> {
    match old {
        None => Change::Added(new),
        Some(old) => Change::Updated { old, new },
    }
}
