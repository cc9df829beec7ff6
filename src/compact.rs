//! Prefix sums and stream compaction: the pixels above a luminance threshold, packed in scan
//! order or sorted by luminance, and the exclusive scan that packs them.
//!
//! # Specification
//! - **compact**: the pixels with [luminance](crate::luminance) `L > threshold` (threshold
//!   0..=1023; 1023 keeps none), packed in scan order (`y * width + x`). Each record is a
//!   [`PixelHit`]: x, y, L, RGBA.
//! - **compact, sorted**: the same records ordered by L descending; among equal L, scan order
//!   (a stable sort).
//! - **compacted image**: an image of the input's size whose first n pixels in scan order are
//!   the n kept pixels (in the requested [`CompactOrder`]) and whose other pixels are
//!   (0, 0, 0, 0).
//! - **exclusive scan** of u32 values: `out[i] = in[0] + … + in[i-1]` with wrapping addition,
//!   `out[0] = 0`; any length, 0 included.
//! - A threshold above 1023 is an [`Error::InvalidParameter`]; an image without pixels gives
//!   an empty result.
//!
//! # Method
//! The seed's four steps. `L > t` is tested as `21 r + 72 g + 7 b >= ceil(25500 (t + 1) / 1023)`,
//! which is exactly equivalent and needs no division.
//! - **CPU (rayon)**: the image is cut into pieces; each piece counts its kept pixels (a
//!   vectorised loop), a scan of the piece counts gives each piece its offset, and the pieces
//!   write their pixels in parallel. The sort is a parallel stable counting sort: each piece
//!   counts its kept pixels per luminance, the counts are scanned in the order (L descending,
//!   piece), and each piece writes its pixels to their bins.
//! - **OpenCL** (`cl/compact.cl`): (1) each work-group counts the kept pixels of its contiguous
//!   range; (2) exclusive scan of the group counts (on GPUs each group of the relocation adds up
//!   the counts before its own instead, which saves a kernel); (3) each group relocates its kept
//!   pixels in tiles, staged through local memory and written out coalesced. On NVIDIA GPUs (the
//!   `compact` program variant 1, where it builds; `CLPIX_COMPACT_RELOCATE=group|warp` forces
//!   one) each warp counts and relocates its own segment of the group's range, ranking with
//!   warp ballots in inline PTX, with no work-group barrier, and the relocation sums the counts
//!   of the groups before its own, so no scan kernel runs: on the H200, 0.207–0.217 ms for an
//!   8192² compacted image against 0.229–0.231 for the portable kernels (CUB 0.172–0.177:
//!   reading the image twice, count then relocate, keeps us short of it: the relocation alone
//!   runs at the copy ceiling, 0.124 ms for its 512 MiB against 0.132 for `cudaMemcpy` of
//!   256 MiB each way, and a count must read 256 MiB, 0.071 ms for CUB's `DeviceReduce::Sum`,
//!   so two passes cannot beat 0.195 ms, 0.9× CUB). A relocation segment (warp kernels) or
//!   group (portable ones) that keeps nothing writes nothing and returns (white spots on
//!   black: 0.157–0.160 → 0.103 ms).
//!   **Opt-in single pass** (`CLPIX_COMPACT_RELOCATE=lookback`, same program variant, needs
//!   `cl_khr_int64_base_atomics`): work-group t ranks and stages the kept pixels of tile t,
//!   publishes their count, finds its offset by a decoupled look-back over its predecessors'
//!   words *with fallback* (a predecessor silent after 32 re-reads is counted by the group
//!   itself, so no group ever waits on another and no forward progress is assumed), publishes
//!   its inclusive prefix and writes. The image is read once: 0.142–0.148 ms on the H200,
//!   1.18× CUB (`compact` with indices 0.216–0.221 against 0.264–0.266). Each word carries the
//!   launch's epoch, so the words are never cleared. Not the default: issue 4 asks for a
//!   reduce-then-scan by default. A GPU sorts in two stable LSD radix passes of 5 bits of the bin
//!   `1023 - L` (pass 1 reads the image and keeps, pass 2 reads pass 1's output): per pass a digit
//!   histogram per group, a scan of the `digits × groups` counts, and a scatter that ranks each
//!   tile of 16 pixels per work-item in local memory (a counter per digit and work-item, two to a
//!   word), stages the tile and its digits (each computed once) in digit order and writes runs of
//!   equal digit coalesced (a one-pass counting sort over the 1024 bins, whose writes went one
//!   pixel to a place, took 1.32 ms against 0.82 ms on the H200; the two passes now take 0.66 ms in
//!   all; one ranked per warp with NVIDIA's warp intrinsics in inline PTX, staged and written in
//!   runs, took 0.65–0.68 ms, no faster: branch `experiment/warp-sort`; the radix passes a segment
//!   a warp, each pixel stored straight to its digit's place, took 1.12 ms:
//!   `experiment/warp-radix`). A group whose kept pixels share one digit in a pass (all of a
//!   constant image's; in pass 2 all where the kept luminances share their high 5 bits, as
//!   above threshold 991) is not ranked: `radix_hist` marks it, `radix_scatter` leaves it to
//!   `radix_single`, which copies it to its digit's place in scan order, and a group that keeps
//!   nothing returns at once (H200, 8192²: constant image 1.105 → 0.517 ms, white spots on
//!   black 0.31 → 0.18 ms; the random image pays 0.007–0.009 ms a pass for `radix_single`'s
//!   launch: 0.654 → 0.666). Pass 2 reads its length, pass 1's count, on the device, so the
//!   host enqueues both passes without waiting between them, and the digit counts are scanned
//!   by one work-group in one kernel (H200, before `radix_single`: 0.651–0.655 ms of kernels,
//!   0.683–0.689 from the first one's start to the last one's end, against 0.767–0.775 with
//!   the host's read between the passes and three scan kernels a pass; CUB's select and radix
//!   sort 0.750–0.752). The relocation and the scatter are each built twice, with and without
//!   indices, so that the pixels-only copy (`compacted_image`) does no index work.
//!   A GPU writes compact records (the u32 part-local index and the u32 pixel: 8 bytes a hit
//!   over the bus); x, y and L are derived on the host. On CPU devices each work-item walks a
//!   contiguous range instead (`CLPIX_CONTIGUOUS`), sorts by a stable counting sort over the
//!   luminance bins, computes the bins of a block of pixels in one vectorised loop before
//!   placing them, and writes whole `PixelHit`s straight into the result's memory
//!   (`CL_MEM_USE_HOST_PTR`): on PoCL 3.1 the 16-byte copy of 8 million hits into fresh pages
//!   had cost as much as the kernels.
//! - **Tried and dropped** for the GPU compactions (issue 4's notes have the tables): the
//!   count and the relocation in L2-sized chunks of the image, so that the relocation reads
//!   from L2 (H100: 0.46 ms in 16 MiB chunks, 0.34 in 48 MiB ones, against 0.27 in one launch:
//!   each launch's ramp and tail cost more than L2 saves); the radix scatter ranked with warp
//!   ballots, a counter per digit and warp (H100, sorted compacted image: 0.711 against
//!   0.700 ms); the digit counts by warp ballots, without atomics (H200, pass 1: 0.156 against
//!   0.119 ms, on a constant image too); 8 pixels a work-item in the radix scatter (80
//!   registers rather than 128, H200: 0.71 against 0.68 ms). NVIDIA's driver 580 accepts
//!   `-cl-nv-maxrregcount=N` but applies no cap (ptxas reports the same registers) and
//!   refuses `-cl-nv-maxrregcount N`: a register cap cannot be tried through OpenCL there.
//! - **Scan** on OpenCL: reduce-then-scan (sum per group, scan of the group sums by one group,
//!   rescan of each group's range from its offset); no single-pass look-back (OpenCL does not
//!   promise forward progress between work-groups: issue 4 keeps the single pass opt-in, and
//!   only for the compaction above).

