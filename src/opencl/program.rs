//! Programs: what a program is (a name and its files of `cl/`, declared by the operations),
//! kernel sources (embedded, or read from `CLPIX_KERNEL_DIR`), their builds per variant, and the
//! cache of built programs.

use super::cache::{CacheKey, DiskCache};
use super::{ClEngine, Vendor, lock};
use crate::config::{ProgramCache, ProgramUnit};
use crate::error::{Error, Result};
use opencl3::program::Program;
use opencl3::types::cl_device_id;
use std::sync::Arc;
use std::time::Instant;

/// A built program's key: its file, its variant's defines, and the one kernel it holds (`None`:
/// every kernel of the file).
pub(crate) type ProgramKey = (ProgramId, Defines, Option<&'static str>);

/// The header every program starts with (pasted in, not `#include`d: no include path to get
/// wrong).
pub(super) const COMMON_H: ClFile = ClFile {
    path: "common.h",
    text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/cl/common.h")),
};

/// One OpenCL C file of the top-level `cl/` folder: its path there (also its path under
/// `CLPIX_KERNEL_DIR`) and its text, embedded at build time by [`cl_file!`].
#[derive(Debug)]
pub(crate) struct ClFile {
    /// The path under `cl/`, such as `reduce/reduce.cl`.
    pub(crate) path: &'static str,
    /// The embedded text.
    pub(crate) text: &'static str,
}

/// The [`ClFile`] at `path` under the crate's `cl/` folder, its text embedded so that a
/// dependent crate and a copied binary work anywhere.
macro_rules! cl_file {
    ($path:literal) => {
        $crate::opencl::ClFile {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/cl/", $path)),
        }
    };
}
pub(crate) use cl_file;

/// An OpenCL program: a name and its files, pasted in order after `common.h`. Each operation
/// declares its own (`ops/<op>/kernels.rs`); this layer knows none of them. Programs are equal
/// when their names are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProgramId {
    name: &'static str,
    files: &'static [ClFile],
}

impl ProgramId {
    /// The program `name` made of `files`: the portable kernels first, then (`*_nv.cl`) the
    /// NVIDIA-only ones, which only the variants that ask for them compile.
    pub(crate) const fn new(name: &'static str, files: &'static [ClFile]) -> ProgramId {
        ProgramId { name, files }
    }

    /// The program's name, as [`ProgramRecord::program`] reports it.
    pub(crate) fn name(self) -> &'static str {
        self.name
    }

    /// The program's files, in the order they are pasted.
    pub(crate) fn files(self) -> &'static [ClFile] {
        self.files
    }

    /// The embedded source of every file of the program, in order.
    #[cfg(test)]
    pub(crate) fn embedded(self) -> String {
        self.files
            .iter()
            .map(|f| f.text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl PartialEq for ProgramId {
    fn eq(&self, other: &ProgramId) -> bool {
        self.name == other.name
    }
}

impl Eq for ProgramId {}

impl std::hash::Hash for ProgramId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

/// A kernel of a program, by name. Each operation declares the kernels it launches as
/// constants (`ops/<op>/kernels.rs`), checked by a test against its program's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Kernel {
    /// The program that holds the kernel.
    pub(crate) program: ProgramId,
    /// The kernel's name in the source.
    pub(crate) name: &'static str,
}

impl Kernel {
    /// The kernel `name` of `program`.
    pub(crate) const fn new(program: ProgramId, name: &'static str) -> Kernel {
        Kernel { program, name }
    }

    /// The same kernel built from `program`, another program whose files include this
    /// kernel's (the compaction's program holds the scan's passes beside its own kernels).
    pub(crate) const fn in_program(self, program: ProgramId) -> Kernel {
        Kernel { program, ..self }
    }
}

/// Where a program an engine made ready came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramOrigin {
    /// Compiled from the OpenCL C source.
    Source,
    /// Loaded from the persistent program cache (a binary the driver built before).
    Cache,
}

