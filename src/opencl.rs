//! OpenCL plumbing, in one place: device discovery, the per-engine context and queue, the lazy
//! program cache, a kernel pool that makes concurrent callers safe, buffers, and launches whose
//! every failure is an [`Error`] value.
//!
//! The operations (`reduce`, `histogram`, …) only call [`ClEngine::launch`], the buffer helpers
//! and [`ClEngine::for_each_part`]; nothing outside this module touches raw OpenCL objects.

use crate::cpu::parallel_copy;
use crate::error::{Error, Result};
use crate::image::{DeviceImage, ImageInput, ImageView, Storage};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What kind of processor an OpenCL device is.
///
/// ```
/// use clpix::DeviceType;
/// assert_eq!(DeviceType::Gpu.to_string(), "GPU");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceType {
    /// A graphics processor.
    Gpu,
    /// A CPU (for example PoCL).
    Cpu,
    /// An accelerator (FPGA, DSP, …).
    Accelerator,
    /// Anything else the driver reports.
    Other,
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::Gpu => "GPU",
            DeviceType::Cpu => "CPU",
            DeviceType::Accelerator => "accelerator",
            DeviceType::Other => "other",
        })
    }
}

/// One OpenCL device as the driver describes it.
///
/// ```
/// // Lists nothing (or an error) on a machine without OpenCL; never panics.
/// for d in clpix::devices().unwrap_or_default() {
///     println!("{}: {} ({}), {} compute units", d.index, d.name, d.device_type, d.compute_units);
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Position in [`devices()`](crate::devices); `CLPIX_DEVICE` accepts it.
    pub index: usize,
    /// Platform (driver) name, e.g. `NVIDIA CUDA` or `Portable Computing Language`.
    pub platform: String,
    /// Device name.
    pub name: String,
    /// Vendor.
    pub vendor: String,
    /// GPU, CPU, accelerator.
    pub device_type: DeviceType,
    /// Compute units (SMs on NVIDIA, cores on PoCL).
    pub compute_units: u32,
    /// Global memory in bytes.
    pub global_mem_bytes: u64,
    /// Largest single buffer in bytes.
    pub max_alloc_bytes: u64,
    /// Local (work-group shared) memory in bytes.
    pub local_mem_bytes: u64,
    /// Largest work-group.
    pub max_work_group_size: usize,
    /// `OpenCL C x.y …` as reported.
    pub opencl_c_version: String,
    /// Driver version.
    pub driver_version: String,
    /// Extensions, space separated.
    pub extensions: String,
}

impl DeviceInfo {
    /// Whether the device reports an extension, e.g. `cl_khr_int64_extended_atomics`.
    ///
    /// ```
    /// for d in clpix::devices().unwrap_or_default() {
    ///     println!("{}: 64-bit atomics: {}", d.name, d.has_extension("cl_khr_int64_base_atomics"));
    /// }
    /// ```
    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.split_whitespace().any(|e| e == ext)
    }

    /// How strongly `Engine::opencl()` prefers this device: GPUs, then accelerators, then CPUs;
    /// within a type, more compute units and memory.
    pub(crate) fn rank(&self) -> (u8, u32, u64) {
        let t = match self.device_type {
            DeviceType::Gpu => 3,
            DeviceType::Accelerator => 2,
            DeviceType::Other => 1,
            DeviceType::Cpu => 0,
        };
        (t, self.compute_units, self.global_mem_bytes)
    }
}

struct Found {
    info: DeviceInfo,
    /// `cl_device_id` as an address: device ids are process-wide handles, valid for its life.
    id: usize,
}

/// Platforms are enumerated once per process: ocl-icd with PoCL 3.1 returned empty device lists
/// to some of 8 threads enumerating at the same time.
static DISCOVERY: OnceLock<Result<Vec<Found>>> = OnceLock::new();

/// Held from enqueue to completion of each kernel on drivers where kernels of two queues
/// must not run at once (see [`ClEngine::launch`]).
static POCL_KERNEL_LOCK: Mutex<()> = Mutex::new(());

fn discovered() -> Result<&'static [Found]> {
    match DISCOVERY.get_or_init(discover) {
        Ok(v) => Ok(v),
        Err(e) => Err(e.clone()),
    }
}

/// Every OpenCL device of every platform, in a stable order (their `index`).
///
/// An error when no OpenCL loader is installed or no platform is registered; an empty list is
/// never returned as success.
///
/// ```
/// match clpix::devices() {
///     Ok(list) => list.iter().for_each(|d| println!("{} {}", d.index, d.name)),
///     Err(e) => println!("no OpenCL here: {e}"),
/// }
/// ```
pub fn devices() -> Result<Vec<DeviceInfo>> {
    Ok(discovered()?.iter().map(|f| f.info.clone()).collect())
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::OpenClUnavailable {
        reason: reason.into(),
    }
}

fn discover() -> Result<Vec<Found>> {
    let platforms = opencl3::platform::get_platforms().map_err(|e| match e.0 {
        cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED
        | cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE => unavailable(
            "the OpenCL loader libOpenCL.so.1 could not be loaded; install one \
             (Debian/Ubuntu: ocl-icd-libopencl1) and a driver (pocl-opencl-icd, or your GPU's)",
        ),
        -1001 => unavailable(
            "the OpenCL loader found no platform (CL_PLATFORM_NOT_FOUND_KHR); install a driver \
             (pocl-opencl-icd, or your GPU's) and check /etc/OpenCL/vendors",
        ),
        code => Error::cl("clGetPlatformIDs", code),
    })?;
    let mut found = Vec::new();
    for platform in &platforms {
        let pname = platform
            .name()
            .unwrap_or_else(|_| "unknown platform".into());
        // CL_DEVICE_NOT_FOUND and other per-platform failures just mean "nothing usable here".
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                log::info!("OpenCL platform {pname}: no devices ({e})");
                continue;
            }
        };
        for id in ids {
            match describe(found.len(), &pname, id) {
                Ok(info) => found.push(Found {
                    info,
                    id: id as usize,
                }),
                Err(e) => log::warn!("OpenCL platform {pname}: skipping a device: {e}"),
            }
        }
    }
    if found.is_empty() {
        return Err(unavailable(format!(
            "{} OpenCL platform(s) found but no usable device; with PoCL, make sure \
             POCL_CACHE_DIR (or $HOME/.cache) is writable",
            platforms.len()
        )));
    }
    Ok(found)
}

