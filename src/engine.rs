//! The [`Engine`]: which backend runs the operations, and how it was chosen.

use crate::cl::{self, ClEngine, Defines, DeviceInfo, DeviceType};
use crate::config::{env_buffer_cap, EngineConfig, EnvChoice, KernelLayout, Tuning};
use crate::device::{check_array_len, download, host_copy, ArrayStorage, DeviceArray};
use crate::device::{DeviceImage, DeviceImageF32, ImageInput, PooledBuffer, Storage, StorageF32};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageView};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

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
    kind: BackendKind,
    description: String,
    reason: Option<String>,
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
/// let hit = engine.brightest(&img)?;
/// assert_eq!((hit.x, hit.y), (63, 47));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug)]
pub struct Engine {
    pub(crate) backend: Backend,
    info: BackendInfo,
    /// An automatic engine answers from the CPU when a kernel fails to build or needs more than
    /// the device allows, and says so.
    fallback_on_device_error: bool,
    /// Whether small calls whose programs are not built yet answer from the CPU (see
    /// [`dispatch`](Self::dispatch)): engines made by `Engine::new`, or configured with
    /// `cpu_fallback`.
    answer_while_building: bool,
}

fn cpu_description() -> String {
    format!("CPU: rayon, {} threads", rayon::current_num_threads())
}

fn cl_description(d: &DeviceInfo) -> String {
    format!("OpenCL: {} ({} {})", d.name, d.platform, d.driver_version)
}

