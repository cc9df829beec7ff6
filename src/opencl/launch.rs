//! Launches: kernel arguments, the kernel pool, enqueueing, waiting and kernel times.

use super::{ClEngine, Defines, Kernel, POCL_KERNEL_LOCK, lock};
use crate::error::{Error, Result};
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::cl_mem;
use std::cell::Cell;

thread_local! {
    /// Kernel time (profiling events) of this thread's last OpenCL operation: the sum of its
    /// kernels' times, and the span from the first one's start to the last one's end.
    static LAST_KERNEL_NS: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

pub(crate) fn set_last_kernel_ns(ns: Option<(u64, u64)>) {
    LAST_KERNEL_NS.with(|c| c.set(ns));
}

/// The sum of the last operation's kernel times, and their span (see `set_last_kernel_ns`).
pub(crate) fn last_kernel_ns() -> Option<(u64, u64)> {
    LAST_KERNEL_NS.with(|c| c.get())
}

/// One kernel argument. Memory objects are passed by handle; `Local` reserves local memory.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)] // every kind is used by some operation's kernels
pub(crate) enum Arg {
    Mem(cl_mem),
    U32(u32),
    I32(i32),
    U64(u64),
    F32(f32),
    Local(usize),
}

impl Arg {
    pub(crate) fn buf<T>(b: &Buffer<T>) -> Arg {
        Arg::Mem(b.get())
    }
}

/// What a built kernel allows on its device, queried when its first kernel object is made
/// (no arguments set yet): the largest work-group (`CL_KERNEL_WORK_GROUP_SIZE`) and its own
/// local memory (`CL_KERNEL_LOCAL_MEM_SIZE`: static arrays; 0 where a driver does not say).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelLimits {
    work_group: usize,
    static_local: u64,
}

/// CL_OUT_OF_RESOURCES: what drivers answer at launch when a kernel's registers or local memory
/// do not fit.
const CL_OUT_OF_RESOURCES: i32 = -5;

/// A finished kernel's start and end from its profiling event, in nanoseconds.
fn kernel_interval(event: &Event) -> Option<(u64, u64)> {
    let start = event.profiling_command_start().ok()?;
    let end = event.profiling_command_end().ok()?;
    Some((start, end.max(start)))
}

impl ClEngine {
    /// Sets `args` on a kernel of `program` and enqueues it over `global` work-items in groups of
    /// `local`. Every failure (bad argument, out of resources) is an error value.
    pub(crate) fn launch(
        &self,
        kernel: Kernel,
        args: &[Arg],
        global: usize,
        local: usize,
    ) -> Result<Event> {
        self.launch_variant(kernel, Defines::NONE, args, global, local)
    }

    /// [`launch`](Self::launch) for a kernel of a program variant (see
    /// [`program_for`](Self::program_for)).
    pub(crate) fn launch_variant(
        &self,
        kernel: Kernel,
        variant: Defines,
        args: &[Arg],
        global: usize,
        local: usize,
    ) -> Result<Event> {
        let (program, name) = (kernel.program, kernel.name);
        let prog = self.program_for(kernel, variant)?;
        let pooled = lock(&self.store.kernels)
            .get_mut(&(program, variant, name))
            .and_then(|v| v.pop());
        let k = match pooled {
            Some(k) => k,
            None => {
                let k =
                    ClKernel::create(&prog, name).map_err(|e| Error::cl("clCreateKernel", e.0))?;
                self.note_limits((program, variant, name), &k)?;
                k
            }
        };
        // PoCL before 6 aborts the process when kernels of two queues are in flight at once
        // with the same code and work-group size but different specializations (its cache
        // release matches on fewer fields than its lookup: `pocl_release_dlhandle_cache:
        // Assertion found->ref_count > 0`, seen with PoCL 5.0 and parallel tests). There each
        // kernel runs to completion before another engine's may start; a CPU device runs one
        // kernel on all its cores anyway, so little is lost.
        let serial = self.serialize_kernels.then(|| lock(&POCL_KERNEL_LOCK));
        let result = (|| {
            self.check_limits((program, variant, name), args, local)?;
            for (i, a) in args.iter().enumerate() {
                let i = i as u32;
                // SAFETY: each argument is a plain value or a live cl_mem handle of this
                // context, matching the kernel's signature in cl/<program>.cl.
                let r = unsafe {
                    match *a {
                        Arg::Mem(m) => k.set_arg(i, &m),
                        Arg::U32(v) => k.set_arg(i, &v),
                        Arg::I32(v) => k.set_arg(i, &v),
                        Arg::U64(v) => k.set_arg(i, &v),
                        Arg::F32(v) => k.set_arg(i, &v),
                        Arg::Local(bytes) => k.set_arg_local_buffer(i, bytes),
                    }
                };
                r.map_err(|e| Error::cl("clSetKernelArg", e.0))?;
            }
            let g = [global];
            let l = [local];
            // SAFETY: the kernel's arguments are all set; sizes are 1-D arrays that outlive the call.
            unsafe {
                self.queue().enqueue_nd_range_kernel(
                    k.get(),
                    1,
                    std::ptr::null(),
                    g.as_ptr(),
                    l.as_ptr(),
                    &[],
                )
            }
            .map_err(|e| match e.0 {
                CL_OUT_OF_RESOURCES => self.limit_error(
                    kernel,
                    "work-items a group (CL_OUT_OF_RESOURCES at launch)",
                    local as u64,
                    0,
                ),
                code => Error::cl("clEnqueueNDRangeKernel", code),
            })
            .and_then(|event| {
                let profile = self.tuning.profile;
                if serial.is_none() && !profile {
                    return Ok(event);
                }
                event
                    .wait()
                    .map_err(|e| Error::cl("clWaitForEvents", e.0))?;
                if let Some((start, end)) = kernel_interval(&event).filter(|_| profile) {
                    eprintln!(
                        "clpix profile: {}/{name} {variant} global {global}: \
                         {:.4} ms",
                        program.name(),
                        (end - start) as f64 / 1e6
                    );
                }
                Ok(event)
            })
        })();
        drop(serial);

        lock(&self.store.kernels)
            .entry((program, variant, name))
            .or_default()
            .push(k);
        result
    }

