//! Engine settings and tuning: the only place that reads clpix's environment variables.

use crate::error::{Error, Result};
use std::path::PathBuf;

mod blur;
mod set;
pub use blur::{BlurBand, BlurF32Kernel, BlurKernel, BlurTuning};
pub use set::SETTINGS;
pub(crate) use set::env_value;
#[cfg(test)]
pub(crate) use set::opencl_required;

/// Settings of an OpenCL engine made with
/// [`Engine::with_device_config`](crate::Engine::with_device_config).
///
/// ```
/// let config = clpix::EngineConfig::default();
/// assert!(config.max_buffer_bytes.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineConfig {
    /// Cap on single device buffers holding pixels or array elements, below the device's own
    /// limit: larger images are processed in parts (and bands, for blur), with the same
    /// results; a [`DeviceArray`](crate::DeviceArray) larger than the cap is an error. Small
    /// fixed-size bookkeeping buffers (per-group partials, weights) only need to fit the
    /// device. `None`: the device's limit.
    pub max_buffer_bytes: Option<u64>,
    /// Which kernel variant to build (see [`KernelLayout`]).
    pub layout: KernelLayout,
    /// Kernel variants, transfers and diagnostics; `None`: the defaults with the variables a
    /// user sets ([`Tuning::from_env`]) read when the engine is made.
    pub tuning: Option<Tuning>,
    /// Answer from the CPU (the same bits, with a `log` warning) when a kernel does not build on
    /// the device or needs more than it allows ([`Error::DeviceLimit`]), as the automatic
    /// [`Engine::new`](crate::Engine::new) does. `false` (the default): such a call returns
    /// the error.
    pub cpu_fallback: bool,
}

impl EngineConfig {
    /// The tuning this configuration gives an engine: its own, or the environment's.
    pub(crate) fn resolved_tuning(&self) -> Result<Tuning> {
        match &self.tuning {
            Some(t) => Ok(t.clone()),
            None => Tuning::from_env(),
        }
    }
}

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

