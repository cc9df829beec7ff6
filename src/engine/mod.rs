//! The [`Engine`]: which backend runs the operations, and how it was chosen.

use crate::device::download_f32;
use crate::device::{ArrayStorage, DeviceArray, check_array_len, download};
use crate::device::{DeviceImageF32, PooledBuffer, StorageF32};
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::opencl::{self, ClEngine, DeviceInfo};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

mod held;
mod trust;
mod window;
pub use trust::DriverVerdict;
pub(crate) use trust::Family;

/// Which kind of backend an engine runs on.
///
/// ```
/// let engine = clpix::Engine::cpu();
/// assert_eq!(engine.backend().kind(), clpix::BackendKind::Cpu);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// rayon on the host CPU.
    Cpu,
    /// An OpenCL device.
    OpenCl,
}

/// What an engine runs on and, for an automatic choice, why.
///
/// Its `Display` reads like `OpenCL: NVIDIA H200 (NVIDIA CUDA 580.159.04)` or
/// `CPU: rayon, 16 threads (auto: only a CPU OpenCL device (PoCL) was found; rayon is as fast)`.
///
/// ```
/// let engine = clpix::Engine::cpu();
/// assert!(engine.backend().to_string().starts_with("CPU: rayon"));
/// ```
#[derive(Debug, Clone)]
pub struct BackendInfo {
    pub(crate) kind: BackendKind,
    pub(crate) description: String,
    pub(crate) reason: Option<String>,
}

impl BackendInfo {
    /// CPU or OpenCL.
    ///
    /// ```
    /// assert_eq!(clpix::Engine::cpu().backend().kind(), clpix::BackendKind::Cpu);
    /// ```
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// Why the automatic choice landed here (`None` for an explicit choice).
    ///
    /// ```
    /// assert!(clpix::Engine::cpu().backend().reason().is_none());
    /// ```
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

impl fmt::Display for BackendInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)?;
        if let Some(r) = &self.reason {
            write!(f, " ({r})")?;
        }
        Ok(())
    }
}

#[derive(Debug)]
pub(crate) enum Backend {
    Cpu,
    OpenCl(Arc<ClEngine>),
}

/// Runs clpix's operations on one backend: an OpenCL device, or the CPU with rayon.
///
/// Both backends give identical results, bit for bit; the CPU path is the specification the
/// OpenCL kernels are tested against. An `Engine` is `Send + Sync`: share one between threads
/// (kernels are compiled once per engine, on first use of each operation).
///
/// ```
/// use clpix::Engine;
/// let engine = Engine::new()?; // OpenCL GPU if there is one, else rayon
/// println!("running on {}", engine.backend());
/// let img = image::RgbaImage::from_fn(64, 48, |x, y| image::Rgba([x as u8, y as u8, 0, 255]));
/// let hit = engine.extreme(&img, clpix::Extreme::Brightest)?;
/// assert_eq!((hit.x, hit.y), (63, 47));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    pub(crate) backend: Backend,
    pub(crate) info: BackendInfo,
    /// An automatic engine answers from the CPU when a kernel fails to build or needs more than
    /// the device allows, and says so.
    pub(crate) fallback_on_device_error: bool,
    /// Whether small calls whose programs are not built yet answer from the CPU (see
    /// [`dispatch`](Self::dispatch)): engines made by `Engine::new`, or configured with
    /// `cpu_fallback`.
    pub(crate) answer_while_building: bool,
    /// Whether this engine probes a kernel family's first call on its device (see
    /// [`Family`]): engines opened on a device; not the CPU engine, nor the probes' own view.
    pub(crate) checks_drivers: bool,
}

pub(crate) fn cpu_description() -> String {
    format!("CPU: rayon, {} threads", rayon::current_num_threads())
}

pub(crate) fn cl_description(d: &DeviceInfo) -> String {
    format!("OpenCL: {} ({} {})", d.name, d.platform, d.driver_version)
}