use crate::cpu::{advise_huge_pages, alloc_zeroed, with_u32_blocks, PIECE};
use crate::engine::{Backend, Engine, HostPixels};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageInput, ImageView};
use crate::luminance::luma_u32;
use crate::opencl::{Arg, ClEngine};
use crate::reduce::PixelHit;
use opencl3::event::Event;
use opencl3::memory::Buffer;
use rayon::prelude::*;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The order of the pixels in [`Engine::compacted_image`].
///
/// ```
/// use clpix::CompactOrder;
/// assert_ne!(CompactOrder::ScanOrder, CompactOrder::LuminanceDescending);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactOrder {
    /// Scan order (`y * width + x`), as [`Engine::compact`].
    ScanOrder,
    /// Luminance descending, ties in scan order, as [`Engine::compact_sorted`].
    LuminanceDescending,
}

/// A typed array held by an [`Engine`]: in device memory on an OpenCL engine, in host memory on
/// the CPU engine. Made by [`Engine::upload_array`], read back with [`Engine::download_array`],
/// scanned in place on the device by [`Engine::exclusive_scan_device`], reduced there by
/// [`Engine::array_stats_device`].
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
    len: usize,
    storage: ArrayStorage<T>,
}

enum ArrayStorage<T> {
    Host(Vec<T>),
    OpenCl(PooledBuffer),
}

/// A device buffer of at least `count` u32 that goes back to its engine's pool when dropped:
/// the next array of that size reuses it (a fresh buffer costs a page fault per 4 KiB at its
/// first write on CPU devices, and an allocation on GPUs). The pool keeps at most two.
struct PooledBuffer {
    owner: Arc<ClEngine>,
    count: usize,
    /// `None` only while dropping.
    buf: Option<Buffer<u32>>,
}

const ARRAY_POOL: &str = "arrays";

impl PooledBuffer {
    fn take(cl: &Arc<ClEngine>, len: usize) -> Result<PooledBuffer> {
        // A device array is one buffer: the engine's cap applies to it as to an image part.
        let needed = (len.max(1) as u64).saturating_mul(4);
        if needed > cl.max_buffer_bytes {
            return Err(Error::TooLargeForDevice {
                what: "a device array",
                needed,
                limit: cl.max_buffer_bytes,
            });
        }
        let (count, buf) = cl.take_scratch(ARRAY_POOL, len)?;
        Ok(PooledBuffer {
            owner: cl.clone(),
            count,
            buf: Some(buf),
        })
    }
    fn get(&self) -> Result<&Buffer<u32>> {
        // CL_INVALID_MEM_OBJECT: unreachable, the buffer is only taken in `drop`.
        self.buf.as_ref().ok_or(Error::cl("DeviceArray", -38))
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buf.take() {
            self.owner.give_scratch(ARRAY_POOL, self.count, b);
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

fn check_threshold(threshold: u16) -> Result<()> {
    if threshold > 1023 {
        return Err(Error::invalid("threshold", threshold, "0..=1023"));
    }
    Ok(())
}

/// The smallest weighted sum `21 r + 72 g + 7 b` whose luminance is above `threshold`:
/// `floor(1023 s / 25500) > t` exactly when `1023 s >= 25500 (t + 1)`. Above 25500 for 1023.
fn wsum_min(threshold: u16) -> u32 {
    (25500 * (threshold as u32 + 1)).div_ceil(1023)
}

#[inline(always)]
fn wsum(p: u32) -> u32 {
    21 * (p & 0xff) + 72 * ((p >> 8) & 0xff) + 7 * ((p >> 16) & 0xff)
}

impl Engine {
    /// The pixels with luminance above `threshold`, packed in scan order.
    ///
    /// An error for a threshold above 1023; an empty vector for an image without pixels.
    ///
    /// ```
    /// let mut img = image::RgbaImage::new(4, 3);
    /// img.put_pixel(3, 0, image::Rgba([255, 255, 255, 255]));
    /// img.put_pixel(1, 2, image::Rgba([0, 200, 0, 255]));
    /// let hits = clpix::Engine::new()?.compact(&img, 100)?;
    /// assert_eq!(hits.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), [(3, 0), (1, 2)]);
    /// assert_eq!(hits[1].luminance, clpix::luminance(0, 200, 0));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn compact<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        threshold: u16,
    ) -> Result<Vec<PixelHit>> {
        self.compact_hits(img.into(), threshold, false)
    }

    /// The pixels with luminance above `threshold`, by luminance descending; pixels of equal
    /// luminance stay in scan order (a stable sort).
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(3, 1, |x, _| image::Rgba([0, [90, 250, 90][x as usize], 0, 255]));
    /// let hits = clpix::Engine::new()?.compact_sorted(&img, 0)?;
    /// assert_eq!(hits.iter().map(|h| h.x).collect::<Vec<_>>(), [1, 0, 2]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn compact_sorted<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        threshold: u16,
    ) -> Result<Vec<PixelHit>> {
        self.compact_hits(img.into(), threshold, true)
    }

    /// An image of the input's size whose first pixels (in scan order) are the pixels with
    /// luminance above `threshold`, in `order`, and whose other pixels are (0, 0, 0, 0): the
    /// seed's "mush of dots".
    ///
    /// ```
    /// use clpix::CompactOrder;
    /// let img = image::RgbaImage::from_fn(2, 2, |x, y| image::Rgba([0, (x * 100 + y * 50) as u8, 0, 255]));
    /// let out = clpix::Engine::new()?.compacted_image(&img, 150, CompactOrder::LuminanceDescending)?;
    /// assert_eq!(out.get_pixel(0, 0).0, [0, 150, 0, 255]);
    /// assert_eq!(out.get_pixel(1, 0).0, [0, 100, 0, 255]);
    /// assert_eq!(out.get_pixel(0, 1).0, [0, 0, 0, 0]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn compacted_image<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        threshold: u16,
        order: CompactOrder,
    ) -> Result<image::RgbaImage> {
        let input = img.into();
        check_threshold(threshold)?;
        let n = check_pixel_count(input.width(), input.height())? as usize;
        let sorted = order == CompactOrder::LuminanceDescending;
        let bytes = if threshold == 1023 || n == 0 {
            alloc_zeroed::<u8>(n * 4)
        } else {
            self.dispatch(
                "compacted_image",
                || {
                    let host = HostPixels::of(input)?;
                    Ok(cpu_compacted_bytes(&host.view(), threshold, sorted))
                },
                |cl| {
                    let kept = cl_compact(cl, input, threshold, sorted, KeptAs::Pixels)?.px;
                    let mut bytes = alloc_zeroed::<u8>(n * 4);
                    let head = &mut bytes[..kept.len() * 4];
                    match bytemuck::try_cast_slice_mut::<u8, u32>(head) {
                        Ok(px) => px.copy_from_slice(&kept),
                        Err(_) => head.copy_from_slice(bytemuck::cast_slice(&kept)),
                    }
                    Ok(bytes)
                },
            )?
        };
        image::RgbaImage::from_raw(input.width(), input.height(), bytes).ok_or(
            Error::ImageTooLarge {
                width: input.width() as u64,
                height: input.height() as u64,
                reason: "the image does not fit in memory",
            },
        )
    }

