//! The OpenCL layer, in one place: device discovery, the per-engine context and queue, the lazy
//! program cache, a kernel pool that makes concurrent callers safe, buffers, transfers and
//! launches whose every failure is an [`Error`] value.
//!
//! The operations only call [`ClEngine::launch`], the buffer and transfer helpers and the
//! part walk; nothing above this layer touches raw OpenCL objects.

mod background;
mod cache;
mod deferred;
mod device;
mod grid;
mod lanes;
mod launch;
mod memory;
mod parts;
mod pinned;
mod program;
mod quirks;
mod source;
mod transfer;
mod verdicts;

pub(crate) use background::SPECIALISE_AFTER;
pub(crate) use deferred::with_builds_deferred;
pub(crate) use device::Vendor;
pub use device::{DeviceInfo, DeviceType, devices};
pub(crate) use device::{best_device, find_device};
pub(crate) use grid::radix_local_bytes;
#[cfg(test)]
pub(crate) use grid::radix_per;
pub(crate) use grid::{Grid, u32_arg};
pub(crate) use lanes::{LaneGuard, MAX_LANES};
pub(crate) use launch::{Arg, last_kernel_ns, set_last_kernel_ns};
pub(crate) use parts::{PartRange, raw_part_words};
pub(crate) use pinned::Pinned;
pub(crate) use quirks::Quirks;
pub(crate) use transfer::Rect;
pub(crate) use verdicts::Verdict;

use crate::config::{KernelLayout, ProgramUnit, Tuning};
use crate::error::{Error, Result};
use device::discovered;
use lanes::{Lane, Lanes};
use memory::{ImagePool, TileWords};
pub(crate) use memory::{Scratch, ScratchKind, WordFormat};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use opencl3::types::cl_device_id;
use opencl3::types::cl_mem;
use program::ProgramKey;
pub(crate) use program::{ClFile, Defines, Kernel, ProgramId, cl_file};
pub use program::{ProgramOrigin, ProgramRecord};
#[cfg(test)]
pub(crate) use source::{kernel_spans, only_kernel};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use transfer::staging_slot;

/// Held from enqueue to completion of each kernel on drivers where kernels of two queues
/// must not run at once (see [`ClEngine::launch`]).
static POCL_KERNEL_LOCK: Mutex<()> = Mutex::new(());

/// Held through each operation on drivers whose operations must not overlap (see
/// [`ClEngine::one_call_at_a_time`]).
static CALL_LOCK: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`CALL_LOCK`] (an operation may call another).
    static HOLDS_CALL_LOCK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// What [`ClEngine::one_call_at_a_time`] holds.
pub(crate) struct CallGuard(Option<std::sync::MutexGuard<'static, ()>>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.0.take().is_some() {
            HOLDS_CALL_LOCK.with(|h| h.set(false));
        }
    }
}

