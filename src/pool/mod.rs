//! Several engines and frames in flight: [`EnginePool`] runs batches and streams of independent
//! jobs on every device of a host, and [`Engine::stream`] overlaps one engine's transfers and
//! kernels across frames.
//!
//! Both give each job's result exactly as one engine would (every device computes the same
//! bits), in the jobs' order.

mod resident;
mod results;
mod run;
mod schedule;

pub use resident::Resident;
pub use results::FrameResults;

use crate::engine::{BackendKind, Engine};
use crate::error::{Error, Result};
use crate::opencl::{self, DeviceType, MAX_LANES};
use run::{Worker, check_window, run_ordered};

/// Frames in flight for [`Engine::stream`] and [`EnginePool::stream`] when a caller has no
/// reason to choose: enough for one frame uploading, one in its kernels and one downloading.
pub const DEFAULT_IN_FLIGHT: usize = 3;

/// The workers of one engine for a window of `in_flight` jobs: one lane each on a GPU or an
/// accelerator (up to the lanes an engine opens); one for a CPU engine, whose every job uses
/// all its cores already.
fn workers_of(engine: &Engine, index: usize, in_flight: usize) -> Vec<Worker> {
    let lanes = match engine.device() {
        Some(d) if d.device_type != DeviceType::Cpu => in_flight.clamp(1, MAX_LANES),
        _ => 1,
    };
    (0..lanes)
        .map(|lane| Worker {
            engine: index,
            lane,
        })
        .collect()
}

impl Engine {
    /// Runs `job` on each frame of `frames` with up to `in_flight` frames at once, and hands
    /// each result to `sink` as `(index, result)`, in the frames' order.
    ///
    /// On a GPU each frame in flight has a queue of its own (and its own pinned staging), so
    /// that frame i + 1's upload, frame i's kernels and frame i − 1's download overlap. At most
    /// `in_flight` frames are taken from `frames` and not yet given to `sink`: memory stays
    /// bounded however long the stream. A frame's error is its result; the frames after it are
    /// unaffected. Results are those of calling `job` on each frame in turn. A panic in `job`
    /// is raised again here once the frames in flight have ended. An error only for
    /// `in_flight == 0`.
    ///
    /// ```
    /// use clpix::Engine;
    /// let engine = Engine::new()?;
    /// let frames = (0..8u8).map(|i| image::RgbaImage::from_pixel(64, 48, image::Rgba([i, 0, 0, 255])));
    /// let mut brightest = Vec::new();
    /// engine.stream(frames, 3, |e, frame| e.extreme(frame, clpix::Extreme::Brightest), |_, hit| brightest.push(hit))?;
    /// assert_eq!(brightest.len(), 8);
    /// assert_eq!(brightest[7].as_ref().unwrap().rgba, [7, 0, 0, 255]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn stream<F, R>(
        &self,
        frames: impl IntoIterator<Item = F>,
        in_flight: usize,
        job: impl Fn(&Engine, &F) -> Result<R> + Sync,
        mut sink: impl FnMut(usize, Result<R>),
    ) -> Result<()>
    where
        F: Send,
        R: Send,
    {
        check_window(in_flight)?;
        let workers = workers_of(self, 0, in_flight);
        run_ordered(
            &[self],
            &workers,
            frames.into_iter(),
            in_flight,
            &|_| None,
            &job,
            &mut sink,
        );
        Ok(())
    }
}

/// One engine per usable device, sharing batches and streams of independent jobs.
///
/// [`new`](Self::new) opens every GPU and accelerator; where there is none, one engine as
/// [`Engine::new`] chooses (rayon, or the device `CLPIX_DEVICE` names). Jobs go to whichever
/// engine is free, but an engine takes one only if it would finish it no later than the others
/// would finish the work ahead of them, measured as the batch runs: a slow device (a CPU beside
/// a GPU) helps with long batches and never holds one back. A job whose device fails (a kernel
/// that does not build, an OpenCL error: [`Error::is_device_failure`]) runs again on another
/// engine, and the failed one takes no more work in that call; with one engine left, its
/// errors are the jobs' results.
///
/// ```
/// use clpix::EnginePool;
/// let pool = EnginePool::new()?;
/// println!("{} engine(s)", pool.engines().len());
/// let images: Vec<_> = (0..6u8)
///     .map(|i| image::RgbaImage::from_pixel(32, 32, image::Rgba([i * 40, 0, 0, 255])))
///     .collect();
/// let hits = pool.map(&images, |engine, img| engine.extreme(img, clpix::Extreme::Brightest));
/// assert_eq!(hits[5].as_ref().unwrap().rgba, [200, 0, 0, 255]);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug)]
pub struct EnginePool {
    engines: Vec<Engine>,
}

