//! Separable Gaussian blur of RGBA8 and RGBA f32 images, any radius, four border modes.
//!
//! # Specification
//! - Parameters: radius `w ≥ 0`, sigma `s > 0` (default `s = w / 2`; `w = 0` is a copy), border.
//! - Normalised weights: for `i` in `-w..=w`, `g_i = exp(-0.5 (i / s)²)` in f64, `n_i = g_i / Σg`.
//!   They are computed once, on the host, and both paths use the same arrays.
//! - Horizontal pass first, then vertical; the four channels are blurred alike.
//! - **RGBA8, fixed point**: integer weights `q_i`, each within 1 of `n_i · 65536`, summing to
//!   exactly 65536 and symmetric (`q_-i = q_i`): every weight is floored, then the remainder is
//!   handed out in pairs by largest fractional part (ties to the smaller `|i|`), an odd unit
//!   going to the centre. Horizontal: `h = Σ q_i p(x+i, y)` (u32), kept as
//!   `t = (h + 128) >> 8` (u16); vertical: `v = Σ q_i t(x, y+i)` (u32) and the output is
//!   `(v + 2²³) >> 24`. A constant image stays constant (Clamp, Reflect, Wrap); the result is
//!   within 1 of the exactly rounded real-valued blur.
//! - **RGBA f32**: `wt_i = n_i as f32`; each output is
//!   `acc = 0.0; for i in -w..=w { acc = fma(wt[i + w], src(pos + i), acc) }` in exactly that
//!   order, in f32: one fused multiply-add a tap (one rounding), which no conforming compiler
//!   can round differently (a separate multiply and add, Intel's OpenCL compiler fused despite
//!   `FP_CONTRACT OFF`, and gave other bits). Nothing is clamped.
//!   NaN stays NaN (its sign and payload are the hardware's and are not specified); denormals
//!   are kept, so a device that flushes them to zero would differ on such inputs.
//! - Borders, for a coordinate `p` outside `0..n`: [`Border::Clamp`] (nearest edge, default),
//!   [`Border::Reflect`] (`…, 2, 1 | 0, 1, …, n-1 | n-2, …`, repeated for any radius; `0` when
//!   `n = 1`), [`Border::Wrap`] (`p mod n`), [`Border::Zero`] (0 in all four channels).
//! - Any radius up to [`MAX_RADIUS`], also larger than the image; an image without pixels gives
//!   an image without pixels. Sigma ≤ 0, NaN or infinite is an error when the blur runs.
//!
//! # Method
//! CPU (rayon): bands of rows in parallel, each walking column strips with a ring of `2w + 2`
//! horizontally filtered rows (as OpenCV does; ring at most 512 KiB, rows on cache lines and
//! padded never to be a power of two bytes apart), so the intermediate stays in cache; output
//! rows two at a time (the f32 vertical pass loads each ring row once for both); row loops on
//! blocks of 64 channel values (AVX-512/AVX2, `multiversion!`), the RGBA8 ones using the
//! weights' symmetry to halve the multiplies. Large results get transparent huge pages on
//! Linux; `gaussian_blur_into` writes into the caller's image instead.
//!
//! OpenCL (`blur.cl`; per radius `blur_radius.cl`), GPUs: the generic passes keep the intermediate
//! (u16 `t`, or f32) in a pooled device buffer; the horizontal one loads row tiles and their `2w`
//! halo into local memory, the vertical one gives each work-item a column of 8 output rows. For
//! RGBA8, kernels built per radius (named defines: `BLUR_W`, the radius, and the shape's) replace
//! them:
//! - w ≤ 2: one fused kernel, its state in registers (beyond, it crowds them): each input row is
//!   filtered once and kept for its `2w + 1` output rows; 8 bytes a pixel, not 24.
//! - w = 3–20: the fused band kernel, also 8 bytes a pixel: a group walks a band of columns
//!   R rows a step, filtering horizontally into a local ring of `2w + R` rows, then vertically.
//! - w = 21–32: two radius-built passes, the horizontal one with f32 multiply-adds on a register
//!   window (exact: every product and sum is an integer below 2^24), the vertical one with a
//!   register window of 16 rows (with one channel a work-item) and their `2w` neighbours,
//!   shifted block by block, one multiply a pair of rows.
//! - NVIDIA (compute capability 8.0+), w = 6–64: the radius-built passes on the tensor cores
//!   (`blur_hm_u8`, `blur_vm_u8`; `mma.sync` on 8-bit integers of a band of the weights with 32
//!   pixels or rows), exact since every 16-bit value is split into its two bytes and every
//!   partial sum stays below 2^22; each pass loads its next block ahead, strips by radius
//!   ([`tensor_blocks`]).
//!
//! For RGBA f32 (`blur_f32.cl`, launched from `cl_f32.rs`): up to w = 25 one kernel built per
//! radius in column bands of 64 pixels (32 bytes a pixel, not 64): 8 input rows at a time go
//! into local memory as channel planes, each work-item filters 8 pixels of a channel from a
//! register window, and each work-item then takes a float lane of the band down the strip,
//! its window of the last 8 + 2w filtered values in registers. From w = 26 to 32, and where it
//! does not fit or build, two passes built per radius (the same horizontal filter; the vertical pass a float lane a
//! work-item in blocks of 8 rows); until they are built, and beyond, a generic one-kernel tile
//! up to w = 2, else the generic passes. A kernel with `2w + 1` float4 accumulators in
//! registers is built on request (`blur.f32_kernel=registers`). The same fused multiply-adds in the same order on every path.
//!
//! the `blur.` settings force a kernel or its shape (docs/tuning.md); a forced kernel that does not
//! build, or a value not among a variable's, is an error ([`Error::InvalidEnvironment`]). A device
//! that cannot build a per-radius kernel runs the radius-built or generic passes, same bits.
//! CPU devices (PoCL) run one fused kernel with a ring per column strip, like the rayon path.
//!
//! Images whose intermediate does not fit one device buffer are blurred in bands of output rows,
//! same bits: the host gathers each band's rows and a `w`-row halo mapped through the border
//! ([`Border::map`]) into one window (taps in chunks, in tap order, when it does not fit); one
//! image row must fit, else [`Error::TooLargeForDevice`].
//!
//! Measured figures and what was tried and dropped: docs/performance.md.

