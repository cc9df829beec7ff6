//! Transfers between host and device: blocking reads and writes, device copies and fills,
//! mapping, and the pinned staging slots that large transfers to a GPU go through.

use super::{ClEngine, DeviceInfo, DeviceType, lock};
use crate::config::Staging;
use crate::cpu::parallel_copy;
use crate::error::{Error, Result};
use opencl3::event::Event;
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::{CL_BLOCKING, cl_mem};

/// A pinned host buffer (`CL_MEM_ALLOC_HOST_PTR`), mapped once for the engine's life: its
/// address is the host side of large reads and writes, which the driver then moves by DMA
/// (from pageable memory NVIDIA's driver moved 256 MiB in about 30 ms).
pub(crate) struct StagingSlot {
    pub(crate) buf: Buffer<u8>,
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
}

/// Staging slots of 16 MiB: two of them let the host fill one while the other is in flight.
const STAGING_SLOT_BYTES: usize = 16 << 20;
/// Transfers from this size (or one slot, if smaller) on go through the staging slots (where
/// staging is on).
const STAGING_MIN_BYTES: usize = 4 << 20;

/// The staging slot size for a device: `staging` = `off`, `on`, or a slot size in KiB
/// (tests: small slots, many chunks); by default on for devices that are not CPUs (a CPU
/// device reads host memory where it is).
pub(super) fn staging_slot(info: &DeviceInfo, staging: Staging) -> Option<usize> {
    match staging {
        Staging::Auto => (info.device_type != DeviceType::Cpu).then_some(STAGING_SLOT_BYTES),
        Staging::Off => None,
        Staging::On => Some(STAGING_SLOT_BYTES),
        Staging::SlotKib(k) => Some(k.max(1) * 1024),
    }
}

impl ClEngine {
    /// Maps `buf` (blocking), calls `f` with its host address and size in bytes, and unmaps it.
    /// On a CPU device (PoCL) the address is the buffer's own memory, so that a large buffer
    /// can be advised to use huge pages before its first touch (see `blur`).
    pub(crate) fn with_mapped<T>(
        &self,
        buf: &Buffer<T>,
        count: usize,
        f: impl FnOnce(usize, usize),
    ) -> Result<()> {
        let bytes = count.max(1) * std::mem::size_of::<T>();
        let ptr = self.map(buf, opencl3::memory::CL_MAP_WRITE_INVALIDATE_REGION, bytes)?;
        f(ptr as usize, bytes);
        // SAFETY: `ptr` is the live mapping of `buf` made just above.
        unsafe { self.unmap(buf, ptr) }
    }