/// A pooled kernel: its program, the program's variant and the kernel's name.
type KernelKey = (ProgramId, Defines, &'static str);

/// A table of constants on the device, with its words (see [`ClEngine::constant_words`]).
pub(crate) type ConstantTable = (Vec<u32>, Arc<Buffer<u32>>);

/// Idle scratch buffers by name, each with its element count.
type ScratchPool = HashMap<ScratchKind, Vec<(usize, Buffer<u32>)>>;

/// An OpenCL device opened for clpix: context, in-order profiling queue, programs and kernels.
pub(crate) struct ClEngine {
    pub info: DeviceInfo,
    device_id: usize,
    context: Context,
    /// In-order queues, each with its staging slots: one a thread (see `lanes`).
    lanes: Lanes,
    pub grid: Grid,
    /// What the driver does that OpenCL does not allow, as the engine found when it opened.
    pub quirks: Quirks,
    /// Who made the device (where vendor-only kernels may run).
    pub vendor: Vendor,
    /// The engine's kernel variants, transfers and diagnostics.
    pub tuning: Tuning,
    /// Whether each kernel runs alone in the process (PoCL before 6; see `launch`).
    serialize_kernels: bool,
    /// Whether the operations of all engines run one at a time in the process (rusticl: see
    /// [`ClEngine::one_call_at_a_time`]).
    serialize_calls: bool,
    /// Whether clpix may drive the device from threads of its own (background builds, program
    /// cache stores): not on Oclgrind, which runs a queue's commands on the thread that waits
    /// for them and is not safe for two such threads at once (a second blur at a radius, whose
    /// specialisation then built and ran on another thread, crashed it: SIGSEGV in
    /// `oclgrind::Queue::execute`; its atomics lost updates with parallel tests); nor on rusticl,
    /// where a background build's blur ran beside a caller's operation, outside the lock that
    /// keeps them one at a time there: wrong blurs and heap corruption (`free(): corrupted
    /// unsorted chunks`) in 8 threads' first calls on fresh engines.
    own_threads: bool,
    /// The largest image part or band clpix plans for (device limit, or a lower cap for
    /// testing splits). Small internal buffers (per-group partials, weights, group sums) are
    /// checked against the device's own limit only: the cap shapes the plan, not bookkeeping.
    pub max_buffer_bytes: u64,
    /// Bytes of each pinned staging slot for large transfers, `None` for direct transfers
    /// (see [`ClEngine::write`]).
    staging_slot: Option<usize>,
    /// Whether each host thread calls in a lane of its own (see `lanes`): where transfers are
    /// staged (a GPU), so that threads' uploads overlap; not on rusticl, whose calls run one at
    /// a time, nor on Oclgrind, unsafe for two threads waiting on queues at once.
    spread_lanes: bool,
    /// The programs: their sources, builds, kernels and the persistent cache (`program.rs`).
    store: ProgramStore,
    /// Idle buffers kept for the next calls (`memory.rs`, `pinned.rs`).
    pools: MemoryPools,
}

/// An engine's programs: what it builds them from, what it built, and the kernels they give.
pub(crate) struct ProgramStore {
    build_options: String,
    kernel_dir: Option<PathBuf>,
    /// What one program build holds here (the tuning's, or by device type).
    program_unit: ProgramUnit,
    programs: Mutex<HashMap<ProgramKey, Arc<Program>>>,
    /// Idle kernel objects by (program, kernel): a `Kernel` is Send but not Sync, so each call
    /// takes one out, sets its arguments and enqueues it, then puts it back.
    kernels: Mutex<HashMap<KernelKey, Vec<ClKernel>>>,
    /// What each built kernel allows on this device (see [`launch::KernelLimits`]).
    kernel_limits: Mutex<HashMap<KernelKey, launch::KernelLimits>>,
    /// The persistent program cache, where one is usable (see `cache`).
    disk_cache: Option<Arc<cache::DiskCache>>,
    /// What identifies the device and its driver in the cache's keys.
    cache_identity: String,
    /// Every program made ready, in order (see [`ClEngine::records`]).
    records: Mutex<Vec<ProgramRecord>>,
    /// Specialisations building in the background, and those ready (see `background`).
    background: Mutex<background::Specialisations>,
    /// Programs queued to build off the callers' path (see `deferred`).
    deferred: Mutex<deferred::Deferred>,
    /// Wakes the deferred builds' worker from its first wait (see `deferred`).
    deferred_wake: std::sync::Condvar,
    /// Build logs of program variants that did not build, so that a caller falling back to
    /// another kernel does not pay for the failed build again on every call.
    failed_variants: Mutex<HashMap<ProgramKey, String>>,
    /// What the known-answer probes found, by kernel family (see `verdicts`).
    verdicts: Mutex<HashMap<String, Verdict>>,
}

/// An engine's idle buffers, by kind, and the pinned host memory it handed out.
pub(crate) struct MemoryPools {
    /// Idle scratch buffers by kind, with their element counts (see [`ClEngine::scratch`]).
    scratch: Mutex<ScratchPool>,
    /// Idle image buffers by element count (see [`ClEngine::image_buffer`]).
    image_buffers: ImagePool<u32>,
    /// Idle f32 image buffers by element count.
    f32_image_buffers: ImagePool<f32>,
    /// Address ranges of the pinned host memory handed out (see `pinned`).
    pinned: Mutex<Vec<(usize, usize)>>,
    /// Idle partial-result buffers of `partials_len()` u64s, reused across calls: allocating a
    /// buffer per call cost more than the kernel on a GPU.
    partials: Mutex<Vec<Buffer<u64>>>,
    /// The single-pass kernels' tile words (see [`ClEngine::with_tile_words`]).
    tile_words: Mutex<[TileWords; 2]>,
    /// Small read-only tables (a blur's weights) by content, written once (see
    /// [`ClEngine::constant_words`]).
    constants: Mutex<Vec<ConstantTable>>,
}

impl Drop for ClEngine {
    fn drop(&mut self) {
        let started = std::time::Instant::now();
        // Program binaries still being stored finish first, so that a short-lived process
        // fills the cache for the next one.
        self.wait_for_builds();
        let waited = started.elapsed().as_secs_f64() * 1e3;
        // The staging slots are unmapped while their queue still exists (fields drop after
        // this), each on the queue that mapped it.
        let lanes: Vec<(usize, Vec<_>)> = self
            .lanes
            .made_mut()
            .map(|(i, lane)| {
                let slots = lane.staging.get_mut().unwrap_or_else(|p| p.into_inner());
                (i, std::mem::take(slots))
            })
            .collect();
        for (i, slots) in &lanes {
            let _lane = LaneGuard::enter(*i);
            for s in slots {
                // SAFETY: `ptr` is the live mapping of `buf`, made once in `staging_slots`.
                let _ = unsafe { self.unmap(&s.buf, s.ptr as cl_mem) };
            }
        }
        for lane in self.lanes.made() {
            let _ = lane.queue.finish();
        }
        let finished = started.elapsed().as_secs_f64() * 1e3;
        // Released here rather than with the fields, to time them (the queues and the context
        // follow).
        std::mem::take(&mut *lock(&self.store.kernels));
        std::mem::take(&mut *lock(&self.store.programs));
        let programs = started.elapsed().as_secs_f64() * 1e3;
        std::mem::take(&mut *lock(&self.pools.scratch));
        std::mem::take(&mut *lock(&self.pools.image_buffers));
        std::mem::take(&mut *lock(&self.pools.f32_image_buffers));
        std::mem::take(&mut *lock(&self.pools.partials));
        std::mem::take(&mut *lock(&self.pools.constants));
        drop(lanes);
        log::debug!(
            "clpix: engine on {} closing: {waited:.1} ms waiting for builds and stores, {:.1} ms \
             unmapping and finishing, {:.1} ms releasing programs, {:.1} ms releasing buffers",
            self.info.name,
            finished - waited,
            programs - finished,
            started.elapsed().as_secs_f64() * 1e3 - programs
        );
    }
}

impl fmt::Debug for ClEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClEngine({})", self.info.name)
    }
}