    fn compact_hits(
        &self,
        input: ImageInput<'_>,
        threshold: u16,
        sorted: bool,
    ) -> Result<Vec<PixelHit>> {
        check_threshold(threshold)?;
        check_pixel_count(input.width(), input.height())?;
        if threshold == 1023 || input.pixel_count() == 0 {
            return Ok(Vec::new());
        }
        let name = if sorted { "compact_sorted" } else { "compact" };
        let width = input.width();
        self.dispatch(
            name,
            || {
                let host = HostPixels::of(input)?;
                Ok(cpu_compact(&host.view(), threshold, sorted, |x, y, p| {
                    hit(x, y, p)
                }))
            },
            |cl| {
                if cl.tuning.contiguous && words_fit(cl, input.pixel_count() as usize) {
                    // A CPU device writes whole hits: the host only copies them.
                    let r = cl_compact(cl, input, threshold, sorted, KeptAs::Hits)?;
                    return Ok(hits_of(r.px));
                }
                let r = cl_compact(cl, input, threshold, sorted, KeptAs::Indexed)?;
                let div = FastDiv::new(width);
                let mut hits = big_vec(r.px.len());
                let make = |(&i, &p): (&u32, &u32)| {
                    let y = div.div(i);
                    hit(i - y * width, y, p)
                };
                if cl.tuning.contiguous {
                    // A CPU device: its driver's threads hold the same cores (rayon here ran
                    // several times slower than one thread on PoCL).
                    hits.extend(r.idx.iter().zip(r.px.iter()).map(make));
                } else {
                    hits.par_extend(
                        r.idx
                            .par_iter()
                            .zip(r.px.par_iter())
                            .with_min_len(4096)
                            .map(make),
                    );
                }
                Ok(hits)
            },
        )
    }

    /// Copies `data` to the engine: a device buffer on OpenCL, host memory on the CPU engine.
    ///
    /// An error if the array is larger than one device buffer may be, or has more than
    /// `u32::MAX` elements.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&[7u32, 8, 9])?;
    /// assert_eq!(engine.download_array(&a)?, vec![7, 8, 9]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn upload_array(&self, data: &[u32]) -> Result<DeviceArray<u32>> {
        check_array_len(data.len())?;
        let storage = match &self.backend {
            Backend::Cpu => ArrayStorage::Host(data.to_vec()),
            Backend::OpenCl(cl) => {
                let mut pooled = PooledBuffer::take(cl, data.len())?;
                if let Some(buf) = pooled.buf.as_mut() {
                    cl.write(buf, 0, data)?;
                }
                ArrayStorage::OpenCl(pooled)
            }
        };
        Ok(DeviceArray {
            len: data.len(),
            storage,
        })
    }

    /// Reads an array back into host memory (from whichever engine holds it).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&[1u32, 2])?;
    /// assert_eq!(engine.download_array(&a)?, vec![1, 2]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download_array(&self, array: &DeviceArray<u32>) -> Result<Vec<u32>> {
        download(array)
    }

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
                    self.dispatch("exclusive_scan_device", cpu, |cl| {
                        let out = PooledBuffer::take(cl, array.len)?;
                        if array.len > 0 {
                            let mut events = Vec::new();
                            cl_scan(cl, src.get()?, array.len, out.get()?, 0, &mut events)?;
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
                crate::opencl::set_last_kernel_ns(None);
                cpu()
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

fn download(array: &DeviceArray<u32>) -> Result<Vec<u32>> {
    match &array.storage {
        ArrayStorage::Host(v) => Ok(v.clone()),
        ArrayStorage::OpenCl(b) => {
            let mut out = vec![0u32; array.len];
            b.owner.read(b.get()?, 0, &mut out)?;
            Ok(out)
        }
    }
}

/// An empty vector with room for `n` elements, in huge pages where possible (see
/// [`advise_huge_pages`](crate::cpu::advise_huge_pages)).
fn big_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    advise_huge_pages(
        v.as_ptr() as usize,
        n.saturating_mul(std::mem::size_of::<T>()),
    );
    v
}

/// Whether a buffer of 4 words per pixel of the largest part of an image of `pixels` fits the
/// device (hits written whole by the kernel).
fn words_fit(cl: &ClEngine, pixels: usize) -> bool {
    let part = pixels.min((cl.max_buffer_bytes / 4) as usize);
    (part as u64).saturating_mul(16) <= cl.info.max_alloc_bytes
}

/// Division of u32 indices by a fixed width, through a f64 reciprocal and an exact fix-up.
#[derive(Clone, Copy)]
struct FastDiv {
    d: u64,
    inv: f64,
}

impl FastDiv {
    fn new(d: u32) -> FastDiv {
        let d = d.max(1);
        FastDiv {
            d: d as u64,
            inv: 1.0 / d as f64,
        }
    }
    /// `i / d`: the estimate is within one of the quotient (relative error below 2^-50).
    #[inline(always)]
    fn div(self, i: u32) -> u32 {
        let mut q = (i as f64 * self.inv) as u64;
        let i = i as u64;
        if q * self.d > i {
            q -= 1;
        } else if (q + 1) * self.d <= i {
            q += 1;
        }
        q as u32
    }
}

#[inline]
fn hit(x: u32, y: u32, p: u32) -> PixelHit {
    PixelHit {
        x,
        y,
        luminance: luma_u32(p) as u16,
        rgba: p.to_le_bytes(),
    }
}

// ---------------------------------------------------------------------------------------------
// CPU path: the executable specification.

/// Elements per rayon task of the scan.
const SCAN_PIECE: usize = 1 << 16;

fn cpu_scan(data: &[u32]) -> Vec<u32> {
    let sums: Vec<u32> = data
        .par_chunks(SCAN_PIECE)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    let mut offsets = Vec::with_capacity(sums.len());
    let mut run = 0u32;
    for s in sums {
        offsets.push(run);
        run = run.wrapping_add(s);
    }
    let mut out = alloc_zeroed::<u32>(data.len());
    out.par_chunks_mut(SCAN_PIECE)
        .zip(data.par_chunks(SCAN_PIECE))
        .zip(offsets)
        .for_each(|((o, d), mut run)| {
            for (o, &d) in o.iter_mut().zip(d) {
                *o = run;
                run = run.wrapping_add(d);
            }
        });
    out
}

mod kernels {
    crate::cpu::multiversion! {
        fn count_kept(px: &[u32], wmin: u32) -> usize {
            px.iter().map(|&p| (super::wsum(p) >= wmin) as usize).sum::<usize>()
        }
    }
}

mod bin_kernels {
    crate::cpu::multiversion! {
        fn bins_of(px: &[u32], wmin: u32, out: &mut [u16]) -> () {
            // bin = 1023 - L for a kept pixel, 1024 for a dropped one.
            for (o, &p) in out.iter_mut().zip(px) {
                let s = super::wsum(p);
                let bin = 1023 - (1023 * s) / 25500;
                *o = if s >= wmin { bin as u16 } else { 1024 };
            }
        }
    }
}

/// A run of contiguous pixels: the scan index of its first pixel, and its bytes.
type Piece<'a> = (u64, &'a [u8]);

fn pieces<'a>(view: &ImageView<'a>) -> Vec<Piece<'a>> {
    if let Some(bytes) = view.packed_bytes() {
        return bytes
            .chunks(PIECE * 4)
            .enumerate()
            .map(|(i, c)| ((i * PIECE) as u64, c))
            .collect();
    }
    let w = view.width() as u64;
    (0..view.height())
        .flat_map(|y| {
            view.row(y)
                .chunks(PIECE * 4)
                .enumerate()
                .map(move |(i, c)| (y as u64 * w + (i * PIECE) as u64, c))
        })
        .collect()
}

/// Pixels per block of the CPU loops (the positions of a block's kept pixels fit a u16).
const BLOCK: usize = 1024;

