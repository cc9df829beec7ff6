//! Device memory: buffers (checked against the device's limit), buffers over host memory,
//! reusable scratch and partial-result buffers, and the look-back's tile words.

use super::{ClEngine, lock};
use crate::error::{Error, Result};
use opencl3::memory::{Buffer, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR};
use std::sync::{Arc, Mutex};

/// One u64 word a tile for kernels whose work-groups publish to each other (the single-pass
/// look-backs): each launch gets a fresh epoch, which its words carry, so a word left by an
/// earlier launch reads as unwritten and the words are never cleared between launches; zeroed
/// only when made (grown) or when the epochs wrap.
#[derive(Default)]
pub(super) struct TileWords {
    /// The words and how many there are.
    pub(crate) buf: Option<(Buffer<u64>, usize)>,
    pub(crate) epoch: u32,
}

/// How a look-back kernel packs a tile word, which decides its largest epoch. Each format has
/// its own words, so that no kernel reads another format's word as its own.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum WordFormat {
    /// NVIDIA's warp look-back (`compact_nv.cl`): the epoch in the high 32 bits, the status in
    /// 2 bits, the value in 30.
    Epoch32,
    /// The portable look-back (`lookback.cl`): the epoch in the high 30 bits, the status in 2
    /// bits, the value in 32.
    Epoch30,
}

impl WordFormat {
    fn index(self) -> usize {
        self as usize
    }

    fn max_epoch(self) -> u32 {
        match self {
            WordFormat::Epoch32 => u32::MAX,
            WordFormat::Epoch30 => (1 << 30) - 1,
        }
    }
}

// SAFETY: every field is Send + Sync except the raw device id (a process-wide handle) and the
// kernel pool, whose kernels are only used by one thread at a time behind the mutex.
unsafe impl Send for ClEngine {}
unsafe impl Sync for ClEngine {}
/// Idle image buffers of a type an engine keeps a lane (see [`ClEngine::image_buffer`]): a
/// Dask chunk's blur with its halo holds 12 at once (the chunk, its 8 neighbours' strips, the
/// padded block, its blur, the crop); with 8 kept an engine, the strips given back pushed the
/// large buffers out, and 4 threads made and freed 64 MiB buffers every chunk (a CUDA context
/// synchronises on every free). With 16 a lane, an H200's chunk tasks took 12.6 ms, not 17.7.
const IMAGE_BUFFERS_KEPT: usize = 16;

/// Tables of constants an engine keeps on its device (see [`ClEngine::constant_words`]).
const CONSTANTS_KEPT: usize = 16;

/// Idle image buffers of one element type, by element count.
pub(crate) type ImagePool<T> = Mutex<Vec<(usize, Buffer<T>)>>;

/// The element types of images on a device, each with its engine's pool of idle buffers.
pub(crate) trait ImageElement: Sized {
    /// Whether CPU devices keep them too: RGBA8 parts there are host memory that the
    /// allocator recycles; a fresh f32 result of 4096² on PoCL took 7 ms a call more than
    /// the blur's 5 ms (page faults of its first write).
    const POOLED_ON_CPU_DEVICES: bool;
    fn pool(cl: &ClEngine) -> &ImagePool<Self>;
}

impl ImageElement for u32 {
    const POOLED_ON_CPU_DEVICES: bool = false;
    fn pool(cl: &ClEngine) -> &ImagePool<u32> {
        &cl.pools.image_buffers
    }
}

impl ImageElement for f32 {
    const POOLED_ON_CPU_DEVICES: bool = true;
    fn pool(cl: &ClEngine) -> &ImagePool<f32> {
        &cl.pools.f32_image_buffers
    }
}

impl ClEngine {
    /// A buffer of exactly `count` elements for an image (an uploaded part, a blur's result, an
    /// f32 image), reused from one that an image of the same size and type gave back
    /// ([`give_image_buffer`](Self::give_image_buffer)) where there is one: frames of a stream
    /// then allocate and free nothing (a CUDA context synchronises on every free; a fresh
    /// buffer on a CPU device faults in every page at its first write).
    pub(crate) fn image_buffer<T: ImageElement>(
        &self,
        count: usize,
        what: &'static str,
    ) -> Result<Buffer<T>> {
        match self.pooled_image_buffer(count) {
            Some(b) => Ok(b),
            None => self.buffer::<T>(count.max(1), what),
        }
    }

