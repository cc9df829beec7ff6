//! Page-locked host memory handed to callers (`PinnedImage`): the device moves it by DMA at
//! the link's speed, with no copy through the staging slots. The engine keeps the address
//! ranges it handed out, so that a transfer from or to one of them goes straight to the driver.

use super::lanes::LaneGuard;
use super::{ClEngine, lock};
use crate::error::Result;
use opencl3::memory::{Buffer, CL_MAP_READ, CL_MAP_WRITE};
use opencl3::memory::{CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::types::cl_mem;

/// A pinned allocation: the buffer and its host address, mapped until [`ClEngine::unpin`].
pub(crate) struct Pinned {
    pub(crate) buf: Buffer<u8>,
    pub(crate) ptr: *mut u8,
}

// SAFETY: the mapping is plain host memory, valid until unmapped; `Pinned` owns it (its user
// hands out `&`/`&mut` slices under the usual borrow rules).
unsafe impl Send for Pinned {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Pinned {}

impl ClEngine {
    /// `len` bytes (at least 1) of page-locked host memory, mapped for the caller: the driver
    /// allocates it (`CL_MEM_ALLOC_HOST_PTR`) and maps it once, in lane 0.
    pub(crate) fn pin(&self, len: usize) -> Result<Pinned> {
        let _lane = LaneGuard::enter(0);
        let len = len.max(1);
        // SAFETY: no host pointer; the driver allocates pinned host memory.
        let buf = unsafe {
            self.create_buffer::<u8>(
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                len,
                std::ptr::null_mut(),
                "a pinned image",
            )?
        };
        let ptr = self.map(&buf, CL_MAP_READ | CL_MAP_WRITE, len)? as *mut u8;
        lock(&self.pools.pinned).push((ptr as usize, len));
        Ok(Pinned { buf, ptr })
    }

    /// Unmaps and forgets a pinned allocation (its buffer goes with it).
    pub(crate) fn unpin(&self, p: Pinned) {
        lock(&self.pools.pinned).retain(|&(at, _)| at != p.ptr as usize);
        let _lane = LaneGuard::enter(0);
        // SAFETY: `ptr` is the live mapping of `buf` made in `pin`; the caller's slices of it
        // ended with the `PinnedImage` that owned it.
        let _ = unsafe { self.unmap(&p.buf, p.ptr as cl_mem) };
        let _ = self.queue().finish();
    }

    /// Whether `len` bytes at `ptr` lie inside one pinned allocation of this engine.
    pub(crate) fn is_pinned(&self, ptr: *const u8, len: usize) -> bool {
        let at = ptr as usize;
        lock(&self.pools.pinned)
            .iter()
            .any(|&(start, n)| at >= start && at + len <= start + n)
    }
}