/// Writes the positions of the kept pixels of `block` to `kept`, without a branch per pixel
/// (half the pixels kept at random would mispredict half the time); returns how many.
#[inline(always)]
fn kept_positions(block: &[u32], wmin: u32, kept: &mut [u16; BLOCK]) -> usize {
    let mut k = 0;
    for (j, &p) in block.iter().enumerate() {
        kept[k] = j as u16;
        k += (wsum(p) >= wmin) as usize;
    }
    k
}

/// Calls `f(x, y, pixel, slot)` for each kept pixel of a piece, in scan order (x and y kept
/// running, without a division per pixel); `slot` is the pixel's bin `1023 - L` when `binned`,
/// else 0.
#[inline(always)]
fn for_each_kept(
    (base, bytes): Piece<'_>,
    width: u32,
    wmin: u32,
    binned: bool,
    mut f: impl FnMut(u32, u32, u32, usize),
) {
    let w = width as u64;
    let mut y = (base / w) as u32;
    let mut row_start = y as u64 * w;
    let mut kept = [0u16; BLOCK];
    let mut bins = [0u16; BLOCK];
    with_u32_blocks(bytes, BLOCK, |offset, block| {
        let k = if binned {
            let bins = &mut bins[..block.len()];
            bin_kernels::bins_of(block, wmin, bins);
            let mut k = 0;
            for (j, &b) in bins.iter().enumerate() {
                kept[k] = j as u16;
                k += (b < 1024) as usize;
            }
            k
        } else {
            kept_positions(block, wmin, &mut kept)
        };
        for &j in &kept[..k] {
            let p = block[j as usize];
            let i = base + (offset + j as usize) as u64;
            while i >= row_start + w {
                row_start += w;
                y += 1;
            }
            let slot = if binned { bins[j as usize] as usize } else { 0 };
            f((i - row_start) as u32, y, p, slot);
        }
    });
}

/// A pointer shared by the tasks that fill disjoint elements of one buffer.
struct SharedOut<T>(*mut T);
impl<T> Clone for SharedOut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedOut<T> {}
// SAFETY: the tasks write disjoint elements (their offsets come from an exclusive scan of
// their counts) and the buffer outlives the parallel loop.
unsafe impl<T: Send> Send for SharedOut<T> {}
unsafe impl<T: Send> Sync for SharedOut<T> {}

impl<T> SharedOut<T> {
    /// # Safety
    /// `i` is inside the buffer and no other task writes element `i`.
    #[inline(always)]
    unsafe fn write(self, i: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(i).write(v) }
    }
}

/// Steps (1) and (2) of the CPU compaction: the pieces, and where each piece (each piece's
/// bin, for the sort) starts in the output; plus the number of kept pixels.
struct Plan<'a> {
    pieces: Vec<Piece<'a>>,
    starts: Vec<Vec<usize>>,
    total: usize,
    wmin: u32,
    width: u32,
    sorted: bool,
}

fn cpu_plan<'a>(view: &ImageView<'a>, threshold: u16, sorted: bool) -> Plan<'a> {
    let wmin = wsum_min(threshold);
    let pieces = if wmin > 25500 {
        Vec::new()
    } else {
        pieces(view)
    };
    // (1) counts, per piece (per piece and bin for the sort);
    // (2) an exclusive scan of them: each piece's (and bin's) first output position.
    let (total, starts) = if sorted {
        let nbins = 1023 - threshold as usize;
        let hists: Vec<Vec<u32>> = pieces
            .par_iter()
            .map(|&(_, bytes)| {
                // Bins of a block first (a vectorised loop; 1024 for a dropped pixel), then
                // two histograms, so that runs of equal luminance do not wait on each other.
                let mut h = vec![0u32; 2 * 2048];
                let mut bins = [0u16; BLOCK];
                with_u32_blocks(bytes, BLOCK, |_, block| {
                    let bins = &mut bins[..block.len()];
                    bin_kernels::bins_of(block, wmin, bins);
                    let (h0, h1) = h.split_at_mut(2048);
                    let mut pairs = bins.chunks_exact(2);
                    for q in &mut pairs {
                        h0[q[0] as usize & 2047] += 1;
                        h1[q[1] as usize & 2047] += 1;
                    }
                    for &b in pairs.remainder() {
                        h0[b as usize & 2047] += 1;
                    }
                });
                let (h0, h1) = h.split_at(2048);
                h0[..1024].iter().zip(h1).map(|(a, b)| a + b).collect()
            })
            .collect();
        let mut starts = vec![vec![0usize; nbins]; pieces.len()];
        let mut run = 0usize;
        for b in 0..nbins {
            for (s, h) in starts.iter_mut().zip(&hists) {
                s[b] = run;
                run += h[b] as usize;
            }
        }
        (run, starts)
    } else {
        let counts: Vec<usize> = pieces
            .par_iter()
            .map(|&(_, bytes)| {
                let mut c = 0;
                with_u32_blocks(bytes, BLOCK, |_, block| {
                    c += kernels::count_kept(block, wmin)
                });
                c
            })
            .collect();
        let mut run = 0usize;
        let starts = counts
            .iter()
            .map(|&c| {
                let s = run;
                run += c;
                vec![s]
            })
            .collect();
        (run, starts)
    };
    Plan {
        pieces,
        starts,
        total,
        wmin,
        width: view.width(),
        sorted,
    }
}

impl Plan<'_> {
    /// (3): each piece writes `make(x, y, pixel)` of its kept pixels from its offsets, in
    /// parallel, to elements `0..total` of `out`.
    ///
    /// # Safety
    /// `out` points to at least `total` writable elements of `T`.
    unsafe fn write<T: Send>(self, out: SharedOut<T>, make: impl Fn(u32, u32, u32) -> T + Sync) {
        let (width, wmin, sorted) = (self.width, self.wmin, self.sorted);
        self.pieces
            .par_iter()
            .zip(self.starts)
            .for_each(|(&piece, mut next)| {
                for_each_kept(piece, width, wmin, sorted, |x, y, p, bin| {
                    let slot = &mut next[bin];
                    // SAFETY: this piece owns positions [start, start + count) of each of its
                    // bins (or of the piece) and writes exactly `count` pixels there (the same
                    // test as the counts); all of them are below `total`.
                    unsafe { out.write(*slot, make(x, y, p)) };
                    *slot += 1;
                });
            });
    }
}

/// Kept pixels of `view` as `make(x, y, pixel)`, in scan order or sorted by luminance
/// descending (stable).
fn cpu_compact<T: Send>(
    view: &ImageView<'_>,
    threshold: u16,
    sorted: bool,
    make: impl Fn(u32, u32, u32) -> T + Sync,
) -> Vec<T> {
    let plan = cpu_plan(view, threshold, sorted);
    let total = plan.total;
    let mut out: Vec<T> = big_vec(total);
    // SAFETY: the capacity is `total`.
    unsafe { plan.write(SharedOut(out.as_mut_ptr()), make) };
    // SAFETY: `write` wrote every position below `total` exactly once.
    unsafe { out.set_len(total) };
    out
}