/// Kernel variants, transfers and diagnostics of an OpenCL engine, each a setting by name
/// ([`Tuning::set`], [`SETTINGS`]). The environment sets only what a user chooses (the
/// program cache, diagnostics, the kernel folder: [`Tuning::from_env`]); kernel variants and
/// shapes are set in code, by a test or the bench, and given to an engine through
/// [`EngineConfig::tuning`]. The default is every choice automatic, nothing forced: each
/// operation's plan chooses its kernels from the device's capabilities.
///
/// ```
/// use clpix::EngineConfig;
/// use clpix::tuning::{BlurKernel, Tuning};
/// let mut tuning = Tuning::default();
/// tuning.blur.kernel = Some(BlurKernel::TwoPass); // as set("blur.kernel", "two-pass")
/// let config = EngineConfig { tuning: Some(tuning), ..EngineConfig::default() };
/// for d in clpix::devices().unwrap_or_default() {
///     let engine = clpix::Engine::with_device_config(&d, &config)?;
///     println!("{}", engine.backend());
/// }
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tuning {
    /// `kernel_dir` (`CLPIX_KERNEL_DIR`): load the kernels from this folder, laid out as the
    /// repository's `cl/` (`common.h`, `<op>/*.cl`), instead of the embedded copies.
    pub kernel_dir: Option<PathBuf>,
    /// `build_options`: appended to every program's build options (defines, or
    /// `-cl-nv-verbose`).
    pub build_options: String,
    /// Build NVIDIA's variants with their inline PTX emulated (warp ballots and tensor products
    /// in plain OpenCL C), so that their logic runs on any device: for tests
    /// (`emulate_nvidia`; also where `build_options` holds `-D CLPIX_WARP_EMULATED=1`).
    pub emulate_nvidia: bool,
    /// `build_log` (`CLPIX_BUILD_LOG=1`): print every program's build log to stderr.
    pub build_log: bool,
    /// `profile` (`CLPIX_PROFILE=1`): print every kernel's time to stderr (each kernel is waited for).
    pub profile: bool,
    /// `staging`: large transfers through pinned staging slots.
    pub staging: Staging,
    /// `compact_relocate`: the scan-order compaction's kernels on GPUs (`None`: chosen
    /// by device).
    pub compact_relocate: Option<CompactRelocation>,
    /// `scan`: the exclusive scan's kernels on GPUs (`None`: the single pass where the
    /// device has 64-bit atomics).
    pub scan: Option<ScanKernel>,
    /// The `blur.` settings: the GPU blur's kernels and shapes.
    pub blur: BlurTuning,
    /// `max_work_group`: plan and check as if the device allowed at most this many
    /// work-items a group (the streaming kernels take the largest power of two up to 256 that
    /// it and the device allow): to test a smaller device's shapes on this one.
    pub max_work_group: Option<usize>,
    /// `max_local_memory`: plan and check as if the device had at most this many bytes of
    /// local memory (at least 16384): to test a smaller device's shapes on this one.
    pub max_local_memory: Option<u64>,
    /// `trust_drivers=1`: skip the known-answer probes (each operation's first call on a
    /// device and driver compared with the CPU path on a small input; see
    /// [`Engine::driver_verdicts`](crate::Engine::driver_verdicts)), to time cold starts
    /// without them.
    pub trust_drivers: bool,
    /// `build_wait=1`: the first GPU blur at a radius waits for its radius-built
    /// program instead of running the generic passes while it builds in the background. Always
    /// so on Oclgrind, which is not safe for a thread of clpix's own beside the caller's.
    pub build_wait: bool,
    /// `specialise_after=n`: the GPU blur's radius-built programs start building (in the
    /// background) at the n-th call at that radius; before, the generic passes answer (the same
    /// bits). Default 2: a radius used once never builds (on NVIDIA the tensor-core programs
    /// took 1.5–4.7 s each to build, which a short process waited for at its end).
    pub specialise_after: Option<u32>,
    /// `cache` (`CLPIX_CACHE=on|all|readonly|off`): the persistent program cache (on by default).
    pub cache: ProgramCache,
    /// `cache_dir` (`CLPIX_CACHE_DIR`): the program cache's folder (default `$XDG_CACHE_HOME/clpix`, else
    /// `~/.cache/clpix`, else the temporary folder's `clpix`: the first that is writable).
    pub cache_dir: Option<PathBuf>,
    /// `cache_max_bytes` (`CLPIX_CACHE_MAX_BYTES`): the bound on the cache folder's size (default 512 MiB); the
    /// least recently used entries go first.
    pub cache_max_bytes: Option<u64>,
    /// `programs=kernel|file`: what one program build holds (`None`: a kernel a program
    /// on GPUs and accelerators, a whole file on CPU devices).
    pub programs: Option<ProgramUnit>,
    /// `host_while_building` (`CLPIX_HOST_WHILE_BUILDING=n`): an engine made by [`Engine::new`](crate::Engine::new)
    /// (or configured with [`EngineConfig::cpu_fallback`]) answers a call of at most `n` pixels
    /// or elements from the CPU path (the same bits) when a program the call needs is not built
    /// yet, and builds it on a thread of its own for the calls after; larger calls wait for the
    /// build. `0`: every call waits. `None`: 2^20 on GPUs and accelerators (on NVIDIA a first
    /// call's programs take 0.06–0.8 s to build, which the CPU path beats for a million
    /// pixels), 0 on CPU devices (PoCL 3.1 holds a download while it compiles, so the CPU path
    /// waited anyway).
    pub host_while_building: Option<u64>,
}

/// The default of [`Tuning::host_while_building`]: calls of up to 2^20 pixels or elements.
pub(crate) const HOST_WHILE_BUILDING: u64 = 1 << 20;

