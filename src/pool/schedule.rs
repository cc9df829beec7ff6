//! Who takes the next job: each engine's measured time a job, and a rule that keeps a slow
//! device from holding a batch or a stream back.
//!
//! An engine takes a job only if it would finish it no later than the other engines would
//! finish the jobs still ahead of them: for a batch, every job not yet taken; for a stream,
//! the frames the window lets the others run before the results must come out in order. A
//! job's time is measured per engine (a moving average of wall time, which counts the transfers);
//! an engine not yet measured is assumed [`UNKNOWN_FACTOR`] times slower than the slowest one
//! measured. CPU engines (rayon, or an OpenCL CPU device) in a pool with a GPU wait for a GPU's
//! first measurement and are assumed to take at least [`CPU_FIRST_JOB_SECS`] for their first job
//! (it may build their programs); the others start at once. A CPU engine also competes with the
//! GPUs' own host work (copies to and from pageable memory, staging): once it has run, it stops for
//! the rest of the batch if the pool's measured rate with it is below the GPUs' rate before it
//! started (H200 with PoCL on 16 cores, 64 frames through a blur with download: 540 ms with the CPU
//! device against 326 for the GPU alone, before this rule).

use std::sync::Mutex;
use std::time::Duration;

/// How much slower than the slowest measured engine an unmeasured one is assumed to be.
pub(crate) const UNKNOWN_FACTOR: f64 = 8.0;

/// Seconds a CPU engine's first job beside a GPU is assumed to take at least: the first job
/// on a device may build its programs (H200 with PoCL 5 on 16 cores, 64 frames through a blur
/// with download: the GPU alone took 0.35 s, and the CPU device's one job, its blur program
/// built first, about 0.4 s, so the batch took 0.42 s). A batch shorter than this on the GPUs
/// never waits for a CPU engine; a longer one measures it.
pub(crate) const CPU_FIRST_JOB_SECS: f64 = 2.0;

/// One engine's record.
#[derive(Debug, Clone)]
struct EngineRate {
    /// Threads feeding the engine (jobs it runs at once).
    workers: usize,
    /// Seconds a job, smoothed; `None` before the first job ends.
    secs: Option<f64>,
    /// A CPU engine: in a pool with a GPU it waits for a measurement before its first job.
    cpu: bool,
    /// Stopped after a device failure.
    failed: bool,
    /// A GPU's seconds a job before any CPU engine ran one (its rate alone).
    alone: Option<f64>,
    /// A CPU engine stopped for the rest of the batch: it slowed the GPUs more than it added.
    /// The others no longer count on it.
    retired: bool,
}

/// The pool's engines' rates, shared by their workers.
#[derive(Debug)]
pub(crate) struct Rates {
    engines: Mutex<Vec<EngineRate>>,
}

/// Jobs a second of the engines that `pick` selects, at their `secs` (unmeasured: none).
fn jobs_per_sec(engines: &[EngineRate], pick: impl Fn(&EngineRate) -> Option<f64>) -> f64 {
    engines
        .iter()
        .filter(|r| !r.failed && !r.retired)
        .filter_map(|r| pick(r).filter(|&s| s > 0.0).map(|s| r.workers as f64 / s))
        .sum()
}