/// The compacted image's bytes: kept pixels first, zeros after.
fn cpu_compacted_bytes(view: &ImageView<'_>, threshold: u16, sorted: bool) -> Vec<u8> {
    let mut bytes = alloc_zeroed::<u8>(view.pixel_count() as usize * 4);
    let plan = cpu_plan(view, threshold, sorted);
    // SAFETY: `bytes` holds pixel_count >= total elements of [u8; 4] (alignment 1).
    unsafe {
        plan.write(SharedOut(bytes.as_mut_ptr() as *mut [u8; 4]), |_, _, p| {
            p.to_le_bytes()
        })
    };
    bytes
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.

/// Elements per work-group tile of the GPU scan kernels (`TILE` in cl/compact.cl).
fn tile(cl: &ClEngine) -> usize {
    if cl.tuning.contiguous {
        1
    } else {
        cl.tuning.wg * 32
    }
}

/// Bytes of the GPU radix scatter's local memory (`RadixLocal` in cl/compact.cl) with `wg`
/// work-items of `per` pixels each: the counters (16 words a work-item, one of padding every 16)
/// or the staged tile (pixels and indices), whichever is larger, the scan, two offsets a digit
/// and a byte of digit a staged pixel.
fn radix_local_bytes(wg: usize, per: usize) -> usize {
    let counters = 16 * wg + 16 * wg / 16;
    4 * counters.max(2 * wg * per) + 4 * wg + 2 * 32 * 4 + wg * per
}

/// Pixels a work-item of the GPU radix scatter ranks a tile (`RADIX_PER` in cl/compact.cl): 16,
/// or 8 where the scatter's local memory (38,144 bytes at 16 with 256 work-items, 20,736 at 8)
/// would not fit with 1 KiB to spare, as on GPUs with 32 KiB of local memory (OpenCL's minimum,
/// which 8 fits).
pub(crate) fn radix_per(wg: usize, local_mem_bytes: u64) -> usize {
    if radix_local_bytes(wg, 16) as u64 + 1024 <= local_mem_bytes {
        16
    } else {
        8
    }
}

/// Work-groups for a pass over `n` elements: on GPUs a tile per group at least (the scans of
/// the sort's 32 × 1056 digit counts then run on 5 groups, not 2), on CPU devices ranges of
/// 16 Ki elements at least.
fn groups_for(cl: &ClEngine, n: usize) -> usize {
    let per = if cl.tuning.contiguous {
        16 * 1024
    } else {
        tile(cl)
    };
    n.div_ceil(per).clamp(1, cl.tuning.max_groups)
}

pub(crate) fn u32_arg(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::invalid(what, n, "at most u32::MAX elements"))
}

/// The longest array that GPUs scan in one work-group (`scan_single`): the radix passes'
/// 32 counters a group, 33,792 on a GPU of 132 compute units.
const SCAN_SINGLE_MAX: usize = 64 * 1024;

/// Enqueues the exclusive scan of `n` elements of `src` into `dst` (which may be `src`),
/// starting from `carry`. Returns the group sums buffer; its element `groups` is the total.
fn cl_scan(
    cl: &ClEngine,
    src: &Buffer<u32>,
    n: usize,
    dst: &Buffer<u32>,
    carry: u32,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, usize)> {
    let n32 = u32_arg(n, "array length")?;
    let wg = cl.tuning.wg;
    if !cl.tuning.contiguous && n <= SCAN_SINGLE_MAX {
        // One kernel, not three, for short arrays such as the radix passes' digit counts.
        let sums = cl.buffer::<u32>(2, "scan group sums")?;
        events.push(cl.launch(
            "compact",
            "scan_single",
            &[
                Arg::buf(src),
                Arg::U32(n32),
                Arg::buf(dst),
                Arg::U32(carry),
                Arg::buf(&sums),
            ],
            wg,
            wg,
        )?);
        return Ok((sums, 1));
    }
    let g = groups_for(cl, n);
    let sums = cl.buffer::<u32>(g + 1, "scan group sums")?;
    events.push(cl.launch(
        "compact",
        "scan_reduce",
        &[Arg::buf(src), Arg::U32(n32), Arg::buf(&sums)],
        g * wg,
        wg,
    )?);
    events.push(cl.launch(
        "compact",
        "scan_groups",
        &[Arg::buf(&sums), Arg::U32(g as u32), Arg::U32(carry)],
        wg,
        wg,
    )?);
    events.push(cl.launch(
        "compact",
        "scan_apply",
        &[Arg::buf(src), Arg::U32(n32), Arg::buf(dst), Arg::buf(&sums)],
        g * wg,
        wg,
    )?);
    Ok((sums, g))
}

/// Scans a host slice on the device, in chunks of one buffer each, carrying the total.
fn cl_scan_host(cl: &Arc<ClEngine>, data: &[u32]) -> Result<Vec<u32>> {
    let cap = ((cl.max_buffer_bytes / 4) as usize).clamp(1024, 1 << 30);
    let chunk = cap.min(data.len());
    let (src_count, mut src) = cl.take_scratch("scan input", chunk)?;
    let (dst_count, dst) = cl.take_scratch("scan output", chunk)?;
    let mut out = vec![0u32; data.len()];
    let mut carry = 0u32;
    let mut events = Vec::new();
    for (d, o) in data.chunks(chunk).zip(out.chunks_mut(chunk)) {
        cl.write(&mut src, 0, d)?;
        cl_scan(cl, &src, d.len(), &dst, carry, &mut events)?;
        cl.read(&dst, 0, o)?;
        if let (Some(&last_out), Some(&last_in)) = (o.last(), d.last()) {
            carry = last_out.wrapping_add(last_in);
        }
    }
    cl.finish(&events)?;
    cl.give_scratch("scan input", src_count, src);
    cl.give_scratch("scan output", dst_count, dst);
    Ok(out)
}

/// Appends `m` zeros to `v`: fresh zero pages (in huge pages where possible) when `v` is empty.
fn grow(v: &mut Vec<u32>, m: usize) {
    if v.is_empty() {
        *v = alloc_zeroed::<u32>(m);
    } else {
        v.resize(v.len() + m, 0);
    }
}

/// What a device compaction writes for each kept pixel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum KeptAs {
    /// Its pixel (the compacted image).
    Pixels,
    /// Its part-local scan index and its pixel (hits, made on the host: GPUs, where the bus
    /// carries 8 bytes a hit instead of 16).
    Indexed,
    /// A whole [`PixelHit`], 4 words (CPU devices: the host then only copies).
    Hits,
}

/// Kept pixels read back from the device: global scan indices and pixels (`Indexed`), pixels
/// (`Pixels`), or 4 words per hit in `px` (`Hits`).
struct Compacted {
    idx: Vec<u32>,
    px: Vec<u32>,
}

/// Where a GPU compaction of one image part writes: the kept pixels, and their part-local scan
/// indices when `with_idx`.
#[derive(Clone, Copy)]
struct PartOut<'a> {
    px: &'a Buffer<u32>,
    idx: &'a Buffer<u32>,
    with_idx: bool,
}

/// Steps 1 and 2 of a sorting pass: `kernel` counts the kept pixels of each of `g` groups
/// into `bins` counters a group (its arguments: `args`, then the counters), then the
/// `bins × g` counters are scanned in place (exclusive). After them the buffer has one spare
/// word and `info` words a group that the kernel may fill and the scan leaves alone
/// (radix_hist's `GROUP_INFO`). Returns the counters, and the scan's group sums with the
/// index of the total there.
fn group_counts_scanned(
    cl: &ClEngine,
    (kernel, what): (&'static str, &'static str),
    args: Vec<Arg>,
    (bins, info): (usize, usize),
    g: usize,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, Buffer<u32>, usize)> {
    let wg = cl.tuning.wg;
    let counts = cl.buffer::<u32>((bins + info) * g + 1, what)?;
    let mut args = args;
    args.push(Arg::buf(&counts));
    events.push(cl.launch("compact", kernel, &args, g * wg, wg)?);
    let (sums, sg) = cl_scan(cl, &counts, bins * g, &counts, 0, events)?;
    Ok((counts, sums, sg))
}

