//! The machinery under [`Engine::stream`](crate::Engine::stream) and
//! [`EnginePool`](crate::EnginePool): worker threads, each feeding one engine in a lane of its
//! own, take jobs from a shared queue that the caller's thread fills from an iterator and
//! empties, in order, into a sink.
//!
//! At most `window` jobs are taken from the iterator and not yet handed to the sink: memory
//! stays bounded however long the stream. A job whose engine fails (a device failure, see
//! [`Error::is_device_failure`]) goes back to the queue for another engine while one is left;
//! otherwise its error is its result, and the jobs after it are unaffected.

use super::schedule::Rates;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::opencl::LaneGuard;
use std::any::Any;
use std::collections::{BTreeMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One worker: an engine (by index into the run's engines) and the lane it works in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Worker {
    pub(crate) engine: usize,
    pub(crate) lane: usize,
}

/// What the caller's thread and the workers share.
struct State<F, R> {
    /// Jobs not yet taken: index, item, and the engine that holds the item's memory, if one
    /// does (only that engine takes it, unless it has failed).
    pending: VecDeque<(usize, F, Option<usize>)>,
    /// Results not yet handed to the sink.
    done: BTreeMap<usize, Result<R>>,
    /// Jobs taken from the iterator so far, and whether it has ended.
    pulled: usize,
    exhausted: bool,
    /// A job's panic, to raise on the caller's thread.
    panic: Option<Box<dyn Any + Send>>,
    /// Set when the run ends early (a panic): workers stop.
    stop: bool,
}

struct Shared<F, R> {
    state: Mutex<State<F, R>>,
    changed: Condvar,
    rates: Rates,
}

impl<F, R> Shared<F, R> {
    fn lock(&self) -> MutexGuard<'_, State<F, R>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State<F, R>>) -> MutexGuard<'a, State<F, R>> {
        // A timeout: rates change without a notification when a measurement arrives.
        match self.changed.wait_timeout(guard, Duration::from_millis(20)) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }
}

/// Runs `job` on every item of `items` with `workers`, at most `window` items taken and not yet
/// given to `sink`, which receives `(index, result)` in the items' order. `home` names the engine
/// an item must run on (the one holding its memory), if any.
pub(crate) fn run_ordered<F, R>(
    engines: &[&Engine],
    workers: &[Worker],
    items: impl Iterator<Item = F>,
    window: usize,
    home: &dyn Fn(&F) -> Option<usize>,
    job: &(dyn Fn(&Engine, &F) -> Result<R> + Sync),
    sink: &mut dyn FnMut(usize, Result<R>),
) where
    F: Send,
    R: Send,
{
    let mut per_engine = vec![0usize; engines.len()];
    for w in workers {
        per_engine[w.engine] += 1;
    }
    let kinds: Vec<(usize, bool)> = engines
        .iter()
        .zip(&per_engine)
        .map(|(e, &n)| (n, is_cpu(e)))
        .collect();
    let shared = Shared {
        state: Mutex::new(State {
            pending: VecDeque::new(),
            done: BTreeMap::new(),
            pulled: 0,
            exhausted: false,
            panic: None,
            stop: false,
        }),
        changed: Condvar::new(),
        rates: Rates::new(&kinds),
    };
    let panic = std::thread::scope(|scope| {
        for &w in workers {
            let shared = &shared;
            scope.spawn(move || work(shared, engines, w, job));
        }
        let panic = feed_and_deliver(&shared, items, window.max(1), home, sink);
        let mut state = shared.lock();
        state.stop = true;
        drop(state);
        shared.changed.notify_all();
        panic
    });
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// A CPU engine: rayon, or an OpenCL CPU device.
fn is_cpu(engine: &Engine) -> bool {
    engine
        .device()
        .is_none_or(|d| d.device_type == crate::opencl::DeviceType::Cpu)
}

/// The caller's side: pulls items while the window allows and hands results out in order.
/// Returns a job's panic, if one panicked.
fn feed_and_deliver<F, R>(
    shared: &Shared<F, R>,
    mut items: impl Iterator<Item = F>,
    window: usize,
    home: &dyn Fn(&F) -> Option<usize>,
    sink: &mut dyn FnMut(usize, Result<R>),
) -> Option<Box<dyn Any + Send>> {
    let mut delivered = 0usize;
    loop {
        let mut state = shared.lock();
        if let Some(p) = state.panic.take() {
            return Some(p);
        }
        let mut ready = Vec::new();
        while let Some(r) = state.done.remove(&delivered) {
            ready.push((delivered, r));
            delivered += 1;
        }
        let room = !state.exhausted && state.pulled - delivered < window;
        let finished = state.exhausted && delivered == state.pulled;
        let index = state.pulled;
        if ready.is_empty() && !room && !finished {
            drop(shared.wait(state));
            continue;
        }
        drop(state);
        for (i, r) in ready {
            sink(i, r);
        }
        if finished {
            return None;
        }
        if room {
            // Pulled outside the lock: the iterator may read a file or a camera.
            let next = items.next().map(|item| {
                let at = home(&item);
                (item, at)
            });
            let mut state = shared.lock();
            match next {
                Some((item, at)) => {
                    state.pending.push_back((index, item, at));
                    state.pulled += 1;
                }
                None => state.exhausted = true,
            }
            drop(state);
            shared.changed.notify_all();
        }
    }
}

/// A worker: takes the jobs whose memory its engine holds, and the others its engine should run
/// (see `schedule`); runs them in its lane.
fn work<F, R>(
    shared: &Shared<F, R>,
    engines: &[&Engine],
    w: Worker,
    job: &(dyn Fn(&Engine, &F) -> Result<R> + Sync),
) {
    let _lane = LaneGuard::enter(w.lane);
    let engine = engines[w.engine];
    let mut state = shared.lock();
    loop {
        if state.stop || shared.rates.failed(w.engine) {
            return;
        }
        let ahead = state.pending.len() + usize::from(!state.exhausted);
        let homed = state.pending.iter().position(|j| j.2 == Some(w.engine));
        let pick = homed.or_else(|| {
            // An item no engine holds, or whose engine has stopped.
            let free = |j: &(usize, F, Option<usize>)| j.2.is_none_or(|h| shared.rates.failed(h));
            let at = state.pending.iter().position(free)?;
            (shared.rates.admit(w.engine, ahead.max(1)) == Some(true)).then_some(at)
        });
        let Some((index, item, at)) = pick.and_then(|p| state.pending.remove(p)) else {
            state = shared.wait(state);
            continue;
        };
        drop(state);
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| job(engine, &item)));
        let took = started.elapsed();
        state = shared.lock();
        match outcome {
            Err(p) => {
                state.panic = Some(p);
                state.stop = true;
            }
            Ok(Err(e)) if e.is_device_failure() && shared.rates.fail(w.engine) => {
                // Another engine is left: the job goes to it, this engine takes no more.
                log::warn!(
                    "clpix: {} failed a job and takes no more; its job goes to another \
                     engine: {e}",
                    engine.backend()
                );
                state.pending.push_front((index, item, at));
            }
            Ok(result) => {
                if result.is_ok() {
                    shared.rates.record(w.engine, took);
                }
                state.done.insert(index, result);
            }
        }
        shared.changed.notify_all();
    }
}

/// An error for a window of zero.
pub(crate) fn check_window(in_flight: usize) -> Result<()> {
    if in_flight == 0 {
        return Err(Error::invalid(
            "in_flight",
            in_flight,
            "at least 1 frame in flight",
        ));
    }
    Ok(())
}