impl Engine {
    /// Chooses automatically, honouring `CLPIX_BACKEND=auto|cpu|opencl` and
    /// `CLPIX_DEVICE=<index or name substring>`.
    ///
    /// Auto takes the best GPU or accelerator. With only a CPU OpenCL driver (PoCL) it takes the
    /// rayon path, which measured as fast or faster on the same cores. No loader, no platform,
    /// no device, or a kernel that does not build: auto falls back to the CPU, logs a warning and
    /// says why in [`backend()`](Self::backend). An explicit `opencl` returns the error instead.
    ///
    /// On a GPU or accelerator, the engine also answers a call of at most
    /// [`Tuning::host_while_building`](crate::Tuning::host_while_building) pixels or elements
    /// (2^20 by default) from the CPU, with the same bits, when a program the call needs is
    /// neither built nor in the program cache, and builds it on a thread of its own for the
    /// calls after: a short process does not wait seconds for a cold driver's compiler.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// println!("{}", engine.backend());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn new() -> Result<Engine> {
        let choice = EnvChoice::from_env()?;
        if choice.backend == "cpu" {
            return Ok(Engine::cpu());
        }
        // Read before any device is opened: a bad tuning value is an error, never a fallback.
        let tuning = Tuning::from_env()?;
        let config = EngineConfig {
            max_buffer_bytes: choice.max_buffer_bytes,
            layout: KernelLayout::Auto,
            tuning: Some(tuning),
            cpu_fallback: choice.backend != "opencl",
        };
        match choice.backend.as_str() {
            "opencl" => {
                let info = match &choice.device {
                    Some(q) => cl::find_device(q)?,
                    None => cl::best_device()?,
                };
                // Errors surface, but small first calls need not wait for a compiler either.
                let mut engine = Engine::open_config(&info, &config, None)?;
                engine.answer_while_building = true;
                Ok(engine)
            }
            _ => Ok(Engine::auto(choice.device.as_deref(), &config)),
        }
    }

    fn auto(device: Option<&str>, config: &EngineConfig) -> Engine {
        let fallback = |why: String| {
            log::warn!("clpix: using the CPU backend: {why}");
            Engine {
                backend: Backend::Cpu,
                info: BackendInfo {
                    kind: BackendKind::Cpu,
                    description: cpu_description(),
                    reason: Some(format!("auto: {why}")),
                },
                fallback_on_device_error: false,
                answer_while_building: false,
            }
        };
        let info = match device {
            Some(q) => cl::find_device(q),
            None => cl::best_device(),
        };
        let info = match info {
            Ok(i) => i,
            Err(e) => return fallback(e.to_string()),
        };
        if device.is_none() && info.device_type == DeviceType::Cpu {
            return fallback(format!(
                "only a CPU OpenCL device ({}) was found; rayon on the same cores is as fast",
                info.name
            ));
        }
        let why = format!("auto: best device, a {}", info.device_type);
        match Engine::open_config(&info, config, Some(why)) {
            Ok(e) => e,
            Err(e) => fallback(e.to_string()),
        }
    }

    /// Opens a device with the environment's tuning, in the automatic layout.
    fn open_env(info: &DeviceInfo, cap: Option<u64>) -> Result<Engine> {
        let config = EngineConfig {
            max_buffer_bytes: cap,
            ..EngineConfig::default()
        };
        Engine::open_config(info, &config, None)
    }

    /// Opens a device and builds the reduction program, so that a driver whose compiler fails
    /// is found at construction rather than at the first call.
    fn open_config(
        info: &DeviceInfo,
        config: &EngineConfig,
        reason: Option<String>,
    ) -> Result<Engine> {
        let cl = Arc::new(ClEngine::open(
            info,
            config.max_buffer_bytes,
            config.layout,
            config.resolved_tuning()?,
        )?);
        // The first kernel most callers run: a device whose compiler fails shows it here.
        cl.program_for(crate::ops::reduce::kernels::LUMA_ARGBEST, Defines::NONE)?;
        Ok(Engine {
            backend: Backend::OpenCl(cl),
            info: BackendInfo {
                kind: BackendKind::OpenCl,
                description: cl_description(info),
                reason,
            },
            fallback_on_device_error: config.cpu_fallback,
            answer_while_building: config.cpu_fallback,
        })
    }

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
        }
    }

    /// The best OpenCL device of any type (GPU, then accelerator, then CPU); an error if there
    /// is none or its compiler fails. Honours `CLPIX_MAX_BUFFER_BYTES`.
    ///
    /// ```
    /// match clpix::Engine::opencl() {
    ///     Ok(e) => println!("{}", e.backend()),
    ///     Err(e) => println!("no OpenCL: {e}"),
    /// }
    /// ```
    pub fn opencl() -> Result<Engine> {
        Engine::open_env(&cl::best_device()?, env_buffer_cap()?)
    }

    /// A specific device from [`devices()`](crate::devices). Honours `CLPIX_MAX_BUFFER_BYTES`.
    ///
    /// ```
    /// for d in clpix::devices().unwrap_or_default() {
    ///     let engine = clpix::Engine::with_device(&d)?;
    ///     println!("{}", engine.backend());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_device(device: &DeviceInfo) -> Result<Engine> {
        Engine::open_env(device, env_buffer_cap()?)
    }

    /// Like [`with_device`](Self::with_device), with single buffers capped at
    /// `max_buffer_bytes`: larger images are processed in parts (and give the same results).
    ///
    /// ```
    /// for d in clpix::devices().unwrap_or_default() {
    ///     let engine = clpix::Engine::with_device_capped(&d, 1 << 20)?;
    ///     println!("{}", engine.backend());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_device_capped(device: &DeviceInfo, max_buffer_bytes: u64) -> Result<Engine> {
        Engine::open_env(device, Some(max_buffer_bytes))
    }

    /// A specific device with explicit settings (see [`EngineConfig`]): the tuning variables are
    /// read only where `config.tuning` is `None`, and `CLPIX_MAX_BUFFER_BYTES` not at all.
    ///
    /// ```
    /// use clpix::{Engine, EngineConfig, KernelLayout};
    /// let config = EngineConfig {
    ///     max_buffer_bytes: Some(64 << 20),
    ///     layout: KernelLayout::Auto,
    ///     tuning: None,
    ///     cpu_fallback: true,
    /// };
    /// for d in clpix::devices().unwrap_or_default() {
    ///     println!("{}", Engine::with_device_config(&d, &config)?.backend());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_device_config(device: &DeviceInfo, config: &EngineConfig) -> Result<Engine> {
        let reason = match config.layout {
            KernelLayout::Auto => None,
            l => Some(format!("kernel layout forced to {l:?}")),
        };
        Engine::open_config(device, config, reason)
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
    pub fn programs(&self) -> Vec<crate::ProgramRecord> {
        match &self.backend {
            Backend::OpenCl(cl) => cl.records(),
            Backend::Cpu => Vec::new(),
        }
    }

    /// Waits until every program building in the background, and every program binary being
    /// stored in the persistent cache, has finished. The first GPU blur
    /// at a radius runs the generic passes while its radius-built programs build on a thread
    /// (same bits; `CLPIX_BUILD_WAIT=1` waits instead); a benchmark or a caller that wants
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
    /// engine.brightest(&image::RgbaImage::new(2, 2))?;
    /// assert!(engine.last_kernel_time().is_none());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn last_kernel_time(&self) -> Option<Duration> {
        cl::last_kernel_ns().map(|(sum, _)| Duration::from_nanos(sum))
    }

    /// Device time of this thread's last OpenCL operation from its first kernel's start to its
    /// last kernel's end (profiling events): unlike [`last_kernel_time`](Self::last_kernel_time),
    /// it counts the device's gaps between kernels, as a peer's timer around the whole call
    /// would. `None` after an operation on the CPU path.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// engine.compact(&image::RgbaImage::new(64, 64), 0)?;
    /// if let (Some(sum), Some(span)) = (engine.last_kernel_time(), engine.last_kernel_span()) {
    ///     println!("kernels {sum:?}, first start to last end {span:?}");
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn last_kernel_span(&self) -> Option<Duration> {
        cl::last_kernel_ns().map(|(_, span)| Duration::from_nanos(span))
    }

    /// Copies an image to the engine (device memory on OpenCL, host memory on the CPU), for
    /// several operations without a copy each. Strided views are packed on the way.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(5, 3, image::Rgba([200, 10, 10, 255]));
    /// let dev = engine.upload(&img)?;
    /// assert_eq!(engine.brightest(&dev)?, engine.brightest(&img)?);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn upload<'a>(&self, img: impl Into<ImageInput<'a>>) -> Result<DeviceImage> {
        let input = img.into();
        check_pixel_count(input.width(), input.height())?;
        let host;
        let view = match input {
            ImageInput::Host(v) => v,
            ImageInput::Device(d) => {
                host = host_copy(d)?;
                ImageView::from(&host)
            }
        };
        let storage = match &self.backend {
            Backend::Cpu => Storage::Host(view.to_image().into_raw()),
            Backend::OpenCl(cl) => Storage::OpenCl(cl.upload(&view)?),
        };
        Ok(DeviceImage {
            width: view.width(),
            height: view.height(),
            storage,
        })
    }

    /// Copies a device image back into host memory.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(3, 3, image::Rgba([1, 2, 3, 4]));
    /// assert_eq!(engine.download(&engine.upload(&img)?)?, img);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download(&self, img: &DeviceImage) -> Result<image::RgbaImage> {
        host_copy(img)
    }

    /// Reads a device image back into `out`: packed RGBA8, exactly 4 × width × height bytes
    /// (an error otherwise). Into a [`PinnedImage`](crate::PinnedImage)'s bytes the device
    /// writes at the link's full speed; into memory the caller reuses, no page is touched for
    /// the first time.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(3, 2, image::Rgba([1, 2, 3, 4]));
    /// let dev = engine.upload(&img)?;
    /// let mut out = engine.pinned_image(3, 2)?;
    /// engine.download_into(&dev, out.as_bytes_mut())?;
    /// assert_eq!(out.as_bytes(), img.as_raw().as_slice());
    /// assert!(engine.download_into(&dev, &mut [0u8; 5]).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download_into(&self, img: &DeviceImage, out: &mut [u8]) -> Result<()> {
        let len = img.width as usize * img.height as usize * 4;
        if out.len() != len {
            return Err(Error::InvalidParameter {
                name: "out",
                value: format!("{} bytes", out.len()),
                expected: "exactly 4 × width × height bytes of the device image",
            });
        }
        match &img.storage {
            Storage::Host(bytes) => {
                crate::cpu::parallel_copy(bytes, out);
                Ok(())
            }
            Storage::OpenCl(parts) => parts.owner.download_into(parts, img.width, out),
        }
    }

    /// A zeroed RGBA8 image in host memory that this engine's device moves at the link's full
    /// speed (page-locked; plain memory on the CPU engine and CPU devices): see
    /// [`PinnedImage`](crate::PinnedImage).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = engine.pinned_image(640, 480)?;
    /// assert_eq!(img.as_bytes().len(), 640 * 480 * 4);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pinned_image(&self, width: u32, height: u32) -> Result<crate::PinnedImage> {
        let cl = match &self.backend {
            Backend::OpenCl(cl) => Some(cl),
            Backend::Cpu => None,
        };
        crate::PinnedImage::new(cl, width, height)
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
        download_f32(img)
    }

    /// Runs `cpu` on the CPU backend and `cl` on an OpenCL backend, for a call over `work`
    /// pixels or elements. An automatic engine whose kernel fails to build, or needs more than
    /// the device allows ([`Error::DeviceLimit`]), answers from the CPU instead (identical
    /// results), with a warning; and one whose call needs a program not built yet answers a
    /// call of at most [`Tuning::host_while_building`](crate::Tuning::host_while_building)
    /// `work` from the CPU while the program builds on a thread of its own.
    pub(crate) fn dispatch<T>(
        &self,
        operation: &'static str,
        work: u64,
        cpu: impl FnOnce() -> Result<T>,
        cl: impl FnOnce(&Arc<ClEngine>) -> Result<T>,
    ) -> Result<T> {
        match &self.backend {
            Backend::Cpu => {
                cl::set_last_kernel_ns(None);
                cpu()
            }
            Backend::OpenCl(c) => {
                let result = match self.answer_while_building && c.defers_builds_for(work) {
                    true => cl::with_builds_deferred(c, || cl(c)),
                    false => cl(c),
                };
                match result {
                    Err(Error::ProgramBuilding { program, .. }) => {
                        log::info!(
                            "clpix: {operation} answered by the CPU while the {program} \
                             program builds"
                        );
                        cl::set_last_kernel_ns(None);
                        cpu()
                    }
                    Err(
                        e @ (Error::KernelBuild { .. }
                        | Error::KernelSource { .. }
                        | Error::DeviceLimit { .. }),
                    ) if self.fallback_on_device_error => {
                        log::warn!("clpix: {operation} runs on the CPU: {e}");
                        cl::set_last_kernel_ns(None);
                        cpu()
                    }
                    r => r,
                }
            }
        }
    }
}