fn describe(index: usize, platform: &str, id: cl_device_id) -> Result<DeviceInfo> {
    let d = Device::new(id);
    let q = |call: &'static str| move |e: opencl3::error_codes::ClError| Error::cl(call, e.0);
    let ty = d.dev_type().map_err(q("CL_DEVICE_TYPE"))?;
    let device_type = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceType::Gpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceType::Accelerator
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceType::Cpu
    } else {
        DeviceType::Other
    };
    if !d.available().unwrap_or(false) || !d.compiler_available().unwrap_or(false) {
        return Err(unavailable("device not available or has no compiler"));
    }
    Ok(DeviceInfo {
        index,
        platform: platform.trim().to_string(),
        name: d.name().map_err(q("CL_DEVICE_NAME"))?.trim().to_string(),
        vendor: d.vendor().unwrap_or_default().trim().to_string(),
        device_type,
        compute_units: d
            .max_compute_units()
            .map_err(q("CL_DEVICE_MAX_COMPUTE_UNITS"))?,
        global_mem_bytes: d
            .global_mem_size()
            .map_err(q("CL_DEVICE_GLOBAL_MEM_SIZE"))?,
        max_alloc_bytes: d
            .max_mem_alloc_size()
            .map_err(q("CL_DEVICE_MAX_MEM_ALLOC_SIZE"))?,
        local_mem_bytes: d.local_mem_size().map_err(q("CL_DEVICE_LOCAL_MEM_SIZE"))?,
        max_work_group_size: d
            .max_work_group_size()
            .map_err(q("CL_DEVICE_MAX_WORK_GROUP_SIZE"))?,
        opencl_c_version: d.opencl_c_version().unwrap_or_default().trim().to_string(),
        driver_version: d.driver_version().unwrap_or_default().trim().to_string(),
        extensions: d.extensions().unwrap_or_default(),
    })
}

/// Finds the device a `CLPIX_DEVICE`-style query names: an index in `devices()`, or a
/// case-insensitive substring of the device name.
pub(crate) fn find_device(query: &str) -> Result<DeviceInfo> {
    let all = discovered()?;
    let q = query.trim();
    if let Ok(i) = q.parse::<usize>() {
        return all
            .get(i)
            .map(|f| f.info.clone())
            .ok_or_else(|| Error::NoSuchDevice { query: q.into() });
    }
    let lower = q.to_lowercase();
    all.iter()
        .filter(|f| f.info.name.to_lowercase().contains(&lower))
        .max_by_key(|f| f.info.rank())
        .map(|f| f.info.clone())
        .ok_or_else(|| Error::NoSuchDevice { query: q.into() })
}

/// The best device of any type (GPU first).
pub(crate) fn best_device() -> Result<DeviceInfo> {
    let all = discovered()?;
    all.iter()
        .rev() // max_by_key keeps the last maximum; reversing keeps the lowest index on ties
        .max_by_key(|f| f.info.rank())
        .map(|f| f.info.clone())
        .ok_or_else(|| unavailable("no device"))
}

/// Kernel sources, embedded so that a dependent crate and a copied binary work anywhere.
const COMMON_H: &str = include_str!("../cl/common.h");
const SOURCES: &[(&str, &str)] = &[
    ("reduce", include_str!("../cl/reduce.cl")),
    ("histogram", include_str!("../cl/histogram.cl")),
    ("compact", include_str!("../cl/compact.cl")),
    ("blur", include_str!("../cl/blur.cl")),
    ("select", include_str!("../cl/select.cl")),
];

/// How the kernels walk memory. `Auto` (the default) picks from the device type; the others
/// force a variant, for testing both variants on one device or for devices that report a
/// misleading type.
///
/// ```
/// use clpix::{Engine, EngineConfig, KernelLayout};
/// for d in clpix::devices().unwrap_or_default() {
///     // The GPU-style kernels, even on a CPU device.
///     let config = EngineConfig { layout: KernelLayout::Coalesced, ..EngineConfig::default() };
///     let engine = Engine::with_device_config(&d, &config)?;
///     println!("{}", engine.backend());
/// }
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelLayout {
    /// GPUs and accelerators: coalesced; CPU devices: contiguous.
    #[default]
    Auto,
    /// Work-items of a group read neighbouring elements, work-groups of up to 256 (GPUs).
    Coalesced,
    /// Work-groups of one, each work-item walking a contiguous range (CPU devices, PoCL).
    Contiguous,
}

/// How kernels should walk memory on this device, chosen from device queries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuning {
    /// CPU devices (PoCL): each work-item walks a contiguous range, work-groups of one.
    /// GPUs: work-items of a group read neighbouring elements (coalesced), groups of `wg`.
    pub contiguous: bool,
    /// Work-group size of the streaming kernels (fixed per device: PoCL recompiles a kernel
    /// for every new local size).
    pub wg: usize,
    /// How many work-groups a grid-stride kernel launches at most (enough to fill the device).
    pub max_groups: usize,
}

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