/// The two radix passes of the GPU sorted compaction of `n` pixels of `buf`: kept pixels by
/// luminance descending, stable, into `out`. Returns the number kept. The second pass reads
/// that number on the device (cl/compact.cl's `pass_len`), so both passes are enqueued before
/// the host waits for it.
fn cl_radix_sorted(
    cl: &ClEngine,
    buf: &Buffer<u32>,
    n: usize,
    wmin: u32,
    out: PartOut<'_>,
    events: &mut Vec<Event>,
) -> Result<usize> {
    let PartOut {
        px: out_px,
        idx: out_idx,
        with_idx,
    } = out;
    const RADIX: usize = 32;
    // radix_scatter_indexed's flag: the indices come from the source's (pass 2).
    const RADIX_SRC_IDX: u32 = 2;
    // `pass_len`'s "no length on the device": the pass takes the length it is given.
    const LEN_GIVEN: u32 = u32::MAX;
    let wg = cl.tuning.wg;
    let n32 = u32_arg(n, "image part")?;
    let g = groups_for(cl, n);
    let (tmp_px_count, tmp_px) = cl.take_scratch("radix pass pixels", n)?;
    let (tmp_idx_count, tmp_idx) =
        cl.take_scratch("radix pass indices", if with_idx { n } else { 1 })?;
    // One pass over at most `n` elements of `src` (kept: wsum >= `keep_min`), by the digit at
    // `shift`; `len_at[at]` caps the length on the device unless `at` is LEN_GIVEN.
    let mut pass = |(src, src_idx): (&Buffer<u32>, &Buffer<u32>),
                    (len_at, at): (&Buffer<u32>, u32),
                    keep_min: u32,
                    shift: u32,
                    flags: u32,
                    (dst_idx, dst_px): (&Buffer<u32>, &Buffer<u32>)|
     -> Result<(Buffer<u32>, usize)> {
        // The arguments every kernel of the pass takes after its sources: the length (n, or
        // len_at[at]), the keep bound and the digit.
        let pass_args = || {
            [
                Arg::U32(n32),
                Arg::U32(keep_min),
                Arg::U32(shift),
                Arg::buf(len_at),
                Arg::U32(at),
            ]
        };
        let (ghist, sums, sg) = group_counts_scanned(
            cl,
            ("radix_hist", "digit counts per group"),
            [Arg::buf(src)].into_iter().chain(pass_args()).collect(),
            // Each group's single digit (or none) and its kept count after the counters.
            (RADIX, 2),
            g,
            events,
        )?;
        // Pixels only, or with indices: two kernels, so that the pixels-only one has no index
        // loads, stores or branches (cl/compact.cl has the measurements). Each has a second
        // kernel with the same arguments for the groups whose kept pixels share one digit.
        let ((kernel, single), args): (_, Vec<Arg>) = if with_idx {
            let outs = [
                Arg::buf(&ghist),
                Arg::U32(flags),
                Arg::buf(dst_idx),
                Arg::buf(dst_px),
            ];
            let srcs = [Arg::buf(src), Arg::buf(src_idx)];
            let args = srcs.into_iter().chain(pass_args()).chain(outs).collect();
            (("radix_scatter_indexed", "radix_single_indexed"), args)
        } else {
            let outs = [Arg::buf(&ghist), Arg::buf(dst_px)];
            let args = [Arg::buf(src)]
                .into_iter()
                .chain(pass_args())
                .chain(outs)
                .collect();
            (("radix_scatter", "radix_single"), args)
        };
        events.push(cl.launch("compact", kernel, &args, g * wg, wg)?);
        events.push(cl.launch("compact", single, &args, g * wg, wg)?);
        Ok((sums, sg))
    };
    let result = pass(
        (buf, &tmp_idx),
        (buf, LEN_GIVEN),
        wmin,
        0,
        0,
        (&tmp_idx, &tmp_px),
    )
    .and_then(|(sums, sg)| {
        // Pass 2: everything in pass 1's output is kept (wsum >= 0); its length is pass 1's
        // total, sums[sg], read on the device.
        let at = u32_arg(sg, "scan groups")?;
        pass(
            (&tmp_px, &tmp_idx),
            (&sums, at),
            0,
            5,
            RADIX_SRC_IDX,
            (out_idx, out_px),
        )?;
        let mut kept = [0u32];
        cl.read(&sums, sg, &mut kept)?;
        Ok((kept[0] as usize).min(n))
    });
    // Both passes have been enqueued before the scratch goes back: later users of the same
    // in-order queue run after them.
    cl.give_scratch("radix pass pixels", tmp_px_count, tmp_px);
    cl.give_scratch("radix pass indices", tmp_idx_count, tmp_idx);
    result
}

/// The program variant of cl/compact.cl whose `compact_count_warps` and
/// `compact_relocate_warps` compact in scan order a segment a warp, ranked with NVIDIA's warp
/// ballots (inline PTX), with no work-group barrier; `compact_lookback` ranks the same way in
/// one pass.
const WARP_RELOCATION: u32 = 1;

/// How a GPU compacts in scan order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Relocation {
    /// `compact_count` then `compact_relocate`: a range a work-group (portable).
    Group,
    /// `compact_count_warps` then `compact_relocate_warps` ([`WARP_RELOCATION`]).
    Warp,
    /// `compact_lookback` ([`WARP_RELOCATION`]): one pass, a decoupled look-back with fallback.
    LookBack,
}

/// Pixels a work-group of `compact_lookback` takes: rounds of 4 pixels a work-item,
/// `LB_ROUNDS_PIXELS` (8) or `LB_ROUNDS_INDEXED` (4) in cl/compact.cl.
fn lookback_tile(cl: &ClEngine, with_idx: bool) -> usize {
    cl.tuning.wg * 4 * if with_idx { 4 } else { 8 }
}

/// The largest part `compact_lookback` takes: its tiles' words hold counts in 30 bits.
const LOOKBACK_MAX_PIXELS: usize = (1 << 30) - 1;

/// How a GPU compacts in scan order: on NVIDIA GPUs with work-groups of whole warps, where the
/// program variant [`WARP_RELOCATION`] builds (compute capability 7.0 and later; elsewhere the
/// portable kernels, with a warning), [`Relocation::Warp`]; elsewhere [`Relocation::Group`].
/// `CLPIX_COMPACT_RELOCATE` = `group`, `warp` or `lookback` forces one, to measure or test it
/// (`lookback`, the single pass, is opt-in only: issue 4 keeps a reduce-then-scan the default);
/// a forced variant that does not build is an error, so that a measurement never runs the
/// other kernels unnoticed.
fn relocation(cl: &ClEngine) -> Result<Relocation> {
    if cl.tuning.contiguous {
        return Ok(Relocation::Group);
    }
    let forced = match std::env::var("CLPIX_COMPACT_RELOCATE") {
        Err(_) => None,
        Ok(v) => match v.as_str() {
            "group" => return Ok(Relocation::Group),
            "warp" => Some(Relocation::Warp),
            "lookback" => Some(Relocation::LookBack),
            _ => {
                return Err(Error::InvalidEnvironment {
                    var: "CLPIX_COMPACT_RELOCATE",
                    value: v,
                    expected: "group, warp or lookback",
                })
            }
        },
    };
    let value = match forced {
        Some(Relocation::LookBack) => "lookback",
        _ => "warp",
    };
    // The kernels cut a work-group into warps of 32.
    if cl.tuning.wg % 32 != 0 {
        return match forced {
            Some(_) => Err(Error::InvalidEnvironment {
                var: "CLPIX_COMPACT_RELOCATE",
                value: value.into(),
                expected: "group on this device, whose work-groups are not whole warps of 32",
            }),
            None => Ok(Relocation::Group),
        };
    }
    let refused = Error::InvalidEnvironment {
        var: "CLPIX_COMPACT_RELOCATE",
        value: value.into(),
        expected: "group on this device: the warp kernels need an NVIDIA GPU, or \
                   -D CLPIX_WARP_EMULATED=1 in CLPIX_BUILD_OPTIONS",
    };
    if forced == Some(Relocation::LookBack) && !cl.info.has_extension("cl_khr_int64_base_atomics") {
        return Err(Error::InvalidEnvironment {
            var: "CLPIX_COMPACT_RELOCATE",
            value: value.into(),
            expected: "group or warp on this device: the single pass needs \
                       cl_khr_int64_base_atomics",
        });
    }
    let builds = cl.nvidia_variant(
        ("compact", WARP_RELOCATION),
        "the warp relocation",
        forced.is_some().then_some(refused),
    )?;
    Ok(match builds {
        true => forced.unwrap_or(Relocation::Warp),
        false => Relocation::Group,
    })
}