use crate::cpu::{advise_huge_pages, alloc_zeroed, fresh_result};
use crate::device::{Any, IntoImage};
use crate::device::{DeviceImage, DeviceImageF32, ImageInput, Storage, StorageF32};
use crate::device::{HostPixels, download_f32};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::opencl::{Arg, ClEngine, Defines, Kernel, ScratchKind};
use image::{ImageBuffer, Rgba, Rgba32FImage, RgbaImage};
use rayon::prelude::*;
use std::sync::Arc;

/// An f32 image borrowed: how the f32 blur's paths take their input, whatever holds the values.
pub(super) type F32View<'a> = ImageBuffer<Rgba<f32>, &'a [f32]>;

/// `img` as an [`F32View`] of exactly its pixels' values (a container may hold more).
fn f32_view<C: std::ops::Deref<Target = [f32]>>(
    img: &ImageBuffer<Rgba<f32>, C>,
) -> Result<F32View<'_>> {
    let (width, height) = img.dimensions();
    let values = 4 * width as usize * height as usize;
    img.as_raw()
        .get(..values)
        .and_then(|v| ImageBuffer::from_raw(width, height, v))
        .ok_or(Error::ImageTooLarge {
            width: width as u64,
            height: height as u64,
            reason: "the image's values do not match its size",
        })
}

/// An `out` of `len` values for an input of `width × height` pixels: 4 values a pixel, rows
/// packed, or an error that names `out`.
fn check_out(len: usize, (width, height): (u32, u32)) -> Result<()> {
    if len as u64 != 4 * width as u64 * height as u64 {
        return Err(Error::invalid(
            "out",
            format!("{len} values"),
            "4 values a pixel of the input (width × height × 4), rows packed",
        ));
    }
    Ok(())
}

