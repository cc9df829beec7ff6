//! Lanes: several in-order queues on one device, so that work of several host threads (frames
//! in flight: one uploading, one in its kernels, one downloading) overlaps on the device.
//!
//! A thread works in the lane [`LaneGuard`] put it in; untold, on an engine that spreads threads
//! (a GPU's: see `ClEngine::spread_lanes`) in a lane of its own (the host threads that call
//! engines take lanes in turn, on their first call), elsewhere in lane 0. Every command of an
//! operation goes to that lane's queue, and large transfers go through that lane's own pinned
//! staging slots, so that two lanes never wait on each other's host copies (Dask's 4 threads
//! on one engine, all in lane 0, uploaded one chunk at a time: 17 GB/s on an H200). Every operation
//! waits for its own commands before it returns (see `launch::finish`), so that buffers handed
//! between lanes (a device image made in one and read in another, pooled scratch) are complete.

use super::transfer::StagingSlot;
use super::{ClEngine, lock};
use crate::error::{Error, Result};
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The most lanes an engine opens (more threads share them, in turn).
pub(crate) const MAX_LANES: usize = 4;

thread_local! {
    /// The lane [`LaneGuard`] put this thread in, if any.
    static LANE: Cell<Option<usize>> = const { Cell::new(None) };
    /// This thread's own lane on engines that spread threads, taken on first need.
    static OWN_LANE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The next own lane a thread takes (modulo [`MAX_LANES`]).
static NEXT_OWN_LANE: AtomicUsize = AtomicUsize::new(0);

/// This thread's own lane: the threads that ask take lanes in turn, the first lane 0.
fn own_lane() -> usize {
    OWN_LANE.with(|own| match own.get() {
        Some(i) => i,
        None => {
            let i = NEXT_OWN_LANE.fetch_add(1, Ordering::Relaxed) % MAX_LANES;
            own.set(Some(i));
            i
        }
    })
}

/// One in-order queue with its two pinned staging slots (made on the first large transfer).
pub(crate) struct Lane {
    pub(crate) queue: CommandQueue,
    pub(crate) staging: Mutex<Vec<StagingSlot>>,
}

impl Lane {
    pub(crate) fn new(queue: CommandQueue) -> Lane {
        Lane {
            queue,
            staging: Mutex::new(Vec::new()),
        }
    }
}

/// Puts this thread in lane `index % MAX_LANES` until dropped (then back where it was).
pub(crate) struct LaneGuard {
    previous: Option<usize>,
}

impl LaneGuard {
    pub(crate) fn enter(index: usize) -> LaneGuard {
        let previous = LANE.with(|l| l.replace(Some(index % MAX_LANES)));
        LaneGuard { previous }
    }
}

impl Drop for LaneGuard {
    fn drop(&mut self) {
        LANE.with(|l| l.set(self.previous));
    }
}

/// The engine's lanes: lane 0 made with the engine, the others on first use.
pub(crate) struct Lanes {
    first: Lane,
    others: [OnceLock<Lane>; MAX_LANES - 1],
    /// Held while a lane is made, so that two threads do not both make one.
    making: Mutex<()>,
}

impl Lanes {
    pub(crate) fn new(first: Lane) -> Lanes {
        Lanes {
            first,
            others: Default::default(),
            making: Mutex::new(()),
        }
    }

    /// Whether a lane besides the first has been made.
    pub(crate) fn several(&self) -> bool {
        self.others.iter().any(|l| l.get().is_some())
    }

    /// Every lane made so far.
    pub(crate) fn made(&self) -> impl Iterator<Item = &Lane> {
        std::iter::once(&self.first).chain(self.others.iter().filter_map(|l| l.get()))
    }

    /// Every lane made so far with its index, mutably (to unmap their staging slots when the
    /// engine goes).
    pub(crate) fn made_mut(&mut self) -> impl Iterator<Item = (usize, &mut Lane)> {
        let others = self.others.iter_mut().enumerate();
        std::iter::once((0, &mut self.first))
            .chain(others.filter_map(|(i, l)| l.get_mut().map(|l| (i + 1, l))))
    }
}

impl ClEngine {
    /// This thread's lane, made on first use; lane 0 where a queue cannot be made (with a
    /// warning: the work then runs in order, nothing is lost).
    pub(crate) fn lane(&self) -> &Lane {
        let told = LANE.with(|l| l.get());
        let index = told.unwrap_or_else(|| if self.spread_lanes { own_lane() } else { 0 });
        let Some(slot) = index.checked_sub(1).and_then(|i| self.lanes.others.get(i)) else {
            return &self.lanes.first;
        };
        if let Some(lane) = slot.get() {
            return lane;
        }
        let made = {
            let _making = lock(&self.lanes.making);
            match slot.get() {
                Some(_) => Ok(()),
                None => self.new_queue().map(|q| {
                    let _ = slot.set(Lane::new(q));
                }),
            }
        };
        if let Err(e) = made {
            log::warn!(
                "clpix: another queue on {} failed ({e}); its work goes to the first",
                self.info.name
            );
        }
        slot.get().unwrap_or(&self.lanes.first)
    }

    /// Waits for this thread's lane before a buffer goes back to a pool, where the engine has
    /// several lanes: a buffer given back on an error path, its commands still queued, must not
    /// reach another lane's next user (with one in-order queue the order itself protects it).
    pub(crate) fn settle_before_pooling(&self) {
        if self.lanes.several() {
            let _ = self.queue().finish();
        }
    }

    /// How many lanes are open.
    pub(crate) fn lanes_made(&self) -> usize {
        self.lanes.made().count()
    }

    /// This thread's lane's queue.
    pub(crate) fn queue(&self) -> &CommandQueue {
        &self.lane().queue
    }

    /// A new in-order queue with profiling on this engine's device.
    pub(crate) fn new_queue(&self) -> Result<CommandQueue> {
        new_queue(&self.context, self.device_id)
    }
}

/// An in-order queue with profiling on `device` of `context`.
pub(crate) fn new_queue(
    context: &opencl3::context::Context,
    device: usize,
) -> Result<CommandQueue> {
    #[allow(deprecated)]
    // clCreateCommandQueue: OpenCL 1.2 devices (NVIDIA) have nothing newer.
    // SAFETY: `device` is a device of `context` (both from the engine's opening).
    unsafe {
        CommandQueue::create(
            context,
            device as opencl3::types::cl_device_id,
            CL_QUEUE_PROFILING_ENABLE,
        )
    }
    .map_err(|e| Error::cl("clCreateCommandQueue", e.0))
}
