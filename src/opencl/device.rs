//! Device discovery: every OpenCL device of every platform, described once per process.

use crate::error::{Error, Result};
use opencl3::device::{
    CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
    CL_FP_DENORM, Device,
};
use opencl3::types::cl_device_id;
use std::fmt;
use std::sync::OnceLock;

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
    /// Whether single-precision denormals are kept (`CL_FP_DENORM` in
    /// `CL_DEVICE_SINGLE_FP_CONFIG`): the f32 blur needs them to give the CPU's bits.
    pub f32_denormals: bool,
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

pub(super) struct Found {
    pub(super) info: DeviceInfo,
    /// `cl_device_id` as an address: device ids are process-wide handles, valid for its life.
    pub(super) id: usize,
}

/// Platforms are enumerated once per process: ocl-icd with PoCL 3.1 returned empty device lists
/// to some of 8 threads enumerating at the same time.
static DISCOVERY: OnceLock<Result<Vec<Found>>> = OnceLock::new();

/// Held from enqueue to completion of each kernel on drivers where kernels of two queues
/// must not run at once (see [`ClEngine::launch`]).
pub(super) fn discovered() -> Result<&'static [Found]> {
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
    let started = std::time::Instant::now();
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
    log::debug!(
        "clpix: {} OpenCL platform(s) listed in {:.1} ms",
        platforms.len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    let mut found = Vec::new();
    for platform in &platforms {
        let listed = std::time::Instant::now();
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
        log::debug!(
            "clpix: OpenCL platform {pname}: devices listed and described in {:.1} ms",
            listed.elapsed().as_secs_f64() * 1e3
        );
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
        f32_denormals: d.single_fp_config().unwrap_or(0) & CL_FP_DENORM != 0,
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

/// Who made a device, as far as clpix cares: where vendor-only kernels (NVIDIA's inline PTX)
/// may be built, and which driver quirks apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vendor {
    /// NVIDIA's OpenCL driver (inline PTX builds).
    Nvidia,
    /// PoCL (Portable Computing Language), on CPUs.
    Pocl,
    /// The Oclgrind simulator (its checks do not see rectangular writes: see `write_range`).
    Oclgrind,
    /// Intel's OpenCL runtimes (their compiler crashed building on several threads at once).
    Intel,
    /// Mesa's rusticl (llvmpipe on CPUs; radeonsi and iris GPUs where the vendors' drivers are
    /// absent).
    Rusticl,
    /// Any other implementation: the portable kernels only.
    Other,
}

impl Vendor {
    /// The vendor of `info`'s platform.
    pub(crate) fn of(info: &DeviceInfo) -> Vendor {
        if info.platform.contains("NVIDIA") {
            Vendor::Nvidia
        } else if info.platform.contains("Portable Computing Language") {
            Vendor::Pocl
        } else if info.platform.contains("Oclgrind") {
            Vendor::Oclgrind
        } else if info.platform == "rusticl" {
            Vendor::Rusticl
        } else if info.platform.contains("Intel") {
            Vendor::Intel
        } else {
            Vendor::Other
        }
    }
}
