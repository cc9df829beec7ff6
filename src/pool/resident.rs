//! [`Resident`]: frames whose memory one engine of a pool holds (its page-locked host memory,
//! its device's memory), which [`EnginePool::stream_resident`](crate::EnginePool::stream_resident)
//! and [`EnginePool::map_resident`](crate::EnginePool::map_resident) hand to that engine.

use crate::device::{ArrayStorage, DeviceArray, DeviceImage, DeviceImageF32, PinnedImage};
use crate::device::{Storage, StorageF32};
use crate::engine::{Backend, Engine};
use crate::opencl::ClEngine;
use std::sync::Arc;

/// Memory that belongs to one engine: a [`PinnedImage`] that engine's driver page-locked, or a
/// [`DeviceImage`], [`DeviceImageF32`] or [`DeviceArray`] on its device. A pool's `_resident`
/// calls run each such frame on the engine that holds it, so that a pinned frame moves by DMA at
/// the link's full speed and a device image never crosses to another device; memory no engine
/// of the pool holds (host memory, the CPU engine's) goes to any engine.
///
/// Implement it for a frame type of your own that wraps one of these.
///
/// ```
/// use clpix::{Engine, Resident};
/// let engine = Engine::new()?;
/// let other = Engine::cpu();
/// let frame = engine.pinned_image(8, 8)?;
/// assert!(!frame.resident_on(&other));
/// # Ok::<(), clpix::Error>(())
/// ```
pub trait Resident {
    /// Whether `engine` holds this memory: its driver page-locked it, or it is on its device.
    /// Plain host memory belongs to no engine.
    ///
    /// ```
    /// use clpix::Resident;
    /// let engine = clpix::Engine::cpu();
    /// let img = engine.upload(&image::RgbaImage::new(2, 2))?;
    /// assert!(!img.resident_on(&engine)); // the CPU engine's memory is plain host memory
    /// # Ok::<(), clpix::Error>(())
    /// ```
    fn resident_on(&self, engine: &Engine) -> bool;
}

/// The engine's OpenCL state, to compare owners with.
fn cl_of(engine: &Engine) -> Option<&Arc<ClEngine>> {
    match &engine.backend {
        Backend::OpenCl(cl) => Some(cl),
        Backend::Cpu => None,
    }
}

/// Whether `owner` is `engine`'s.
fn owned_by(owner: Option<&Arc<ClEngine>>, engine: &Engine) -> bool {
    matches!((owner, cl_of(engine)), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
}

impl Resident for PinnedImage {
    fn resident_on(&self, engine: &Engine) -> bool {
        owned_by(self.owner(), engine)
    }
}

impl Resident for DeviceImage {
    fn resident_on(&self, engine: &Engine) -> bool {
        match &self.storage {
            Storage::OpenCl(parts) => owned_by(Some(&parts.owner), engine),
            Storage::Host(_) => false,
        }
    }
}

impl Resident for DeviceImageF32 {
    fn resident_on(&self, engine: &Engine) -> bool {
        match &self.storage {
            StorageF32::OpenCl { owner, .. } => owned_by(Some(owner), engine),
            StorageF32::Host(_) => false,
        }
    }
}

impl<T> Resident for DeviceArray<T> {
    fn resident_on(&self, engine: &Engine) -> bool {
        match &self.storage {
            ArrayStorage::OpenCl(b) => owned_by(Some(&b.owner), engine),
            ArrayStorage::Host(_) => false,
        }
    }
}

impl<T: Resident + ?Sized> Resident for &T {
    fn resident_on(&self, engine: &Engine) -> bool {
        (**self).resident_on(engine)
    }
}

/// The index of the first of `engines` that holds `item`, if one does.
pub(crate) fn home<F: Resident>(engines: &[Engine], item: &F) -> Option<usize> {
    engines.iter().position(|e| item.resident_on(e))
}
