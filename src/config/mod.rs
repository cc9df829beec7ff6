//! Engine settings and tuning: the only place that reads clpix's environment variables.

use crate::error::{Error, Result};
use std::path::PathBuf;

mod blur;
pub use blur::{BlurBand, BlurF32Kernel, BlurKernel, BlurTuning};

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
    /// Kernel variants, transfers and diagnostics; `None`: read from the `CLPIX_*` variables
    /// ([`Tuning::from_env`]) when the engine is made.
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

/// Kernel variants, transfers and diagnostics of an OpenCL engine: what the `CLPIX_*` tuning
/// variables set (`docs/tuning.md`). [`Tuning::from_env`] is the one place that reads them;
/// a program or a test can instead build a `Tuning` and give it to an engine through
/// [`EngineConfig::tuning`]. The default is every choice automatic, nothing forced.
///
/// ```
/// use clpix::{BlurKernel, EngineConfig, Tuning};
/// let mut tuning = Tuning::default();
/// tuning.blur.kernel = Some(BlurKernel::TwoPass); // as CLPIX_BLUR_GPU=two-pass
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
    /// `CLPIX_KERNEL_DIR`: load `common.h` and the `.cl` files from this flat folder instead of
    /// the embedded copies.
    pub kernel_dir: Option<PathBuf>,
    /// `CLPIX_BUILD_OPTIONS`: appended to every program's build options (defines, or
    /// `-cl-nv-verbose`).
    pub build_options: String,
    /// Build NVIDIA's variants with their inline PTX emulated (warp ballots and tensor products
    /// in plain OpenCL C), so that their logic runs on any device: for tests. Set from the
    /// environment when `CLPIX_BUILD_OPTIONS` holds `-D CLPIX_WARP_EMULATED=1`.
    pub emulate_nvidia: bool,
    /// `CLPIX_BUILD_LOG=1`: print every program's build log to stderr.
    pub build_log: bool,
    /// `CLPIX_PROFILE=1`: print every kernel's time to stderr (each kernel is waited for).
    pub profile: bool,
    /// `CLPIX_STAGING`: large transfers through pinned staging slots.
    pub staging: Staging,
    /// `CLPIX_HISTOGRAM_REPLICAS=1|2|4|8`: local histogram copies per work-group on GPUs
    /// (`None`: 1).
    pub histogram_replicas: Option<u32>,
    /// `CLPIX_COMPACT_RELOCATE`: the scan-order compaction's kernels on GPUs (`None`: chosen
    /// by device).
    pub compact_relocate: Option<CompactRelocation>,
    /// `CLPIX_SCAN`: the exclusive scan's kernels on GPUs (`None`: the single pass where the
    /// device has 64-bit atomics).
    pub scan: Option<ScanKernel>,
    /// `CLPIX_BLUR_*`: the GPU RGBA8 blur's kernels and shapes.
    pub blur: BlurTuning,
    /// `CLPIX_MAX_WORK_GROUP`: plan and check as if the device allowed at most this many
    /// work-items a group (the streaming kernels take the largest power of two up to 256 that
    /// it and the device allow): to test a smaller device's shapes on this one.
    pub max_work_group: Option<usize>,
    /// `CLPIX_MAX_LOCAL_MEMORY`: plan and check as if the device had at most this many bytes of
    /// local memory (at least 16384): to test a smaller device's shapes on this one.
    pub max_local_memory: Option<u64>,
    /// `CLPIX_BUILD_WAIT=1`: the first GPU blur at a radius waits for its radius-built
    /// program instead of running the generic passes while it builds in the background. Always
    /// so on Oclgrind, which is not safe for a thread of clpix's own beside the caller's.
    pub build_wait: bool,
    /// `CLPIX_SPECIALISE_AFTER=n`: the GPU blur's radius-built programs start building (in the
    /// background) at the n-th call at that radius; before, the generic passes answer (the same
    /// bits). Default 2: a radius used once never builds (on NVIDIA the tensor-core programs
    /// took 1.5–4.7 s each to build, which a short process waited for at its end).
    pub specialise_after: Option<u32>,
    /// `CLPIX_CACHE=on|all|readonly|off`: the persistent program cache (on by default).
    pub cache: ProgramCache,
    /// `CLPIX_CACHE_DIR`: the program cache's folder (default `$XDG_CACHE_HOME/clpix`, else
    /// `~/.cache/clpix`, else the temporary folder's `clpix`: the first that is writable).
    pub cache_dir: Option<PathBuf>,
    /// `CLPIX_CACHE_MAX_BYTES`: the bound on the cache folder's size (default 512 MiB); the
    /// least recently used entries go first.
    pub cache_max_bytes: Option<u64>,
    /// `CLPIX_PROGRAMS=kernel|file`: what one program build holds (`None`: a kernel a program
    /// on GPUs and accelerators, a whole file on CPU devices).
    pub programs: Option<ProgramUnit>,
    /// `CLPIX_HOST_WHILE_BUILDING=n`: an engine made by [`Engine::new`](crate::Engine::new)
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