    /// The work-items a group `kernel` (built, of the streaming kernels) allows, where that is
    /// fewer than the engine's groups (`grid.wg`, on GPUs); `None` where the groups fit, on
    /// CPU devices (groups of one), and where the driver's answer is a placeholder (`quirks`).
    pub(crate) fn smaller_groups_for(&self, kernel: Kernel) -> Result<Option<usize>> {
        if self.grid.contiguous || self.quirks.kernel_wg_placeholder {
            return Ok(None);
        }
        let prog = self.program_for(kernel, Defines::NONE)?;
        let k =
            ClKernel::create(&prog, kernel.name).map_err(|e| Error::cl("clCreateKernel", e.0))?;
        let allowed = k
            .get_work_group_size(self.device_id as opencl3::types::cl_device_id)
            .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?;
        Ok((allowed < self.grid.wg).then_some(allowed.max(1)))
    }

    /// Records what a new kernel object of `key` allows on this device (once per key).
    fn note_limits(&self, key: super::KernelKey, k: &ClKernel) -> Result<()> {
        if lock(&self.store.kernel_limits).contains_key(&key) {
            return Ok(());
        }
        let device = self.device_id as opencl3::types::cl_device_id;
        let work_group = k
            .get_work_group_size(device)
            .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?;
        let static_local = k
            .get_local_mem_size(device)
            .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?;
        lock(&self.store.kernel_limits).insert(
            key,
            KernelLimits {
                work_group,
                static_local,
            },
        );
        Ok(())
    }

    /// A [`Error::DeviceLimit`] when a launch of `key` in groups of `local` with `args` needs
    /// more work-items a group or more local memory than the built kernel and the device allow
    /// (the device's figures as the engine plans with them: see `Tuning::max_work_group`).
    fn check_limits(&self, key: super::KernelKey, args: &[Arg], local: usize) -> Result<()> {
        let Some(limits) = lock(&self.store.kernel_limits).get(&key).copied() else {
            return Ok(());
        };
        let kernel = Kernel::new(key.0, key.2);
        // A driver whose answer is a placeholder (see `quirks`) is held to the device's limit.
        let most = match self.quirks.kernel_wg_placeholder {
            true => self.info.max_work_group_size,
            false => limits.work_group.min(self.info.max_work_group_size),
        };
        if local > most {
            return Err(self.limit_error(kernel, "work-items a group", local as u64, most as u64));
        }
        let dynamic: u64 = args
            .iter()
            .map(|a| match a {
                Arg::Local(bytes) => *bytes as u64,
                _ => 0,
            })
            .sum();
        let static_local = match self.quirks.static_local_doubled {
            true => limits.static_local / 2,
            false => limits.static_local,
        };
        let needed = static_local + dynamic;
        if needed > self.info.local_mem_bytes {
            return Err(self.limit_error(
                kernel,
                "bytes of local memory",
                needed,
                self.info.local_mem_bytes,
            ));
        }
        Ok(())
    }

    /// An [`Error::DeviceLimit`] for `kernel` on this device.
    pub(crate) fn limit_error(
        &self,
        kernel: Kernel,
        what: &'static str,
        needed: u64,
        limit: u64,
    ) -> Error {
        Error::DeviceLimit {
            kernel: format!("{}/{}", kernel.program.name(), kernel.name),
            device: self.info.name.clone(),
            what,
            needed,
            limit,
        }
    }

    /// Waits for the queue and records the summed kernel time of `events` and their span for
    /// [`Engine::last_kernel_time`](crate::Engine::last_kernel_time) and
    /// [`Engine::last_kernel_span`](crate::Engine::last_kernel_span).
    pub(crate) fn finish(&self, events: &[Event]) -> Result<()> {
        // Waits for this operation's own commands only: clFinish on the shared queue would also
        // wait for other threads' work.
        if !events.is_empty() {
            let raw: Vec<_> = events.iter().map(|e| e.get()).collect();
            cl3::event::wait_for_events(&raw).map_err(|e| Error::cl("clWaitForEvents", e))?;
        }
        let runs: Vec<(u64, u64)> = events.iter().filter_map(kernel_interval).collect();
        let sum = runs.iter().map(|(start, end)| end - start).sum();
        let first_start = runs.iter().map(|r| r.0).min();
        let last_end = runs.iter().map(|r| r.1).max();
        let span = first_start.zip(last_end).map_or(0, |(s, e)| e - s);
        set_last_kernel_ns(Some((sum, span)));
        Ok(())
    }
}