/// Whether `CLPIX_BUILD_LOG` asks for each program's build log on stderr, also after a build
/// that succeeded (with `-cl-nv-verbose` in `CLPIX_BUILD_OPTIONS`, NVIDIA's log gives each
/// kernel's registers and spills).
fn build_log_wanted() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("CLPIX_BUILD_LOG").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// Whether `CLPIX_PROFILE` asks for each kernel's time on stderr (each kernel is then waited
/// for as it is enqueued: for finding the slow step of an operation, not for production).
fn profile_kernels() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("CLPIX_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// A finished kernel's start and end from its profiling event, in nanoseconds.
fn kernel_interval(event: &Event) -> Option<(u64, u64)> {
    let start = event.profiling_command_start().ok()?;
    let end = event.profiling_command_end().ok()?;
    Some((start, end.max(start)))
}

/// A pooled kernel: its program, the program's variant and the kernel's name.
type KernelKey = (&'static str, u32, &'static str);

/// Idle scratch buffers by name, each with its element count.
type ScratchPool = HashMap<&'static str, Vec<(usize, Buffer<u32>)>>;

/// An OpenCL device opened for clpix: context, in-order profiling queue, programs and kernels.
pub(crate) struct ClEngine {
    pub info: DeviceInfo,
    device_id: usize,
    context: Context,
    queue: CommandQueue,
    pub tuning: Tuning,
    build_options: String,
    kernel_dir: Option<PathBuf>,
    /// Whether each kernel runs alone in the process (PoCL before 6; see `launch`).
    serialize_kernels: bool,
    /// The largest image part or band clpix plans for (device limit, or a lower cap for
    /// testing splits). Small internal buffers (per-group partials, weights, group sums) are
    /// checked against the device's own limit only: the cap shapes the plan, not bookkeeping.
    pub max_buffer_bytes: u64,
    programs: Mutex<HashMap<(&'static str, u32), Arc<Program>>>,
    /// Idle kernel objects by (program, kernel): a `Kernel` is Send but not Sync, so each call
    /// takes one out, sets its arguments and enqueues it, then puts it back.
    kernels: Mutex<HashMap<KernelKey, Vec<Kernel>>>,
    /// Idle scratch buffers by name, with their element counts (see [`ClEngine::take_scratch`]).
    scratch: Mutex<ScratchPool>,
    /// Build logs of program variants that did not build, so that a caller falling back to
    /// another kernel does not pay for the failed build again on every call.
    failed_variants: Mutex<HashMap<(&'static str, u32), String>>,
    /// Idle partial-result buffers of `partials_len()` u64s, reused across calls: allocating a
    /// buffer per call cost more than the kernel on a GPU.
    partials: Mutex<Vec<Buffer<u64>>>,
    /// The single-pass kernels' tile words (see [`ClEngine::with_tile_words`]).
    tile_words: Mutex<TileWords>,
    /// Bytes of each pinned staging slot for large transfers, `None` for direct transfers
    /// (see [`ClEngine::write`]).
    staging_slot: Option<usize>,
    /// The two pinned staging slots, made on the first large transfer.
    staging: Mutex<Vec<StagingSlot>>,
}

/// A pinned host buffer (`CL_MEM_ALLOC_HOST_PTR`), mapped once for the engine's life: its
/// address is the host side of large reads and writes, which the driver then moves by DMA
/// (from pageable memory NVIDIA's driver moved 256 MiB in about 30 ms).
struct StagingSlot {
    buf: Buffer<u8>,
    ptr: *mut u8,
    len: usize,
}

/// Staging slots of 16 MiB: two of them let the host fill one while the other is in flight.
const STAGING_SLOT_BYTES: usize = 16 << 20;
/// Transfers from this size (or one slot, if smaller) on go through the staging slots (where
/// staging is on).
const STAGING_MIN_BYTES: usize = 4 << 20;

/// The staging slot size for a device: `CLPIX_STAGING` = `off`, `on`, or a slot size in KiB
/// (tests: small slots, many chunks); by default on for devices that are not CPUs (a CPU
/// device reads host memory where it is).
fn staging_slot(info: &DeviceInfo) -> Result<Option<usize>> {
    match std::env::var("CLPIX_STAGING") {
        Err(_) => Ok((info.device_type != DeviceType::Cpu).then_some(STAGING_SLOT_BYTES)),
        Ok(v) => match v.as_str() {
            "off" => Ok(None),
            "on" => Ok(Some(STAGING_SLOT_BYTES)),
            kib => match kib.parse::<usize>() {
                Ok(k) if k > 0 => Ok(Some(k * 1024)),
                _ => Err(Error::InvalidEnvironment {
                    var: "CLPIX_STAGING",
                    value: v,
                    expected: "off, on, or a staging slot size in KiB",
                }),
            },
        },
    }
}

/// One u64 word a tile for kernels whose work-groups publish to each other (the single-pass
/// compaction's look-back): each launch gets a fresh epoch, which its words carry, so a word
/// left by an earlier launch reads as unwritten and the words are never cleared between
/// launches; zeroed only when made (grown) or when the epochs wrap.
#[derive(Default)]
struct TileWords {
    /// The words and how many there are.
    buf: Option<(Buffer<u64>, usize)>,
    epoch: u32,
}

// SAFETY: every field is Send + Sync except the raw device id (a process-wide handle) and the
// kernel pool, whose kernels are only used by one thread at a time behind the mutex.
unsafe impl Send for ClEngine {}
unsafe impl Sync for ClEngine {}

impl Drop for ClEngine {
    fn drop(&mut self) {
        // The staging slots are unmapped while the queue still exists (fields drop after this).
        let slots = std::mem::take(self.staging.get_mut().unwrap_or_else(|p| p.into_inner()));
        for s in &slots {
            // SAFETY: `ptr` is the live mapping of `buf`, made once in `staging_slots`.
            let _ = unsafe { self.unmap(&s.buf, s.ptr as cl_mem) };
        }
        let _ = self.queue.finish();
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
    /// Opens `info`'s device. `max_buffer_bytes` caps single buffers below the device's limit.
    pub(crate) fn open(
        info: &DeviceInfo,
        max_buffer_bytes: Option<u64>,
        layout: KernelLayout,
    ) -> Result<ClEngine> {
        let found = discovered()?
            .iter()
            .find(|f| f.info.index == info.index && f.info.name == info.name)
            .ok_or_else(|| Error::NoSuchDevice {
                query: info.name.clone(),
            })?;
        let device = Device::new(found.id as cl_device_id);
        let context =
            Context::from_device(&device).map_err(|e| Error::cl("clCreateContext", e.0))?;
        #[allow(deprecated)]
        // clCreateCommandQueue: OpenCL 1.2 devices (NVIDIA) have nothing newer.
        let queue =
            unsafe { CommandQueue::create(&context, device.id(), CL_QUEUE_PROFILING_ENABLE) }
                .map_err(|e| Error::cl("clCreateCommandQueue", e.0))?;
        let contiguous = match layout {
            KernelLayout::Auto => info.device_type == DeviceType::Cpu,
            KernelLayout::Coalesced => false,
            KernelLayout::Contiguous => true,
        };
        let wg = if contiguous {
            1
        } else {
            256.min(info.max_work_group_size.max(1))
        };
        let tuning = Tuning {
            contiguous,
            wg,
            max_groups: if contiguous {
                info.compute_units.max(1) as usize * 4
            } else {
                info.compute_units.max(1) as usize * 8
            },
        };
        let mut build_options = format!(
            "-D CLPIX_WG={} -D CLPIX_CONTIGUOUS={}",
            tuning.wg, tuning.contiguous as u32
        );
        if !contiguous {
            let per = crate::compact::radix_per(tuning.wg, info.local_mem_bytes);
            if per != 16 {
                build_options.push_str(&format!(" -D RADIX_PER={per}u"));
            }
        }
        if info.has_extension("cl_khr_int64_base_atomics") {
            build_options.push_str(" -D CLPIX_HAS_INT64_ATOMICS=1");
        }
        // Extra compiler options, to measure or diagnose (a define, a verbose build log).
        if let Ok(extra) = std::env::var("CLPIX_BUILD_OPTIONS") {
            build_options.push(' ');
            build_options.push_str(&extra);
        }
        let cap = max_buffer_bytes.unwrap_or(u64::MAX).max(4096);
        Ok(ClEngine {
            info: info.clone(),
            device_id: found.id,
            context,
            queue,
            tuning,
            build_options,
            kernel_dir: std::env::var_os("CLPIX_KERNEL_DIR").map(PathBuf::from),
            serialize_kernels: info.platform.contains("Portable Computing Language")
                && driver_major(&info.driver_version) < 6,
            max_buffer_bytes: info.max_alloc_bytes.min(cap),
            programs: Mutex::new(HashMap::new()),
            kernels: Mutex::new(HashMap::new()),
            scratch: Mutex::new(HashMap::new()),
            failed_variants: Mutex::new(HashMap::new()),
            partials: Mutex::new(Vec::new()),
            tile_words: Mutex::new(TileWords::default()),
            staging_slot: staging_slot(info)?,
            staging: Mutex::new(Vec::new()),
        })
    }

    fn source(&self, name: &'static str) -> Result<String> {
        let embedded = SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .ok_or_else(|| Error::KernelSource {
                path: format!("{name}.cl"),
                reason: "no such program".into(),
            })?;
        let (header, body) = match &self.kernel_dir {
            None => (COMMON_H.to_string(), embedded.to_string()),
            Some(dir) => {
                let read = |file: String| {
                    let path = dir.join(&file);
                    std::fs::read_to_string(&path).map_err(|e| Error::KernelSource {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    })
                };
                (read("common.h".into())?, read(format!("{name}.cl"))?)
            }
        };
        // The header is pasted in rather than #included: no include path to get wrong.
        Ok(format!("{header}\n#line 1\n{body}"))
    }

    /// The built program `name` (a file `cl/<name>.cl`), built on first use and cached.
    pub(crate) fn program(&self, name: &'static str) -> Result<Arc<Program>> {
        self.program_variant(name, 0)
    }

    /// The program `name` built with `-D CLPIX_VARIANT=variant` (none for 0), for kernels
    /// specialised on a value known only at run time (the fused blur on its radius); each
    /// variant is built on first use and cached.
    pub(crate) fn program_variant(&self, name: &'static str, variant: u32) -> Result<Arc<Program>> {
        if let Some(p) = lock(&self.programs).get(&(name, variant)) {
            return Ok(p.clone());
        }
        if let Some(log) = lock(&self.failed_variants).get(&(name, variant)) {
            return Err(Error::KernelBuild {
                program: name,
                device: self.info.name.clone(),
                log: log.clone(),
            });
        }
        let src = self.source(name)?;
        let mut program = Program::create_from_source(&self.context, &src)
            .map_err(|e| Error::cl("clCreateProgramWithSource", e.0))?;
        let id = self.device_id as cl_device_id;
        let options = match variant {
            0 => self.build_options.clone(),
            v => format!("{} -D CLPIX_VARIANT={v}", self.build_options),
        };
        if let Err(e) = program.build(&[id], &options) {
            let log = program.get_build_log(id).unwrap_or_default();
            let log = if log.trim().is_empty() {
                format!("(empty build log; clBuildProgram returned {})", e.0)
            } else {
                log
            };
            if variant != 0 {
                lock(&self.failed_variants).insert((name, variant), log.clone());
            }
            return Err(Error::KernelBuild {
                program: name,
                device: self.info.name.clone(),
                log,
            });
        }
        if build_log_wanted() {
            let log = program.get_build_log(id).unwrap_or_default();
            eprintln!("clpix build {name} variant {variant} [{options}]:\n{log}");
        }
        let program = Arc::new(program);
        // Two threads may have built it at once; either copy is fine.
        lock(&self.programs)
            .entry((name, variant))
            .or_insert(program.clone());
        Ok(program)
    }

    /// Whether this engine runs the variant `variant` of `program`, written for NVIDIA GPUs
    /// (inline PTX: warp ballots, tensor-core products): built on NVIDIA GPUs, where a build
    /// failure falls back to the portable kernels with a `log` warning naming `what`. A variant
    /// `forced` (by a tuning variable, to measure or test it) does not fall back: its build
    /// failure is an error, and on any other device so is the `forced` error itself, unless the
    /// PTX is emulated (`-D CLPIX_WARP_EMULATED=1` in `CLPIX_BUILD_OPTIONS`, as the tests do):
    /// another compiler may build the PTX into wrong code (PoCL 3.1 did) or abort the process
    /// (PoCL 5's LLVM did).
    pub(crate) fn nvidia_variant(
        &self,
        (program, variant): (&'static str, u32),
        what: &str,
        forced: Option<Error>,
    ) -> Result<bool> {
        let is_forced = forced.is_some();
        if !self.info.platform.contains("NVIDIA") {
            match forced {
                None => return Ok(false),
                Some(e) if !self.build_options.contains("CLPIX_WARP_EMULATED=1") => return Err(e),
                Some(_) => {}
            }
        }
        match self.program_variant(program, variant) {
            Ok(_) => Ok(true),
            Err(e @ Error::KernelBuild { .. }) if !is_forced => {
                log::warn!(
                    "{what} did not build on {}; the portable kernels instead: {e}",
                    self.info.name
                );
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Sets `args` on a kernel of `program` and enqueues it over `global` work-items in groups of
    /// `local`. Every failure (bad argument, out of resources) is an error value.
    pub(crate) fn launch(
        &self,
        program: &'static str,
        kernel: &'static str,
        args: &[Arg],
        global: usize,
        local: usize,
    ) -> Result<Event> {
        self.launch_variant((program, 0), kernel, args, global, local)
    }

    /// [`launch`](Self::launch) for a kernel of a program variant (see
    /// [`program_variant`](Self::program_variant)).
    pub(crate) fn launch_variant(
        &self,
        (program, variant): (&'static str, u32),
        kernel: &'static str,
        args: &[Arg],
        global: usize,
        local: usize,
    ) -> Result<Event> {
        let prog = self.program_variant(program, variant)?;
        let pooled = lock(&self.kernels)
            .get_mut(&(program, variant, kernel))
            .and_then(|v| v.pop());
        let k = match pooled {
            Some(k) => k,
            None => Kernel::create(&prog, kernel).map_err(|e| Error::cl("clCreateKernel", e.0))?,
        };
        // PoCL before 6 aborts the process when kernels of two queues are in flight at once
        // with the same code and work-group size but different specializations (its cache
        // release matches on fewer fields than its lookup: `pocl_release_dlhandle_cache:
        // Assertion found->ref_count > 0`, seen with PoCL 5.0 and parallel tests). There each
        // kernel runs to completion before another engine's may start; a CPU device runs one
        // kernel on all its cores anyway, so little is lost.
        let serial = self.serialize_kernels.then(|| lock(&POCL_KERNEL_LOCK));
        let result = (|| {
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
                self.queue.enqueue_nd_range_kernel(
                    k.get(),
                    1,
                    std::ptr::null(),
                    g.as_ptr(),
                    l.as_ptr(),
                    &[],
                )
            }
            .map_err(|e| Error::cl("clEnqueueNDRangeKernel", e.0))
            .and_then(|event| {
                let profile = profile_kernels();
                if serial.is_none() && !profile {
                    return Ok(event);
                }
                event
                    .wait()
                    .map_err(|e| Error::cl("clWaitForEvents", e.0))?;
                if let Some((start, end)) = kernel_interval(&event).filter(|_| profile) {
                    eprintln!(
                        "clpix profile: {program}/{kernel} variant {variant} global {global}: \
                         {:.4} ms",
                        (end - start) as f64 / 1e6
                    );
                }
                Ok(event)
            })
        })();
        drop(serial);

        lock(&self.kernels)
            .entry((program, variant, kernel))
            .or_default()
            .push(k);
        result
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

    /// A scratch buffer of at least `count` u32, reused between calls: on CPU devices a fresh
    /// buffer costs a page fault per 4 KiB at its first write, every call. The caller has it to
    /// itself until it hands it back with [`give_scratch`](Self::give_scratch).
    /// Returns the buffer and its element count.
    pub(crate) fn take_scratch(
        &self,
        name: &'static str,
        count: usize,
    ) -> Result<(usize, Buffer<u32>)> {
        let found = lock(&self.scratch).get_mut(name).and_then(|v| {
            let i = v.iter().position(|(c, _)| *c >= count)?;
            Some(v.swap_remove(i))
        });
        match found {
            Some(b) => Ok(b),
            None => Ok((count.max(1), self.buffer::<u32>(count, name)?)),
        }
    }

    /// Returns a buffer from [`take_scratch`](Self::take_scratch) for later calls (keeping at
    /// most two per name: the largest).
    pub(crate) fn give_scratch(&self, name: &'static str, count: usize, buf: Buffer<u32>) {
        let mut pool = lock(&self.scratch);
        let v = pool.entry(name).or_default();
        v.push((count.max(1), buf));
        v.sort_by_key(|(c, _)| std::cmp::Reverse(*c));
        v.truncate(2);
    }

    /// Runs `f` (which enqueues one kernel) with at least `tiles` tile words and a fresh epoch
    /// for it (never 0, the zeroed words' epoch), holding the words until `f` returns: kernels
    /// using them are enqueued one at a time, in epoch order.
    pub(crate) fn with_tile_words<R>(
        &self,
        tiles: usize,
        f: impl FnOnce(&Buffer<u64>, u32) -> Result<R>,
    ) -> Result<R> {
        let mut words = lock(&self.tile_words);
        let (buf, len) = match words.buf.take() {
            Some((buf, len)) if len >= tiles && words.epoch < u32::MAX => (buf, len),
            _ => {
                let len = tiles.max(1);
                let mut buf = self.buffer::<u64>(len, "tile words")?;
                self.fill(&mut buf, 0u64, len)?;
                words.epoch = 0;
                (buf, len)
            }
        };
        words.epoch += 1;
        let result = f(&buf, words.epoch);
        words.buf = Some((buf, len));
        result
    }

    /// Length of a partials buffer: room for 4 u64s per work-group of the largest grid.
    pub(crate) fn partials_len(&self) -> usize {
        4 * self.tuning.max_groups
    }

    /// Runs `f` with a reusable buffer of [`partials_len`](Self::partials_len) u64s for
    /// per-group results, then returns the buffer to the pool.
    pub(crate) fn with_partials<R>(&self, f: impl FnOnce(&Buffer<u64>) -> Result<R>) -> Result<R> {
        let pooled = lock(&self.partials).pop();
        let buffer = match pooled {
            Some(b) => b,
            None => self.buffer::<u64>(self.partials_len(), "per-group partial results")?,
        };
        let r = f(&buffer);
        lock(&self.partials).push(buffer);
        r
    }

    /// A device buffer of `count` elements (at least one: OpenCL has no empty buffers).
    /// Buffers sized from a part plan already respect `max_buffer_bytes`; here only the
    /// device's own allocation limit is enforced, so that a capped engine can still hold its
    /// fixed-size bookkeeping (e.g. 4 u64s per work-group on a 132-unit GPU is 34 KB).
    pub(crate) fn buffer<T>(&self, count: usize, what: &'static str) -> Result<Buffer<T>> {
        // SAFETY: no host pointer.
        unsafe { self.create_buffer(CL_MEM_READ_WRITE, count.max(1), std::ptr::null_mut(), what) }
    }

    /// clCreateBuffer of `count` elements, checked against the device's allocation limit.
    ///
    /// # Safety
    /// `host` is null, or as [`buffer_over_host`](Self::buffer_over_host) requires.
    unsafe fn create_buffer<T>(
        &self,
        flags: u64,
        count: usize,
        host: *mut T,
        what: &'static str,
    ) -> Result<Buffer<T>> {
        let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        if bytes > self.info.max_alloc_bytes {
            return Err(Error::TooLargeForDevice {
                what,
                needed: bytes,
                limit: self.info.max_alloc_bytes,
            });
        }
        // SAFETY: the size is checked against the device limit above; the caller vouches for
        // `host`.
        unsafe { Buffer::<T>::create(&self.context, flags, count, host as *mut std::ffi::c_void) }
            .map_err(|e| Error::cl("clCreateBuffer", e.0))
    }

    /// A buffer over `count` elements of host memory at `host` (`CL_MEM_USE_HOST_PTR`): on a
    /// CPU device the kernels write straight into it, and reading it back into the same memory
    /// copies nothing.
    ///
    /// # Safety
    /// `host` points to `count` writable elements that stay allocated, and are neither read
    /// nor written by the host, until the buffer is dropped, except through blocking reads of
    /// the buffer into that same memory after the commands using it have finished.
    pub(crate) unsafe fn buffer_over_host<T>(
        &self,
        host: *mut T,
        count: usize,
        what: &'static str,
    ) -> Result<Buffer<T>> {
        // SAFETY: the caller keeps `count` elements at `host` alive and untouched.
        unsafe { self.create_buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, count, host, what) }
    }

    /// Whether this engine's kernels use host memory in place (CPU devices, whose memory is
    /// the host's): a packed host image is read through a buffer over it
    /// ([`buffer_over_host_read_only`](Self::buffer_over_host_read_only)) rather than uploaded,
    /// and a result for the host is written straight into its memory. On PoCL 3.1 (4096²,
    /// a call from a host image) that took brightest from 28.7-29.7 to 1.8-1.9 ms and the
    /// w = 2 blur from 93-105 to 12.6-13.7 ms: the upload of 64 MiB alone had cost ~30 ms.
    pub(crate) fn uses_host_memory(&self) -> bool {
        self.tuning.contiguous
    }

    /// A read-only buffer over `data` (`CL_MEM_USE_HOST_PTR`): the kernels read it where it is.
    ///
    /// # Safety
    /// `data` stays allocated and unchanged until every command using the buffer has finished
    /// (hold a [`QueueDrain`] armed until then).
    pub(crate) unsafe fn buffer_over_host_read_only<T>(
        &self,
        data: &[T],
        what: &'static str,
    ) -> Result<Buffer<T>> {
        // SAFETY: the caller keeps `data` alive and unchanged; the buffer is read-only, so
        // nothing writes through the pointer.
        unsafe {
            self.create_buffer(
                CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                data.len(),
                data.as_ptr().cast_mut(),
                what,
            )
        }
    }

    /// A guard that waits for this engine's queue when dropped while armed; see
    /// [`QueueDrain`].
    pub(crate) fn queue_drain(&self) -> QueueDrain<'_> {
        QueueDrain {
            engine: self,
            armed: false,
        }
    }

    /// Maps `buf` (blocking), calls `f` with its host address and size in bytes, and unmaps it.
    /// On a CPU device (PoCL) the address is the buffer's own memory, so that a large buffer
    /// can be advised to use huge pages before its first touch (see `blur`).
    pub(crate) fn with_mapped<T>(
        &self,
        buf: &Buffer<T>,
        count: usize,
        f: impl FnOnce(usize, usize),
    ) -> Result<()> {
        let bytes = count.max(1) * std::mem::size_of::<T>();
        let ptr = self.map(buf, opencl3::memory::CL_MAP_WRITE_INVALIDATE_REGION, bytes)?;
        f(ptr as usize, bytes);
        // SAFETY: `ptr` is the live mapping of `buf` made just above.
        unsafe { self.unmap(buf, ptr) }
    }

    /// Maps the first `bytes` of `buf` (blocking) with `flags`; returns the host address.
    fn map<T>(&self, buf: &Buffer<T>, flags: u64, bytes: usize) -> Result<cl_mem> {
        let mut ptr: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of a range inside the buffer (the callers' sizes).
        unsafe {
            self.queue
                .enqueue_map_buffer(buf, CL_BLOCKING, flags, 0, bytes, &mut ptr, &[])
        }
        .map_err(|e| Error::cl("clEnqueueMapBuffer", e.0))?;
        Ok(ptr)
    }

    /// Unmaps `ptr` from `buf`.
    ///
    /// # Safety
    /// `ptr` is a live mapping of `buf` made by [`map`](Self::map), not used after this.
    unsafe fn unmap<T>(&self, buf: &Buffer<T>, ptr: cl_mem) -> Result<()> {
        // SAFETY: as the caller vouches.
        unsafe { self.queue.enqueue_unmap_mem_object(buf.get(), ptr, &[]) }
            .map(|_| ())
            .map_err(|e| Error::cl("clEnqueueUnmapMemObject", e.0))
    }

    /// Blocking write of `data` at element `offset`. Large writes to a GPU go through the
    /// pinned staging slots (see [`write_staged`](Self::write_staged)).
    pub(crate) fn write<T: bytemuck::Pod>(
        &self,
        buf: &mut Buffer<T>,
        offset: usize,
        data: &[T],
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let at = offset * std::mem::size_of::<T>();
        if let Some(slot) = self.staged_slot(std::mem::size_of_val(data)) {
            return self.write_staged(buf.get(), at, bytemuck::cast_slice(data), slot);
        }
        // SAFETY: blocking, so `data` outlives the transfer; the range is inside the buffer.
        unsafe {
            self.queue
                .enqueue_write_buffer(buf, CL_BLOCKING, at, data, &[])
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueWriteBuffer", e.0))
    }

    /// The slot size a transfer of `bytes` is staged through, if it is: where staging is on,
    /// from `STAGING_MIN_BYTES` (or one slot, if smaller).
    fn staged_slot(&self, bytes: usize) -> Option<usize> {
        self.staging_slot
            .filter(|&s| bytes >= STAGING_MIN_BYTES.min(s))
    }

    /// The staging slots, made (and mapped) on first use.
    fn staging_slots(&self, slot: usize) -> Result<std::sync::MutexGuard<'_, Vec<StagingSlot>>> {
        let mut slots = lock(&self.staging);
        while slots.len() < 2 {
            // SAFETY: no host pointer; the driver allocates pinned host memory.
            let buf = unsafe {
                self.create_buffer::<u8>(
                    opencl3::memory::CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_ALLOC_HOST_PTR,
                    slot,
                    std::ptr::null_mut(),
                    "a staging slot",
                )?
            };
            // Mapped for the engine's life (unmapped in its `drop`).
            let flags = opencl3::memory::CL_MAP_READ | opencl3::memory::CL_MAP_WRITE;
            let ptr = self.map(&buf, flags, slot)?;
            slots.push(StagingSlot {
                buf,
                ptr: ptr as *mut u8,
                len: slot,
            });
        }
        Ok(slots)
    }

    /// Writes `src` at byte `at` of `dst` in chunks of one slot: the host copies chunk k into
    /// slot k % 2 (in parallel) while the driver moves chunk k - 1 from the other slot.
    fn write_staged(&self, dst: cl_mem, at: usize, src: &[u8], slot: usize) -> Result<()> {
        let slots = self.staging_slots(slot)?;
        let mut pending: [Option<Event>; 2] = [None, None];
        // Waited for on every way out: a slot is not reused, nor `src` given back, early.
        let mut drain = self.queue_drain();
        drain.armed = true;
        for (k, chunk) in src.chunks(slot).enumerate() {
            let s = &slots[k % 2];
            if let Some(e) = pending[k % 2].take() {
                e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
            }
            // SAFETY: the slot holds `s.len` >= chunk.len() bytes, and no transfer uses it now.
            let host = unsafe { std::slice::from_raw_parts_mut(s.ptr, chunk.len()) };
            parallel_copy(chunk, host);
            // SAFETY: `host` stays mapped and untouched until the event has completed (waited
            // for before the slot is reused, and by `drain`); the range is inside `dst`.
            let event = unsafe {
                cl3::command_queue::enqueue_write_buffer(
                    self.queue.get(),
                    dst,
                    0,
                    at + k * slot,
                    chunk.len(),
                    host.as_ptr() as *const std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|e| Error::cl("clEnqueueWriteBuffer", e))?;
            pending[k % 2] = Some(Event::new(event));
        }
        for e in pending.into_iter().flatten() {
            e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
        }
        drain.armed = false;
        drop(slots);
        Ok(())
    }

    /// Reads `out.len()` bytes from byte `at` of `src` in chunks of one slot: the driver moves
    /// chunk k + 1 into one slot while the host copies chunk k out of the other (in parallel).
    fn read_staged(&self, src: cl_mem, at: usize, out: &mut [u8], slot: usize) -> Result<()> {
        let slots = self.staging_slots(slot)?;
        let mut drain = self.queue_drain();
        drain.armed = true;
        let total = out.len();
        let chunks = total.div_ceil(slot);
        let len_of = |k: usize| slot.min(total - k * slot);
        let enqueue = |k: usize| -> Result<Event> {
            let s = &slots[k % 2];
            debug_assert!(len_of(k) <= s.len);
            // SAFETY: the slot is mapped and holds at least len_of(k) bytes; nothing else uses
            // it until this read has been waited for; the range is inside `src`.
            let event = unsafe {
                cl3::command_queue::enqueue_read_buffer(
                    self.queue.get(),
                    src,
                    0,
                    at + k * slot,
                    len_of(k),
                    s.ptr as *mut std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e))?;
            Ok(Event::new(event))
        };
        let mut next = Some(enqueue(0)?);
        for k in 0..chunks {
            let current = next.take();
            if k + 1 < chunks {
                // The other slot was emptied by the copy of chunk k - 1, just done.
                next = Some(enqueue(k + 1)?);
            }
            if let Some(e) = current {
                e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
            }
            // SAFETY: the read into this slot has completed; the next one goes to the other.
            let host = unsafe { std::slice::from_raw_parts(slots[k % 2].ptr, len_of(k)) };
            parallel_copy(host, &mut out[k * slot..k * slot + len_of(k)]);
        }
        drain.armed = false;
        drop(slots);
        Ok(())
    }

    /// Copies the first `count` elements of `src` into `dst` on the device, and waits for it.
    pub(crate) fn copy<T>(&self, src: &Buffer<T>, dst: &mut Buffer<T>, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie inside their buffers (the caller's `count`); the copy is waited
        // for before the buffers can go.
        let event = unsafe {
            self.queue
                .enqueue_copy_buffer(src, dst, 0, 0, count * std::mem::size_of::<T>(), &[])
        }
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0))?;
        self.finish(&[event])
    }

    /// Blocking read into `out` from element `offset`. Large reads from a GPU go through the
    /// pinned staging slots (see [`read_staged`](Self::read_staged)).
    pub(crate) fn read<T: bytemuck::Pod>(
        &self,
        buf: &Buffer<T>,
        offset: usize,
        out: &mut [T],
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let at = offset * std::mem::size_of::<T>();
        if let Some(slot) = self.staged_slot(std::mem::size_of_val(out)) {
            return self.read_staged(buf.get(), at, bytemuck::cast_slice_mut(out), slot);
        }
        // SAFETY: blocking, so `out` outlives the transfer; the range is inside the buffer.
        unsafe {
            self.queue
                .enqueue_read_buffer(buf, CL_BLOCKING, at, out, &[])
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0))
    }

    /// Fills `count` elements of `buf` with `value` (asynchronous, in queue order).
    pub(crate) fn fill<T: Copy>(
        &self,
        buf: &mut Buffer<T>,
        value: T,
        count: usize,
    ) -> Result<Event> {
        // SAFETY: the range is inside the buffer; the pattern is copied at enqueue.
        unsafe {
            self.queue.enqueue_fill_buffer(
                buf,
                &[value],
                0,
                count.max(1) * std::mem::size_of::<T>(),
                &[],
            )
        }
        .map_err(|e| Error::cl("clEnqueueFillBuffer", e.0))
    }

    /// How an image of `width`×`height` is cut so that each part fits one buffer: runs of whole
    /// rows when a row fits, else segments of single rows. Parts are in scan order.
    pub(crate) fn part_ranges(&self, width: u32, height: u32) -> Vec<PartRange> {
        let cap_px = (self.max_buffer_bytes / 4).max(1);
        let w = width as u64;
        if w == 0 || height == 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        if w <= cap_px {
            let per = (cap_px / w).min(height as u64) as u32;
            let mut y = 0;
            while y < height {
                let rows = per.min(height - y);
                out.push(PartRange {
                    first_row: y,
                    rows,
                    x0: 0,
                    cols: width,
                });
                y += rows;
            }
        } else {
            for y in 0..height {
                let mut x = 0u64;
                while x < w {
                    let cols = cap_px.min(w - x) as u32;
                    out.push(PartRange {
                        first_row: y,
                        rows: 1,
                        x0: x as u32,
                        cols,
                    });
                    x += cols as u64;
                }
            }
        }
        out
    }

    /// Writes the pixels of `r` from `view` into `buf`, packed.
    fn write_range(&self, buf: &mut Buffer<u32>, view: &ImageView<'_>, r: PartRange) -> Result<()> {
        let w = view.width() as usize;
        if let Some(bytes) = view.packed_bytes() {
            let start = (r.first_row as usize * w + r.x0 as usize) * 4;
            let part = &bytes[start..start + r.pixels() * 4];
            return self.write(buf, 0, as_u32_or_copy(part).as_ref());
        }
        // Padded rows: one rectangular transfer, no host copy.
        let origin = [0usize; 3];
        let host_origin = [r.x0 as usize * 4, r.first_row as usize, 0];
        let region = [r.cols as usize * 4, r.rows as usize, 1];
        // SAFETY: blocking; the rectangle lies inside both the view (checked at construction)
        // and the buffer (rows * cols pixels).
        unsafe {
            self.queue.enqueue_write_buffer_rect(
                buf,
                CL_BLOCKING,
                origin.as_ptr(),
                host_origin.as_ptr(),
                region.as_ptr(),
                r.cols as usize * 4,
                0,
                view.stride(),
                0,
                view_ptr(view),
                &[],
            )
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueWriteBufferRect", e.0))
    }

    /// Uploads a host view into device parts.
    pub(crate) fn upload(self: &Arc<Self>, view: &ImageView<'_>) -> Result<DeviceParts> {
        let mut parts = Vec::new();
        for range in self.part_ranges(view.width(), view.height()) {
            let mut buffer = self.buffer::<u32>(range.pixels(), "an image part")?;
            self.write_range(&mut buffer, view, range)?;
            parts.push(Part { buffer, range });
        }
        Ok(DeviceParts {
            owner: self.clone(),
            parts,
        })
    }

    /// Reads device parts back into packed RGBA8 bytes.
    pub(crate) fn download(&self, d: &DeviceParts, width: u32, height: u32) -> Result<Vec<u8>> {
        let parts: Vec<_> = d
            .parts
            .iter()
            .map(|p| {
                (
                    &p.buffer,
                    p.range.first_pixel(width) as usize,
                    p.range.pixels(),
                )
            })
            .collect();
        d.owner.read_rgba8(&parts, width as usize * height as usize)
    }

    /// Packed RGBA8 bytes of `pixels` pixels from `parts` (a buffer, the first pixel it holds
    /// and how many), read straight into the result's memory, advised to use huge pages: one
    /// copy into few page faults rather than a copy into 4 KiB pages and a second copy into
    /// the bytes. The bytes are read as words where they are 4-aligned, as allocations this
    /// large are; otherwise through a word buffer.
    pub(crate) fn read_rgba8(
        &self,
        parts: &[(&Buffer<u32>, usize, usize)],
        pixels: usize,
    ) -> Result<Vec<u8>> {
        let mut bytes = crate::cpu::alloc_zeroed::<u8>(pixels * 4);
        if let Ok(words) = bytemuck::try_cast_slice_mut::<u8, u32>(&mut bytes) {
            for &(buf, start, count) in parts {
                self.read(buf, 0, &mut words[start..start + count])?;
            }
            return Ok(bytes);
        }
        let mut words = vec![0u32; pixels];
        for &(buf, start, count) in parts {
            self.read(buf, 0, &mut words[start..start + count])?;
        }
        bytes.copy_from_slice(bytemuck::cast_slice(&words));
        Ok(bytes)
    }

    /// Runs `f(buffer, range)` over the image in parts that fit one buffer each, in scan order.
    ///
    /// A host image is uploaded part by part into one reused buffer; a device image of this
    /// engine is used in place; any other device image is downloaded first.
    pub(crate) fn for_each_part(
        self: &Arc<Self>,
        input: ImageInput<'_>,
        mut f: impl FnMut(&Buffer<u32>, PartRange) -> Result<()>,
    ) -> Result<()> {
        let staged;
        let view = match input {
            ImageInput::Device(dev) => match &dev.storage {
                Storage::OpenCl(parts) if Arc::ptr_eq(&parts.owner, self) => {
                    for p in &parts.parts {
                        f(&p.buffer, p.range)?;
                    }
                    return Ok(());
                }
                _ => {
                    staged = host_copy(dev)?;
                    ImageView::from(&staged)
                }
            },
            ImageInput::Host(v) => v,
        };
        let ranges = self.part_ranges(view.width(), view.height());
        // Packed, 4-aligned pixels are read where they are.
        let words = view
            .packed_bytes()
            .and_then(|b| bytemuck::try_cast_slice::<u8, u32>(b).ok());
        if let Some(words) = words.filter(|_| self.uses_host_memory()) {
            // Dropped before this returns: no kernel reads the caller's pixels after that.
            let mut drain = self.queue_drain();
            drain.armed = true;
            for r in ranges {
                let start = r.first_pixel(view.width()) as usize;
                // SAFETY: the pixels are borrowed for this call, and `drain` waits for every
                // kernel before it returns.
                let buffer = unsafe {
                    self.buffer_over_host_read_only(
                        &words[start..start + r.pixels()],
                        "an image part",
                    )?
                };
                f(&buffer, r)?;
            }
            return Ok(());
        }
        let Some(largest) = ranges.iter().map(|r| r.pixels()).max() else {
            return Ok(());
        };
        let mut buffer = self.buffer::<u32>(largest, "an image part")?;
        for r in ranges {
            self.write_range(&mut buffer, &view, r)?;
            f(&buffer, r)?;
        }
        Ok(())
    }
}

/// Waits for every command of an engine's queue (other threads' too) when dropped while
/// `armed`, ignoring errors. Held by a function whose kernels use host memory that it owns or
/// borrows (buffers over host memory), so that no way out of it, an error included, frees or
/// hands back that memory while a kernel may still use it: declare it after that memory, so
/// that it is dropped first.
pub(crate) struct QueueDrain<'a> {
    engine: &'a ClEngine,
    pub(crate) armed: bool,
}

impl Drop for QueueDrain<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.engine.queue.finish();
        }
    }
}

/// A rectangle of an image held in one buffer: `rows` whole rows, or a segment of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartRange {
    pub first_row: u32,
    pub rows: u32,
    pub x0: u32,
    pub cols: u32,
}

impl PartRange {
    pub(crate) fn pixels(&self) -> usize {
        self.rows as usize * self.cols as usize
    }
    /// Scan-order index of the first pixel; the part's pixels are consecutive in scan order.
    pub(crate) fn first_pixel(&self, width: u32) -> u64 {
        self.first_row as u64 * width as u64 + self.x0 as u64
    }
}

/// Packed bytes as u32 pixels: borrowed when aligned, copied otherwise.
fn as_u32_or_copy(bytes: &[u8]) -> std::borrow::Cow<'_, [u32]> {
    match bytemuck::try_cast_slice::<u8, u32>(bytes) {
        Ok(px) => std::borrow::Cow::Borrowed(px),
        Err(_) => std::borrow::Cow::Owned(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
    }
}

fn view_ptr(view: &ImageView<'_>) -> *mut std::ffi::c_void {
    if view.height() == 0 {
        return std::ptr::null_mut();
    }
    view.row(0).as_ptr() as *mut std::ffi::c_void
}

/// Host pixels of any device image, whoever holds it.
pub(crate) fn host_copy(dev: &DeviceImage) -> Result<image::RgbaImage> {
    let bytes = match &dev.storage {
        Storage::Host(b) => b.clone(),
        Storage::OpenCl(parts) => parts.owner.download(parts, dev.width, dev.height)?,
    };
    image::RgbaImage::from_raw(dev.width, dev.height, bytes).ok_or(Error::ImageTooLarge {
        width: dev.width as u64,
        height: dev.height as u64,
        reason: "device image size does not match its pixels",
    })
}

/// One buffer of whole rows of a device image.
pub(crate) struct Part {
    pub buffer: Buffer<u32>,
    pub range: PartRange,
}

/// The buffers of a device image and the engine that owns them.
pub(crate) struct DeviceParts {
    pub owner: Arc<ClEngine>,
    pub parts: Vec<Part>,
}

impl fmt::Debug for DeviceParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceParts({} part(s) on {})",
            self.parts.len(),
            self.owner.info.name
        )
    }
}