impl Drop for Engine {
    /// Forgets the builds queued for calls answered from the CPU (see
    /// [`Tuning::host_while_building`](crate::Tuning::host_while_building)) that have not
    /// started, then waits for the engine's background builds and program cache stores: a
    /// process that returns from `main` while a thread is inside the driver's compiler may crash
    /// on exit (seen with NVIDIA's driver: a child process that ran one blur died without a
    /// word).
    fn drop(&mut self) {
        if let Backend::OpenCl(cl) = &self.backend {
            cl.drop_deferred_queue();
        }
        self.wait_for_builds();
    }
}

/// Host pixels for the CPU path: borrowed for host inputs, downloaded for device images.
pub(crate) enum HostPixels<'a> {
    Borrowed(ImageView<'a>),
    Owned(image::RgbaImage),
}

impl<'a> HostPixels<'a> {
    pub(crate) fn of(input: ImageInput<'a>) -> Result<HostPixels<'a>> {
        Ok(match input {
            ImageInput::Host(v) => HostPixels::Borrowed(v),
            ImageInput::Device(d) => match &d.storage {
                Storage::Host(bytes) => {
                    HostPixels::Borrowed(ImageView::new(bytes, d.width, d.height)?)
                }
                Storage::OpenCl(_) => HostPixels::Owned(host_copy(d)?),
            },
        })
    }

    pub(crate) fn view(&self) -> ImageView<'_> {
        match self {
            HostPixels::Borrowed(v) => *v,
            HostPixels::Owned(img) => ImageView::from(img),
        }
    }
}

/// An f32 image's values in host memory.
pub(crate) fn download_f32(img: &DeviceImageF32) -> Result<image::Rgba32FImage> {
    let values = 4 * img.width as usize * img.height as usize;
    let raw = match &img.storage {
        StorageF32::Host(host) => return Ok(host.clone()),
        StorageF32::OpenCl { owner, buffer } => {
            let mut out = vec![0f32; values];
            if values > 0 {
                owner.read(buffer, 0, &mut out)?;
            }
            out
        }
    };
    image::Rgba32FImage::from_raw(img.width, img.height, raw).ok_or(Error::ImageTooLarge {
        width: img.width as u64,
        height: img.height as u64,
        reason: "the f32 image does not match its size",
    })
}