impl Engine {
    /// Blurs an image of any [`Pixel`](crate::Pixel) format (a host image, a view with a row
    /// stride; for RGBA8 also a device or pinned image) with `blur`; see the module
    /// specification and docs/SPEC.md ("The blur of every format"): each channel alone, 8-bit
    /// channels in RGBA8's fixed point, 16-bit channels with 24-bit weights, f32 with one
    /// fused multiply-add a tap. Identical, bit for bit, on the CPU and on every OpenCL device.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(20, 10, image::Rgba([50, 100, 150, 255]));
    /// let out = engine.gaussian_blur(&img, &GaussianBlur::new(3))?;
    /// assert_eq!(out, img); // a constant image stays constant
    /// // A 16-bit mono frame keeps its precision.
    /// let gray = image::ImageBuffer::from_fn(9, 5, |x, _| image::Luma([x as u16 * 7000]));
    /// let soft = engine.gaussian_blur(&gray, &GaussianBlur::new(2))?;
    /// assert!(soft.get_pixel(4, 2).0[0] > 27000 && soft.get_pixel(4, 2).0[0] < 29000);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        blur: &GaussianBlur,
    ) -> Result<Owned<I::Pixel>> {
        match img.into_any().0 {
            Any::Rgba8(input) => same_type(self.blur_rgba8(input, blur)?),
            Any::Typed(raw) => {
                check_pixel_count(raw.width(), raw.height())?;
                blur.check()?;
                fresh_result::<I::Pixel>((raw.width(), raw.height()), |out| {
                    self.blur_raw_into(raw, blur, bytemuck::cast_slice_mut(out))
                })
            }
        }
    }

    /// The RGBA8 blur of `input`.
    fn blur_rgba8(&self, input: ImageInput<'_>, blur: &GaussianBlur) -> Result<RgbaImage> {
        check_pixel_count(input.width(), input.height())?;
        blur.check()?;
        self.dispatch(
            &FAMILY,
            blur,
            "gaussian_blur",
            input.pixel_count(),
            || cpu_blur_u8(&HostPixels::of(input)?.view(), blur),
            |cl| {
                let (w, h) = (input.width(), input.height());
                let n = w as usize * h as usize;
                let bytes = match cl_blur_u8(cl, input, blur, U8Dest::Host)? {
                    ClOut::Empty => return Ok(RgbaImage::new(w, h)),
                    ClOut::Host(bytes) => bytes,
                    // Not returned for `U8Dest::Host`: no bytes, an error below if it were.
                    ClOut::Written => Vec::new(),
                    ClOut::Buffer(buf) => {
                        let bytes = cl.read_rgba8(&[(&buf, 0, n)], n);
                        cl.give_image_buffer(n, buf);
                        bytes?
                    }
                };
                bytes_to_image(w, h, bytes)
            },
        )
    }

    /// [`gaussian_blur`](Self::gaussian_blur) into `out`: the input's channel values, rows
    /// packed (an image of the input's format and size, or any such buffer). A caller blurring image
    /// after image reuses one result's memory rather than a fresh one each call, whose pages
    /// the system zeroes when they are first written (a third to a half of a CPU blur's time
    /// at small radii, see docs/performance.md). The CPU path and CPU devices write into `out`;
    /// a GPU's result is read into it. The same bits. An `out` of another length is
    /// [`Error::InvalidParameter`] naming `out`, and nothing is written.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::RgbaImage::from_fn(16, 9, |x, y| image::Rgba([(x * y) as u8, 7, 0, 255]));
    /// let mut out = image::RgbaImage::new(16, 9);
    /// engine.gaussian_blur_into(&img, &GaussianBlur::new(2), &mut out)?;
    /// assert_eq!(out, engine.gaussian_blur(&img, &GaussianBlur::new(2))?);
    /// // A buffer of another size is an error that says so.
    /// let mut small = vec![0u8; 4 * 4 * 4];
    /// assert!(engine.gaussian_blur_into(&img, &GaussianBlur::new(2), &mut small).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_into<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        blur: &GaussianBlur,
        out: &mut [Subpixel<I::Pixel>],
    ) -> Result<()> {
        let input = match img.into_any().0 {
            Any::Rgba8(input) => input,
            Any::Typed(raw) => {
                check_pixel_count(raw.width(), raw.height())?;
                blur.check()?;
                let values = raw.pixel_count() * raw.format().channels() as u64;
                if out.len() as u64 != values {
                    return Err(Error::invalid(
                        "out",
                        format!("{} values", out.len()),
                        "the input's channel values (width × height × channels), rows packed",
                    ));
                }
                return self.blur_raw_into(raw, blur, bytemuck::cast_slice_mut(out));
            }
        };
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        check_pixel_count(input.width(), input.height())?;
        blur.check()?;
        check_out(out.len(), (input.width(), input.height()))?;
        // Both paths write into `out`; the CPU one may run after the device's failed.
        let out = std::cell::RefCell::new(out);
        self.dispatch(
            &FAMILY,
            blur,
            "gaussian_blur",
            input.pixel_count(),
            || cpu_blur_u8_into(&HostPixels::of(input)?.view(), blur, &mut out.borrow_mut()),
            |cl| {
                let n = input.pixel_count() as usize;
                let mut out = out.borrow_mut();
                match cl_blur_u8(cl, input, blur, U8Dest::Into(&mut out))? {
                    ClOut::Empty | ClOut::Written => {}
                    ClOut::Host(bytes) => crate::cpu::parallel_copy(&bytes, &mut out),
                    ClOut::Buffer(buf) => {
                        let read = cl.read_rgba8_into(&[(&buf, 0, n)], &mut out);
                        cl.give_image_buffer(n, buf);
                        read?;
                    }
                }
                Ok(())
            },
        )
    }

    /// Like [`gaussian_blur`](Self::gaussian_blur), leaving the result on the engine (device
    /// memory on OpenCL) for the next operation: a [`DeviceImage<P>`](DeviceImage) of the
    /// input's format.
    ///
    /// ```
    /// use clpix::{Engine, Extreme, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::RgbaImage::from_fn(16, 16, |x, y| image::Rgba([(x * y) as u8, 0, 0, 255]));
    /// let dev = engine.gaussian_blur_device(&img, &GaussianBlur::new(2))?;
    /// assert_eq!(engine.download(&dev)?, engine.gaussian_blur(&img, &GaussianBlur::new(2))?);
    /// // A uint16 frame blurred and searched on the device: no round trip between the calls.
    /// let gray16 = image::ImageBuffer::from_fn(64, 48, |x, y| image::Luma([(x * y * 20) as u16]));
    /// let soft = engine.gaussian_blur_device(&gray16, &GaussianBlur::new(3))?;
    /// let host = engine.gaussian_blur(&gray16, &GaussianBlur::new(3))?;
    /// assert_eq!(engine.extreme(&soft, Extreme::Brightest)?, engine.extreme(&host, Extreme::Brightest)?);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_device<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        blur: &GaussianBlur,
    ) -> Result<DeviceImage<I::Pixel>> {
        let (width, height, storage) = match img.into_any().0 {
            Any::Rgba8(input) => {
                let d = self.blur_rgba8_device(input, blur)?;
                (d.width, d.height, d.storage)
            }
            Any::Typed(src) => self.blur_raw_device(src, blur)?,
        };
        Ok(DeviceImage::new(width, height, storage))
    }

    /// [`gaussian_blur_device`](Self::gaussian_blur_device) of RGBA8.
    fn blur_rgba8_device(&self, input: ImageInput<'_>, blur: &GaussianBlur) -> Result<DeviceImage> {
        check_pixel_count(input.width(), input.height())?;
        blur.check()?;
        let (width, height) = (input.width(), input.height());
        self.dispatch(
            &FAMILY,
            blur,
            "gaussian_blur",
            input.pixel_count(),
            || {
                let out = cpu_blur_u8(&HostPixels::of(input)?.view(), blur)?;
                Ok(DeviceImage::new(
                    width,
                    height,
                    Storage::Host(out.into_raw()),
                ))
            },
            |cl| {
                let parts = match cl_blur_u8(cl, input, blur, U8Dest::Device)? {
                    ClOut::Empty => Vec::new(),
                    // Not returned for `U8Dest::Device`: an error if it were.
                    ClOut::Written => {
                        bytes_to_image(width, height, Vec::new())?;
                        Vec::new()
                    }
                    // Blurred in bands: uploaded in the parts every operation expects.
                    ClOut::Host(bytes) => {
                        let img = bytes_to_image(width, height, bytes)?;
                        cl.upload(&crate::image::ImageView::from(&img))?
                            .into_parts()
                    }
                    ClOut::Buffer(buffer) => vec![crate::device::Part {
                        buffer,
                        words: width as usize * height as usize,
                        range: crate::opencl::PartRange {
                            first_row: 0,
                            rows: height,
                            x0: 0,
                            cols: width,
                        },
                    }],
                };
                Ok(DeviceImage::new(
                    width,
                    height,
                    Storage::OpenCl(crate::device::DeviceParts {
                        owner: cl.clone(),
                        parts,
                    }),
                ))
            },
        )
    }

    /// Blurs an RGBA f32 image (scientific data): f32 weights, a fixed summation order and one
    /// fused multiply-add a tap, so that every backend gives the same bits. The image may hold
    /// its values in any container: an `Rgba32FImage`, or an `ImageBuffer` over values
    /// borrowed from elsewhere (read in place).
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::Rgba32FImage::from_pixel(9, 7, image::Rgba([0.25, 0.5, 1.0, 1.0]));
    /// let out = engine.gaussian_blur_f32(&img, &GaussianBlur::new(2))?;
    /// assert_eq!(out.dimensions(), (9, 7));
    /// // Values borrowed from another buffer, 4 a pixel, rows packed:
    /// let values: &[f32] = img.as_raw();
    /// let view = image::ImageBuffer::<image::Rgba<f32>, &[f32]>::from_raw(9, 7, values).unwrap();
    /// assert_eq!(engine.gaussian_blur_f32(&view, &GaussianBlur::new(2))?, out);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_f32<C: std::ops::Deref<Target = [f32]>>(
        &self,
        img: &ImageBuffer<Rgba<f32>, C>,
        blur: &GaussianBlur,
    ) -> Result<Rgba32FImage> {
        check_pixel_count(img.width(), img.height())?;
        blur.check()?;
        let img = f32_view(img)?;
        fresh_result(img.dimensions(), |out| {
            self.blur_f32_values(&img, blur, out)
        })
    }

    /// [`gaussian_blur_f32`](Self::gaussian_blur_f32) into `out`: 4 values a pixel of `img`,
    /// rows packed (an `Rgba32FImage` of its size, or any such buffer). A caller blurring image
    /// after image reuses one result's memory rather than a fresh one each call, whose pages
    /// the system zeroes when they are first written (a quarter to a half of a CPU blur's
    /// time, see docs/performance.md). The same bits. An `out` of another length is
    /// [`Error::InvalidParameter`] naming `out`, and nothing is written.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::Rgba32FImage::from_fn(16, 9, |x, y| image::Rgba([x as f32, y as f32, 0.5, 1.0]));
    /// let mut out = image::Rgba32FImage::new(16, 9);
    /// engine.gaussian_blur_f32_into(&img, &GaussianBlur::new(3), &mut out)?;
    /// assert_eq!(out, engine.gaussian_blur_f32(&img, &GaussianBlur::new(3))?);
    /// // A buffer of another size is an error that says so.
    /// let mut small = vec![0.0f32; 4 * 4 * 4];
    /// assert!(engine.gaussian_blur_f32_into(&img, &GaussianBlur::new(3), &mut small).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_f32_into<C: std::ops::Deref<Target = [f32]>>(
        &self,
        img: &ImageBuffer<Rgba<f32>, C>,
        blur: &GaussianBlur,
        out: &mut [f32],
    ) -> Result<()> {
        check_pixel_count(img.width(), img.height())?;
        blur.check()?;
        check_out(out.len(), img.dimensions())?;
        self.blur_f32_values(&f32_view(img)?, blur, out)
    }

    /// The f32 blur of `img` into `out` (its values, checked by the caller).
    fn blur_f32_values(
        &self,
        img: &F32View<'_>,
        blur: &GaussianBlur,
        out: &mut [f32],
    ) -> Result<()> {
        // Both paths write into `out`; the CPU one may run after the device's failed.
        let out = std::cell::RefCell::new(out);
        self.dispatch(
            &F32_FAMILY,
            blur,
            "gaussian_blur_f32",
            img.width() as u64 * img.height() as u64,
            || cpu_blur_f32_into(img, blur, &mut out.borrow_mut()),
            |cl| cl_blur_f32_into(cl, img, blur, &mut out.borrow_mut()),
        )
    }

    /// [`gaussian_blur_f32`](Self::gaussian_blur_f32) of an f32 image held by the engine; the
    /// result is a new image on the same engine (device memory on OpenCL: nothing crosses the
    /// bus, so a pipeline uploads once and downloads once). The same bits as the host call.
    /// An image of another engine is read back and blurred here.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::Rgba32FImage::from_fn(16, 9, |x, y| image::Rgba([x as f32, y as f32, 0.5, 1.0]));
    /// let dev = engine.upload_f32(&img)?;
    /// let twice = engine.gaussian_blur_f32_device(
    ///     &engine.gaussian_blur_f32_device(&dev, &GaussianBlur::new(3))?,
    ///     &GaussianBlur::new(1),
    /// )?;
    /// let host = engine.gaussian_blur_f32(
    ///     &engine.gaussian_blur_f32(&img, &GaussianBlur::new(3))?,
    ///     &GaussianBlur::new(1),
    /// )?;
    /// assert_eq!(engine.download_f32(&twice)?, host);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_f32_device(
        &self,
        img: &DeviceImageF32,
        blur: &GaussianBlur,
    ) -> Result<DeviceImageF32> {
        blur.check()?;
        let (width, height) = (img.width, img.height);
        let on_host = |host: &Rgba32FImage| {
            Ok(DeviceImageF32 {
                width,
                height,
                storage: StorageF32::Host(cpu_blur_f32(&f32_view(host)?, blur)?),
            })
        };
        let work = width as u64 * height as u64;
        self.dispatch_held(
            &F32_FAMILY,
            blur,
            "gaussian_blur_f32_device",
            work,
            |cl| img.buffer_on(cl).map(Ok),
            || match &img.storage {
                StorageF32::Host(host) => on_host(host),
                StorageF32::OpenCl { .. } => on_host(&download_f32(img)?),
            },
            |cl, src| {
                let buffer = cl_blur_f32_device(cl, src, (width, height), blur)?;
                Ok(DeviceImageF32 {
                    width,
                    height,
                    storage: StorageF32::OpenCl {
                        owner: cl.clone(),
                        buffer,
                    },
                })
            },
            // Another engine's image: read back, uploaded here once and blurred here.
            || self.gaussian_blur_f32_device(&self.upload_f32(&download_f32(img)?)?, blur),
        )
    }
}

