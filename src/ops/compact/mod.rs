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
//! - **OpenCL** (`compact.cl`), scan order: (1) each work-group counts the kept pixels of its
//!   contiguous range; (2) an exclusive scan of the group counts (on GPUs each relocating group
//!   adds up the counts before its own instead, saving a kernel); (3) each group relocates its
//!   kept pixels in tiles staged through local memory, written out coalesced. On NVIDIA GPUs
//!   (program variant 1, where it builds; `compact_relocate=group|warp` forces one) each
//!   warp counts and relocates its own segment, ranking with warp ballots in inline PTX, without
//!   work-group barriers. A segment or group that keeps nothing writes nothing and returns.
//! - **Single pass** (the default where the warp kernels build and the device has
//!   `cl_khr_int64_base_atomics`; `compact_relocate=lookback` forces it): work-group t ranks and stages the kept pixels of tile t,
//!   publishes their count, finds its offset by a decoupled look-back over its predecessors'
//!   words *with fallback* (a predecessor silent after 32 re-reads is counted by the group
//!   itself, so no group ever waits on another and no forward progress is assumed), publishes
//!   its inclusive prefix and writes; each word carries the launch's epoch, so words are never
//!   cleared. Issue 30 made it the default where it builds: no group waits on another, so
//!   nothing depends on forward progress between work-groups.
//! - **Sorted, on a GPU**: two stable LSD radix passes of 5 bits of the bin `1023 - L` (pass 1
//!   reads the image and keeps, pass 2 reads pass 1's output): per pass a digit histogram per
//!   group, one kernel scanning the `digits × groups` counts, and a scatter that ranks each tile
//!   of 16 pixels a work-item in local memory, stages it in digit order and writes runs of equal
//!   digit coalesced. A group whose kept pixels share one digit is not ranked: `radix_hist` marks
//!   it and `radix_single` copies it in scan order. Pass 2 reads its length on the device, so the
//!   host enqueues both passes without waiting.
//! - The relocation and the scatter are built with and without indices, so `compacted_image`
//!   does no index work. A GPU writes 8-byte records (part-local index, pixel) and the host
//!   derives x, y and L. CPU devices (PoCL, `CLPIX_CONTIGUOUS`) walk a contiguous range a
//!   work-item, sort by a stable counting sort over the bins and write whole `PixelHit`s
//!   straight into the result's memory (`CL_MEM_USE_HOST_PTR`).
//! - **Scan** on OpenCL: reduce-then-scan (sum per group, scan of the group sums by one group,
//!   rescan of each group's range from its offset); no single-pass look-back (OpenCL does not
//!   promise forward progress between work-groups: issue 4 keeps the single pass opt-in, and
//!   only for the compaction above).
//!
//! Measured figures and what was tried and dropped: docs/performance.md.

use crate::cpu::{PIECE, advise_huge_pages, alloc_zeroed, with_u32_blocks};
use crate::device::HostPixels;
use crate::device::ImageInput;
use crate::device::{Any, IntoImage};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{ImageView, check_pixel_count};
use crate::opencl::{Arg, ClEngine, Scratch, ScratchKind, WordFormat};
use crate::opencl::{Defines, Kernel, radix_local_bytes, u32_arg};
use crate::ops::common::same_type;
use crate::ops::scan::kernels::SCAN_GROUPS;
use crate::ops::scan::{cl_scan, groups_for, grow};
use crate::spec::Pixel;
use crate::spec::PixelHit;
use crate::spec::luma_u32;
use opencl3::event::Event;
use opencl3::memory::Buffer;
use rayon::prelude::*;
use std::sync::Arc;

/// The order of the pixels in [`Engine::compacted_image`].
///
/// ```
/// use clpix::CompactOrder;
/// assert_ne!(CompactOrder::ScanOrder, CompactOrder::LuminanceDescending);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactOrder {
    /// Scan order (`y * width + x`).
    ScanOrder,
    /// Luminance descending, ties in scan order (a stable sort).
    LuminanceDescending,
}
fn check_threshold(threshold: u16) -> Result<()> {
    if threshold > 1023 {
        return Err(Error::invalid("threshold", threshold, "0..=1023"));
    }
    Ok(())
}