/// Test helpers: what a built kernel takes on this device.
#[cfg(test)]
impl ClEngine {
    /// The local memory kernel `kernel` of `program` built with `-D CLPIX_VARIANT=variant` takes
    /// on this device (`CL_KERNEL_LOCAL_MEM_SIZE`: its static local arrays, here).
    pub(crate) fn kernel_local_bytes(
        &self,
        (program, variant): (&'static str, u32),
        kernel: &str,
    ) -> Result<u64> {
        let prog = self.program_variant(program, variant)?;
        let k = Kernel::create(&prog, kernel).map_err(|e| Error::cl("clCreateKernel", e.0))?;
        k.get_local_mem_size(self.device_id as cl_device_id)
            .map_err(|e| Error::cl("clGetKernelWorkGroupInfo", e.0))
    }

    /// Checks, on every device in the GPU layout, that kernels take the local memory the host
    /// plans for them (the host sizes their tiles on that figure, with 1 KiB of margin). `plans`
    /// lists, for an engine, each kernel as (description, (program, variant), kernel, planned
    /// bytes). A device that reports 0 (PoCL 5.0, for kernels declaring tens of KiB) is skipped
    /// with a message; where a device is required (`CLPIX_REQUIRE_OPENCL`) one must have been
    /// checked (PoCL 3.1 in CI reports the figure).
    pub(crate) fn assert_local_bytes_as_planned(
        plans: impl Fn(&ClEngine) -> Vec<(String, (&'static str, u32), &'static str, u64)>,
    ) {
        let required = std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0");
        let devices = match crate::devices() {
            Ok(d) => d,
            Err(e) if required => panic!("OpenCL required: {e}"),
            Err(_) => return,
        };
        let mut checked = 0;
        for d in &devices {
            let cl = ClEngine::open(d, None, crate::KernelLayout::Coalesced).unwrap();
            for (what, program, kernel, planned) in plans(&cl) {
                let bytes = cl.kernel_local_bytes(program, kernel).unwrap();
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

    fn engines() -> Vec<Arc<ClEngine>> {
        let required = std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0");
        match devices() {
            Ok(list) => list
                .iter()
                .map(|d| {
                    Arc::new(ClEngine::open(d, None, KernelLayout::Auto).expect("device opens"))
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
            let e = cl.launch(
                "reduce",
                "luma_stats",
                &[Arg::buf(&buf)],
                cl.tuning.wg,
                cl.tuning.wg,
            );
            assert!(matches!(e, Err(Error::OpenCl { .. })), "{e:?}");
            // A wrongly sized argument (4 bytes for a buffer): CL_INVALID_ARG_SIZE from
            // clSetKernelArg, where opencl3's ExecuteKernel would panic.
            let e = cl.launch(
                "reduce",
                "luma_stats",
                &[Arg::U32(1), Arg::U32(0), Arg::buf(&buf)],
                1,
                1,
            );
            assert!(matches!(e, Err(Error::OpenCl { .. })), "{e:?}");
            // No such kernel.
            let e = cl.launch("reduce", "no_such_kernel", &[], 1, 1);
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
                "reduce",
                "luma_stats",
                &[Arg::buf(&buf), Arg::U32(0), Arg::buf(&buf)],
                too_big,
                too_big,
            );
            assert!(matches!(e, Err(Error::OpenCl { .. })), "{e:?}");
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
                    "reduce",
                    "luma_stats",
                    &[Arg::buf(&input), Arg::U32(64), Arg::buf(&out)],
                    cl.tuning.wg,
                    cl.tuning.wg,
                )
                .unwrap();
            cl.finish(&[ev]).unwrap();
            let mut host = [0u64; 2];
            cl.read(&out, 0, &mut host).unwrap();
            let expected: u64 = data
                .iter()
                .map(|&p| crate::luminance::luma_u32(p) as u64)
                .sum();
            assert_eq!(host[0], expected, "{}", cl.info.name);
        }
    }
}