    /// Maps the first `bytes` of `buf` (blocking) with `flags`; returns the host address.
    pub(crate) fn map<T>(&self, buf: &Buffer<T>, flags: u64, bytes: usize) -> Result<cl_mem> {
        let mut ptr: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of a range inside the buffer (the callers' sizes).
        unsafe {
            self.queue()
                .enqueue_map_buffer(buf, CL_BLOCKING, flags, 0, bytes, &mut ptr, &[])
        }
        .map_err(|e| Error::cl("clEnqueueMapBuffer", e.0))?;
        Ok(ptr)
    }

    /// Unmaps `ptr` from `buf`.
    ///
    /// # Safety
    /// `ptr` is a live mapping of `buf` made by [`map`](Self::map), not used after this.
    pub(super) unsafe fn unmap<T>(&self, buf: &Buffer<T>, ptr: cl_mem) -> Result<()> {
        // SAFETY: as the caller vouches.
        unsafe { self.queue().enqueue_unmap_mem_object(buf.get(), ptr, &[]) }
            .map(|_| ())
            .map_err(|e| Error::cl("clEnqueueUnmapMemObject", e.0))
    }

    /// Blocking write of `data` at element `offset`. Large writes to a GPU go through the
    /// pinned staging slots (see [`write_staged`](Self::write_staged)), unless `data` is pinned
    /// memory of this engine's already (see `pinned`).
    pub(crate) fn write<T: bytemuck::Pod>(
        &self,
        buf: &mut Buffer<T>,
        offset: usize,
        data: &[T],
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let at = offset * std::mem::size_of::<T>();
        let bytes = std::mem::size_of_val(data);
        if let Some(slot) = self.staged_slot(bytes) {
            if self.is_pinned(data.as_ptr() as *const u8, bytes) {
                return self.transfer_pinned(buf.get(), at, data.as_ptr() as *mut u8, bytes, true);
            }
            return self.write_staged(buf.get(), at, bytemuck::cast_slice(data), slot);
        }
        // SAFETY: blocking, so `data` outlives the transfer; the range is inside the buffer.
        unsafe {
            self.queue()
                .enqueue_write_buffer(buf, CL_BLOCKING, at, data, &[])
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueWriteBuffer", e.0))
    }

    /// Moves `bytes` between pinned host memory at `host` and byte `at` of `buf` (a write if
    /// `write`), enqueued without blocking and then waited for on its event: NVIDIA's driver
    /// let no other queue's transfer run during a blocking call, so frames in flight in other
    /// lanes did not overlap.
    fn transfer_pinned(
        &self,
        buf: cl_mem,
        at: usize,
        host: *mut u8,
        bytes: usize,
        write: bool,
    ) -> Result<()> {
        let mut drain = self.queue_drain();
        drain.armed = true;
        let q = self.queue().get();
        // SAFETY: `host` holds `bytes` bytes of pinned memory the caller borrows for this call,
        // which waits for the transfer (or `drain` does, on an error path); the range is inside
        // `buf` (the callers' sizes).
        let event = unsafe {
            if write {
                cl3::command_queue::enqueue_write_buffer(
                    q,
                    buf,
                    0,
                    at,
                    bytes,
                    host as *const std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
                .map_err(|e| Error::cl("clEnqueueWriteBuffer", e))
            } else {
                cl3::command_queue::enqueue_read_buffer(
                    q,
                    buf,
                    0,
                    at,
                    bytes,
                    host as *mut std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
                .map_err(|e| Error::cl("clEnqueueReadBuffer", e))
            }
        }?;
        Event::new(event)
            .wait()
            .map_err(|e| Error::cl("clWaitForEvents", e.0))?;
        drain.armed = false;
        Ok(())
    }

    /// The slot size a transfer of `bytes` is staged through, if it is: where staging is on,
    /// from `STAGING_MIN_BYTES` (or one slot, if smaller).
    pub(crate) fn staged_slot(&self, bytes: usize) -> Option<usize> {
        self.staging_slot
            .filter(|&s| bytes >= STAGING_MIN_BYTES.min(s))
    }

    /// The staging slots, made (and mapped) on first use.
    pub(crate) fn staging_slots(
        &self,
        slot: usize,
    ) -> Result<std::sync::MutexGuard<'_, Vec<StagingSlot>>> {
        let mut slots = lock(&self.lane().staging);
        while slots.len() < 2 {
            // SAFETY: no host pointer; the driver allocates pinned host memory.
            let buf = unsafe {
                self.create_buffer::<u8>(
                    opencl3::memory::CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_ALLOC_HOST_PTR,
                    slot,
                    std::ptr::null_mut(),
                    "a staging slot",
                )?
            };
            // Mapped for the engine's life (unmapped in its `drop`).
            let flags = opencl3::memory::CL_MAP_READ | opencl3::memory::CL_MAP_WRITE;
            let ptr = self.map(&buf, flags, slot)?;
            slots.push(StagingSlot {
                buf,
                ptr: ptr as *mut u8,
                len: slot,
            });
        }
        Ok(slots)
    }

    /// Writes `src` at byte `at` of `dst` in chunks of one slot: the host copies chunk k into
    /// slot k % 2 (in parallel) while the driver moves chunk k - 1 from the other slot.
    pub(crate) fn write_staged(
        &self,
        dst: cl_mem,
        at: usize,
        src: &[u8],
        slot: usize,
    ) -> Result<()> {
        let slots = self.staging_slots(slot)?;
        let mut pending: [Option<Event>; 2] = [None, None];
        // Waited for on every way out: a slot is not reused, nor `src` given back, early.
        let mut drain = self.queue_drain();
        drain.armed = true;
        for (k, chunk) in src.chunks(slot).enumerate() {
            let s = &slots[k % 2];
            if let Some(e) = pending[k % 2].take() {
                e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
            }
            // SAFETY: the slot holds `s.len` >= chunk.len() bytes, and no transfer uses it now.
            let host = unsafe { std::slice::from_raw_parts_mut(s.ptr, chunk.len()) };
            parallel_copy(chunk, host);
            // SAFETY: `host` stays mapped and untouched until the event has completed (waited
            // for before the slot is reused, and by `drain`); the range is inside `dst`.
            let event = unsafe {
                cl3::command_queue::enqueue_write_buffer(
                    self.queue().get(),
                    dst,
                    0,
                    at + k * slot,
                    chunk.len(),
                    host.as_ptr() as *const std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|e| Error::cl("clEnqueueWriteBuffer", e))?;
            pending[k % 2] = Some(Event::new(event));
        }
        for e in pending.into_iter().flatten() {
            e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
        }
        drain.armed = false;
        drop(slots);
        Ok(())
    }

    /// Reads `out.len()` bytes from byte `at` of `src` in chunks of one slot: the driver moves
    /// chunk k + 1 into one slot while the host copies chunk k out of the other (in parallel).
    pub(crate) fn read_staged(
        &self,
        src: cl_mem,
        at: usize,
        out: &mut [u8],
        slot: usize,
    ) -> Result<()> {
        let slots = self.staging_slots(slot)?;
        let mut drain = self.queue_drain();
        drain.armed = true;
        let total = out.len();
        let chunks = total.div_ceil(slot);
        let len_of = |k: usize| slot.min(total - k * slot);
        let enqueue = |k: usize| -> Result<Event> {
            let s = &slots[k % 2];
            debug_assert!(len_of(k) <= s.len);
            // SAFETY: the slot is mapped and holds at least len_of(k) bytes; nothing else uses
            // it until this read has been waited for; the range is inside `src`.
            let event = unsafe {
                cl3::command_queue::enqueue_read_buffer(
                    self.queue().get(),
                    src,
                    0,
                    at + k * slot,
                    len_of(k),
                    s.ptr as *mut std::ffi::c_void,
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e))?;
            Ok(Event::new(event))
        };
        let mut next = Some(enqueue(0)?);
        for k in 0..chunks {
            let current = next.take();
            if k + 1 < chunks {
                // The other slot was emptied by the copy of chunk k - 1, just done.
                next = Some(enqueue(k + 1)?);
            }
            if let Some(e) = current {
                e.wait().map_err(|e| Error::cl("clWaitForEvents", e.0))?;
            }
            // SAFETY: the read into this slot has completed; the next one goes to the other.
            let host = unsafe { std::slice::from_raw_parts(slots[k % 2].ptr, len_of(k)) };
            parallel_copy(host, &mut out[k * slot..k * slot + len_of(k)]);
        }
        drain.armed = false;
        drop(slots);
        Ok(())
    }

    /// Copies the first `count` elements of `src` into `dst` on the device, and waits for it.
    pub(crate) fn copy<T>(&self, src: &Buffer<T>, dst: &mut Buffer<T>, count: usize) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie inside their buffers (the caller's `count`); the copy is waited
        // for before the buffers can go.
        let event = unsafe {
            self.queue()
                .enqueue_copy_buffer(src, dst, 0, 0, count * std::mem::size_of::<T>(), &[])
        }
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0))?;
        self.finish(&[event])
    }

    /// Blocking read into `out` from element `offset`. Large reads from a GPU go through the
    /// pinned staging slots (see [`read_staged`](Self::read_staged)), unless `out` is pinned
    /// memory of this engine's already (see `pinned`).
    pub(crate) fn read<T: bytemuck::Pod>(
        &self,
        buf: &Buffer<T>,
        offset: usize,
        out: &mut [T],
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let at = offset * std::mem::size_of::<T>();
        let bytes = std::mem::size_of_val(out);
        if let Some(slot) = self.staged_slot(bytes) {
            if self.is_pinned(out.as_ptr() as *const u8, bytes) {
                return self.transfer_pinned(
                    buf.get(),
                    at,
                    out.as_mut_ptr() as *mut u8,
                    bytes,
                    false,
                );
            }
            return self.read_staged(buf.get(), at, bytemuck::cast_slice_mut(out), slot);
        }
        // SAFETY: blocking, so `out` outlives the transfer; the range is inside the buffer.
        unsafe {
            self.queue()
                .enqueue_read_buffer(buf, CL_BLOCKING, at, out, &[])
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0))
    }

    /// Fills `count` elements of `buf` with `value` (asynchronous, in queue order).
    pub(crate) fn fill<T: Copy>(
        &self,
        buf: &mut Buffer<T>,
        value: T,
        count: usize,
    ) -> Result<Event> {
        self.fill_at(buf, value, 0, count.max(1))
    }

    /// Fills `count` elements of `buf` from element `offset` with `value` (asynchronous, in
    /// queue order).
    pub(crate) fn fill_at<T: Copy>(
        &self,
        buf: &mut Buffer<T>,
        value: T,
        offset: usize,
        count: usize,
    ) -> Result<Event> {
        let size = std::mem::size_of::<T>();
        // SAFETY: the range is inside the buffer (the callers' sizes); the pattern is copied
        // at enqueue.
        unsafe {
            self.queue()
                .enqueue_fill_buffer(buf, &[value], offset * size, count * size, &[])
        }
        .map_err(|e| Error::cl("clEnqueueFillBuffer", e.0))
    }

    /// Copies a rectangle of bytes between two buffers on the device (asynchronous, in queue
    /// order): `rect.rows` rows of `rect.row_bytes` bytes, from byte `rect.src_x` of row
    /// `rect.src_row` of `src` (rows `rect.src_pitch` bytes apart) to byte `rect.dst_x` of row
    /// `rect.dst_row` of `dst` (rows `rect.dst_pitch` bytes apart).
    pub(crate) fn copy_rect(
        &self,
        src: &Buffer<u32>,
        dst: &mut Buffer<u32>,
        rect: &Rect,
    ) -> Result<Event> {
        let src_origin = [rect.src_x, rect.src_row, 0];
        let dst_origin = [rect.dst_x, rect.dst_row, 0];
        let region = [rect.row_bytes, rect.rows, 1];
        // SAFETY: the origins and region are arrays of three that outlive the call; the
        // rectangles lie inside their buffers (the callers' parts) and the buffers differ.
        unsafe {
            self.queue().enqueue_copy_buffer_rect(
                src,
                dst,
                src_origin.as_ptr(),
                dst_origin.as_ptr(),
                region.as_ptr(),
                rect.src_pitch,
                0,
                rect.dst_pitch,
                0,
                &[],
            )
        }
        .map_err(|e| Error::cl("clEnqueueCopyBufferRect", e.0))
    }
}

/// A rectangle of bytes copied between two buffers ([`ClEngine::copy_rect`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rect {
    pub src_x: usize,
    pub src_row: usize,
    pub src_pitch: usize,
    pub dst_x: usize,
    pub dst_row: usize,
    pub dst_pitch: usize,
    pub row_bytes: usize,
    pub rows: usize,
}