/// The persistent program cache's mode (`cache`, `CLPIX_CACHE`): program binaries kept on disk, so that
/// a later process loads them instead of compiling the kernels again.
///
/// ```
/// let mut tuning = clpix::tuning::Tuning::default();
/// assert_eq!(tuning.cache, clpix::tuning::ProgramCache::On);
/// tuning.cache = clpix::tuning::ProgramCache::Off; // as CLPIX_CACHE=off
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProgramCache {
    /// Load entries; store new builds of GPUs and accelerators (the default). CPU devices'
    /// drivers keep their own cache (PoCL's `POCL_CACHE_DIR`), and there reading a program's
    /// binary compiles every kernel in it: on the 2-core machine with PoCL 3.1, storing made
    /// the demo's cold start 4.8–4.9 s against 2.1–2.2 s, to save 1.5 s (0.62–0.72 s) only
    /// where PoCL's own cache is cold too.
    #[default]
    On,
    /// Load entries and store new builds on every device, CPU devices included.
    All,
    /// Load entries, store nothing (a shared or read-only folder).
    ReadOnly,
    /// No cache: every program is built from source.
    Off,
}

/// Whether large transfers go through pinned staging slots (`staging`).
///
/// ```
/// assert_eq!(clpix::tuning::Staging::default(), clpix::tuning::Staging::Auto);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Staging {
    /// On for devices that are not CPUs, in slots of 16 MiB.
    #[default]
    Auto,
    /// Off: transfers straight from and to the caller's memory.
    Off,
    /// On, in slots of 16 MiB.
    On,
    /// On, in slots of this many KiB (tests: many small slots).
    SlotKib(usize),
}

/// The scan-order compaction's kernels on GPUs (`compact_relocate`).
///
/// ```
/// let forced = clpix::tuning::CompactRelocation::Group;
/// assert_ne!(forced, clpix::tuning::CompactRelocation::Warp);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactRelocation {
    /// `group`: the portable kernels, a range a work-group.
    Group,
    /// `warp`: NVIDIA's warp kernels (an error on other devices unless emulated).
    Warp,
    /// `lookback`: NVIDIA's single pass with a decoupled look-back with fallback.
    LookBack,
    /// `group-lookback`: the portable single pass (a range a work-group, the same look-back);
    /// needs `cl_khr_int64_base_atomics`.
    GroupLookBack,
}

/// What one program build holds (`programs`).
///
/// ```
/// let mut tuning = clpix::tuning::Tuning::default();
/// tuning.programs = Some(clpix::tuning::ProgramUnit::File); // as set("programs", "file")
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramUnit {
    /// `kernel`: each kernel is built on its first launch from its file with the other
    /// kernels left out, so that a first call compiles only what it runs (the default on GPUs
    /// and accelerators: NVIDIA's compiler takes time in proportion to the code it is given,
    /// and an operation launches a few of its file's kernels).
    Kernel,
    /// `file`: the whole file (every kernel of an operation) in one build (the default on CPU
    /// devices, whose drivers compile each kernel at its first launch anyway and pay a fixed
    /// cost per build).
    File,
}

/// The exclusive scan's kernels on GPUs (`scan`).
///
/// ```
/// let mut tuning = clpix::tuning::Tuning::default();
/// tuning.scan = Some(clpix::tuning::ScanKernel::ThreePass); // as set("scan", "three-pass")
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKernel {
    /// `three-pass`: reduce, scan of the group sums, rescan (reads the array twice).
    ThreePass,
    /// `lookback`: one pass, a decoupled look-back with fallback; needs
    /// `cl_khr_int64_base_atomics`.
    LookBack,
}

impl Tuning {
    /// The compiler options these settings add: the extra options, and the define that
    /// emulates NVIDIA's intrinsics where asked (once).
    pub(crate) fn extra_build_options(&self) -> String {
        let mut s = self.build_options.trim().to_string();
        if self.emulate_nvidia && !s.contains("CLPIX_WARP_EMULATED=1") {
            s.push_str(" -D CLPIX_WARP_EMULATED=1");
        }
        s.trim().to_string()
    }
}