mod cl;
mod family;
pub(crate) mod kernels;
use crate::ops::common::same_type;
use family::F32_FAMILY;
use family::FAMILY;
use formats::{Owned, Subpixel};

mod rules;
use kernels::*;
pub use rules::{Border, GaussianBlur, MAX_RADIUS};
mod cl_f32;
mod cl_radius;
mod cl_typed;
mod cpu;
mod cpu_avx2;
mod cpu_f32;
mod cpu_simd;
mod cpu_typed;
mod cpu_vnni;
mod formats;
mod nv;
mod plan;
use cl::*;
use cl_f32::*;
use cl_radius::*;
use cpu::*;
use nv::*;
use plan::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_plans_fit_the_cap() {
        // 4 KiB, 10 pixels a row: 25 rows of 16 bytes a pixel.
        assert_eq!(
            band_plan(4096, 10, 100, 5).unwrap(),
            BandPlan { rows: 21, k: 5 }
        );
        assert_eq!(
            band_plan(4096, 10, 100, 301).unwrap(),
            BandPlan { rows: 14, k: 12 }
        );
        assert_eq!(
            band_plan(4096, 10, 7, 5).unwrap(),
            BandPlan { rows: 7, k: 5 }
        );
        assert_eq!(
            band_plan(4096, 256, 9, 3).unwrap(),
            BandPlan { rows: 1, k: 1 }
        );
        for width in 1..300u32 {
            for taps in [1usize, 3, 9, 41, 301] {
                match band_plan(4096, width, 50, taps) {
                    Ok(p) => {
                        assert!((p.rows + p.k - 1) as u64 * 16 * width as u64 <= 4096);
                        assert!(p.rows >= 1 && p.k >= 1 && p.k <= taps);
                    }
                    Err(Error::TooLargeForDevice { what, .. }) => {
                        assert!(width > 256 && what.contains("one image row"))
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }

    /// The band kernel's local arrays take what the host plans for them: the host halves the
    /// rows a step, or falls back to other kernels, on that figure (with 1 KiB of margin), so
    /// that a GPU never sees a kernel larger than its local memory.
    #[test]
    fn band_kernel_local_memory_is_as_planned() {
        let shape = |threads, channels, pixels, rows| BandShape {
            threads,
            channels,
            pixels,
            rows,
            strip: 256,
        };
        ClEngine::assert_local_bytes_as_planned(|_| {
            [
                (shape(128, 4, 8, 8), 8),
                (shape(128, 2, 4, 8), 20),
                (shape(256, 1, 4, 16), 3),
                (shape(128, 2, 8, 32), 25),
            ]
            .into_iter()
            .map(|(s, w)| {
                let what = format!("{s:?} w {w}");
                (what, BLUR_BAND_U8, s.variant(w), s.local_bytes(w) as u64)
            })
            .collect()
        });
    }
}
