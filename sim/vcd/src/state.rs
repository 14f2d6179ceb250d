//! Everything a request handler reaches: the world, the knobs, the fault
//! book and the request log, each behind its own lock (never held across
//! an await).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::faults::FaultBook;
use crate::knobs::Knobs;
use crate::observe::RequestLog;
use crate::world::World;

pub struct SimState {
    world: Mutex<World>,
    knobs: Mutex<Knobs>,
    faults: Mutex<FaultBook>,
    log: Mutex<RequestLog>,
    /// `http://127.0.0.1:PORT`, for absolute `Location` and `Link` URLs.
    pub base_url: String,
}

pub type AppState = Arc<SimState>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking handler must not take the simulator down with it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SimState {
    pub fn new(world: World, knobs: Knobs, base_url: String) -> Self {
        Self {
            world: Mutex::new(world),
            knobs: Mutex::new(knobs),
            faults: Mutex::new(FaultBook::default()),
            log: Mutex::new(RequestLog::default()),
            base_url,
        }
    }

    pub fn world(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    pub fn knobs(&self) -> Knobs {
        lock(&self.knobs).clone()
    }

    pub fn knobs_mut(&self) -> MutexGuard<'_, Knobs> {
        lock(&self.knobs)
    }

    pub fn faults(&self) -> MutexGuard<'_, FaultBook> {
        lock(&self.faults)
    }

    pub fn log(&self) -> MutexGuard<'_, RequestLog> {
        lock(&self.log)
    }

    /// The absolute URL of a CloudAPI path such as `/edgeGateways`.
    pub fn cloudapi_url(&self, path: &str) -> String {
        format!("{}/cloudapi/1.0.0{path}", self.base_url)
    }

    pub fn api_url(&self, path: &str) -> String {
        format!("{}/api{path}", self.base_url)
    }
}
