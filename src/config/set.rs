//! Settings by name: [`Tuning::set`] (the bench's `--tune name=value`, a service's own
//! configuration file) and [`Tuning::from_env`], which reads only the variables a user sets.
//! The one place that reads clpix's environment variables.

use super::{BlurBand, BlurF32Kernel, BlurKernel, ProgramCache, ProgramUnit, Tuning};
use super::{CompactRelocation, ScanKernel, Staging};
use crate::error::{Error, Result};
use std::path::PathBuf;

/// Sets one field from its text; `None` where the text is not one of the field's values.
type Setter = fn(&mut Tuning, &str) -> Option<()>;

/// Every setting [`Tuning::set`] takes: its name, what its value may be, and its setter.
/// The names are the fields of [`Tuning`] (`blur.` the fields of its
/// [`BlurTuning`](super::BlurTuning)).
///
/// ```
/// assert!(clpix::tuning::SETTINGS.iter().any(|(name, _)| *name == "blur.kernel"));
/// ```
pub const SETTINGS: &[(&str, &str)] = &[
    ("kernel_dir", "a folder laid out as the repository's cl/"),
    (
        "build_options",
        "OpenCL compiler options (with -D CLPIX_WARP_EMULATED=1, also emulate_nvidia)",
    ),
    ("emulate_nvidia", "0 or 1"),
    ("build_log", "0 or 1"),
    ("profile", "0 or 1"),
    ("staging", "auto, off, on, or a staging slot size in KiB"),
    (
        "compact_relocate",
        "auto, group, group-lookback, warp or lookback",
    ),
    ("scan", "auto, three-pass or lookback"),
    ("max_work_group", "a number of work-items from 1 to 1024"),
    ("max_local_memory", "a number of bytes, at least 16384"),
    ("trust_drivers", "0 or 1"),
    ("build_wait", "0 or 1"),
    ("specialise_after", "a number of calls from 1 to 1000000"),
    ("cache", "on, all, readonly or off"),
    ("cache_dir", "a folder"),
    ("cache_max_bytes", "a number of bytes"),
    ("programs", "auto, kernel or file"),
    (
        "host_while_building",
        "a number of pixels or elements (0: off)",
    ),
    ("blur.kernel", "auto, registers, band, radius or two-pass"),
    ("blur.columns", "1 or 2"),
    ("blur.adjacent", "1, 2 or 4"),
    (
        "blur.band",
        "T,C,P,R[,S]: T work-items (128 or 256), C channels (1, 2 or 4) with T × C / 4 a \
         multiple of P, P pixels (4 or 8), R rows (4, 8, 16 or 32), S rows a strip",
    ),
    ("blur.channels", "1, 2 or 4"),
    ("blur.hpixels", "4 or 8"),
    ("blur.vrows", "0, 4, 8 or 16"),
    ("blur.tensor", "0, 1, horizontal or vertical"),
    ("blur.permute", "0 or 1"),
    (
        "blur.f32_kernel",
        "auto, tile, registers, band, radius or two-pass",
    ),
    ("blur.f32_channels", "1, 2 or 4"),
    ("blur.f32_columns", "1 or 2"),
    ("blur.f32_rows", "8, 16 or 32"),
    ("blur.f32_vrows", "0, 4, 8 or 16"),
    ("blur.typed_rows", "4, 8, 16 or 32"),
    ("blur.typed_vector", "1 or 4"),
];