    /// An idle image buffer of exactly `count` elements from the pool, if there is one.
    pub(crate) fn pooled_image_buffer<T: ImageElement>(&self, count: usize) -> Option<Buffer<T>> {
        let count = count.max(1);
        let mut pool = lock(T::pool(self));
        pool.iter()
            .position(|(c, _)| *c == count)
            .map(|i| pool.swap_remove(i).1)
    }

    /// Keeps an idle image buffer of `count` elements for
    /// [`image_buffer`](Self::image_buffer): at most [`IMAGE_BUFFERS_KEPT`] of a type a lane,
    /// and no more than a sixteenth of the device's memory (the oldest go first). Every command
    /// using it has completed (operations wait for their own before they return).
    pub(crate) fn give_image_buffer<T: ImageElement>(&self, count: usize, buf: Buffer<T>) {
        let count = count.max(1);
        let bytes = |c: usize| (c * std::mem::size_of::<T>()) as u64;
        let budget = self.info.global_mem_bytes / 16;
        if bytes(count) > budget || (self.grid.contiguous && !T::POOLED_ON_CPU_DEVICES) {
            return;
        }
        self.settle_before_pooling();
        let kept = IMAGE_BUFFERS_KEPT * self.lanes_made();
        let mut evicted = Vec::new();
        let mut pool = lock(T::pool(self));
        pool.push((count, buf));
        while pool.len() > kept || pool.iter().map(|(c, _)| bytes(*c)).sum::<u64>() > budget {
            evicted.push(pool.remove(0));
        }
        // Freed once the lock is let go (see `with_tile_words`).
        drop(pool);
        drop(evicted);
    }