/// A program an engine made ready: which, where it came from and how long that took. See
/// [`Engine::programs`](crate::Engine::programs).
///
/// ```
/// let engine = clpix::Engine::new()?;
/// let img = image::RgbaImage::new(8, 8);
/// engine.extreme(&img, clpix::Extreme::Brightest)?;
/// for p in engine.programs() {
///     println!("{} {:?} {} {:?} {:.1} ms", p.program, p.kernel, p.variant, p.origin, p.millis);
/// }
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramRecord {
    /// The program (`reduce`, `histogram`, `scan`, `compact`, `blur`, `select`).
    pub program: &'static str,
    /// The one kernel it was built for, or `None` for every kernel of its file (see
    /// [`ProgramUnit`]).
    pub kernel: Option<&'static str>,
    /// Its variant's defines (`(no defines)` for the plain program).
    pub variant: String,
    /// Built from source or loaded from the cache.
    pub origin: ProgramOrigin,
    /// Milliseconds it took.
    pub millis: f64,
}

/// A program variant's named defines (`-D NAME=value`), the program cache's key beside the
/// program: at most [`Defines::MAX`], kept in the order given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Defines {
    items: [(&'static str, u32); Defines::MAX],
    len: usize,
}

impl Defines {
    /// The most defines a variant has.
    pub(crate) const MAX: usize = 6;

    /// No defines: the program as the engine builds it for every kernel.
    pub(crate) const NONE: Defines = Defines {
        items: [("", 0); Defines::MAX],
        len: 0,
    };

    /// These defines and `name = value`.
    pub(crate) const fn with(mut self, name: &'static str, value: u32) -> Defines {
        assert!(self.len < Defines::MAX, "too many defines for one variant");
        self.items[self.len] = (name, value);
        self.len += 1;
        self
    }

    /// The compiler options: `-D NAME=value` each.
    pub(crate) fn options(&self) -> String {
        self.items[..self.len]
            .iter()
            .map(|(n, v)| format!("-D {n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl std::fmt::Display for Defines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.len {
            0 => f.write_str("(no defines)"),
            _ => f.write_str(&self.options()),
        }
    }
}

impl ClEngine {
    /// The program that holds `kernel`, built with the named `defines` (a variant: kernels
    /// specialised on a value known only at run time, such as the fused blur's radius) on first
    /// use and kept: the kernel alone, or its whole file (see [`ProgramUnit`]).
    pub(crate) fn program_for(&self, kernel: Kernel, variant: Defines) -> Result<Arc<Program>> {
        let whole = (kernel.program, variant, None);
        match self.store.program_unit {
            ProgramUnit::File => self.program_keyed(whole),
            ProgramUnit::Kernel => {
                // A whole file made ready (see `make_every_file_ready`) serves its kernels.
                if let Some(p) = lock(&self.store.programs).get(&whole) {
                    return Ok(p.clone());
                }
                self.program_keyed((kernel.program, variant, Some(kernel.name)))
            }
        }
    }

    /// The program `key` names, built (or loaded from the cache) on first use and kept.
    pub(super) fn program_keyed(&self, key: ProgramKey) -> Result<Arc<Program>> {
        let (name, variant, unit) = key;
        if let Some(p) = lock(&self.store.programs).get(&key) {
            return Ok(p.clone());
        }
        if let Some(log) = lock(&self.store.failed_variants).get(&key) {
            return Err(Error::KernelBuild {
                program: name.name(),
                device: self.info.name.clone(),
                log: log.clone(),
            });
        }
        let src = self.source(name, unit)?;
        let id = self.device_id as cl_device_id;
        let options = match variant.options() {
            d if d.is_empty() => self.store.build_options.clone(),
            d => format!("{} {d}", self.store.build_options),
        };
        let started = Instant::now();
        let cache_key = self
            .store
            .disk_cache
            .as_ref()
            .map(|_| CacheKey::new(&src, &options, &self.store.cache_identity));
        if let Some(program) = self.load_cached(cache_key.as_ref(), &options) {
            self.record(key, ProgramOrigin::Cache, started);
            return Ok(self.keep_program(key, program));
        }
        // Not in the cache: a call answered from the CPU leaves the build to a thread.
        if let Some(e) = self.defer_build(key) {
            return Err(e);
        }
        let mut program = Program::create_from_source(&self.context, &src)
            .map_err(|e| Error::cl("clCreateProgramWithSource", e.0))?;
        let built = {
            let _serial = self.build_lock();
            program.build(&[id], &options)
        };
        if let Err(e) = built {
            let log = program.get_build_log(id).unwrap_or_default();
            let log = if log.trim().is_empty() {
                format!("(empty build log; clBuildProgram returned {})", e.0)
            } else {
                log
            };
            if variant != Defines::NONE {
                lock(&self.store.failed_variants).insert(key, log.clone());
            }
            return Err(Error::KernelBuild {
                program: name.name(),
                device: self.info.name.clone(),
                log,
            });
        }
        self.record(key, ProgramOrigin::Source, started);
        if self.tuning.build_log {
            let log = program.get_build_log(id).unwrap_or_default();
            eprintln!(
                "clpix build {} {} variant {variant} [{options}]:\n{log}",
                name.name(),
                unit.unwrap_or("(every kernel)")
            );
        }
        let program = self.keep_program(key, program);
        // CPU devices store only where asked (see ProgramCache::On).
        let store = self.tuning.cache == ProgramCache::All
            || self.info.device_type != crate::opencl::DeviceType::Cpu;
        if let (Some(cache), Some(cache_key), true) = (&self.store.disk_cache, cache_key, store) {
            self.store_in_background(Arc::clone(cache), cache_key, Arc::clone(&program));
        }
        Ok(program)
    }

    /// With one kernel a program ([`ProgramUnit::Kernel`]), makes every file ready whole in its
    /// plain variant, so that every kernel a call may choose (those chosen by size, such as a
    /// long array's scan or a huge image's bands, included) is ready; with whole files, nothing
    /// (a call made its file ready). For [`Engine::warm_up`](crate::Engine::warm_up): a service
    /// pays once what a short process should not.
    pub(crate) fn make_every_file_ready(&self, programs: &[ProgramId]) -> Result<()> {
        if self.store.program_unit == ProgramUnit::File {
            return Ok(());
        }
        for &program in programs {
            self.program_keyed((program, Defines::NONE, None))?;
        }
        Ok(())
    }

    /// Stores `program`'s binary in the cache on a thread of its own: asking PoCL for a
    /// program's binaries compiles every kernel of it for the device (2.8 s of the demo's cold
    /// start on the 2-core machine, against 2.3 s for everything else), which no caller should
    /// wait for. [`wait_for_builds`](Self::wait_for_builds) waits for it too. On the caller's
    /// thread where the driver takes no threads of clpix's own (Oclgrind, rusticl).
    fn store_in_background(&self, cache: Arc<DiskCache>, key: CacheKey, program: Arc<Program>) {
        let device = self.info.name.clone();
        let serialize = self.serialize_kernels;
        let store = move || {
            // PoCL before 6 compiles the kernels here: one thing at a time, as its launches.
            let serial = serialize.then(|| lock(&super::POCL_KERNEL_LOCK));
            let bins = program.get_binaries();
            drop(serial);
            match bins {
                Ok(bins) if bins.len() == 1 => cache.store(&key, &bins[0]),
                _ => log::warn!("clpix: {device} gave no program binary to cache"),
            }
        };
        if !self.own_threads {
            store();
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("clpix program cache".into())
            .spawn(store);
        match spawned {
            Ok(handle) => self.add_background_thread(handle),
            Err(e) => log::warn!("clpix: no thread to store a program binary: {e}"),
        }
    }

    /// The program stored in the persistent cache under `key`, built from its binary; `None`
    /// on a miss, and where the driver refuses the binary (the entry is then removed).
    fn load_cached(&self, key: Option<&CacheKey>, options: &str) -> Option<Program> {
        let (cache, key) = (self.store.disk_cache.as_ref()?, key?);
        let binary = cache.load(key)?;
        let id = self.device_id as cl_device_id;
        // SAFETY: one binary for one device, both valid for the call.
        let made = unsafe { Program::create_from_binary(&self.context, &[id], &[&binary]) };
        let built = made.and_then(|mut p| {
            let _serial = self.build_lock();
            p.build(&[id], options).map(|()| p)
        });
        match built {
            Ok(p) => Some(p),
            Err(e) => {
                log::warn!(
                    "clpix: the driver refused a cached program ({}): removed, built from source",
                    e.0
                );
                cache.remove(key);
                None
            }
        }
    }

    /// Notes (and logs) a program that is ready, where it came from and how long it took.
    fn record(&self, (name, variant, kernel): ProgramKey, origin: ProgramOrigin, started: Instant) {
        let r = ProgramRecord {
            program: name.name(),
            kernel,
            variant: variant.to_string(),
            origin,
            millis: started.elapsed().as_secs_f64() * 1e3,
        };
        log::info!(
            "clpix: {} {} {} {} in {:.1} ms on {}",
            r.program,
            r.kernel.unwrap_or("(every kernel)"),
            r.variant,
            match origin {
                ProgramOrigin::Source => "built from source",
                ProgramOrigin::Cache => "loaded from the program cache",
            },
            r.millis,
            self.info.name
        );
        lock(&self.store.records).push(r);
    }

    /// Every program this engine has made ready, in order.
    pub(crate) fn records(&self) -> Vec<ProgramRecord> {
        lock(&self.store.records).clone()
    }

    /// Held around a build where the implementation's compiler is not safe on several threads:
    /// Intel's CPU runtime crashed in LLVM's always-inline pass once in CI (2026-11-25), with
    /// engines of parallel tests and background builds compiling at once.
    fn build_lock(&self) -> Option<std::sync::MutexGuard<'static, ()>> {
        static BUILDS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        (self.vendor == Vendor::Intel).then(|| lock(&BUILDS))
    }

    /// Keeps a built program in the engine's table and returns it.
    fn keep_program(&self, key: ProgramKey, program: Program) -> Arc<Program> {
        let program = Arc::new(program);
        // Two threads may have built it at once; either copy is fine.
        lock(&self.store.programs)
            .entry(key)
            .or_insert(program.clone());
        program
    }

    /// The persistent program cache's folder, where one is in use.
    pub(crate) fn cache_dir(&self) -> Option<&std::path::Path> {
        self.store.disk_cache.as_ref().map(|c| c.dir())
    }

    /// Whether this engine runs `kernel` of the variant `variant`, written for NVIDIA GPUs
    /// (inline PTX: warp ballots, tensor-core products): built on NVIDIA GPUs, where a build
    /// failure falls back to the portable kernels with a `log` warning naming `what`. A variant
    /// `forced` (by a tuning variable, to measure or test it) does not fall back: its build
    /// failure is an error, and on any other device so is the `forced` error itself, unless the
    /// PTX is emulated (`-D CLPIX_WARP_EMULATED=1` in `build_options`, as the tests do):
    /// another compiler may build the PTX into wrong code (PoCL 3.1 did) or abort the process
    /// (PoCL 5's LLVM did).
    pub(crate) fn nvidia_variant(
        &self,
        (kernel, variant): (Kernel, Defines),
        what: &str,
        forced: Option<Error>,
    ) -> Result<bool> {
        let is_forced = forced.is_some();
        if self.vendor != Vendor::Nvidia {
            match forced {
                None => return Ok(false),
                Some(e) if !self.tuning.emulate_nvidia => return Err(e),
                Some(_) => {}
            }
        }
        match self.program_for(kernel, variant) {
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
}