/// The setters, in the order of [`SETTINGS`].
const SETTERS: [Setter; SETTINGS.len()] = [
    |t, v| put(&mut t.kernel_dir, path(v)),
    |t, v| {
        t.emulate_nvidia |= v.contains("CLPIX_WARP_EMULATED=1");
        put(&mut t.build_options, Some(v.to_string()))
    },
    |t, v| put(&mut t.emulate_nvidia, switch(v)),
    |t, v| put(&mut t.build_log, switch(v)),
    |t, v| put(&mut t.profile, switch(v)),
    |t, v| {
        let staging = match v {
            "auto" => Staging::Auto,
            "off" => Staging::Off,
            "on" => Staging::On,
            kib => Staging::SlotKib(kib.parse().ok().filter(|&k| k > 0)?),
        };
        put(&mut t.staging, Some(staging))
    },
    |t, v| {
        let table = [
            ("auto", None),
            ("group", Some(CompactRelocation::Group)),
            ("group-lookback", Some(CompactRelocation::GroupLookBack)),
            ("warp", Some(CompactRelocation::Warp)),
            ("lookback", Some(CompactRelocation::LookBack)),
        ];
        put(&mut t.compact_relocate, one_of(&table, v))
    },
    |t, v| {
        let table = [
            ("auto", None),
            ("three-pass", Some(ScanKernel::ThreePass)),
            ("lookback", Some(ScanKernel::LookBack)),
        ];
        put(&mut t.scan, one_of(&table, v))
    },
    |t, v| {
        let n = v.parse().ok().filter(|n| (1..=1024).contains(n));
        put(&mut t.max_work_group, n.map(Some))
    },
    |t, v| {
        let n = v.parse().ok().filter(|&n| n >= 16384);
        put(&mut t.max_local_memory, n.map(Some))
    },
    |t, v| put(&mut t.trust_drivers, switch(v)),
    |t, v| put(&mut t.build_wait, switch(v)),
    |t, v| {
        let n = v.parse().ok().filter(|n| (1..=1_000_000).contains(n));
        put(&mut t.specialise_after, n.map(Some))
    },
    |t, v| {
        let table = [
            ("on", ProgramCache::On),
            ("all", ProgramCache::All),
            ("readonly", ProgramCache::ReadOnly),
            ("off", ProgramCache::Off),
        ];
        put(&mut t.cache, one_of(&table, v))
    },
    |t, v| put(&mut t.cache_dir, path(v)),
    |t, v| put(&mut t.cache_max_bytes, v.parse().ok().map(Some)),
    |t, v| {
        let table = [
            ("auto", None),
            ("kernel", Some(ProgramUnit::Kernel)),
            ("file", Some(ProgramUnit::File)),
        ];
        put(&mut t.programs, one_of(&table, v))
    },
    |t, v| put(&mut t.host_while_building, v.parse().ok().map(Some)),
    |t, v| {
        let table = [
            ("auto", None),
            ("registers", Some(BlurKernel::Registers)),
            ("band", Some(BlurKernel::Band)),
            ("radius", Some(BlurKernel::Radius)),
            ("two-pass", Some(BlurKernel::TwoPass)),
        ];
        put(&mut t.blur.kernel, one_of(&table, v))
    },
    |t, v| put(&mut t.blur.columns, count(v, &[1, 2])),
    |t, v| put(&mut t.blur.adjacent, count(v, &[1, 2, 4])),
    |t, v| put(&mut t.blur.band, BlurBand::parse(v).map(Some)),
    |t, v| put(&mut t.blur.channels, count(v, &[1, 2, 4])),
    |t, v| put(&mut t.blur.hpixels, count(v, &[4, 8])),
    |t, v| put(&mut t.blur.vrows, count(v, &[0, 4, 8, 16])),
    |t, v| {
        let table = [
            ("0", Some((false, false))),
            ("1", Some((true, true))),
            ("horizontal", Some((true, false))),
            ("vertical", Some((false, true))),
        ];
        put(&mut t.blur.tensor, one_of(&table, v))
    },
    |t, v| put(&mut t.blur.permute, switch(v).map(Some)),
    |t, v| {
        let table = [
            ("auto", None),
            ("tile", Some(BlurF32Kernel::Tile)),
            ("registers", Some(BlurF32Kernel::Registers)),
            ("band", Some(BlurF32Kernel::Band)),
            ("radius", Some(BlurF32Kernel::Radius)),
            ("two-pass", Some(BlurF32Kernel::TwoPass)),
        ];
        put(&mut t.blur.f32_kernel, one_of(&table, v))
    },
    |t, v| put(&mut t.blur.f32_channels, count(v, &[1, 2, 4])),
    |t, v| put(&mut t.blur.f32_columns, count(v, &[1, 2])),
    |t, v| put(&mut t.blur.f32_rows, count(v, &[8, 16, 32])),
    |t, v| put(&mut t.blur.f32_vrows, count(v, &[0, 4, 8, 16])),
    |t, v| put(&mut t.blur.typed_rows, count(v, &[4, 8, 16, 32])),
    |t, v| put(&mut t.blur.typed_vector, count(v, &[1, 4])),
];

/// The variables a user sets, each with the setting it sets. `CLPIX_BACKEND` and
/// `CLPIX_DEVICE` choose the device ([`Engine::new`](crate::Engine::new)).
const VARIABLES: &[(&str, &str)] = &[
    ("CLPIX_KERNEL_DIR", "kernel_dir"),
    ("CLPIX_BUILD_LOG", "build_log"),
    ("CLPIX_PROFILE", "profile"),
    ("CLPIX_CACHE", "cache"),
    ("CLPIX_CACHE_DIR", "cache_dir"),
    ("CLPIX_CACHE_MAX_BYTES", "cache_max_bytes"),
    ("CLPIX_HOST_WHILE_BUILDING", "host_while_building"),
];