    /// A scratch buffer of at least `count` u32 for `kind`, reused between calls: on CPU
    /// devices a fresh buffer costs a page fault per 4 KiB at its first write, every call, and
    /// on GPUs an allocation of hundreds of MB costs more than a fast kernel. The caller has it
    /// to itself until the guard drops, which gives it back (after the commands enqueued with
    /// it: later users of the in-order queue run after them).
    pub(crate) fn scratch(&self, kind: ScratchKind, count: usize) -> Result<Scratch<'_>> {
        let (count, buf) = self.take_scratch(kind, count)?;
        Ok(Scratch {
            engine: self,
            kind: Some(kind),
            count,
            buf: Some(buf),
        })
    }

    /// A buffer of at least `count` u32 for `kind` from the pool, or a new one; returns it and
    /// its element count. [`give_scratch`](Self::give_scratch) returns it (the guards
    /// [`Scratch`] and `PooledBuffer` do).
    pub(crate) fn take_scratch(
        &self,
        kind: ScratchKind,
        count: usize,
    ) -> Result<(usize, Buffer<u32>)> {
        let found = lock(&self.pools.scratch).get_mut(&kind).and_then(|v| {
            let i = v.iter().position(|(c, _)| *c >= count)?;
            Some(v.swap_remove(i))
        });
        match found {
            Some(b) => Ok(b),
            None => Ok((count.max(1), self.buffer::<u32>(count, kind.what())?)),
        }
    }

    /// Returns a buffer from [`take_scratch`](Self::take_scratch) for later calls, keeping
    /// the largest of a kind: two, or one a lane where more lanes are open (frames in flight on
    /// three lanes each hold a blur's intermediate; with two kept, the third was freed and made
    /// again every few frames, and a CUDA context synchronises on every free).
    pub(crate) fn give_scratch(&self, kind: ScratchKind, count: usize, buf: Buffer<u32>) {
        self.settle_before_pooling();
        let keep = self.lanes_made().max(2);
        let mut pool = lock(&self.pools.scratch);
        let v = pool.entry(kind).or_default();
        v.push((count.max(1), buf));
        v.sort_by_key(|(c, _)| std::cmp::Reverse(*c));
        let evicted = v.split_off(keep.min(v.len()));
        // Freed once the lock is let go (see `with_tile_words`).
        drop(pool);
        drop(evicted);
    }

    /// Runs `f` (which enqueues one kernel) with at least `tiles` tile words of `format` and a
    /// fresh epoch for it (never 0, the zeroed words' epoch), holding the words until `f`
    /// returns: kernels using them are enqueued one at a time, in epoch order. Where the engine
    /// has several lanes, also until the kernel has run: two look-backs on the same words in
    /// two queues at once would overwrite each other's words (another epoch reads as "nothing
    /// yet": right sums, but every tile recomputing its predecessors; and a compaction's total
    /// could be overwritten before it is read).
    pub(crate) fn with_tile_words<R>(
        &self,
        format: WordFormat,
        tiles: usize,
        f: impl FnOnce(&Buffer<u64>, u32) -> Result<R>,
    ) -> Result<R> {
        // Words too few for this call, freed once the lock is let go (a free synchronises a
        // CUDA context, whose other lanes may be waiting for the lock).
        let mut outgrown = None;
        let mut all = lock(&self.pools.tile_words);
        let words = &mut all[format.index()];
        let (buf, len) = match words.buf.take() {
            Some((buf, len)) if len >= tiles && words.epoch < format.max_epoch() => (buf, len),
            old => {
                outgrown = old;
                let len = tiles.max(1);
                let mut buf = self.buffer::<u64>(len, "tile words")?;
                self.fill(&mut buf, 0u64, len)?;
                words.epoch = 0;
                (buf, len)
            }
        };
        words.epoch += 1;
        let mut result = f(&buf, words.epoch);
        if result.is_ok()
            && self.lanes_made() > 1
            && let Err(e) = self.queue().finish()
        {
            result = Err(Error::cl("clFinish", e.0));
        }
        words.buf = Some((buf, len));
        drop(all);
        drop(outgrown);
        result
    }

    /// A read-only device copy of `words` (a blur's weights), made once and shared by every
    /// later call and lane: a buffer made and freed per call made every call synchronise the
    /// whole CUDA context at its free, so frames in flight on several lanes waited on each
    /// other. The last [`CONSTANTS_KEPT`] tables are kept.
    pub(crate) fn constant_words(&self, words: &[u32]) -> Result<Arc<Buffer<u32>>> {
        let kept = |all: &mut Vec<super::ConstantTable>| {
            let i = all.iter().position(|(w, _)| w.as_slice() == words)?;
            // The most recently used last.
            let entry = all.remove(i);
            let buf = Arc::clone(&entry.1);
            all.push(entry);
            Some(buf)
        };
        if let Some(buf) = kept(&mut lock(&self.pools.constants)) {
            return Ok(buf);
        }
        // Made outside the lock: the blocking write waits for this lane's queue, which other
        // lanes' calls must not wait for. Two threads may both make one; either is kept.
        let mut buf = self.buffer::<u32>(words.len(), "a table of constants (blur weights)")?;
        // Blocking: complete before any lane's kernel reads it.
        self.write(&mut buf, 0, words)?;
        let mut all = lock(&self.pools.constants);
        if let Some(buf) = kept(&mut all) {
            return Ok(buf);
        }
        let buf = Arc::new(buf);
        all.push((words.to_vec(), Arc::clone(&buf)));
        let evicted = (all.len() > CONSTANTS_KEPT).then(|| all.remove(0));
        // Freed once the lock is let go (see `with_tile_words`).
        drop(all);
        drop(evicted);
        Ok(buf)
    }

    /// Length of a partials buffer: room for 4 u64s per work-group of the largest grid.
    pub(crate) fn partials_len(&self) -> usize {
        4 * self.grid.max_groups
    }

    /// Runs `f` with a reusable buffer of [`partials_len`](Self::partials_len) u64s for
    /// per-group results, then returns the buffer to the pool.
    pub(crate) fn with_partials<R>(
        &self,
        f: impl FnOnce(&mut Buffer<u64>) -> Result<R>,
    ) -> Result<R> {
        let pooled = lock(&self.pools.partials).pop();
        let mut buffer = match pooled {
            Some(b) => b,
            None => self.buffer::<u64>(self.partials_len(), "per-group partial results")?,
        };
        let r = f(&mut buffer);
        if r.is_err() {
            self.settle_before_pooling();
        }
        lock(&self.pools.partials).push(buffer);
        r
    }

    /// A device buffer of `count` elements (at least one: OpenCL has no empty buffers).
    /// Buffers sized from a part plan already respect `max_buffer_bytes`; here only the
    /// device's own allocation limit is enforced, so that a capped engine can still hold its
    /// fixed-size bookkeeping (e.g. 4 u64s per work-group on a 132-unit GPU is 34 KB).
    pub(crate) fn buffer<T>(&self, count: usize, what: &'static str) -> Result<Buffer<T>> {
        // SAFETY: no host pointer.
        unsafe { self.create_buffer(CL_MEM_READ_WRITE, count.max(1), std::ptr::null_mut(), what) }
    }

    /// clCreateBuffer of `count` elements, checked against the device's allocation limit.
    ///
    /// # Safety
    /// `host` is null, or as [`buffer_over_host`](Self::buffer_over_host) requires.
    pub(super) unsafe fn create_buffer<T>(
        &self,
        flags: u64,
        count: usize,
        host: *mut T,
        what: &'static str,
    ) -> Result<Buffer<T>> {
        let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        if bytes > self.info.max_alloc_bytes {
            return Err(Error::TooLargeForDevice {
                what,
                needed: bytes,
                limit: self.info.max_alloc_bytes,
            });
        }
        // SAFETY: the size is checked against the device limit above; the caller vouches for
        // `host`.
        unsafe { Buffer::<T>::create(&self.context, flags, count, host as *mut std::ffi::c_void) }
            .map_err(|e| Error::cl("clCreateBuffer", e.0))
    }

    /// A buffer over `count` elements of host memory at `host` (`CL_MEM_USE_HOST_PTR`): on a
    /// CPU device the kernels write straight into it, and reading it back into the same memory
    /// copies nothing.
    ///
    /// # Safety
    /// `host` points to `count` writable elements that stay allocated, and are neither read
    /// nor written by the host, until the buffer is dropped, except through blocking reads of
    /// the buffer into that same memory after the commands using it have finished.
    pub(crate) unsafe fn buffer_over_host<T>(
        &self,
        host: *mut T,
        count: usize,
        what: &'static str,
    ) -> Result<Buffer<T>> {
        // SAFETY: the caller keeps `count` elements at `host` alive and untouched.
        unsafe { self.create_buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, count, host, what) }
    }

    /// Whether this engine's kernels use host memory in place (CPU devices, whose memory is
    /// the host's): a packed host image is read through a buffer over it
    /// ([`buffer_over_host_read_only`](Self::buffer_over_host_read_only)) rather than uploaded,
    /// and a result for the host is written straight into its memory. On PoCL 3.1 (4096²,
    /// a call from a host image) that took brightest from 28.7-29.7 to 1.8-1.9 ms and the
    /// w = 2 blur from 93-105 to 12.6-13.7 ms: the upload of 64 MiB alone had cost ~30 ms.
    pub(crate) fn uses_host_memory(&self) -> bool {
        self.grid.contiguous
    }

    /// A read-only buffer over `data` (`CL_MEM_USE_HOST_PTR`): the kernels read it where it is.
    ///
    /// # Safety
    /// `data` stays allocated and unchanged until every command using the buffer has finished
    /// (hold a [`QueueDrain`] armed until then).
    pub(crate) unsafe fn buffer_over_host_read_only<T>(
        &self,
        data: &[T],
        what: &'static str,
    ) -> Result<Buffer<T>> {
        // SAFETY: the caller keeps `data` alive and unchanged; the buffer is read-only, so
        // nothing writes through the pointer.
        unsafe {
            self.create_buffer(
                CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                data.len(),
                data.as_ptr().cast_mut(),
                what,
            )
        }
    }

    /// A guard that waits for this engine's queue when dropped while armed; see
    /// [`QueueDrain`].
    pub(crate) fn queue_drain(&self) -> QueueDrain<'_> {
        QueueDrain {
            engine: self,
            armed: false,
        }
    }
}