/// The persistent program cache's mode (`CLPIX_CACHE`): program binaries kept on disk, so that
/// a later process loads them instead of compiling the kernels again.
///
/// ```
/// let mut tuning = clpix::Tuning::default();
/// assert_eq!(tuning.cache, clpix::ProgramCache::On);
/// tuning.cache = clpix::ProgramCache::Off; // as CLPIX_CACHE=off
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

/// Whether large transfers go through pinned staging slots (`CLPIX_STAGING`).
///
/// ```
/// assert_eq!(clpix::Staging::default(), clpix::Staging::Auto);
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

/// The scan-order compaction's kernels on GPUs (`CLPIX_COMPACT_RELOCATE`).
///
/// ```
/// let forced = clpix::CompactRelocation::Group;
/// assert_ne!(forced, clpix::CompactRelocation::Warp);
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

/// What one program build holds (`CLPIX_PROGRAMS`).
///
/// ```
/// let mut tuning = clpix::Tuning::default();
/// tuning.programs = Some(clpix::ProgramUnit::File); // as CLPIX_PROGRAMS=file
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

/// The exclusive scan's kernels on GPUs (`CLPIX_SCAN`).
///
/// ```
/// let mut tuning = clpix::Tuning::default();
/// tuning.scan = Some(clpix::ScanKernel::ThreePass); // as CLPIX_SCAN=three-pass
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKernel {
    /// `three-pass`: reduce, scan of the group sums, rescan (reads the array twice).
    ThreePass,
    /// `lookback`: one pass, a decoupled look-back with fallback; needs
    /// `cl_khr_int64_base_atomics`.
    LookBack,
}

/// The environment variable `var`, trimmed: `None` when unset or blank, an error when not
/// Unicode.
fn env_value(var: &'static str, expected: &'static str) -> Result<Option<String>> {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::InvalidEnvironment {
            var,
            value: v.to_string_lossy().into_owned(),
            expected,
        }),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
    }
}

/// The variable `var` parsed by `parse`: `None` when unset or blank, an
/// [`Error::InvalidEnvironment`] saying `expected` when `parse` refuses it, so that a
/// misspelt value never measures or tests the defaults unnoticed.
fn env_parse<T>(
    var: &'static str,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match env_value(var, expected)? {
        None => Ok(None),
        Some(v) => match parse(v.trim()) {
            Some(t) => Ok(Some(t)),
            None => Err(Error::InvalidEnvironment {
                var,
                value: v,
                expected,
            }),
        },
    }
}

/// A folder variable (`CLPIX_KERNEL_DIR`, `CLPIX_CACHE_DIR`): `None` when unset or blank.
fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|d| !d.to_string_lossy().trim().is_empty())
        .map(PathBuf::from)
}

/// Whether a diagnostic switch (`CLPIX_BUILD_LOG`, `CLPIX_PROFILE`) is on: set, not blank and
/// not `0`.
fn env_switch(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0")
}