impl Rates {
    /// `engines`: for each engine, its worker count and whether it is a CPU engine.
    pub(crate) fn new(engines: &[(usize, bool)]) -> Rates {
        Rates {
            engines: Mutex::new(
                engines
                    .iter()
                    .map(|&(workers, cpu)| EngineRate {
                        workers: workers.max(1),
                        secs: None,
                        cpu,
                        failed: false,
                        alone: None,
                        retired: false,
                    })
                    .collect(),
            ),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<EngineRate>> {
        self.engines.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether engine `e` should take one more job, with `ahead` jobs (this one included) for
    /// the others to run otherwise. `None`: not now, ask again later (waiting for a
    /// measurement); `Some(false)`: never again in this batch.
    pub(crate) fn admit(&self, e: usize, ahead: usize) -> Option<bool> {
        let mut engines = self.lock();
        let me = &engines[e];
        if me.failed || me.retired {
            return Some(false);
        }
        let measured = |r: &EngineRate| r.secs.filter(|_| !r.failed && !r.retired);
        let slowest = engines.iter().filter_map(measured).fold(0.0, f64::max);
        let gpu_running = engines.iter().any(|r| !r.cpu && !r.failed);
        let mine = match me.secs {
            Some(s) => s,
            None if me.cpu && gpu_running && slowest == 0.0 => return None,
            None if slowest == 0.0 => return Some(true),
            None if me.cpu && gpu_running => (slowest * UNKNOWN_FACTOR).max(CPU_FIRST_JOB_SECS),
            None => slowest * UNKNOWN_FACTOR,
        };
        if me.cpu && me.secs.is_some() && gpu_running {
            // Measured beside the GPUs: worth it only if the pool now runs faster than the
            // GPUs did alone.
            let with = jobs_per_sec(&engines, |r| r.secs);
            let gpus_alone = jobs_per_sec(&engines, |r| if r.cpu { None } else { r.alone });
            if with < gpus_alone {
                engines[e].retired = true;
                return Some(false);
            }
        }
        // The others: how long they would take for the jobs ahead (at least one job's time).
        let (mut rate, mut shortest, mut others) = (0.0, f64::INFINITY, 0);
        for (i, r) in engines.iter().enumerate() {
            if i == e || r.failed || r.retired {
                continue;
            }
            others += 1;
            let secs = r.secs.unwrap_or(slowest * UNKNOWN_FACTOR);
            if secs > 0.0 {
                rate += r.workers as f64 / secs;
                shortest = shortest.min(secs);
            }
        }
        if others == 0 || rate == 0.0 {
            return Some(true);
        }
        let theirs = (ahead as f64 / rate).max(shortest);
        Some(mine <= theirs)
    }

    /// Records that engine `e` ran a job in `took`.
    pub(crate) fn record(&self, e: usize, took: Duration) {
        let s = took.as_secs_f64();
        let mut engines = self.lock();
        let cpu_ran = engines.iter().any(|r| r.cpu && r.secs.is_some());
        let r = &mut engines[e];
        // Half the weight on the newest: a first job that built kernels is soon forgotten.
        r.secs = Some(r.secs.map_or(s, |old| 0.5 * old + 0.5 * s));
        if !r.cpu && !cpu_ran {
            r.alone = r.secs;
        }
    }

    /// Stops engine `e` after a device failure, if another engine is still running (the last
    /// one keeps going, its failures reported job by job). Whether it stopped.
    pub(crate) fn fail(&self, e: usize) -> bool {
        let mut engines = self.lock();
        let others = engines.iter().enumerate().any(|(i, r)| i != e && !r.failed);
        if others {
            engines[e].failed = true;
            // A CPU engine stopped for slowing this one is needed again.
            engines.iter_mut().for_each(|r| r.retired = false);
        }
        others
    }

    /// Whether engine `e` has been stopped.
    pub(crate) fn failed(&self, e: usize) -> bool {
        self.lock()[e].failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_engine_takes_work_only_while_it_pays() {
        // A GPU with 3 workers at 3 ms a job, a CPU engine at 50 ms.
        let rates = Rates::new(&[(3, false), (1, true)]);
        assert_eq!(rates.admit(1, 64), None, "the CPU waits for a measurement");
        assert_eq!(rates.admit(0, 64), Some(true), "the GPU starts at once");
        rates.record(0, Duration::from_millis(3));
        // Unmeasured beside a GPU: assumed 2 s (its programs may build); the GPU needs 64 ms
        // for 64 jobs, 3 s for 3000.
        assert_eq!(rates.admit(1, 64), Some(false));
        assert_eq!(rates.admit(1, 3000), Some(true));
        rates.record(1, Duration::from_millis(50));
        assert_eq!(
            rates.admit(1, 64),
            Some(true),
            "64 jobs: 64 ms on the GPU alone"
        );
        assert_eq!(
            rates.admit(1, 20),
            Some(false),
            "20 jobs: 20 ms on the GPU alone"
        );
        assert_eq!(
            rates.admit(0, 1),
            Some(true),
            "the fastest always takes work"
        );
    }

    #[test]
    fn a_cpu_engine_that_slows_the_gpu_stops() {
        // A GPU with 3 workers at 5 ms a job alone (600 jobs/s); a CPU engine at 10 ms.
        let rates = Rates::new(&[(3, false), (1, true)]);
        rates.record(0, Duration::from_millis(5));
        assert_eq!(
            rates.admit(1, 1500),
            Some(true),
            "not yet measured beside the GPU: 2.5 s of jobs ahead"
        );
        // Beside the CPU engine the GPU's jobs take 12 ms: 250 + 100 jobs/s < 600 alone.
        rates.record(1, Duration::from_millis(10));
        for _ in 0..8 {
            rates.record(0, Duration::from_millis(12));
        }
        assert_eq!(rates.admit(1, 64), Some(false));
        // The GPU no longer counts on it: it takes the last job although the CPU engine's
        // 10 ms are shorter than its 12 (counted, the CPU engine would have been left the
        // job, and the batch would never have ended: the H200's first run of this rule).
        assert_eq!(rates.admit(0, 1), Some(true));
        assert_eq!(rates.admit(1, 64), Some(false), "stopped for the batch");
        // Until the GPU fails: then the CPU engine is all there is.
        assert!(rates.fail(0));
        assert_eq!(rates.admit(1, 64), Some(true));
        // Unslowed (5.2 ms), the CPU's 12.5 jobs/s add to the GPU's: it goes on.
        let rates = Rates::new(&[(3, false), (1, true)]);
        rates.record(0, Duration::from_millis(5));
        rates.record(1, Duration::from_millis(80));
        rates.record(0, Duration::from_micros(5100));
        assert_eq!(rates.admit(1, 64), Some(true));
    }

    #[test]
    fn failed_engines_take_nothing_and_leave_the_others_running() {
        let rates = Rates::new(&[(1, false), (1, true)]);
        assert!(rates.fail(0));
        assert_eq!(rates.admit(0, 10), Some(false));
        assert_eq!(
            rates.admit(1, 10),
            Some(true),
            "the CPU no longer waits for the GPU"
        );
        assert!(!rates.fail(1), "the last engine keeps running");
        assert_eq!(rates.admit(1, 10), Some(true));
    }

    #[test]
    fn equal_engines_share() {
        let rates = Rates::new(&[(2, false), (2, false)]);
        rates.record(0, Duration::from_millis(5));
        rates.record(1, Duration::from_millis(5));
        assert_eq!(rates.admit(0, 1), Some(true));
        assert_eq!(rates.admit(1, 1), Some(true));
    }
}