/// Waits for every command of an engine's queue (other threads' too) when dropped while
/// `armed`, ignoring errors. Held by a function whose kernels use host memory that it owns or
/// borrows (buffers over host memory), so that no way out of it, an error included, frees or
/// hands back that memory while a kernel may still use it: declare it after that memory, so
/// that it is dropped first.
pub(crate) struct QueueDrain<'a> {
    pub(crate) engine: &'a ClEngine,
    pub(crate) armed: bool,
}

impl Drop for QueueDrain<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.engine.queue().finish();
        }
    }
}

/// What a pooled scratch buffer is for: each kind keeps its own two largest buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ScratchKind {
    /// Device arrays (`DeviceArray`).
    Arrays,
    /// A host array's chunk for the array statistics.
    ArrayStatsInput,
    /// A host array's chunk for the scan.
    ScanInput,
    /// The scan of a host array's chunk.
    ScanOutput,
    /// The radix passes' pixels between passes.
    RadixPixels,
    /// The radix passes' indices between passes.
    RadixIndices,
    /// A compaction's kept pixels or hits.
    CompactedPixels,
    /// A compaction's kept pixels' indices.
    CompactedIndices,
    /// The GPU blur's intermediate image.
    BlurIntermediate,
    /// The inverted copy of a device image that `darkest_k` compacts.
    InvertedImage,
    /// Per-group partial results larger than the partials buffer holds (the f32 statistics).
    GroupPartials,
    /// The counters of a histogram with bins per call.
    Histogram,
}