fn one_of<'a, T: Copy>(table: &'a [(&'a str, T)]) -> impl Fn(&str) -> Option<T> + 'a {
    move |v| table.iter().find(|(k, _)| *k == v).map(|(_, t)| *t)
}

/// A count variable whose value must be one of `allowed`, written in decimal as it is.
fn env_count(var: &'static str, expected: &'static str, allowed: &[u32]) -> Result<Option<u32>> {
    env_parse(var, expected, |v| {
        allowed.iter().copied().find(|n| n.to_string() == v)
    })
}

impl Tuning {
    /// The tuning the `CLPIX_*` variables ask for; an [`Error::InvalidEnvironment`] naming the
    /// first variable whose value is not one of those `docs/tuning.md` lists (blank is the
    /// default). Engines made without an explicit [`EngineConfig::tuning`] read it when made.
    ///
    /// ```
    /// let t = clpix::Tuning::from_env()?;
    /// println!("{t:?}");
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn from_env() -> Result<Tuning> {
        let build_options = std::env::var("CLPIX_BUILD_OPTIONS").unwrap_or_default();
        let staging = env_parse(
            "CLPIX_STAGING",
            "off, on, or a staging slot size in KiB",
            |v| match v {
                "off" => Some(Staging::Off),
                "on" => Some(Staging::On),
                kib => kib.parse().ok().filter(|&k| k > 0).map(Staging::SlotKib),
            },
        )?;
        let histogram_replicas =
            env_count("CLPIX_HISTOGRAM_REPLICAS", "1, 2, 4 or 8", &[1, 2, 4, 8])?;
        let compact_relocate = env_parse(
            "CLPIX_COMPACT_RELOCATE",
            "group, group-lookback, warp or lookback",
            one_of(&[
                ("group", CompactRelocation::Group),
                ("group-lookback", CompactRelocation::GroupLookBack),
                ("warp", CompactRelocation::Warp),
                ("lookback", CompactRelocation::LookBack),
            ]),
        )?;
        let scan = env_parse(
            "CLPIX_SCAN",
            "three-pass or lookback",
            one_of(&[
                ("three-pass", ScanKernel::ThreePass),
                ("lookback", ScanKernel::LookBack),
            ]),
        )?;
        let max_work_group = env_parse(
            "CLPIX_MAX_WORK_GROUP",
            "a number of work-items from 1 to 1024",
            |v| v.parse().ok().filter(|n| (1..=1024).contains(n)),
        )?;
        let max_local_memory = env_parse(
            "CLPIX_MAX_LOCAL_MEMORY",
            "a number of bytes, at least 16384",
            |v| v.parse().ok().filter(|&n| n >= 16384),
        )?;
        let cache = env_parse(
            "CLPIX_CACHE",
            "on, all, readonly or off",
            one_of(&[
                ("on", ProgramCache::On),
                ("all", ProgramCache::All),
                ("readonly", ProgramCache::ReadOnly),
                ("off", ProgramCache::Off),
            ]),
        )?;
        let specialise_after = env_parse(
            "CLPIX_SPECIALISE_AFTER",
            "a number of calls from 1 to 1000000",
            |v| v.parse().ok().filter(|n| (1..=1_000_000).contains(n)),
        )?;
        let cache_max_bytes = env_parse("CLPIX_CACHE_MAX_BYTES", "a number of bytes", |v| {
            v.parse().ok()
        })?;
        let programs = env_parse(
            "CLPIX_PROGRAMS",
            "kernel or file",
            one_of(&[("kernel", ProgramUnit::Kernel), ("file", ProgramUnit::File)]),
        )?;
        let host_while_building = env_parse(
            "CLPIX_HOST_WHILE_BUILDING",
            "a number of pixels or elements (0: off)",
            |v| v.parse().ok(),
        )?;
        Ok(Tuning {
            host_while_building,
            build_wait: env_switch("CLPIX_BUILD_WAIT"),
            specialise_after,
            cache: cache.unwrap_or_default(),
            cache_dir: env_path("CLPIX_CACHE_DIR"),
            cache_max_bytes,
            programs,
            max_work_group,
            max_local_memory,
            kernel_dir: env_path("CLPIX_KERNEL_DIR"),
            emulate_nvidia: build_options.contains("CLPIX_WARP_EMULATED=1"),
            build_options,
            build_log: env_switch("CLPIX_BUILD_LOG"),
            profile: env_switch("CLPIX_PROFILE"),
            staging: staging.unwrap_or_default(),
            histogram_replicas,
            compact_relocate,
            scan,
            blur: BlurTuning::from_env()?,
        })
    }

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

/// How [`Engine::new`](crate::Engine::new) chooses: `CLPIX_BACKEND`, `CLPIX_DEVICE` and
/// `CLPIX_MAX_BUFFER_BYTES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvChoice {
    /// `auto` (also blank or unset), `cpu` or `opencl`, lower case.
    pub(crate) backend: String,
    /// An index or a part of a device name.
    pub(crate) device: Option<String>,
    /// The buffer cap.
    pub(crate) max_buffer_bytes: Option<u64>,
}

impl EnvChoice {
    /// Reads the three variables; an error for an unknown backend or a cap that is no number.
    pub(crate) fn from_env() -> Result<EnvChoice> {
        let backend = env_parse("CLPIX_BACKEND", "auto, cpu or opencl", |v| {
            match v.to_ascii_lowercase().as_str() {
                b @ ("auto" | "cpu" | "opencl") => Some(b.to_string()),
                _ => None,
            }
        })?
        .unwrap_or_else(|| "auto".into());
        let device = env_value("CLPIX_DEVICE", "an index or a part of a device name")?
            .map(|d| d.trim().to_string());
        Ok(EnvChoice {
            backend,
            device,
            max_buffer_bytes: env_buffer_cap()?,
        })
    }
}

/// `CLPIX_MAX_BUFFER_BYTES`: caps single device buffers, so that the split paths for images
/// larger than the device can be tested on small images.
pub(crate) fn env_buffer_cap() -> Result<Option<u64>> {
    match std::env::var("CLPIX_MAX_BUFFER_BYTES") {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| Error::InvalidEnvironment {
                var: "CLPIX_MAX_BUFFER_BYTES",
                value: v,
                expected: "a number of bytes",
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only unit test that sets process-wide variables, in a process of its own: setting a
    /// variable while another test's OpenCL runtime reads the environment from C is a data
    /// race (Intel's CPU runtime crashed the unit tests with SIGSEGV in CI, 2026-11-27). This
    /// test runs itself again as the only test of a child process, which does the work.
    #[test]
    fn tuning_variables_parse_and_bad_values_name_their_variable() {
        const CHILD: &str = "CLPIX_TUNING_TEST_CHILD";
        if std::env::var_os(CHILD).is_some() {
            tuning_variables_in_this_process();
            return;
        }
        let exe = std::env::current_exe().expect("the test binary's path");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "config::tests::tuning_variables_parse_and_bad_values_name_their_variable",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .expect("the test binary runs again");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the child test failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    }

    fn tuning_variables_in_this_process() {
        let vars = [
            ("CLPIX_BLUR_GPU", "regsiters", "band"),
            ("CLPIX_BLUR_COLUMNS", "3", "2"),
            ("CLPIX_BLUR_ADJACENT", "3", "4"),
            ("CLPIX_BLUR_BAND", "128,3,8,8", "128,2,8,32,64"),
            ("CLPIX_BLUR_CHANNELS", "3", "4"),
            ("CLPIX_BLUR_HPIXELS", "16", "8"),
            ("CLPIX_BLUR_TENSOR", "yes", "vertical"),
            ("CLPIX_BLUR_PERMUTE", "yes", "0"),
            ("CLPIX_STAGING", "-1", "64"),
            ("CLPIX_HISTOGRAM_REPLICAS", "3", "4"),
            ("CLPIX_COMPACT_RELOCATE", "warps", "lookback"),
            ("CLPIX_MAX_WORK_GROUP", "0", "64"),
            ("CLPIX_MAX_LOCAL_MEMORY", "32k", "32768"),
            ("CLPIX_CACHE", "no", "readonly"),
            ("CLPIX_CACHE_MAX_BYTES", "1G", "1000000"),
            ("CLPIX_PROGRAMS", "kernels", "file"),
            ("CLPIX_HOST_WHILE_BUILDING", "1M", "4096"),
        ];
        for (var, bad, good) in vars {
            std::env::set_var(var, bad);
            match Tuning::from_env() {
                Err(Error::InvalidEnvironment { var: v, value, .. }) => {
                    assert_eq!((v, value.as_str()), (var, bad))
                }
                other => panic!("{var}={bad}: {other:?}"),
            }
            std::env::set_var(var, " ");
            assert_eq!(
                Tuning::from_env().ok(),
                Some(Tuning::default()),
                "{var} blank"
            );
            std::env::set_var(var, good);
            assert_ne!(
                Tuning::from_env().ok(),
                Some(Tuning::default()),
                "{var}={good}"
            );
            std::env::remove_var(var);
        }
        for bad in ["128,4,8", "128,4,8,8,0", "64,1,4,4", "128,1,8,5"] {
            assert!(BlurBand::parse(bad).is_none(), "{bad}");
        }
        std::env::set_var("CLPIX_BLUR_BAND", "256,1,4,16");
        std::env::set_var("CLPIX_BLUR_TENSOR", "horizontal");
        std::env::set_var("CLPIX_STAGING", "off");
        std::env::set_var("CLPIX_BUILD_OPTIONS", "-D CLPIX_WARP_EMULATED=1");
        let t = Tuning::from_env().unwrap();
        for v in [
            "CLPIX_BLUR_BAND",
            "CLPIX_BLUR_TENSOR",
            "CLPIX_STAGING",
            "CLPIX_BUILD_OPTIONS",
        ] {
            std::env::remove_var(v);
        }
        let band = t.blur.band.unwrap();
        assert_eq!(
            (band.threads(), band.channels(), band.pixels(), band.rows()),
            (256, 1, 4, 16)
        );
        assert_eq!(t.blur.tensor, Some((true, false)));
        assert_eq!(t.staging, Staging::Off);
        assert!(t.emulate_nvidia);
        assert_eq!(t.extra_build_options(), "-D CLPIX_WARP_EMULATED=1");
    }
}