/// The single-pass scan-order compaction of `n` pixels of `buf` (`compact_lookback`, or
/// `compact_lookback_indexed` with indices) into `out`. Returns the number kept, read from the
/// last tile's word (`n` is at most [`LOOKBACK_MAX_PIXELS`]).
fn cl_lookback(
    cl: &ClEngine,
    buf: &Buffer<u32>,
    n: usize,
    wmin: u32,
    out: PartOut<'_>,
    events: &mut Vec<Event>,
) -> Result<usize> {
    let wg = cl.tuning.wg;
    let tiles = n.div_ceil(lookback_tile(cl, out.with_idx));
    let (kernel, outputs) = match out.with_idx {
        true => (
            "compact_lookback_indexed",
            vec![Arg::buf(out.idx), Arg::buf(out.px)],
        ),
        false => ("compact_lookback", vec![Arg::buf(out.px)]),
    };
    let mut last = [0u64];
    cl.with_tile_words(tiles, |words, epoch| {
        let mut args = vec![
            Arg::buf(buf),
            Arg::U32(u32_arg(n, "image part")?),
            Arg::U32(wmin),
            Arg::buf(words),
            Arg::U32(epoch),
        ];
        args.extend(outputs);
        events.push(cl.launch_variant(
            ("compact", WARP_RELOCATION),
            kernel,
            &args,
            tiles * wg,
            wg,
        )?);
        cl.read(words, tiles - 1, &mut last)?;
        // The last tile's word: this launch's epoch, PREFIX (2) and the total.
        match (last[0] >> 32) as u32 == epoch && (last[0] >> 30) & 3 == 2 {
            true => Ok((last[0] & LOOKBACK_MAX_PIXELS as u64) as usize),
            false => Err(Error::OpenCl {
                call: "compact_lookback (its last tile published no total: the device broke \
                       its 64-bit atomics)",
                code: 0,
                name: "no result",
            }),
        }
    })
}

fn cl_compact(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    threshold: u16,
    sorted: bool,
    kept: KeptAs,
) -> Result<Compacted> {
    let wmin = wsum_min(threshold);
    let nbins = 1023 - threshold as usize;
    let width = input.width();
    let mut all = Compacted {
        idx: Vec::new(),
        px: Vec::new(),
    };
    let with_idx = kept == KeptAs::Indexed;
    // Words a kept pixel takes in the output buffer.
    let per_hit = if kept == KeptAs::Hits { 4 } else { 1 };
    let mut parts = 0usize;
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let first = range.first_pixel(width) as u32;
        // Hits of a whole image on a CPU device: the kernel writes them into the memory of
        // the result itself (a copy of 16 bytes a hit into fresh pages cost as much as the
        // kernels). Only where device memory is host memory: a GPU forced to the contiguous
        // layout (tests) would copy or pin all of it.
        let in_place = kept == KeptAs::Hits
            && cl.info.device_type == crate::DeviceType::Cpu
            && n as u64 == input.pixel_count();
        let (px_count, out_px) = if in_place {
            // `all.px` is empty here (one part): fresh zero pages, touched only where written.
            grow(&mut all.px, n * per_hit);
            // SAFETY: `all.px` is neither touched nor reallocated until the blocking read
            // below, into the same memory, after the kernels; the buffer is dropped right
            // after that read.
            let buf =
                unsafe { cl.buffer_over_host(all.px.as_mut_ptr(), n * per_hit, "compacted hits")? };
            (0, buf)
        } else {
            cl.take_scratch("compacted pixels", n * per_hit)?
        };
        let (idx_count, out_idx) =
            cl.take_scratch("compacted indices", if with_idx { n } else { 1 })?;
        let (n32, wg) = (n as u32, cl.tuning.wg);
        // Launches the relocation `plain` of the program variant `variant`, or `hits` for
        // PixelHits (which take the part's place in the image instead of an index buffer),
        // after the arguments `args`.
        let relocate = |variant: u32,
                        (plain, hits): (&'static str, &'static str),
                        mut args: Vec<Arg>,
                        g: usize| {
            let kernel = if kept == KeptAs::Hits {
                args.extend([
                    Arg::U32(range.cols),
                    Arg::U32(range.x0),
                    Arg::U32(range.first_row),
                    Arg::buf(&out_px),
                ]);
                hits
            } else {
                args.extend([
                    Arg::U32(with_idx as u32),
                    Arg::buf(&out_idx),
                    Arg::buf(&out_px),
                ]);
                plain
            };
            cl.launch_variant(("compact", variant), kernel, &args, g * wg, wg)
        };
        let part_out = PartOut {
            px: &out_px,
            idx: &out_idx,
            with_idx,
        };
        // Scan order on GPUs: see `relocation`.
        let mode = match (sorted, kept) {
            (false, KeptAs::Pixels | KeptAs::Indexed) => relocation(cl)?,
            _ => Relocation::Group,
        };
        let m = if sorted && !cl.tuning.contiguous {
            cl_radix_sorted(cl, buf, n, wmin, part_out, &mut events)?
        } else if mode == Relocation::LookBack && n <= LOOKBACK_MAX_PIXELS {
            cl_lookback(cl, buf, n, wmin, part_out, &mut events)?
        } else {
            let total_at = if sorted {
                // A group count that keeps the `bins × groups` counters within one buffer.
                let cap = (cl.max_buffer_bytes / 4) as usize;
                let g = groups_for(cl, n).min((cap - 1) / nbins).max(1);
                let (ghist, sums, sg) = group_counts_scanned(
                    cl,
                    ("compact_hist", "luminance counts per group"),
                    vec![
                        Arg::buf(buf),
                        Arg::U32(n32),
                        Arg::U32(wmin),
                        Arg::U32(nbins as u32),
                    ],
                    (nbins, 0),
                    g,
                    &mut events,
                )?;
                events.push(relocate(
                    0,
                    ("compact_scatter", "compact_scatter_hits"),
                    vec![
                        Arg::buf(buf),
                        Arg::U32(n32),
                        Arg::U32(wmin),
                        Arg::U32(nbins as u32),
                        Arg::buf(&ghist),
                    ],
                    g,
                )?);
                (sums, sg)
            } else {
                // NVIDIA GPUs: a segment a warp (WARP_RELOCATION, which also counts per
                // segment; also the look-back's parts beyond LOOKBACK_MAX_PIXELS); elsewhere
                // a range a work-group.
                let warps = mode != Relocation::Group;
                let g = groups_for(cl, n);
                let counts = cl.buffer::<u32>(g + 1, "kept pixels per group")?;
                let seg = match warps {
                    true => Some(cl.buffer::<u32>(g * (wg / 32), "kept pixels per warp segment")?),
                    false => None,
                };
                let (variant, count, relocation) = match warps {
                    true => (
                        WARP_RELOCATION,
                        "compact_count_warps",
                        ("compact_relocate_warps", "compact_relocate_hits"),
                    ),
                    false => (
                        0,
                        "compact_count",
                        ("compact_relocate", "compact_relocate_hits"),
                    ),
                };
                // The arguments the count and the relocation share.
                let mut args = vec![
                    Arg::buf(buf),
                    Arg::U32(n32),
                    Arg::U32(wmin),
                    Arg::buf(&counts),
                ];
                args.extend(seg.as_ref().map(Arg::buf));
                events.push(cl.launch_variant(("compact", variant), count, &args, g * wg, wg)?);
                if cl.tuning.contiguous {
                    // GPUs' relocation sums the counts before its group itself
                    // (group_offset).
                    events.push(cl.launch(
                        "compact",
                        "scan_groups",
                        &[Arg::buf(&counts), Arg::U32(g as u32), Arg::U32(0)],
                        wg,
                        wg,
                    )?);
                }
                events.push(relocate(variant, relocation, args, g)?);
                (counts, g)
            };
            let mut total = [0u32];
            cl.read(&total_at.0, total_at.1, &mut total)?;
            (total[0] as usize).min(n)
        };
        if in_place {
            cl.read(&out_px, 0, &mut all.px[..m * per_hit])?;
            drop(out_px);
            all.px.truncate(m * per_hit);
        } else {
            let start = all.px.len();
            grow(&mut all.px, m * per_hit);
            cl.read(&out_px, 0, &mut all.px[start..])?;
            cl.give_scratch("compacted pixels", px_count, out_px);
        }
        if with_idx {
            let start = all.idx.len();
            grow(&mut all.idx, m);
            let idx = &mut all.idx[start..];
            cl.read(&out_idx, 0, idx)?;
            if first != 0 {
                idx.iter_mut().for_each(|i| *i += first);
            }
        }
        cl.give_scratch("compacted indices", idx_count, out_idx);
        parts += 1;
        Ok(())
    })?;
    cl.finish(&events)?;
    if sorted && parts > 1 {
        // Each part is sorted; a stable sort of the parts in scan order by luminance descending
        // keeps scan order within equal luminance across parts too.
        let key = |p: u32| std::cmp::Reverse(luma_u32(p));
        if kept == KeptAs::Hits {
            // Whole hits, 4 words each, their luminance in the low half of the third.
            let hits: &mut [[u32; 4]] = bytemuck::cast_slice_mut(&mut all.px);
            hits.par_sort_by_key(|h| std::cmp::Reverse(h[2] & 0xffff));
        } else if with_idx {
            let mut pairs: Vec<(u32, u32)> = all.idx.iter().copied().zip(all.px).collect();
            pairs.par_sort_by_key(|&(_, p)| key(p));
            (all.idx, all.px) = pairs.into_iter().unzip();
        } else {
            all.px.par_sort_by_key(|&p| key(p));
        }
    }
    Ok(all)
}

