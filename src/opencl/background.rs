//! Specialised programs built off the caller's path: the first call that would need one runs
//! the generic kernels (already built, the same bits) while a thread builds the specialisation;
//! later calls take it once it is ready.

use super::{ClEngine, lock};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A specialisation, by the operation's own key (the blur: its radius).
pub(crate) type SpecKey = (&'static str, u32);

/// Calls at a key before its specialisation starts building, by default (see
/// `Tuning::specialise_after`).
pub(crate) const SPECIALISE_AFTER: u32 = 2;

/// The state of each specialisation asked for.
#[derive(Default)]
pub(crate) struct Specialisations {
    /// Calls so far at keys whose specialisation has not started.
    asked: HashMap<SpecKey, u32>,
    ready: HashMap<SpecKey, bool>,
    threads: Vec<JoinHandle<()>>,
}

thread_local! {
    /// Set on a background build's thread: there every specialisation is made ready at once.
    static BUILDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl ClEngine {
    /// Whether the specialisation `key` may be used now. The `specialise_after`-th time it is
    /// asked for (unless the tuning says to wait for builds, the driver takes no threads of
    /// clpix's own, or this is a background thread already), `build` runs on a new thread,
    /// making the programs it needs ready, and the answer is `false` until it has finished: the
    /// caller runs its generic kernels meanwhile.
    pub(crate) fn specialisation_ready(
        self: &Arc<Self>,
        key: SpecKey,
        build: impl FnOnce(&Arc<ClEngine>) + Send + 'static,
    ) -> bool {
        if self.tuning.build_wait || !self.own_threads || BUILDING.with(|b| b.get()) {
            return true;
        }
        let mut s = lock(&self.store.background);
        if let Some(&ready) = s.ready.get(&key) {
            return ready;
        }
        let asked = s.asked.entry(key).or_insert(0);
        *asked += 1;
        if *asked < self.tuning.specialise_after.unwrap_or(SPECIALISE_AFTER) {
            return false;
        }
        s.asked.remove(&key);
        s.ready.insert(key, false);
        let cl = Arc::clone(self);
        let started = std::time::Instant::now();
        let spawned = std::thread::Builder::new()
            .name(format!("clpix build {} {}", key.0, key.1))
            .spawn(move || {
                BUILDING.with(|b| b.set(true));
                // In lane 0, as before lanes were spread: clpix's own thread takes no lane
                // (queue, staging) that a caller's thread would have.
                let _lane = super::LaneGuard::enter(0);
                build(&cl);
                log::info!(
                    "clpix: {} {} specialised in the background in {:.1} ms",
                    key.0,
                    key.1,
                    started.elapsed().as_secs_f64() * 1e3
                );
                lock(&cl.store.background).ready.insert(key, true);
            });
        match spawned {
            Ok(handle) => {
                s.threads.push(handle);
                false
            }
            // No thread to be had: build on the caller's path, as without this.
            Err(_) => {
                s.ready.insert(key, true);
                true
            }
        }
    }

    /// Adds a thread for [`wait_for_builds`](Self::wait_for_builds) to wait for.
    pub(crate) fn add_background_thread(&self, handle: JoinHandle<()>) {
        lock(&self.store.background).threads.push(handle);
    }

    /// Waits for every background build (and program cache store) started so far.
    pub(crate) fn wait_for_builds(&self) {
        loop {
            let threads = std::mem::take(&mut lock(&self.store.background).threads);
            if threads.is_empty() {
                return;
            }
            let me = std::thread::current().id();
            for t in threads {
                // The last engine handle may be dropped on a background thread itself.
                if t.thread().id() != me {
                    let _ = t.join();
                }
            }
        }
    }
}