/// How [`Engine::new`](crate::Engine::new) chooses: `CLPIX_BACKEND` and `CLPIX_DEVICE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvChoice {
    /// `auto` (also blank or unset), `cpu` or `opencl`, lower case.
    pub(crate) backend: String,
    /// An index or a part of a device name.
    pub(crate) device: Option<String>,
}

impl EnvChoice {
    /// Reads the two variables; an error for an unknown backend.
    pub(crate) fn from_env() -> Result<EnvChoice> {
        let backend = match env_value("CLPIX_BACKEND")? {
            None => "auto".to_string(),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                b @ ("auto" | "cpu" | "opencl") => b.to_string(),
                _ => {
                    return Err(Error::InvalidEnvironment {
                        var: "CLPIX_BACKEND",
                        value: v,
                        expected: "auto, cpu or opencl",
                    });
                }
            },
        };
        Ok(EnvChoice {
            backend,
            device: env_value("CLPIX_DEVICE")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_bad_values_name_their_setting() {
        let settings = [
            ("blur.kernel", "regsiters", "band"),
            ("blur.columns", "3", "2"),
            ("blur.adjacent", "04", "4"),
            ("blur.band", "128,3,8,8", "128,2,8,32,64"),
            ("blur.channels", "3", "4"),
            ("blur.hpixels", "16", "8"),
            ("blur.vrows", "2", "16"),
            ("blur.tensor", "yes", "vertical"),
            ("blur.permute", "yes", "0"),
            ("blur.f32_kernel", "fast", "band"),
            ("blur.f32_rows", "+8", "32"),
            ("staging", "-1", "64"),
            ("compact_relocate", "warps", "lookback"),
            ("scan", "one-pass", "three-pass"),
            ("max_work_group", "0", "64"),
            ("max_local_memory", "32k", "32768"),
            ("specialise_after", "0", "3"),
            ("cache", "no", "readonly"),
            ("cache_max_bytes", "1G", "1000000"),
            ("programs", "kernels", "file"),
            ("host_while_building", "1M", "4096"),
            ("build_wait", "yes", "1"),
        ];
        for (setting, bad, good) in settings {
            let mut t = Tuning::default();
            match t.set(setting, bad) {
                Err(Error::InvalidTuning {
                    setting: s, value, ..
                }) => {
                    assert_eq!((s, value.as_str()), (setting, bad))
                }
                other => panic!("{setting}={bad}: {other:?}"),
            }
            assert_eq!(t, Tuning::default(), "{setting}={bad} changed nothing");
            t.set(setting, good).unwrap();
            assert_ne!(t, Tuning::default(), "{setting}={good}");
        }
        let mut t = Tuning::default();
        assert!(matches!(
            t.set("blur.gpu", "band"),
            Err(Error::InvalidTuning {
                setting: "(name)",
                ..
            })
        ));
        for bad in ["128,4,8", "128,4,8,8,0", "64,1,4,4", "128,1,8,5"] {
            assert!(BlurBand::parse(bad).is_none(), "{bad}");
        }
        t.set("blur.band", "256,1,4,16").unwrap();
        t.set("blur.tensor", "horizontal").unwrap();
        t.set("staging", "off").unwrap();
        t.set("build_options", "-D CLPIX_WARP_EMULATED=1").unwrap();
        let band = t.blur.band.unwrap();
        assert_eq!(
            (band.threads(), band.channels(), band.pixels(), band.rows()),
            (256, 1, 4, 16)
        );
        assert_eq!(t.blur.tensor, Some((true, false)));
        assert_eq!(t.staging, Staging::Off);
        assert!(t.emulate_nvidia);
        assert_eq!(t.extra_build_options(), "-D CLPIX_WARP_EMULATED=1");
        t.set("blur.kernel", "band").unwrap();
        t.set("blur.kernel", "auto").unwrap();
        assert_eq!(t.blur.kernel, None);
        // Every listed setting has a setter that takes some value.
        assert_eq!(SETTINGS.len(), 34);
        t.set("trust_drivers", "1").unwrap();
        assert!(t.trust_drivers);
    }

    /// Sets a variable in this test's own child process (see `CHILD` below).
    fn set_env(var: &str, value: &str) {
        // SAFETY: the child process runs this one test; nothing else reads the environment.
        unsafe { std::env::set_var(var, value) }
    }

    /// Removes a variable in this test's own child process.
    fn unset_env(var: &str) {
        // SAFETY: as in `set_env`.
        unsafe { std::env::remove_var(var) }
    }

    /// The only unit test that sets process-wide variables, in a process of its own: setting a
    /// variable while another test's OpenCL runtime reads the environment from C is a data
    /// race (Intel's CPU runtime crashed the unit tests with SIGSEGV in CI, 2026-11-27). This
    /// test runs itself again as the only test of a child process, which does the work.
    #[test]
    fn user_variables_parse_and_bad_values_name_their_variable() {
        const CHILD: &str = "CLPIX_TUNING_TEST_CHILD";
        if std::env::var_os(CHILD).is_some() {
            user_variables_in_this_process();
            return;
        }
        let exe = std::env::current_exe().expect("the test binary's path");
        let mut child = std::process::Command::new(exe);
        child.args([
            "--exact",
            "config::tests::user_variables_parse_and_bad_values_name_their_variable",
            "--test-threads=1",
            "--nocapture",
        ]);
        // The child starts from no clpix variable at all, whatever this run was given (CI runs
        // one implementation's suite with CLPIX_CACHE set, say).
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("CLPIX_") {
                child.env_remove(var);
            }
        }
        let out = child
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the child test failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    }

    fn user_variables_in_this_process() {
        let vars = [
            ("CLPIX_CACHE", "no", "readonly"),
            ("CLPIX_CACHE_MAX_BYTES", "1G", "1000000"),
            ("CLPIX_HOST_WHILE_BUILDING", "1M", "4096"),
        ];
        for (var, bad, good) in vars {
            set_env(var, bad);
            match Tuning::from_env() {
                Err(Error::InvalidEnvironment { var: v, value, .. }) => {
                    assert_eq!((v, value.as_str()), (var, bad))
                }
                other => panic!("{var}={bad}: {other:?}"),
            }
            set_env(var, " ");
            assert_eq!(
                Tuning::from_env().ok(),
                Some(Tuning::default()),
                "{var} blank"
            );
            set_env(var, good);
            assert_ne!(
                Tuning::from_env().ok(),
                Some(Tuning::default()),
                "{var}={good}"
            );
            unset_env(var);
        }
        set_env("CLPIX_BUILD_LOG", "yes");
        set_env("CLPIX_PROFILE", "0");
        set_env("CLPIX_KERNEL_DIR", "cl");
        set_env("CLPIX_CACHE_DIR", "/tmp/clpix-cache");
        let t = Tuning::from_env().unwrap();
        assert!(t.build_log && !t.profile);
        assert_eq!(t.kernel_dir, Some(PathBuf::from("cl")));
        assert_eq!(t.cache_dir, Some(PathBuf::from("/tmp/clpix-cache")));
        for v in [
            "CLPIX_BUILD_LOG",
            "CLPIX_PROFILE",
            "CLPIX_KERNEL_DIR",
            "CLPIX_CACHE_DIR",
        ] {
            unset_env(v);
        }
        // Kernel variants are no longer read from the environment.
        set_env("CLPIX_BLUR_GPU", "band");
        set_env("CLPIX_STAGING", "nonsense");
        assert_eq!(Tuning::from_env().ok(), Some(Tuning::default()));
        unset_env("CLPIX_BLUR_GPU");
        unset_env("CLPIX_STAGING");
        set_env("CLPIX_BACKEND", "gpu");
        assert!(matches!(
            EnvChoice::from_env(),
            Err(Error::InvalidEnvironment {
                var: "CLPIX_BACKEND",
                ..
            })
        ));
        unset_env("CLPIX_BACKEND");
    }
}
