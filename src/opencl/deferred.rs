//! First calls answered from the host while their programs build: an automatic engine's call
//! small enough for the CPU path (see `Tuning::host_while_building`) runs its OpenCL path with
//! builds deferred. A program that is neither built nor in the persistent cache (loading a
//! cached one stays on the caller's path: a few milliseconds with the driver's cache warm) then
//! goes to a queue that one thread of the engine's own builds in order, and the call answers
//! from the CPU path (the same bits). Later calls find the program built. NVIDIA builds one
//! program at a time in a process, so one thread suffices; a build's failure is remembered, and
//! the next call builds on its own path (and meets the error as before).

use super::program::ProgramKey;
use super::{ClEngine, DeviceType, lock};
use crate::error::Error;
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the worker waits before its first build. A build costs 0.06–0.8 s on NVIDIA with a
/// cold driver cache, and a dropped engine must wait for one in progress (a process leaving
/// `main` during an NVIDIA build crashed): a process that ends sooner than this, having
/// answered its small calls from the CPU, waits for none. A longer process pays it once.
const BUILD_DELAY: Duration = Duration::from_millis(250);

/// The queue of programs to build off the caller's path.
#[derive(Default)]
pub(crate) struct Deferred {
    queue: VecDeque<ProgramKey>,
    /// Queued or building.
    pending: HashSet<ProgramKey>,
    /// Whose background build failed: built on the caller's path from then on.
    failed: HashSet<ProgramKey>,
    /// Whether the worker thread runs.
    working: bool,
}

thread_local! {
    /// The engine whose builds this thread's current call defers (see [`with_builds_deferred`]).
    static DEFERRING: RefCell<Option<Arc<ClEngine>>> = const { RefCell::new(None) };
}

/// Runs `f` (a call's OpenCL path) with `cl`'s builds deferred on this thread: a program that
/// is not ready makes it return [`Error::ProgramBuilding`] instead of building.
pub(crate) fn with_builds_deferred<T>(cl: &Arc<ClEngine>, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<Arc<ClEngine>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let before = self.0.take();
            DEFERRING.with(|d| *d.borrow_mut() = before);
        }
    }
    let before = DEFERRING.with(|d| d.borrow_mut().replace(Arc::clone(cl)));
    let _reset = Reset(before);
    f()
}

impl ClEngine {
    /// Whether a call of `work` pixels or elements may leave its builds to the worker and
    /// answer from the CPU: the engine takes threads of its own, the tuning does not ask to
    /// wait for builds, and `work` is at most `Tuning::host_while_building` (by default 2^20 on
    /// GPUs and accelerators, 0 on CPU devices: PoCL 3.1 holds a download while it compiles,
    /// so the CPU path's wait for the device image cost more than the build, the demo's second
    /// run 1.4 s against 0.19 s).
    pub(crate) fn defers_builds_for(&self, work: u64) -> bool {
        let limit = self
            .tuning
            .host_while_building
            .unwrap_or(match self.info.device_type {
                DeviceType::Cpu => 0,
                _ => crate::config::HOST_WHILE_BUILDING,
            });
        self.own_threads && !self.tuning.build_wait && work <= limit
    }

    /// Where this thread's call defers this engine's builds and `key` is neither built nor
    /// failed before: queues `key` for the worker and returns the error the call answers from
    /// the CPU on. `None`: build on the caller's path.
    pub(super) fn defer_build(&self, key: ProgramKey) -> Option<Error> {
        let engine = DEFERRING.with(|d| {
            d.borrow()
                .as_ref()
                .filter(|e| std::ptr::eq(Arc::as_ptr(e), self))
                .cloned()
        })?;
        let mut d = lock(&self.store.deferred);
        if d.failed.contains(&key) {
            return None;
        }
        if d.pending.insert(key) {
            d.queue.push_back(key);
        }
        if !d.working {
            let worker = Arc::clone(&engine);
            let spawned = std::thread::Builder::new()
                .name("clpix deferred builds".into())
                .spawn(move || {
                    // In lane 0: clpix's own thread takes no lane of a caller's (see `lanes`).
                    let _lane = super::LaneGuard::enter(0);
                    worker.build_deferred()
                });
            match spawned {
                Ok(handle) => {
                    d.working = true;
                    drop(d);
                    self.add_background_thread(handle);
                }
                // No thread to be had: build on the caller's path, as without this.
                Err(_) => {
                    d.pending.remove(&key);
                    d.queue.retain(|k| *k != key);
                    return None;
                }
            }
        }
        Some(Error::ProgramBuilding {
            program: key.0.name(),
            device: self.info.name.clone(),
        })
    }

    /// The worker: after [`BUILD_DELAY`] (cut short by a dropped engine), builds the queued
    /// programs in order until the queue is empty.
    fn build_deferred(&self) {
        {
            let until = Instant::now() + BUILD_DELAY;
            let mut d = lock(&self.store.deferred);
            while !d.queue.is_empty() {
                let Some(left) = until.checked_duration_since(Instant::now()) else {
                    break;
                };
                d = match self.store.deferred_wake.wait_timeout(d, left) {
                    Ok((g, _)) => g,
                    Err(p) => p.into_inner().0,
                };
            }
        }
        loop {
            let key = {
                let mut d = lock(&self.store.deferred);
                match d.queue.pop_front() {
                    Some(k) => k,
                    None => {
                        d.working = false;
                        return;
                    }
                }
            };
            let started = Instant::now();
            let built = self.program_keyed(key);
            let mut d = lock(&self.store.deferred);
            d.pending.remove(&key);
            match built {
                Ok(_) => log::info!(
                    "clpix: {} {} built off the caller's path in {:.1} ms",
                    key.0.name(),
                    key.2.unwrap_or("(every kernel)"),
                    started.elapsed().as_secs_f64() * 1e3
                ),
                Err(e) => {
                    log::warn!("clpix: a deferred build failed; calls will build it: {e}");
                    d.failed.insert(key);
                }
            }
        }
    }

    /// Forgets the programs queued but not started: an engine going away waits only for the
    /// build in progress.
    pub(crate) fn drop_deferred_queue(&self) {
        let mut d = lock(&self.store.deferred);
        let queued: Vec<ProgramKey> = d.queue.drain(..).collect();
        for k in queued {
            d.pending.remove(&k);
        }
        drop(d);
        self.store.deferred_wake.notify_all();
    }
}
