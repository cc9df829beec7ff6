//! Arrays on an engine and their exclusive scan.
//!
//! # Specification
//! - **exclusive scan** of u32 values: element i of the result is the sum of elements 0..i,
//!   wrapping modulo 2^32 (the first element is 0). An empty array scans to an empty array.
//!
//! # Method
//! The CPU path scans pieces of 64 Ki elements on rayon and adds each piece's carry. GPUs with
//! 64-bit atomics scan in one pass (`lookback.cl`: a tile a work-group, its offset from a
//! decoupled look-back with fallback, so no group waits on another); other GPUs in three
//! (reduce, scan of the group sums, rescan), CPU devices a contiguous range a work-item.

mod cl;
mod cpu;
mod family;
pub(crate) mod kernels;
use family::FAMILY;

mod plan;
use cl::cl_scan_host;
pub(crate) use cl::{cl_scan, cl_scan_into, groups_for, grow};
use cpu::cpu_scan;

use crate::device::{ArrayInput, ArrayStorage, DeviceArray, PooledBuffer, download};
use crate::engine::Engine;
use crate::error::Result;

impl Engine {
    /// Exclusive prefix sum with wrapping addition: `out[i] = data[0] + … + data[i-1]`,
    /// `out[0] = 0`, of a host slice or an array the engine holds ([`ArrayInput`]), back in
    /// host memory. Any length.
    ///
    /// On OpenCL, host arrays larger than one device buffer are scanned in parts, each starting
    /// from the total of the parts before it.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// assert_eq!(engine.exclusive_scan(&[5, 1, u32::MAX, 2])?, vec![0, 5, 6, 5]);
    /// assert!(engine.exclusive_scan(&[])?.is_empty());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn exclusive_scan<'a>(&self, data: impl Into<ArrayInput<'a>>) -> Result<Vec<u32>> {
        match data.into() {
            ArrayInput::Host(data) => self.scan_host(data),
            // Scanned where this OpenCL engine holds it, and read back once.
            ArrayInput::Device(array) if self.holds(array) => {
                download(&self.exclusive_scan_device(array)?)
            }
            // A host array, or another engine's: scanned from host memory (no round trip
            // through a device array made only to be read back).
            ArrayInput::Device(array) => self.scan_host(&array.host_data()?),
        }
    }

    /// [`exclusive_scan`](Self::exclusive_scan) whose result stays on the engine: a new array
    /// (device memory on OpenCL). An array the engine holds is scanned where it is: nothing
    /// crosses the bus; a host slice (or another engine's array) is uploaded first.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&vec![1u32; 1000])?;
    /// let s = engine.download_array(&engine.exclusive_scan_device(&a)?)?;
    /// assert_eq!((s[0], s[999]), (0, 999));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn exclusive_scan_device<'a>(
        &self,
        data: impl Into<ArrayInput<'a>>,
    ) -> Result<DeviceArray<u32>> {
        let on_host = |data: &[u32]| {
            let scanned = self.scan_host(data)?;
            self.upload_array(&scanned)
        };
        let array = match data.into() {
            ArrayInput::Host(data) => return on_host(data),
            ArrayInput::Device(array) => array,
        };
        let n = array.len;
        self.dispatch_held(
            &FAMILY,
            &(),
            "exclusive_scan_device",
            n as u64,
            |cl| array.buffer_on(cl),
            || {
                Ok(DeviceArray {
                    len: n,
                    storage: ArrayStorage::Host(cpu_scan(&array.host_data()?)),
                })
            },
            |cl, src| {
                let out = PooledBuffer::take(cl, n)?;
                if n > 0 {
                    let mut events = Vec::new();
                    cl_scan_into(cl, src, n, out.get()?, 0, &mut events)?;
                    cl.finish(&events)?;
                }
                Ok(DeviceArray {
                    len: n,
                    storage: ArrayStorage::OpenCl(out),
                })
            },
            || on_host(&array.host_data()?),
        )
    }

    /// Whether `array` is in this OpenCL engine's device memory.
    fn holds(&self, array: &DeviceArray<u32>) -> bool {
        match &self.backend {
            crate::engine::Backend::OpenCl(cl) => array.buffer_on(cl).is_some(),
            crate::engine::Backend::Cpu => false,
        }
    }

    /// The scan of a host slice.
    fn scan_host(&self, data: &[u32]) -> Result<Vec<u32>> {
        if data.is_empty() {
            return Ok(Vec::new());
        }
        self.dispatch(
            &FAMILY,
            &(),
            "exclusive_scan",
            data.len() as u64,
            || Ok(cpu_scan(data)),
            |cl| cl_scan_host(cl, data),
        )
    }
}