impl EnginePool {
    /// Every GPU and accelerator clpix can open (a device that fails to open is skipped with a
    /// warning); with none, one engine as [`Engine::new`] chooses.
    ///
    /// ```
    /// let pool = clpix::EnginePool::new()?;
    /// for e in pool.engines() {
    ///     println!("{}", e.backend());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn new() -> Result<EnginePool> {
        let mut engines = Vec::new();
        for d in opencl::devices().unwrap_or_default() {
            if d.device_type == DeviceType::Cpu {
                continue;
            }
            match Engine::with_device(&d) {
                Ok(e) => engines.push(e),
                Err(e) => log::warn!("clpix: the pool leaves out {}: {e}", d.name),
            }
        }
        if engines.is_empty() {
            engines.push(Engine::new()?);
        }
        EnginePool::from_engines(engines)
    }

    /// One engine for each of `devices` (from [`devices()`](crate::devices)), CPU devices
    /// included: an error if one does not open.
    ///
    /// ```
    /// let devices = clpix::devices().unwrap_or_default();
    /// if !devices.is_empty() {
    ///     let pool = clpix::EnginePool::with_devices(&devices)?;
    ///     assert_eq!(pool.engines().len(), devices.len());
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_devices(devices: &[opencl::DeviceInfo]) -> Result<EnginePool> {
        let engines = devices
            .iter()
            .map(Engine::with_device)
            .collect::<Result<Vec<_>>>()?;
        EnginePool::from_engines(engines)
    }

    /// A pool of the given engines (say, with their own [`EngineConfig`](crate::EngineConfig)s,
    /// or rayon beside the GPUs); an error if there is none.
    ///
    /// ```
    /// use clpix::{Engine, EnginePool};
    /// let pool = EnginePool::from_engines(vec![Engine::cpu(), Engine::new()?])?;
    /// assert_eq!(pool.engines().len(), 2);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn from_engines(engines: Vec<Engine>) -> Result<EnginePool> {
        if engines.is_empty() {
            return Err(Error::invalid(
                "engines",
                0,
                "at least one engine in a pool",
            ));
        }
        Ok(EnginePool { engines })
    }

    /// The pool's engines, in the order they were given or found.
    ///
    /// ```
    /// let pool = clpix::EnginePool::from_engines(vec![clpix::Engine::cpu()])?;
    /// assert_eq!(pool.engines()[0].backend().kind(), clpix::BackendKind::Cpu);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn engines(&self) -> &[Engine] {
        &self.engines
    }

    /// Runs `job` on every input, on the pool's engines at once; the results in the inputs'
    /// order, each the one engine's result. A job may run on any engine, and again on another
    /// after a device failure: keep jobs free of side effects that must not repeat.
    ///
    /// ```
    /// let pool = clpix::EnginePool::new()?;
    /// let arrays = vec![vec![1u32, 2, 3], vec![4, 5]];
    /// let scans = pool.map(&arrays, |engine, a| engine.exclusive_scan(a));
    /// assert_eq!(scans[1].as_ref().unwrap(), &vec![0, 4]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn map<I, R>(
        &self,
        inputs: &[I],
        job: impl Fn(&Engine, &I) -> Result<R> + Sync,
    ) -> Vec<Result<R>>
    where
        I: Sync,
        R: Send,
    {
        self.map_placed(inputs, &|_| None, &job)
    }

    /// [`map`](Self::map) for inputs whose memory one engine of the pool holds (see
    /// [`Resident`]): each runs on that engine (on another only if that one fails), the others
    /// on any engine.
    ///
    /// ```
    /// let pool = clpix::EnginePool::new()?;
    /// let frames = pool.pinned_images(4, 32, 32)?;
    /// let hits = pool.map_resident(&frames, |e, f| e.extreme(f, clpix::Extreme::Brightest));
    /// assert_eq!(hits.len(), 4);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn map_resident<I, R>(
        &self,
        inputs: &[I],
        job: impl Fn(&Engine, &I) -> Result<R> + Sync,
    ) -> Vec<Result<R>>
    where
        I: Resident + Sync,
        R: Send,
    {
        self.map_placed(inputs, &|i| resident::home(&self.engines, *i), &job)
    }

    fn map_placed<I, R>(
        &self,
        inputs: &[I],
        home: &dyn Fn(&&I) -> Option<usize>,
        job: &(dyn Fn(&Engine, &I) -> Result<R> + Sync),
    ) -> Vec<Result<R>>
    where
        I: Sync,
        R: Send,
    {
        let mut out = Vec::with_capacity(inputs.len());
        let window = inputs.len().max(1);
        let workers = self.workers(DEFAULT_IN_FLIGHT);
        let job = |e: &Engine, i: &&I| job(e, i);
        run_ordered(
            &self.engine_refs(),
            &workers,
            inputs.iter(),
            window,
            home,
            &job,
            &mut |_, r| out.push(r),
        );
        out
    }

    /// [`Engine::stream`] across the pool: each engine runs up to `in_flight` frames at once
    /// (a GPU in as many queues), at most `in_flight` frames a GPU are taken from `frames` and
    /// not yet given to `sink`, and results reach `sink` in the frames' order. An error only
    /// for `in_flight == 0`.
    ///
    /// ```
    /// let pool = clpix::EnginePool::new()?;
    /// let frames = (0..5u8).map(|i| image::RgbaImage::from_pixel(16, 16, image::Rgba([i, i, i, 255])));
    /// let mut sums = Vec::new();
    /// pool.stream(frames, 2, |e, f| e.luminance_stats(f), |_, s| sums.push(s.map(|s| s.sum)))?;
    /// assert_eq!(sums.len(), 5);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn stream<F, R>(
        &self,
        frames: impl IntoIterator<Item = F>,
        in_flight: usize,
        job: impl Fn(&Engine, &F) -> Result<R> + Sync,
        mut sink: impl FnMut(usize, Result<R>),
    ) -> Result<()>
    where
        F: Send,
        R: Send,
    {
        self.stream_placed(frames, in_flight, &|_| None, &job, &mut sink)
    }

    /// [`stream`](Self::stream) of frames whose memory one engine of the pool holds (see
    /// [`Resident`]): a frame in an engine's pinned memory (from
    /// [`pinned_images`](Self::pinned_images)) or on its device runs on that engine, at the
    /// link's full speed; a frame no engine holds runs on any. Fill a ring of pinned frames
    /// spread over the GPUs and stream references to them.
    ///
    /// ```
    /// let pool = clpix::EnginePool::new()?;
    /// let ring = pool.pinned_images(4, 64, 48)?;
    /// let frames = (0..12).map(|i| &ring[i % ring.len()]);
    /// let mut hits = Vec::new();
    /// pool.stream_resident(frames, 2, |e, f| e.extreme(*f, clpix::Extreme::Brightest), |_, h| hits.push(h))?;
    /// assert_eq!(hits.len(), 12);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn stream_resident<F, R>(
        &self,
        frames: impl IntoIterator<Item = F>,
        in_flight: usize,
        job: impl Fn(&Engine, &F) -> Result<R> + Sync,
        mut sink: impl FnMut(usize, Result<R>),
    ) -> Result<()>
    where
        F: Resident + Send,
        R: Send,
    {
        let home = |f: &F| resident::home(&self.engines, f);
        self.stream_placed(frames, in_flight, &home, &job, &mut sink)
    }

    /// `count` pinned frames of `width` × `height` spread over the pool's engines in turn
    /// (frame i is [`Engine::pinned_image`] of engine i mod n): a ring for
    /// [`stream_resident`](Self::stream_resident), each frame uploaded by DMA by the engine
    /// that holds it.
    ///
    /// ```
    /// use clpix::Resident;
    /// let pool = clpix::EnginePool::new()?;
    /// let ring = pool.pinned_images(4, 16, 16)?;
    /// assert_eq!(ring.len(), 4);
    /// assert!(ring.iter().all(|f| f.width() == 16));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pinned_images(
        &self,
        count: usize,
        width: u32,
        height: u32,
    ) -> Result<Vec<crate::device::PinnedImage>> {
        (0..count)
            .map(|i| self.engines[i % self.engines.len()].pinned_image(width, height))
            .collect()
    }

    fn stream_placed<F, R>(
        &self,
        frames: impl IntoIterator<Item = F>,
        in_flight: usize,
        home: &dyn Fn(&F) -> Option<usize>,
        job: &(dyn Fn(&Engine, &F) -> Result<R> + Sync),
        sink: &mut dyn FnMut(usize, Result<R>),
    ) -> Result<()>
    where
        F: Send,
        R: Send,
    {
        check_window(in_flight)?;
        let workers = self.workers(in_flight);
        let gpus = self
            .engines
            .iter()
            .filter(|e| e.backend().kind() == BackendKind::OpenCl)
            .count()
            .max(1);
        run_ordered(
            &self.engine_refs(),
            &workers,
            frames.into_iter(),
            in_flight * gpus,
            home,
            job,
            sink,
        );
        Ok(())
    }

    fn engine_refs(&self) -> Vec<&Engine> {
        self.engines.iter().collect()
    }

    fn workers(&self, in_flight: usize) -> Vec<Worker> {
        self.engines
            .iter()
            .enumerate()
            .flat_map(|(i, e)| workers_of(e, i, in_flight))
            .collect()
    }
}
