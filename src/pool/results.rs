//! [`Engine::stream_iter`]: frames in flight with an iterator of results out, on a thread of
//! its own, for a caller that pulls results as it goes.

use crate::engine::Engine;
use crate::error::Result;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

/// The results of [`Engine::stream_iter`], in the frames' order: an iterator that waits for
/// each in turn. Dropping it stops taking frames, waits for those in flight and discards their
/// results. A panic in the job is raised again from [`next`](Iterator::next).
///
/// ```
/// use std::sync::Arc;
/// let engine = Arc::new(clpix::Engine::new()?);
/// let frames = (0..6u8).map(|i| image::RgbaImage::from_pixel(16, 16, image::Rgba([i, 0, 0, 255])));
/// let lum: Vec<u16> = engine
///     .stream_iter(frames, 2, |e, f| e.extreme(f, clpix::Extreme::Brightest).map(|h| h.luminance))?
///     .collect::<clpix::Result<_>>()?;
/// assert_eq!(lum.len(), 6);
/// # Ok::<(), clpix::Error>(())
/// ```
pub struct FrameResults<R> {
    results: Option<Receiver<Result<R>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<R> std::fmt::Debug for FrameResults<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FrameResults")
    }
}

impl<R> FrameResults<R> {
    /// Waits for the streaming thread, raising its panic (a job's) here.
    fn join(&mut self) {
        if let Some(t) = self.thread.take()
            && let Err(p) = t.join()
        {
            std::panic::resume_unwind(p);
        }
    }
}

impl<R> Iterator for FrameResults<R> {
    type Item = Result<R>;

    fn next(&mut self) -> Option<Result<R>> {
        let next = self.results.as_ref().and_then(|r| r.recv().ok());
        if next.is_none() {
            self.results = None;
            self.join();
        }
        next
    }
}

impl<R> Drop for FrameResults<R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Unblocks the thread's sends; it takes no new frame and ends once those in flight do.
        self.results = None;
        if let Some(t) = self.thread.take() {
            // A job's panic is not raised from a drop (it may run during another unwind).
            let _ = t.join();
        }
    }
}

impl Engine {
    /// [`stream`](Self::stream) with an iterator of results out: a thread of its own runs the
    /// stream (the engine shared through the `Arc`), and the returned [`FrameResults`] yields
    /// each frame's result in order, up to `in_flight` frames ahead of the caller. An error
    /// only for `in_flight == 0`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let engine = Arc::new(clpix::Engine::new()?);
    /// let frames = (0..4u8).map(|i| image::RgbaImage::from_pixel(8, 8, image::Rgba([i, i, i, 255])));
    /// for (i, hit) in engine.stream_iter(frames, 3, |e, f| e.extreme(f, clpix::Extreme::Brightest))?.enumerate() {
    ///     assert_eq!(hit?.rgba[0], i as u8);
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn stream_iter<F, R>(
        self: Arc<Self>,
        frames: impl IntoIterator<Item = F, IntoIter: Send + 'static>,
        in_flight: usize,
        job: impl Fn(&Engine, &F) -> Result<R> + Send + Sync + 'static,
    ) -> Result<FrameResults<R>>
    where
        F: Send + 'static,
        R: Send + 'static,
    {
        super::run::check_window(in_flight)?;
        let (tx, rx) = sync_channel(in_flight);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let frames = frames.into_iter();
        let thread = std::thread::Builder::new()
            .name("clpix stream".into())
            .spawn(move || {
                let frames = frames.take_while(|_| !stopped.load(Ordering::SeqCst));
                let _ = self.stream(frames, in_flight, job, |_, r| {
                    if tx.send(r).is_err() {
                        stopped.store(true, Ordering::SeqCst);
                    }
                });
            })
            .map_err(|e| crate::error::Error::InvalidParameter {
                name: "stream_iter",
                value: e.to_string(),
                expected: "a thread for the stream",
            })?;
        Ok(FrameResults {
            results: Some(rx),
            stop,
            thread: Some(thread),
        })
    }
}
