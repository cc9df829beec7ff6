//! Opening an [`Engine`]: which backend runs the operations, and how it was chosen. The top
//! layer: an OpenCL engine builds its first operation's program when it opens, so that a driver
//! whose compiler fails is found at construction rather than at the first call.

use crate::config::{EngineConfig, EnvChoice, KernelLayout, Tuning};
use crate::engine::{Backend, BackendInfo, BackendKind, Engine, cl_description, cpu_description};
use crate::error::Result;
use crate::opencl::{self, ClEngine, Defines, DeviceInfo, DeviceType};
use std::sync::Arc;

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
    /// [`Tuning::host_while_building`](crate::tuning::Tuning::host_while_building) pixels or elements
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
            max_buffer_bytes: None,
            layout: KernelLayout::Auto,
            tuning: Some(tuning),
            cpu_fallback: choice.backend != "opencl",
        };
        match choice.backend.as_str() {
            "opencl" => {
                let info = match &choice.device {
                    Some(q) => opencl::find_device(q)?,
                    None => opencl::best_device()?,
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
                checks_drivers: false,
            }
        };
        let info = match device {
            Some(q) => opencl::find_device(q),
            None => opencl::best_device(),
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
        let first = crate::ops::reduce::kernels::LUMA_ARGBEST;
        let mut tuning = config.resolved_tuning()?;
        let open = |tuning: &Tuning| -> Result<ClEngine> {
            let cl = ClEngine::open(info, config.max_buffer_bytes, config.layout, tuning.clone())?;
            // The first kernel most callers run: a device whose compiler fails shows it here.
            cl.program_for(first, Defines::NONE)?;
            Ok(cl)
        };
        let mut cl = open(&tuning)?;
        // The streaming kernels' work-groups: as large as the device allows (at most 256), and
        // no larger than the built kernel allows (`CL_KERNEL_WORK_GROUP_SIZE`: registers, a
        // driver's own limits). Where the kernel allows less, the engine opens again with its
        // groups capped there (a power of two), its kernels built for that size.
        if let Some(limit) = cl.smaller_groups_for(first)? {
            log::info!(
                "clpix: {} allows {limit} work-items a group of the streaming kernels (of {}): \
                 built for that",
                info.name,
                cl.grid.wg
            );
            tuning.max_work_group = Some(limit);
            cl = open(&tuning)?;
        }
        let cl = Arc::new(cl);
        Ok(Engine {
            backend: Backend::OpenCl(cl),
            info: BackendInfo {
                kind: BackendKind::OpenCl,
                description: cl_description(info),
                reason,
            },
            fallback_on_device_error: config.cpu_fallback,
            answer_while_building: config.cpu_fallback,
            checks_drivers: true,
        })
    }

    /// The best OpenCL device of any type (GPU, then accelerator, then CPU); an error if there
    /// is none or its compiler fails.
    ///
    /// ```
    /// match clpix::Engine::opencl() {
    ///     Ok(e) => println!("{}", e.backend()),
    ///     Err(e) => println!("no OpenCL: {e}"),
    /// }
    /// ```
    pub fn opencl() -> Result<Engine> {
        Engine::open_env(&opencl::best_device()?, None)
    }

    /// A specific device from [`devices()`](crate::devices).
    ///
    /// ```
    /// for d in clpix::devices().unwrap_or_default() {
    ///     let engine = clpix::Engine::with_device(&d)?;
    ///     println!("{}", engine.backend());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_device(device: &DeviceInfo) -> Result<Engine> {
        Engine::open_env(device, None)
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
    /// read only where `config.tuning` is `None`.
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
}