fn put<T>(field: &mut T, value: Option<T>) -> Option<()> {
    *field = value?;
    Some(())
}

fn path(v: &str) -> Option<Option<PathBuf>> {
    Some(Some(PathBuf::from(v)).filter(|_| !v.is_empty()))
}

fn switch(v: &str) -> Option<bool> {
    match v {
        "0" | "off" | "false" => Some(false),
        "1" | "on" | "true" => Some(true),
        _ => None,
    }
}

fn one_of<T: Copy>(table: &[(&str, T)], v: &str) -> Option<T> {
    table.iter().find(|(k, _)| *k == v).map(|(_, t)| *t)
}

/// A count among `allowed`, written in decimal as it is (so "04" and "+4" are refused).
fn count(v: &str, allowed: &[u32]) -> Option<Option<u32>> {
    allowed
        .iter()
        .copied()
        .find(|n| n.to_string() == v)
        .map(Some)
}

impl Tuning {
    /// Sets the setting `name` (one of [`SETTINGS`]: the fields' names, such as
    /// `"compact_relocate"` or `"blur.band"`) from `value` (trimmed), as the bench's
    /// `--tune name=value` does; `auto` clears a forced kernel. A name or value not listed is
    /// [`Error::InvalidTuning`], saying what it may be.
    ///
    /// ```
    /// let mut t = clpix::tuning::Tuning::default();
    /// t.set("blur.kernel", "band")?;
    /// assert_eq!(t.blur.kernel, Some(clpix::tuning::BlurKernel::Band));
    /// assert!(t.set("blur.kernel", "fast").is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let Some(at) = SETTINGS.iter().position(|(n, _)| *n == name) else {
            return Err(Error::InvalidTuning {
                setting: "(name)",
                value: name.to_string(),
                expected: "a setting of clpix::tuning::SETTINGS",
            });
        };
        let (setting, expected) = SETTINGS[at];
        let mut t = self.clone();
        match SETTERS[at](&mut t, value.trim()) {
            Some(()) => {
                *self = t;
                Ok(())
            }
            None => Err(Error::InvalidTuning {
                setting,
                value: value.to_string(),
                expected,
            }),
        }
    }

    /// The default tuning with the variables a user sets applied: `CLPIX_KERNEL_DIR`,
    /// `CLPIX_BUILD_LOG`, `CLPIX_PROFILE`, `CLPIX_CACHE`, `CLPIX_CACHE_DIR`,
    /// `CLPIX_CACHE_MAX_BYTES` and `CLPIX_HOST_WHILE_BUILDING` (docs/tuning.md). Unset or blank
    /// is the default; `CLPIX_BUILD_LOG` and `CLPIX_PROFILE` are on for any other value but
    /// `0`; any other value not understood is an [`Error::InvalidEnvironment`] naming the
    /// variable. Engines made without an explicit [`EngineConfig::tuning`](super::EngineConfig)
    /// read it when made. Kernel variants and shapes are never read from the environment.
    ///
    /// ```
    /// let t = clpix::tuning::Tuning::from_env()?;
    /// println!("{t:?}");
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn from_env() -> Result<Tuning> {
        let mut t = Tuning::default();
        for &(var, setting) in VARIABLES {
            let Some(v) = env_value(var)? else { continue };
            let v = match setting {
                "build_log" | "profile" => if v == "0" { "0" } else { "1" }.to_string(),
                _ => v,
            };
            t.set(setting, &v).map_err(|e| match e {
                Error::InvalidTuning {
                    value, expected, ..
                } => Error::InvalidEnvironment {
                    var,
                    value,
                    expected,
                },
                other => other,
            })?;
        }
        Ok(t)
    }
}

/// The environment variable `var`, trimmed: `None` when unset or blank, an error when not
/// Unicode.
pub(crate) fn env_value(var: &'static str) -> Result<Option<String>> {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::InvalidEnvironment {
            var,
            value: v.to_string_lossy().into_owned(),
            expected: "Unicode text",
        }),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v.trim().to_string())),
    }
}

/// Whether this test run requires an OpenCL device (`CLPIX_REQUIRE_OPENCL`, set in CI): the unit
/// tests that open devices then fail rather than pass on none. Test builds only.
#[cfg(test)]
pub(crate) fn opencl_required() -> bool {
    std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0")
}
