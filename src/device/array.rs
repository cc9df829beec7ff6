//! Arrays held by an engine: device buffers on OpenCL (from a reusable pool), host memory on
//! the CPU engine.

use crate::error::{Error, Result};
use crate::opencl::{ClEngine, ScratchKind};
use opencl3::memory::Buffer;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A typed array held by an [`Engine`](crate::Engine): in device memory on an OpenCL engine, in
/// host memory on the CPU engine. Made by [`Engine::upload_array`](crate::Engine::upload_array),
/// read back with [`Engine::download_array`](crate::Engine::download_array); every array
/// operation takes it as an [`ArrayInput`] (scanned on the device by
/// [`Engine::exclusive_scan_device`](crate::Engine::exclusive_scan_device), reduced there by
/// [`Engine::array_stats`](crate::Engine::array_stats)).
///
/// Like a [`DeviceImage`](crate::DeviceImage), an array given to an engine that did not make it
/// is read back and processed there (same results). A dropped OpenCL array's buffer goes back
/// to its engine, which keeps up to two for the next arrays (no allocation per call).
///
/// ```
/// let engine = clpix::Engine::new()?;
/// let a = engine.upload_array(&[3u32, 1, 4, 1, 5])?;
/// assert_eq!(a.len(), 5);
/// let s = engine.exclusive_scan_device(&a)?;
/// assert_eq!(engine.download_array(&s)?, vec![0, 3, 4, 8, 9]);
/// # Ok::<(), clpix::Error>(())
/// ```
pub struct DeviceArray<T> {
    pub(crate) len: usize,
    pub(crate) storage: ArrayStorage<T>,
}

/// What every array operation accepts: a host slice (`&[u32]`, `&Vec<u32>`, `&[u32; N]`) or
/// an array held by an engine (`&DeviceArray<u32>`), through `impl Into<ArrayInput>`. Where the
/// input lives never shows in a method's name.
///
/// ```
/// let engine = clpix::Engine::new()?;
/// let host = [5u32, 9, 2, 9];
/// let dev = engine.upload_array(&host)?;
/// assert_eq!(engine.array_stats(&host)?, engine.array_stats(&dev)?);
/// assert_eq!(engine.exclusive_scan(&dev)?, vec![0, 5, 14, 16]);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Clone, Copy)]
pub enum ArrayInput<'a> {
    /// Host memory.
    Host(&'a [u32]),
    /// An array an engine holds.
    Device(&'a DeviceArray<u32>),
}

impl ArrayInput<'_> {
    /// The number of elements.
    ///
    /// ```
    /// assert_eq!(clpix::ArrayInput::from(&[1u32, 2, 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            ArrayInput::Host(d) => d.len(),
            ArrayInput::Device(a) => a.len(),
        }
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// assert!(clpix::ArrayInput::from(&[] as &[u32]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for ArrayInput<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayInput::Host(d) => write!(f, "ArrayInput::Host({} elements)", d.len()),
            ArrayInput::Device(a) => write!(f, "ArrayInput::Device({a:?})"),
        }
    }
}

impl<'a> From<&'a [u32]> for ArrayInput<'a> {
    fn from(d: &'a [u32]) -> Self {
        ArrayInput::Host(d)
    }
}

impl<'a> From<&'a Vec<u32>> for ArrayInput<'a> {
    fn from(d: &'a Vec<u32>) -> Self {
        ArrayInput::Host(d)
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for ArrayInput<'a> {
    fn from(d: &'a [u32; N]) -> Self {
        ArrayInput::Host(d)
    }
}

impl<'a> From<&'a DeviceArray<u32>> for ArrayInput<'a> {
    fn from(a: &'a DeviceArray<u32>) -> Self {
        ArrayInput::Device(a)
    }
}

pub(crate) enum ArrayStorage<T> {
    Host(Vec<T>),
    OpenCl(PooledBuffer),
}

/// A device buffer of at least `count` u32 that goes back to its engine's pool when dropped:
/// the next array of that size reuses it (a fresh buffer costs a page fault per 4 KiB at its
/// first write on CPU devices, and an allocation on GPUs). The pool keeps at most two.
pub(crate) struct PooledBuffer {
    pub(crate) owner: Arc<ClEngine>,
    pub(crate) count: usize,
    /// `None` only while dropping.
    pub(crate) buf: Option<Buffer<u32>>,
}

impl PooledBuffer {
    pub(crate) fn take(cl: &Arc<ClEngine>, len: usize) -> Result<PooledBuffer> {
        // A device array is one buffer: the engine's cap applies to it as to an image part.
        let needed = (len.max(1) as u64).saturating_mul(4);
        if needed > cl.max_buffer_bytes {
            return Err(Error::TooLargeForDevice {
                what: "a device array",
                needed,
                limit: cl.max_buffer_bytes,
            });
        }
        let (count, buf) = cl.take_scratch(ScratchKind::Arrays, len)?;
        Ok(PooledBuffer {
            owner: cl.clone(),
            count,
            buf: Some(buf),
        })
    }
    pub(crate) fn get(&self) -> Result<&Buffer<u32>> {
        // CL_INVALID_MEM_OBJECT: unreachable, the buffer is only taken in `drop`.
        self.buf.as_ref().ok_or(Error::cl("DeviceArray", -38))
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.owner.give_scratch(ScratchKind::Arrays, self.count, b);
        }
    }
}

impl<T> DeviceArray<T> {
    /// Number of elements.
    ///
    /// ```
    /// let a = clpix::Engine::cpu().upload_array(&[1u32, 2, 3])?;
    /// assert_eq!(a.len(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    ///
    /// ```
    /// let a = clpix::Engine::cpu().upload_array(&[])?;
    /// assert!(a.is_empty());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl DeviceArray<u32> {
    /// The device buffer, when the array lives on `cl`'s device; `None` for an array in host
    /// memory or on another engine.
    pub(crate) fn buffer_on(&self, cl: &Arc<ClEngine>) -> Option<Result<&Buffer<u32>>> {
        match &self.storage {
            ArrayStorage::OpenCl(b) if Arc::ptr_eq(&b.owner, cl) => Some(b.get()),
            _ => None,
        }
    }

    /// The elements in host memory: borrowed from a host array, read back from a device one.
    pub(crate) fn host_data(&self) -> Result<Cow<'_, [u32]>> {
        match &self.storage {
            ArrayStorage::Host(v) => Ok(Cow::Borrowed(v)),
            ArrayStorage::OpenCl(..) => download(self).map(Cow::Owned),
        }
    }
}

impl<T> fmt::Debug for DeviceArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.storage {
            ArrayStorage::Host(_) => write!(f, "DeviceArray({} elements, host)", self.len),
            ArrayStorage::OpenCl(b) => {
                write!(
                    f,
                    "DeviceArray({} elements on {})",
                    self.len, b.owner.info.name
                )
            }
        }
    }
}

pub(crate) fn check_array_len(len: usize) -> Result<()> {
    if len as u64 > u32::MAX as u64 {
        return Err(Error::invalid(
            "array length",
            len,
            "at most u32::MAX elements",
        ));
    }
    Ok(())
}

pub(crate) fn download(array: &DeviceArray<u32>) -> Result<Vec<u32>> {
    match &array.storage {
        ArrayStorage::Host(v) => Ok(v.clone()),
        ArrayStorage::OpenCl(b) => {
            let mut out = vec![0u32; array.len];
            b.owner.read(b.get()?, 0, &mut out)?;
            Ok(out)
        }
    }
}