/// The leading number of a driver version such as `5.0+debian` (0 when there is none).
fn driver_major(version: &str) -> u32 {
    let digits: String = version.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().unwrap_or(0)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves only caches behind: still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ClEngine {
    /// Held by the caller through one operation or transfer: on Mesa's rusticl 22.3 two operations in
    /// flight at once (two threads on one engine, each call on its own pooled buffers) now
    /// and then gave a wrong compaction (1 call in 160; 2 in 480 with each kernel run alone);
    /// one at a time, none in 480 (docs/design.md, "Other implementations"). Nothing
    /// elsewhere.
    pub(crate) fn one_call_at_a_time(&self) -> CallGuard {
        if !self.serialize_calls || HOLDS_CALL_LOCK.with(|h| h.get()) {
            return CallGuard(None);
        }
        let guard = lock(&CALL_LOCK);
        HOLDS_CALL_LOCK.with(|h| h.set(true));
        CallGuard(Some(guard))
    }

    /// Opens `info`'s device. `max_buffer_bytes` caps single buffers below the device's limit.
    pub(crate) fn open(
        info: &DeviceInfo,
        max_buffer_bytes: Option<u64>,
        layout: KernelLayout,
        tuning: Tuning,
    ) -> Result<ClEngine> {
        let found = discovered()?
            .iter()
            .find(|f| f.info.index == info.index && f.info.name == info.name)
            .ok_or_else(|| Error::NoSuchDevice {
                query: info.name.clone(),
            })?;
        let device = Device::new(found.id as cl_device_id);
        let started = std::time::Instant::now();
        let context =
            Context::from_device(&device).map_err(|e| Error::cl("clCreateContext", e.0))?;
        let made = started.elapsed().as_secs_f64() * 1e3;
        let queue = lanes::new_queue(&context, found.id)?;
        log::debug!(
            "clpix: context on {} in {made:.1} ms, its queue in {:.1} ms",
            info.name,
            started.elapsed().as_secs_f64() * 1e3 - made
        );
        // A smaller device's limits, where the tuning asks for them (to test its shapes here):
        // every plan below and every launch check reads them from `info`.
        let mut info = info.clone();
        if let Some(n) = tuning.max_work_group {
            info.max_work_group_size = info.max_work_group_size.min(n);
        }
        if let Some(b) = tuning.max_local_memory {
            info.local_mem_bytes = info.local_mem_bytes.min(b);
        }
        let info = &info;
        let quirks = quirks::probe(info, &context, &queue, found.id as cl_device_id)?;
        // A driver that stops long loops gets the coalesced layout, whose work-items walk short
        // grid-stride ranges; the contiguous layout gives each work-item a long range.
        let contiguous = match (layout, quirks.loop_cap) {
            (KernelLayout::Contiguous, Some(cap)) => {
                return Err(Error::Unsupported {
                    what: "the contiguous kernel layout",
                    device: info.name.clone(),
                    reason: format!(
                        "its driver ({} {}) stops a work-item's loops after {cap} iterations, \
                         which would leave the end of each work-item's range unvisited; use \
                         KernelLayout::Auto or Coalesced",
                        info.platform, info.driver_version
                    ),
                });
            }
            (KernelLayout::Auto, Some(_)) => false,
            (KernelLayout::Auto, None) => info.device_type == DeviceType::Cpu,
            (KernelLayout::Coalesced, _) => false,
            (KernelLayout::Contiguous, None) => true,
        };
        let grid = Grid::new(info, contiguous, quirks.loop_cap);
        let mut build_options = format!(
            "-D CLPIX_WG={} -D CLPIX_CONTIGUOUS={}",
            grid.wg, grid.contiguous as u32
        );
        if !contiguous && grid.radix_per != 16 {
            build_options.push_str(&format!(" -D RADIX_PER={}u", grid.radix_per));
        }
        if info.has_extension("cl_khr_int64_base_atomics") {
            build_options.push_str(" -D CLPIX_HAS_INT64_ATOMICS=1");
        }
        // Extra compiler options, to measure or diagnose (a define, a verbose build log).
        let extra = tuning.extra_build_options();
        if !extra.is_empty() {
            build_options.push(' ');
            build_options.push_str(&extra);
        }
        let cap = max_buffer_bytes.unwrap_or(u64::MAX).max(4096);
        let disk_cache = cache::DiskCache::open(
            tuning.cache,
            tuning.cache_dir.as_deref(),
            tuning.cache_max_bytes.unwrap_or(cache::DEFAULT_MAX_BYTES),
        )
        .map(Arc::new);
        let cache_identity = format!(
            "{} | {} | {} | {} | {} | {} | {} bits",
            info.platform,
            info.name,
            info.vendor,
            info.driver_version,
            info.opencl_c_version,
            device.version().unwrap_or_default(),
            device.address_bits().unwrap_or(0)
        );
        // Where transfers are staged (a GPU), each host thread calls in a lane of its own.
        let staging = staging_slot(info, tuning.staging);
        Ok(ClEngine {
            info: info.clone(),
            device_id: found.id,
            context,
            lanes: Lanes::new(Lane::new(queue)),
            grid,
            quirks,
            serialize_kernels: Vendor::of(info) == Vendor::Pocl
                && driver_major(&info.driver_version) < 6,
            serialize_calls: Vendor::of(info) == Vendor::Rusticl,
            own_threads: !matches!(Vendor::of(info), Vendor::Oclgrind | Vendor::Rusticl),
            max_buffer_bytes: info.max_alloc_bytes.min(cap),
            staging_slot: staging,
            spread_lanes: staging.is_some()
                && !matches!(Vendor::of(info), Vendor::Oclgrind | Vendor::Rusticl),
            vendor: Vendor::of(info),
            store: ProgramStore {
                build_options,
                kernel_dir: tuning.kernel_dir.clone(),
                program_unit: tuning.programs.unwrap_or(match info.device_type {
                    DeviceType::Cpu => ProgramUnit::File,
                    _ => ProgramUnit::Kernel,
                }),
                programs: Mutex::new(HashMap::new()),
                kernels: Mutex::new(HashMap::new()),
                kernel_limits: Mutex::new(HashMap::new()),
                disk_cache,
                cache_identity,
                records: Mutex::new(Vec::new()),
                background: Mutex::new(background::Specialisations::default()),
                deferred: Mutex::new(deferred::Deferred::default()),
                deferred_wake: std::sync::Condvar::new(),
                failed_variants: Mutex::new(HashMap::new()),
                verdicts: Mutex::new(HashMap::new()),
            },
            pools: MemoryPools {
                scratch: Mutex::new(HashMap::new()),
                image_buffers: Mutex::new(Vec::new()),
                f32_image_buffers: Mutex::new(Vec::new()),
                pinned: Mutex::new(Vec::new()),
                partials: Mutex::new(Vec::new()),
                tile_words: Mutex::new(Default::default()),
                constants: Mutex::new(Vec::new()),
            },
            tuning,
        })
    }
}

/// Test helpers: what a built kernel takes on this device.
#[cfg(test)]
impl ClEngine {
    /// The local memory `kernel` built with the defines `variant` takes on this device
    /// (`CL_KERNEL_LOCAL_MEM_SIZE`: its static local arrays, here).
    pub(crate) fn kernel_local_bytes(&self, kernel: Kernel, variant: Defines) -> Result<u64> {
        let prog = self.program_for(kernel, variant)?;
        let k =
            ClKernel::create(&prog, kernel.name).map_err(|e| Error::cl("clCreateKernel", e.0))?;
        let said = k
            .get_local_mem_size(self.device_id as cl_device_id)
            .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))?;
        Ok(match self.quirks.static_local_doubled {
            true => said / 2,
            false => said,
        })
    }

    /// Checks, on every device in the GPU layout, that kernels take the local memory the host
    /// plans for them (the host sizes their tiles on that figure, with 1 KiB of margin). `plans`
    /// lists, for an engine, each kernel as (description, (program, variant), kernel, planned
    /// bytes). A device that reports 0 (PoCL 5.0, for kernels declaring tens of KiB) is skipped
    /// with a message; where a device is required (`CLPIX_REQUIRE_OPENCL`) one must have been
    /// checked (PoCL 3.1 in CI reports the figure).
    pub(crate) fn assert_local_bytes_as_planned(
        plans: impl Fn(&ClEngine) -> Vec<(String, Kernel, Defines, u64)>,
    ) {
        let required = crate::config::opencl_required();
        let devices = match crate::opencl::devices() {
            Ok(d) => d,
            Err(e) if required => panic!("OpenCL required: {e}"),
            Err(_) => return,
        };
        let mut checked = 0;
        for d in &devices {
            let cl = ClEngine::open(d, None, KernelLayout::Coalesced, Tuning::default()).unwrap();
            for (what, kernel, variant, planned) in plans(&cl) {
                let bytes = cl.kernel_local_bytes(kernel, variant).unwrap();
                if bytes == 0 {
                    eprintln!("{}: reports 0 local bytes for {what}: not checked", d.name);
                    continue;
                }
                assert!(
                    (planned..=planned + 1024).contains(&bytes),
                    "{}: {what}: {bytes} bytes, planned {planned}",
                    d.name
                );
                checked += 1;
            }
        }
        assert!(
            !required || checked > 0,
            "no device reported its local memory"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program of this layer's tests alone: each sum is the work-item 0's, in one work-group.
    const TEST_PROGRAM: ProgramId = ProgramId::new(
        "test",
        &[ClFile {
            path: "test/sum.cl",
            text: "__kernel void sum_u32(__global const uint* src, uint n, __global ulong* out) {\n\
                   if (get_global_id(0) != 0) return;\n\
                   ulong s = 0;\n\
                   for (uint i = 0; i < n; ++i) s += src[i];\n\
                   out[0] = s;\n\
                   }\n",
        }],
    );
    const SUM: Kernel = Kernel::new(TEST_PROGRAM, "sum_u32");

    fn engines() -> Vec<Arc<ClEngine>> {
        let required = crate::config::opencl_required();
        match devices() {
            Ok(list) => list
                .iter()
                .map(|d| {
                    Arc::new(
                        ClEngine::open(d, None, KernelLayout::Auto, Tuning::default())
                            .expect("device opens"),
                    )
                })
                .collect(),
            Err(e) if required => panic!("OpenCL required: {e}"),
            Err(_) => Vec::new(),
        }
    }

    /// OpenCL errors in the middle of an operation, provoked for real, are error values and
    /// leave the engine usable.
    #[test]
    fn failed_enqueues_are_errors_and_the_engine_recovers() {
        for cl in engines() {
            let buf = cl.buffer::<u32>(64, "test").unwrap();
            // Missing arguments: CL_INVALID_KERNEL_ARGS at enqueue.
            let e = cl.launch(SUM, &[Arg::buf(&buf)], cl.grid.wg, cl.grid.wg);
            assert!(matches!(e, Err(Error::OpenCl { .. })), "{e:?}");
            // A wrongly sized argument (4 bytes for a buffer): CL_INVALID_ARG_SIZE from
            // clSetKernelArg, where opencl3's ExecuteKernel would panic.
            let e = cl.launch(SUM, &[Arg::U32(1), Arg::U32(0), Arg::buf(&buf)], 1, 1);
            assert!(matches!(e, Err(Error::OpenCl { .. })), "{e:?}");
            // No such kernel.
            let e = cl.launch(Kernel::new(TEST_PROGRAM, "no_such_kernel"), &[], 1, 1);
            assert!(
                matches!(
                    e,
                    Err(Error::OpenCl {
                        call: "clCreateKernel",
                        ..
                    })
                ),
                "{e:?}"
            );
            // A work-group larger than the device allows.
            let too_big = cl.info.max_work_group_size * 2;
            let e = cl.launch(
                SUM,
                &[Arg::buf(&buf), Arg::U32(0), Arg::buf(&buf)],
                too_big,
                too_big,
            );
            match e {
                Err(Error::DeviceLimit {
                    kernel,
                    what,
                    needed,
                    limit,
                    ..
                }) => {
                    assert_eq!(kernel, "test/sum_u32");
                    assert_eq!(what, "work-items a group");
                    assert_eq!(needed, too_big as u64);
                    assert!(limit <= cl.info.max_work_group_size as u64);
                }
                other => panic!("{other:?}"),
            }
            // A buffer larger than the limit is refused before the driver sees it.
            let e = cl.buffer::<u64>(usize::MAX / 16, "huge");
            assert!(matches!(e, Err(Error::TooLargeForDevice { .. })), "{e:?}");
            // The same kernel objects then run correctly.
            let data: Vec<u32> = (0..64).map(|i| i * 0x010101).collect();
            let mut input = cl.buffer::<u32>(64, "test").unwrap();
            cl.write(&mut input, 0, &data).unwrap();
            let out = cl.buffer::<u64>(cl.partials_len(), "test").unwrap();
            let ev = cl
                .launch(
                    SUM,
                    &[Arg::buf(&input), Arg::U32(64), Arg::buf(&out)],
                    cl.grid.wg,
                    cl.grid.wg,
                )
                .unwrap();
            cl.finish(&[ev]).unwrap();
            let mut host = [0u64; 2];
            cl.read(&out, 0, &mut host).unwrap();
            let expected: u64 = data.iter().map(|&p| p as u64).sum();
            assert_eq!(host[0], expected, "{}", cl.info.name);
        }
    }
}
