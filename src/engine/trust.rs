//! Distrust of drivers: each operation's kernels, probed at their first call on a device and
//! driver against the CPU path (docs/design.md, "Distrust of drivers").

use super::{Backend, Engine};
use crate::error::{Error, Result};
use crate::opencl::{self, ClEngine};
use std::sync::Arc;

/// A kernel family's known-answer verdict on an engine's device (see
/// [`Engine::driver_verdicts`]).
///
/// ```
/// assert!(clpix::Engine::cpu().driver_verdicts().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverVerdict {
    /// What was probed: a kernel family and one of its operations, as `family/operation`
    /// (`reduce/brightest`, `compact/compact_sorted`, `blur/gaussian_blur`, …).
    pub operation: String,
    /// Whether its probe answered as the CPU path does (its calls run on the device).
    pub trusted: bool,
    /// What differed, where it did not.
    pub detail: Option<String>,
}

/// A kernel family: the kernels of one operation's program, trusted on a device and driver only
/// once they have answered a known-answer probe as the CPU path does (see docs/design.md,
/// "Distrust of drivers"). Each operation declares its own.
pub(crate) struct Family {
    /// The family's name in verdicts and warnings (`reduce`, `blur`, …).
    pub name: &'static str,
    /// The program whose sources the verdict is kept against.
    pub program: opencl::ProgramId,
    /// Runs the probe of `operation` (one of the family's, by its name in `dispatch`): that
    /// operation on `engine` (the device, probing nothing itself) and on the CPU, on a small
    /// input that crosses the kernels' boundaries (groups, bands, strips, parts), so that it
    /// builds no program the call would not; `call` is the call's own parameters where its
    /// programs depend on them (a blur's radius). `Ok(None)` when the answers are equal, else
    /// what differed.
    pub probe: fn(
        engine: &Engine,
        operation: &'static str,
        call: &dyn std::any::Any,
    ) -> Result<Option<String>>,
}

impl Engine {
    /// Whether `family` may run on `c`: its verdict, the program cache's, or (the first time
    /// on this device and driver) its probe's, run as the call would run (answered from the CPU
    /// while its program builds, where `deferring`). A wrong answer is kept, warned of once,
    /// and sends the family's calls to the CPU; a probe that cannot run (its program does not
    /// build, a device limit) gives no verdict, and the call meets the same error or fallback
    /// by itself; one whose programs still build answers a small call from the CPU.
    pub(super) fn trusts(
        &self,
        c: &Arc<ClEngine>,
        (family, operation): (&'static Family, &'static str),
        call: &dyn std::any::Any,
        deferring: bool,
    ) -> bool {
        if !self.checks_drivers || c.tuning.trust_drivers {
            return true;
        }
        let key = format!("{}/{operation}", family.name);
        let verdict = match c.verdict(&key) {
            Some(v) => return v == opencl::Verdict::Trusted,
            None => c.stored_verdict(&key, family.program),
        };
        let verdict = match verdict {
            Some(v) => v,
            None => {
                let view = Engine {
                    backend: Backend::OpenCl(c.clone()),
                    info: self.info.clone(),
                    fallback_on_device_error: false,
                    answer_while_building: false,
                    checks_drivers: false,
                };
                let started = std::time::Instant::now();
                let probe = || (family.probe)(&view, operation, call);
                let probed = match deferring {
                    true => opencl::with_builds_deferred(c, probe),
                    false => probe(),
                };
                log::debug!(
                    "clpix: known-answer probe of {key} on {} in {:.1} ms: {probed:?}",
                    c.info.name,
                    started.elapsed().as_secs_f64() * 1e3
                );
                let verdict = match probed {
                    Ok(None) => opencl::Verdict::Trusted,
                    Ok(Some(what)) => opencl::Verdict::Wrong(what),
                    // A small call while the probe's programs build: the CPU answers it, as
                    // it would while the call's own programs build.
                    Err(Error::ProgramBuilding { .. }) if deferring => return false,
                    Err(_) => return true,
                };
                c.keep_verdict(&key, family.program, verdict.clone());
                verdict
            }
        };
        match verdict {
            opencl::Verdict::Trusted => true,
            opencl::Verdict::Wrong(what) => {
                log::warn!(
                    "clpix: the {key} kernels answered wrong on {} ({} {}): {what}; its calls \
                     run on the CPU (Engine::driver_verdicts)",
                    c.info.name,
                    c.info.platform,
                    c.info.driver_version
                );
                false
            }
        }
    }

    /// What the known-answer probes found on this engine's device so far, by operation: each
    /// operation of a kernel family is probed at its first call (a small input compared with
    /// the CPU path), and one that answered wrong runs its calls on the CPU from then on, with
    /// a `log` warning naming the driver. Empty on the CPU engine. See the README's "Distrust of drivers".
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(8, 8, image::Rgba([1, 2, 3, 255]));
    /// engine.extreme(&img, clpix::Extreme::Brightest)?;
    /// for v in engine.driver_verdicts() {
    ///     println!("{}: {}", v.operation, if v.trusted { "trusted" } else { "answered wrong" });
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn driver_verdicts(&self) -> Vec<DriverVerdict> {
        let Backend::OpenCl(c) = &self.backend else {
            return Vec::new();
        };
        c.verdicts()
            .into_iter()
            .map(|(operation, v)| DriverVerdict {
                operation,
                trusted: v == opencl::Verdict::Trusted,
                detail: match v {
                    opencl::Verdict::Trusted => None,
                    opencl::Verdict::Wrong(what) => Some(what),
                },
            })
            .collect()
    }

    /// Whether this is a probe's view of another engine's device (it owns nothing of it).
    pub(super) fn is_probe_view(&self) -> bool {
        matches!(self.backend, Backend::OpenCl(_)) && !self.checks_drivers
    }
}