impl Engine {
    /// The rayon backend on the host CPU (uses rayon's global thread pool).
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// assert_eq!(engine.backend().kind(), clpix::BackendKind::Cpu);
    /// ```
    pub fn cpu() -> Engine {
        Engine {
            backend: Backend::Cpu,
            info: BackendInfo {
                kind: BackendKind::Cpu,
                description: cpu_description(),
                reason: None,
            },
            fallback_on_device_error: false,
            answer_while_building: false,
            checks_drivers: false,
        }
    }

    /// What runs, and why (see [`BackendInfo`]).
    ///
    /// ```
    /// println!("{}", clpix::Engine::cpu().backend());
    /// ```
    pub fn backend(&self) -> &BackendInfo {
        &self.info
    }

    /// The folder of the persistent program cache this engine loads built kernels from and
    /// stores them in (`CLPIX_CACHE_DIR`, else `$XDG_CACHE_HOME/clpix`, `~/.cache/clpix` or the
    /// temporary folder's `clpix`); `None` for the CPU engine, with `CLPIX_CACHE=off`, or
    /// where no folder is usable. Each build and each load is a `log` info line with its time.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// if let Some(dir) = engine.program_cache_dir() {
    ///     println!("kernels cached in {}", dir.display());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn program_cache_dir(&self) -> Option<&std::path::Path> {
        match &self.backend {
            Backend::OpenCl(cl) => cl.cache_dir(),
            Backend::Cpu => None,
        }
    }

    /// Every OpenCL program this engine has made ready so far, in order: which, whether it was
    /// compiled or loaded from the persistent cache, and how long that took (empty for the CPU
    /// engine). Each is also a `log` info line.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// for p in engine.programs() {
    ///     println!("{} {:?} {:.1} ms", p.program, p.origin, p.millis);
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn programs(&self) -> Vec<crate::opencl::ProgramRecord> {
        match &self.backend {
            Backend::OpenCl(cl) => cl.records(),
            Backend::Cpu => Vec::new(),
        }
    }

    /// Waits until every program building in the background, and every program binary being
    /// stored in the persistent cache, has finished. The first GPU blur
    /// at a radius runs the generic passes while its radius-built programs build on a thread
    /// (same bits; `build_wait=1` waits instead); a benchmark or a caller that wants
    /// the specialised kernels from the next call on calls this first, or
    /// [`warm_up`](Self::warm_up). Dropping the engine waits too; an engine that is never
    /// dropped (a `static`) should be waited for before the process exits: a build still
    /// inside NVIDIA's compiler when the C library runs its exit-time teardown crashes the
    /// process (SIGSEGV after `main` has returned).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::new(64, 64);
    /// engine.gaussian_blur(&img, &clpix::GaussianBlur::new(7))?;
    /// engine.wait_for_builds(); // the next blur at w = 7 takes its own kernels
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn wait_for_builds(&self) {
        if let Backend::OpenCl(cl) = &self.backend {
            cl.wait_for_builds();
        }
    }

    /// The OpenCL device, for an OpenCL engine.
    ///
    /// ```
    /// assert!(clpix::Engine::cpu().device().is_none());
    /// ```
    pub fn device(&self) -> Option<&DeviceInfo> {
        match &self.backend {
            Backend::OpenCl(cl) => Some(&cl.info),
            Backend::Cpu => None,
        }
    }

    /// Kernel time of this thread's last OpenCL operation on any engine, from profiling events
    /// (transfers excluded). `None` after a CPU operation.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// engine.extreme(&image::RgbaImage::new(2, 2), clpix::Extreme::Brightest)?;
    /// assert!(engine.last_kernel_time().is_none());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn last_kernel_time(&self) -> Option<Duration> {
        opencl::last_kernel_ns().map(|(sum, _)| Duration::from_nanos(sum))
    }

    /// Device time of this thread's last OpenCL operation from its first kernel's start to its
    /// last kernel's end (profiling events): unlike [`last_kernel_time`](Self::last_kernel_time),
    /// it counts the device's gaps between kernels, as a peer's timer around the whole call
    /// would. `None` after an operation on the CPU path.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// engine.compact(&image::RgbaImage::new(64, 64), 0, clpix::CompactOrder::ScanOrder)?;
    /// if let (Some(sum), Some(span)) = (engine.last_kernel_time(), engine.last_kernel_span()) {
    ///     println!("kernels {sum:?}, first start to last end {span:?}");
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn last_kernel_span(&self) -> Option<Duration> {
        opencl::last_kernel_ns().map(|(_, span)| Duration::from_nanos(span))
    }

    /// Copies `data` to the engine: a device buffer on OpenCL, host memory on the CPU engine.
    ///
    /// An error if the array is larger than one device buffer may be, or has more than
    /// `u32::MAX` elements.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&[7u32, 8, 9])?;
    /// assert_eq!(engine.download_array(&a)?, vec![7, 8, 9]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn upload_array(&self, data: &[u32]) -> Result<DeviceArray<u32>> {
        let _one = self.one_call_at_a_time();
        check_array_len(data.len())?;
        let storage = match &self.backend {
            Backend::Cpu => ArrayStorage::Host(data.to_vec()),
            Backend::OpenCl(cl) => {
                let mut pooled = PooledBuffer::take(cl, data.len())?;
                if let Some(buf) = pooled.buf.as_mut() {
                    cl.write(buf, 0, data)?;
                }
                ArrayStorage::OpenCl(pooled)
            }
        };
        Ok(DeviceArray {
            len: data.len(),
            storage,
        })
    }

    /// Reads an array back into host memory (from whichever engine holds it).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&[1u32, 2])?;
    /// assert_eq!(engine.download_array(&a)?, vec![1, 2]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download_array(&self, array: &DeviceArray<u32>) -> Result<Vec<u32>> {
        let _one = self.one_call_at_a_time();
        download(array)
    }

    /// Copies an RGBA f32 image to the engine: one device buffer on OpenCL (an error, before
    /// any copy, for an image larger than one buffer may be), host memory on the CPU engine.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::Rgba32FImage::from_pixel(3, 2, image::Rgba([0.1, 0.2, 0.3, 1.0]));
    /// assert_eq!(engine.download_f32(&engine.upload_f32(&img)?)?, img);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn upload_f32(&self, img: &image::Rgba32FImage) -> Result<DeviceImageF32> {
        let _one = self.one_call_at_a_time();
        let (width, height) = img.dimensions();
        check_pixel_count(width, height)?;
        let storage = match &self.backend {
            Backend::Cpu => StorageF32::Host(img.clone()),
            Backend::OpenCl(cl) => {
                let values = img.as_raw().len();
                let needed = (values.max(1) as u64).saturating_mul(4);
                if needed > cl.max_buffer_bytes {
                    return Err(Error::TooLargeForDevice {
                        what: "an f32 image on the device, which is one buffer \
                               (Engine::gaussian_blur_f32 blurs larger ones from the host, in \
                               bands)",
                        needed,
                        limit: cl.max_buffer_bytes,
                    });
                }
                let mut buffer = cl.image_buffer::<f32>(values, "an f32 image")?;
                if values > 0 {
                    cl.write(&mut buffer, 0, img.as_raw())?;
                }
                StorageF32::OpenCl {
                    owner: cl.clone(),
                    buffer,
                }
            }
        };
        Ok(DeviceImageF32 {
            width,
            height,
            storage,
        })
    }

    /// Reads an f32 image back into host memory (from whichever engine holds it).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::Rgba32FImage::from_pixel(2, 2, image::Rgba([-1.5, 0.0, 2.5, 1.0]));
    /// assert_eq!(engine.download_f32(&engine.upload_f32(&img)?)?, img);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download_f32(&self, img: &DeviceImageF32) -> Result<image::Rgba32FImage> {
        let _one = self.one_call_at_a_time();
        download_f32(img)
    }

    /// The one path of an operation whose input an engine may hold (a device array or image):
    /// where this OpenCL engine holds it (`held` gives its buffers), `device` runs through
    /// [`dispatch`](Self::dispatch), with `cpu` (the CPU path on the input read back) as its
    /// fallback; on the CPU engine, `cpu`; where another engine holds it, `elsewhere` (the
    /// operation's path for an input in host memory, which reads it back).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dispatch_held<B, T>(
        &self,
        family: &'static Family,
        call: &dyn std::any::Any,
        operation: &'static str,
        work: u64,
        held: impl FnOnce(&Arc<ClEngine>) -> Option<Result<B>>,
        cpu: impl FnOnce() -> Result<T>,
        device: impl FnOnce(&Arc<ClEngine>, B) -> Result<T>,
        elsewhere: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        match &self.backend {
            Backend::Cpu => {
                opencl::set_last_kernel_ns(None);
                cpu()
            }
            Backend::OpenCl(cl) => match held(cl) {
                Some(buffers) => {
                    let buffers = buffers?;
                    self.dispatch(family, call, operation, work, cpu, |cl| device(cl, buffers))
                }
                None => elsewhere(),
            },
        }
    }

    /// Runs `cpu` on the CPU backend and `cl` on an OpenCL backend, for a call over `work`
    /// pixels or elements. An automatic engine whose kernel fails to build, or needs more than
    /// the device allows ([`Error::DeviceLimit`]), answers from the CPU instead (identical
    /// results), with a warning; and one whose call needs a program not built yet answers a
    /// call of at most [`Tuning::host_while_building`](crate::tuning::Tuning::host_while_building)
    /// `work` from the CPU while the program builds on a thread of its own.
    ///
    /// A family whose known-answer probe answered wrong on this device and driver answers from
    /// the CPU (see [`Family`]); `call` is what the probe needs of this call.
    pub(crate) fn dispatch<T>(
        &self,
        family: &'static Family,
        call: &dyn std::any::Any,
        operation: &'static str,
        work: u64,
        cpu: impl FnOnce() -> Result<T>,
        cl: impl FnOnce(&Arc<ClEngine>) -> Result<T>,
    ) -> Result<T> {
        match &self.backend {
            Backend::Cpu => {
                opencl::set_last_kernel_ns(None);
                cpu()
            }
            Backend::OpenCl(c) => {
                let _one = c.one_call_at_a_time();
                let deferring = self.answer_while_building && c.defers_builds_for(work);
                if !self.trusts(c, (family, operation), call, deferring) {
                    opencl::set_last_kernel_ns(None);
                    return cpu();
                }
                let result = match deferring {
                    true => opencl::with_builds_deferred(c, || cl(c)),
                    false => cl(c),
                };
                match result {
                    // (A probe's view answers nothing from the CPU: its caller decides.)
                    Err(Error::ProgramBuilding { program, .. }) if self.answer_while_building => {
                        log::info!(
                            "clpix: {operation} answered by the CPU while the {program} \
                             program builds"
                        );
                        opencl::set_last_kernel_ns(None);
                        cpu()
                    }
                    Err(
                        e @ (Error::KernelBuild { .. }
                        | Error::KernelSource { .. }
                        | Error::DeviceLimit { .. }),
                    ) if self.fallback_on_device_error => {
                        log::warn!("clpix: {operation} runs on the CPU: {e}");
                        opencl::set_last_kernel_ns(None);
                        cpu()
                    }
                    r => r,
                }
            }
        }
    }
}

impl Engine {
    /// Held through a transfer on drivers whose operations must not overlap (rusticl: see
    /// `ClEngine::one_call_at_a_time`); nothing elsewhere.
    fn one_call_at_a_time(&self) -> Option<opencl::CallGuard> {
        match &self.backend {
            Backend::OpenCl(c) => Some(c.one_call_at_a_time()),
            Backend::Cpu => None,
        }
    }
}

impl Drop for Engine {
    /// Forgets the builds queued for calls answered from the CPU (see
    /// [`Tuning::host_while_building`](crate::tuning::Tuning::host_while_building)) that have not
    /// started, then waits for the engine's background builds and program cache stores: a
    /// process that returns from `main` while a thread is inside the driver's compiler may crash
    /// on exit (seen with NVIDIA's driver: a child process that ran one blur died without a
    /// word).
    fn drop(&mut self) {
        if self.is_probe_view() {
            return; // the engine it looks through does this
        }
        if let Backend::OpenCl(cl) = &self.backend {
            cl.drop_deferred_queue();
        }
        self.wait_for_builds();
    }
}