/// Hits written by the device as 4 words each (`KeptAs::Hits`), as `PixelHit`s: the words'
/// memory itself when the allocation fits exactly (no copy), else a copy.
fn hits_of(mut words: Vec<u32>) -> Vec<PixelHit> {
    const _: () = assert!(std::mem::size_of::<PixelHit>() == 16);
    const _: () = assert!(std::mem::align_of::<PixelHit>() == 4);
    words.truncate(words.len() / 4 * 4);
    if words.is_empty() {
        return Vec::new();
    }
    if words.capacity() != words.len() {
        words.shrink_to_fit();
    }
    if words.capacity() == words.len() {
        let mut words = std::mem::ManuallyDrop::new(words);
        let (ptr, len) = (words.as_mut_ptr(), words.len());
        // SAFETY: PixelHit is repr(C), 16 bytes with alignment 4 (checked above), made of
        // integers and bytes for which every bit pattern is valid (its 2 padding bytes need
        // none); the allocation holds exactly len / 4 of them, with the same alignment.
        unsafe { Vec::from_raw_parts(ptr as *mut PixelHit, len / 4, len / 4) }
    } else {
        words
            .chunks_exact(4)
            .map(|w| PixelHit {
                x: w[0],
                y: w[1],
                luminance: w[2] as u16,
                rgba: ((w[2] >> 16) | (w[3] << 16)).to_le_bytes(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wsum_min_is_exactly_the_threshold_test() {
        for t in 0..=1023u16 {
            let m = wsum_min(t);
            for s in [m.saturating_sub(1), m, m + 1] {
                if s <= 25500 {
                    assert_eq!(s >= m, (1023 * s) / 25500 > t as u32, "t {t} s {s}");
                }
            }
        }
        assert!(wsum_min(1023) > 25500);
    }

    #[test]
    fn fast_division_is_exact() {
        for d in [
            1u32,
            2,
            3,
            7,
            640,
            4095,
            4096,
            65535,
            1 << 20,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let f = FastDiv::new(d);
            let mut s = 1u64;
            for k in 0..20_000u64 {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = match k % 4 {
                    0 => (s >> 32) as u32,
                    1 => u32::MAX - (k as u32),
                    2 => ((s >> 40) as u32)
                        .wrapping_mul(d)
                        .wrapping_sub(k as u32 % 2),
                    _ => k as u32,
                };
                assert_eq!(f.div(i), i / d, "{i} / {d}");
            }
        }
    }

    #[test]
    fn hit_words_are_pixel_hits() {
        // The layout CPU devices write (cl/compact.cl, put_hit): x, y, L | rgba.lo << 16,
        // rgba.hi.
        let p = u32::from_le_bytes([1, 2, 3, 4]);
        let words = vec![7, 9, 700 | (p << 16), p >> 16, 0, 1, 5, 0];
        let hits = hits_of(words);
        assert_eq!(
            hits,
            [
                PixelHit {
                    x: 7,
                    y: 9,
                    luminance: 700,
                    rgba: [1, 2, 3, 4]
                },
                PixelHit {
                    x: 0,
                    y: 1,
                    luminance: 5,
                    rgba: [0, 0, 0, 0]
                },
            ]
        );
        assert!(hits_of(Vec::new()).is_empty());
    }

    /// The radix scatter's local memory on each device is what `radix_local_bytes` plans, on
    /// which `radix_per` chooses the tile.
    #[test]
    fn radix_scatter_local_memory_is_as_planned() {
        ClEngine::assert_local_bytes_as_planned(|cl| {
            let per = radix_per(cl.tuning.wg, cl.info.local_mem_bytes);
            let planned = radix_local_bytes(cl.tuning.wg, per) as u64;
            vec![(
                format!("the radix scatter, {per} pixels a work-item"),
                ("compact", 0),
                "radix_scatter",
                planned,
            )]
        });
    }

    #[test]
    fn radix_tile_fits_local_memory() {
        // ptxas reported 38,148 bytes of shared memory for the scatter at 16 and 256, 4 more
        // than its arrays: within the 1 KiB margin.
        assert_eq!(radix_per(256, 48 * 1024), 16);
        assert_eq!(radix_per(256, 38_144 + 1024), 16);
        assert_eq!(radix_per(256, 38_144 + 1023), 8);
        assert_eq!(radix_per(256, 32 * 1024), 8);
        assert_eq!(radix_per(128, 32 * 1024), 16);
    }

    #[test]
    fn cpu_scan_wraps() {
        let v: Vec<u32> = (0..200_000u32)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let s = cpu_scan(&v);
        let mut run = 0u32;
        for (o, d) in s.iter().zip(&v) {
            assert_eq!(*o, run);
            run = run.wrapping_add(*d);
        }
    }
}