impl ScratchKind {
    /// The buffer's description in errors.
    pub(crate) fn what(self) -> &'static str {
        match self {
            ScratchKind::Arrays => "a device array",
            ScratchKind::ArrayStatsInput => "array stats input",
            ScratchKind::ScanInput => "scan input",
            ScratchKind::ScanOutput => "scan output",
            ScratchKind::RadixPixels => "radix pass pixels",
            ScratchKind::RadixIndices => "radix pass indices",
            ScratchKind::CompactedPixels => "compacted pixels",
            ScratchKind::CompactedIndices => "compacted indices",
            ScratchKind::BlurIntermediate => "blur intermediate",
            ScratchKind::InvertedImage => "an inverted image part",
            ScratchKind::GroupPartials => "per-group partial results",
            ScratchKind::Histogram => "histogram counters",
        }
    }
}

/// A scratch buffer held until dropped, then given back to its engine's pool (see
/// [`ClEngine::scratch`]); or a buffer of the caller's that is only dropped
/// ([`Scratch::unpooled`]).
pub(crate) struct Scratch<'a> {
    engine: &'a ClEngine,
    kind: Option<ScratchKind>,
    count: usize,
    buf: Option<Buffer<u32>>,
}

impl<'a> Scratch<'a> {
    /// `buf` behind the same guard, dropped rather than pooled.
    pub(crate) fn unpooled(engine: &'a ClEngine, buf: Buffer<u32>) -> Scratch<'a> {
        Scratch {
            engine,
            kind: None,
            count: 0,
            buf: Some(buf),
        }
    }
}

impl std::ops::Deref for Scratch<'_> {
    type Target = Buffer<u32>;
    fn deref(&self) -> &Buffer<u32> {
        // Some from construction until `drop` takes it.
        self.buf
            .as_ref()
            .unwrap_or_else(|| unreachable!("a scratch buffer is held until drop"))
    }
}

impl std::ops::DerefMut for Scratch<'_> {
    fn deref_mut(&mut self) -> &mut Buffer<u32> {
        self.buf
            .as_mut()
            .unwrap_or_else(|| unreachable!("a scratch buffer is held until drop"))
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if let (Some(kind), Some(buf)) = (self.kind, self.buf.take()) {
            self.engine.give_scratch(kind, self.count, buf);
        }
    }
}