/// What [`Engine::compacted_image`] gives for pixels of type `P`: an image of that format.
pub(crate) type CompactedImage<P> = image::ImageBuffer<P, Vec<<P as image::Pixel>::Subpixel>>;

/// A threshold of a format's key type as an order key: an error for NaN or one above the
/// format's largest key.
fn typed_threshold<P: Pixel>(format: crate::spec::Format, threshold: P::Key) -> Result<u32> {
    let t = P::key_order(threshold)
        .ok_or_else(|| Error::invalid("threshold", "NaN", "a number (NaN keys are never kept)"))?;
    if let Some(max) = format.max_key()
        && t > max
    {
        let keys = "at most the format's largest key (255, 1023 or 65535)";
        return Err(Error::invalid(
            "threshold",
            format!("{t} (largest key {max})"),
            keys,
        ));
    }
    Ok(t)
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
    /// The pixels with luminance above `threshold`, in `order`: scan order
    /// (`CompactOrder::ScanOrder`), or by luminance descending with pixels of equal luminance in
    /// scan order (`CompactOrder::LuminanceDescending`, a stable sort).
    ///
    /// An error for a threshold above 1023; an empty vector for an image without pixels.
    ///
    /// ```
    /// use clpix::CompactOrder;
    /// let mut img = image::RgbaImage::new(4, 3);
    /// img.put_pixel(3, 0, image::Rgba([255, 255, 255, 255]));
    /// img.put_pixel(1, 2, image::Rgba([0, 200, 0, 255]));
    /// img.put_pixel(2, 2, image::Rgba([0, 250, 0, 255]));
    /// let engine = clpix::Engine::new()?;
    /// let hits = engine.compact(&img, 100, CompactOrder::ScanOrder)?;
    /// assert_eq!(hits.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), [(3, 0), (1, 2), (2, 2)]);
    /// assert_eq!(hits[1].luminance, clpix::luminance(0, 200, 0));
    /// let sorted = engine.compact(&img, 100, CompactOrder::LuminanceDescending)?;
    /// assert_eq!(sorted.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), [(3, 0), (2, 2), (1, 2)]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn compact<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        threshold: <I::Pixel as Pixel>::Key,
        order: CompactOrder,
    ) -> Result<Vec<<I::Pixel as Pixel>::Hit>> {
        let sorted = order == CompactOrder::LuminanceDescending;
        match img.into_any().0 {
            Any::Rgba8(input) => {
                let t: u16 = same_type(threshold)?;
                same_type(self.compact_hits(input, t, sorted)?)
            }
            Any::Typed(raw) => {
                let t = typed_threshold::<I::Pixel>(raw.format(), threshold)?;
                let hits = self.raw_compact(raw, Some(t), 0, sorted)?;
                Ok(hits.into_par_iter().map(<I::Pixel as Pixel>::hit).collect())
            }
        }
    }

    /// An image of the input's size and format whose first pixels (in scan order) are the
    /// pixels with key above `threshold` (the luminance for RGBA8: the seed's "mush of dots"),
    /// in `order`, and whose other pixels are zeros. The threshold is of the format's key type,
    /// as [`compact`](Engine::compact)'s, with its errors.
    ///
    /// ```
    /// use clpix::CompactOrder;
    /// let img = image::RgbaImage::from_fn(2, 2, |x, y| image::Rgba([0, (x * 100 + y * 50) as u8, 0, 255]));
    /// let out = clpix::Engine::new()?.compacted_image(&img, 150, CompactOrder::LuminanceDescending)?;
    /// assert_eq!(out.get_pixel(0, 0).0, [0, 150, 0, 255]);
    /// assert_eq!(out.get_pixel(1, 0).0, [0, 100, 0, 255]);
    /// assert_eq!(out.get_pixel(0, 1).0, [0, 0, 0, 0]);
    /// let gray = image::ImageBuffer::from_fn(3, 1, |x, _| image::Luma([x as u16 * 1000]));
    /// let out = clpix::Engine::new()?.compacted_image(&gray, 500, CompactOrder::LuminanceDescending)?;
    /// assert_eq!(out.into_raw(), [2000, 1000, 0]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn compacted_image<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        threshold: <I::Pixel as Pixel>::Key,
        order: CompactOrder,
    ) -> Result<CompactedImage<I::Pixel>> {
        match img.into_any().0 {
            Any::Rgba8(input) => {
                let t: u16 = same_type(threshold)?;
                same_type(self.compacted_rgba8(input, t, order)?)
            }
            Any::Typed(raw) => {
                let t = typed_threshold::<I::Pixel>(raw.format(), threshold)?;
                let hits =
                    self.raw_compact(raw, Some(t), 0, order == CompactOrder::LuminanceDescending)?;
                let bpp = raw.format().bytes_per_pixel();
                crate::cpu::fresh_result::<I::Pixel>((raw.width(), raw.height()), |out| {
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
                    bytes[..hits.len() * bpp]
                        .par_chunks_exact_mut(bpp)
                        .zip(hits.par_iter())
                        .for_each(|(px, h)| px.copy_from_slice(&h.value[..bpp]));
                    Ok(())
                })
            }
        }
    }

    /// [`compacted_image`](Engine::compacted_image) of RGBA8.
    fn compacted_rgba8(
        &self,
        input: ImageInput<'_>,
        threshold: u16,
        order: CompactOrder,
    ) -> Result<image::RgbaImage> {
        check_threshold(threshold)?;
        let n = check_pixel_count(input.width(), input.height())? as usize;
        let sorted = order == CompactOrder::LuminanceDescending;
        let bytes = if threshold == 1023 || n == 0 {
            alloc_zeroed::<u8>(n * 4)
        } else {
            self.dispatch(
                &FAMILY,
                &(),
                if sorted {
                    "compacted_image_sorted"
                } else {
                    "compacted_image"
                },
                n as u64,
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
            &FAMILY,
            &(),
            name,
            input.pixel_count(),
            || {
                let host = HostPixels::of(input)?;
                Ok(cpu_compact(&host.view(), threshold, sorted, |x, y, p| {
                    hit(x, y, p)
                }))
            },
            |cl| {
                if cl.grid.contiguous && words_fit(cl, input.pixel_count() as usize) {
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
                if cl.grid.contiguous {
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

mod cl;
mod family;
pub(crate) mod kernels;
use family::FAMILY;

use kernels::*;
mod cpu;
mod plan;
pub(crate) mod typed;
use cl::*;
use cpu::*;
use plan::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencl::{radix_local_bytes, radix_per};

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
        // The layout CPU devices write (compact.cl, put_hit): x, y, L | rgba.lo << 16,
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

    /// The radix scatter takes its local memory as an argument of `radix_local_bytes` bytes
    /// (the plan on which `radix_per` chooses the tile): on each device in the GPU layout, that
    /// is the size of its `RadixLocal` as the device's compiler lays it out (at most 64 bytes of
    /// padding more), and the kernel declares no local arrays of its own beyond 1 KiB.
    #[test]
    fn radix_scatter_local_memory_is_as_planned() {
        let required = crate::config::opencl_required();
        let devices = crate::opencl::devices().unwrap_or_default();
        assert!(!required || !devices.is_empty(), "OpenCL required");
        for d in &devices {
            let cl = ClEngine::open(
                d,
                None,
                crate::config::KernelLayout::Coalesced,
                crate::config::Tuning::default(),
            )
            .unwrap();
            let planned = radix_local_bytes(cl.grid.wg, cl.grid.radix_per);
            let mut out = cl.buffer::<u32>(1, "size").unwrap();
            cl.fill(&mut out, 0u32, 1).unwrap();
            let e = cl
                .launch(RADIX_LOCAL_SIZE, &[Arg::buf(&out)], 1, 1)
                .unwrap();
            cl.finish(&[e]).unwrap();
            let mut size = [0u32];
            cl.read(&out, 0, &mut size).unwrap();
            let size = size[0] as usize;
            assert!(
                size <= planned && planned - size <= 64,
                "{}: RadixLocal {size} bytes, planned {planned}",
                d.name
            );
            let own = cl.kernel_local_bytes(RADIX_SCATTER, Defines::NONE).unwrap();
            assert!(own <= 1024, "{}: the scatter declares {own} bytes", d.name);
        }
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
}
