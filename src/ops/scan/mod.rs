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
pub(crate) mod kernels;
pub(crate) use cl::{cl_scan, groups_for, grow};
use cl::{cl_scan_host, cl_scan_into};
use cpu::cpu_scan;

use crate::device::{download, ArrayStorage, DeviceArray, PooledBuffer};
use crate::engine::{Backend, Engine};
use crate::error::Result;
use std::sync::Arc;

impl Engine {
    /// Exclusive prefix sum with wrapping addition: `out[i] = data[0] + … + data[i-1]`,
    /// `out[0] = 0`. Any length.
    ///
    /// On OpenCL, arrays larger than one device buffer are scanned in parts, each starting from
    /// the total of the parts before it.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// assert_eq!(engine.exclusive_scan(&[5, 1, u32::MAX, 2])?, vec![0, 5, 6, 5]);
    /// assert!(engine.exclusive_scan(&[])?.is_empty());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn exclusive_scan(&self, data: &[u32]) -> Result<Vec<u32>> {
        if data.is_empty() {
            return Ok(Vec::new());
        }
        self.dispatch(
            "exclusive_scan",
            data.len() as u64,
            || Ok(cpu_scan(data)),
            |cl| cl_scan_host(cl, data),
        )
    }

    /// [`exclusive_scan`](Self::exclusive_scan) of an array held by the engine; the result is a
    /// new array on the same engine (device memory on OpenCL: nothing crosses the bus).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&vec![1u32; 1000])?;
    /// let s = engine.download_array(&engine.exclusive_scan_device(&a)?)?;
    /// assert_eq!((s[0], s[999]), (0, 999));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn exclusive_scan_device(&self, array: &DeviceArray<u32>) -> Result<DeviceArray<u32>> {
        let cpu = || {
            let host = match &array.storage {
                ArrayStorage::Host(v) => cpu_scan(v),
                ArrayStorage::OpenCl(..) => cpu_scan(&download(array)?),
            };
            Ok(DeviceArray {
                len: array.len,
                storage: ArrayStorage::Host(host),
            })
        };
        match &self.backend {
            Backend::OpenCl(cl) => match &array.storage {
                ArrayStorage::OpenCl(src) if Arc::ptr_eq(&src.owner, cl) => {
                    self.dispatch("exclusive_scan_device", array.len as u64, cpu, |cl| {
                        let out = PooledBuffer::take(cl, array.len)?;
                        if array.len > 0 {
                            let mut events = Vec::new();
                            cl_scan_into(cl, src.get()?, array.len, out.get()?, 0, &mut events)?;
                            cl.finish(&events)?;
                        }
                        Ok(DeviceArray {
                            len: array.len,
                            storage: ArrayStorage::OpenCl(out),
                        })
                    })
                }
                _ => {
                    let host = download(array)?;
                    let scanned = self.exclusive_scan(&host)?;
                    self.upload_array(&scanned)
                }
            },
            Backend::Cpu => {
                crate::cl::set_last_kernel_ns(None);
                cpu()
            }
        }
    }
}
