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
//!   `acc = 0.0; for i in -w..=w { acc = acc + wt[i + w] * src(pos + i) }` in exactly that
//!   order, in f32, no fused multiply-add (`FP_CONTRACT OFF` in the kernels). Nothing is clamped.
//!   NaN stays NaN (its sign and payload are the hardware's and are not specified); denormals
//!   are kept, so a device that flushes them to zero would differ on such inputs.
//! - Borders, for a coordinate `p` outside `0..n`: [`Border::Clamp`] (nearest edge, default),
//!   [`Border::Reflect`] (`…, 2, 1 | 0, 1, …, n-1 | n-2, …`, repeated for any radius; `0` when
//!   `n = 1`), [`Border::Wrap`] (`p mod n`), [`Border::Zero`] (0 in all four channels).
//! - Any radius up to [`MAX_RADIUS`], also larger than the image; an image without pixels gives
//!   an image without pixels. Sigma ≤ 0, NaN or infinite is an error when the blur runs.
//!
//! # Method
//! CPU (rayon): bands of rows in parallel; in each band, column strips one after the other, each
//! with a ring of `2w + 1` horizontally filtered rows (as OpenCV does) so that the intermediate
//! never leaves the cache: strips as wide as a 512 KiB ring allows (whole rows at small radii),
//! ring rows padded so that they are never a power of two bytes apart (8 KiB apart, they had
//! shared cache sets and made w = 25 1.7× slower). The row loops work on blocks of 64 channel values
//! (AVX-512/AVX2 through `multiversion!`) and use the symmetry of the integer weights to halve
//! the multiplies (exact in integers); interior strips are read in place, edge strips through a
//! padded copy of the row. When `2w` is large against the band height, the whole intermediate
//! is computed once instead. Large results are allocated with transparent huge pages on Linux.
//!
//! OpenCL (`cl/blur.cl`), GPUs: two passes with the intermediate (u16 `t`, or f32) in a device
//! buffer. The horizontal pass runs row tiles of 128 work-items × 4 pixels that load the tile
//! and its `2w` halo into local memory in as many steps as needed (the method of the seed);
//! when the tile does not fit the device's local memory a variant reads global memory
//! directly. The vertical pass gives each work-item one column of 8 output rows (coalesced
//! across the work-group); the intermediate buffer is pooled between calls. For RGBA8, kernels
//! built per radius (`-D CLPIX_VARIANT`) replace these generic passes where they win:
//! - up to w = 2 one fused kernel, its state in registers: a group of 64 work-items owns 64 or
//!   128 columns and walks a strip of rows, storing each input row once into local memory (the
//!   next row's loads in flight during this row's arithmetic), filtering its columns
//!   horizontally and adding each filtered value into the accumulators of the `2w + 1` output
//!   rows it belongs to, whose oldest is then written: 8 bytes of DRAM traffic a pixel instead
//!   of 24. On an H100 (8192²) it took 0.43 / 0.72 / 0.98 ms at w = 2 / 4 / 6 against
//!   0.86 / 1.04 / 1.25 ms for the generic passes; at w = 8 the accumulators crowd the
//!   registers and it lost (1.57 / 1.46 ms).
//! - from w = 3 to 20 the fused band kernel, also 8 bytes a pixel: a group owns a band of 32 to
//!   256 columns and walks a strip of rows R at a time (R = 4 to 32). Each step stores its R
//!   input rows (loaded during the previous step) into a local tile as f32, filters them
//!   horizontally as the radius-built horizontal pass below does, into a local ring of the last
//!   `2w + R` filtered rows, and then filters the ring vertically: each work-item reads 1 to 4
//!   channels of one column of the ring once and writes the R output rows they complete. On an
//!   H200 (8192², final kernel): 0.50 / 0.67 / 0.84 / 1.10 / 1.36 / 1.83 ms at
//!   w = 4 / 6 / 8 / 12 / 16 / 20,
//!   against 0.72 / 0.97 ms for the fused kernel at w = 4 / 6 and 1.27 / 1.58 / 1.97 / 2.25 ms
//!   for the radius-built passes from w = 8; at w = 25 the radius-built passes win (2.66 ms
//!   against 2.85 ms for the band kernel's best shape then).
//! - from w = 21 to 32 two passes: the horizontal one keeps its tile as f32 (each pixel
//!   converted once) and filters 4 or 8 neighbouring pixels a work-item from a sliding window
//!   in registers with f32 multiply-adds, exact because every product and sum is an integer
//!   below 2^24; the vertical one keeps a ring of the last `2w + 1` rows (and 4 loaded ahead)
//!   of 1 to 4 channels of a column in registers and multiplies once a pair of rows (the
//!   weights are symmetric). On an H200 (8192²): 1.27 / 1.57 / 1.97 / 2.66 ms at
//!   w = 8 / 12 / 16 / 25 against 1.45 / 1.92 / 2.39 / 3.46 ms for the generic passes.
//! - on NVIDIA GPUs (compute capability 8.0 and later) from w = 6 to 64 the radius-built passes
//!   run on the tensor cores instead (from w = 33 in place of the generic passes; their
//!   programs beyond w = 32 hold these passes only, so both run there or neither) (`blur_hm_u8`, `blur_vm_u8`): integer matrix products
//!   (`mma.sync` on 8-bit integers, inline PTX) of a band of the weights with 32 pixels or
//!   rows, exact because every 16-bit weight and intermediate value is split into its two
//!   bytes and every partial sum stays below 2^22. The CUDA cores' arithmetic could not reach
//!   the target: a probe of the taps alone (no loads) took 0.50 ms (horizontal, f32) + 0.55 ms
//!   (vertical, integers) at w = 25 on an H200, above the 1.0 ms that 20× CuPy asks for. On an
//!   H200 (8192², 2026-11-24, before the loads a block ahead): 0.70 ms from w = 3 to 16 and
//!   0.89 ms at w = 20 to 25 (1.03 ms before the last chunk of an odd number of halves took
//!   the k16 instruction), against 0.84 / 1.10 / 1.36 / 1.83 ms for the band kernel at
//!   w = 8 / 12 / 16 / 20 and 2.64 ms for the other radius-built passes at w = 25; at w = 6
//!   the band kernel still wins (0.66 ms).
//!   Each pass loads its next half of 16 pixels or rows a block ahead: 0.649–0.650 ms at
//!   w = 8 and 0.776–0.782 at w = 25 (0.702–0.706 and 0.887–0.891 without). Both passes in
//!   one kernel, the intermediate rows in a local tile (8 bytes of DRAM traffic a pixel
//!   instead of 24; branch `experiment/tensor-fused`), took 0.671–0.676 ms at w = 8 (slower
//!   with its loads a step ahead, 0.698–0.704) and 1.14 ms at w = 20 and 25: the passes are
//!   not bound by DRAM (at w = 8 each moved 12 bytes a pixel at 2.2–2.4 TB/s).
//!   Three changes on 2026-11-24 took w = 8 from 0.65 to 0.52 ms (H200, 8192², both passes):
//!   a block's window starts w rows (rounded up to 4) above it rather than a whole half, so up
//!   to w = 8 it reads 2 halves (one k32 product) instead of 3 (0.589–0.595 ms; vertical
//!   pass 0.31 → 0.26); neighbouring groups of the horizontal pass take neighbouring strips of
//!   the same rows rather than the strip below (0.561–0.564; horizontal 0.316 → 0.285); and
//!   strips by radius ([`tensor_blocks`]: 64 pixels for the horizontal pass up to w = 8, 0.516–
//!   0.518). w = 25 went from 0.78 to 0.69 ms. Loading 2, 3 or 4 blocks ahead (0.678 / 0.678 /
//!   0.696 against 0.654 ms then), 8-byte stores in the vertical pass, 16-byte aligned loads
//!   in the horizontal one, register caps (`-cl-nv-maxrregcount=` 64 / 96 / 128: no change,
//!   since driver 580 applies no cap, see `compact`; the passes use 62 and 72 registers at
//!   w = 8) and the vertical pass walking its strips bottom first (to meet the horizontal
//!   pass's last rows in L2) made no difference or lost.
//!
//! `CLPIX_BLUR_GPU=registers`, `band`, `radius` or `two-pass` forces one;
//! `CLPIX_BLUR_COLUMNS=1|2` the columns a work-item of the fused kernel takes (2 up to w = 4 by
//! default), `CLPIX_BLUR_BAND` the band kernel's shape, `CLPIX_BLUR_CHANNELS` and
//! `CLPIX_BLUR_HPIXELS` the shapes of the radius-built passes, `CLPIX_BLUR_TENSOR=0|1|horizontal|
//! vertical` which of them run on the tensor cores. A device that cannot build a
//! per-radius kernel (or hold the band kernel's local arrays) runs the radius-built or generic
//! passes, with the same bits; a kernel forced by `CLPIX_BLUR_GPU` that does not build is an
//! error instead, and so is a value of these variables that is not one of theirs
//! ([`Error::InvalidEnvironment`]), so that a measurement or a test never runs another kernel
//! unnoticed.
//! CPU devices (PoCL): one fused kernel per group of rows with a ring of filtered rows per
//! column strip, like the rayon path, in explicit 16-wide vectors; two passes when the radius is
//! too large for the rows of a group.
//!
//! Images whose intermediate does not fit one device buffer (8 bytes a pixel for RGBA8, 16
//! for f32; PoCL allows 1 GiB, [`EngineConfig::max_buffer_bytes`](crate::EngineConfig) caps
//! it lower) are blurred in bands of output rows, with the same bits. For each band the host
//! gathers the input rows the band needs — its rows and a halo of `w` rows above and below,
//! each halo row mapped through the border ([`Border::map`]: the true neighbouring rows inside
//! the image, reflected or wrapped rows at the real top and bottom for any radius, zero rows
//! for [`Border::Zero`]) — into one contiguous staging window; the device filters the window
//! horizontally and adds the vertical taps into the band's accumulator. When the window of
//! `2w + 1` rows does not fit a buffer, the taps are taken in chunks, in tap order (exact for
//! f32 too), each chunk with its own window. Every buffer of a band takes at most 16 bytes a
//! pixel, so one row of the image must fit: else [`Error::TooLargeForDevice`] naming "one
//! image row". Inputs held in several device parts are read back to the host for the
//! gathering, and [`Engine::gaussian_blur_device`] uploads a banded result again in the parts
//! that [`Engine::upload`] makes.

use crate::cpu::{advise_huge_pages, alloc_zeroed};
use crate::engine::{Engine, HostPixels};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, DeviceImage, ImageInput, Storage};
use crate::opencl::{Arg, ClEngine};
use image::{Rgba32FImage, RgbaImage};
use rayon::prelude::*;
use std::sync::Arc;

/// The largest radius accepted: the weight arrays then take 2·2²⁰+1 entries.
///
/// ```
/// let img = image::RgbaImage::new(2, 2);
/// let big = clpix::GaussianBlur::new(clpix::MAX_RADIUS + 1);
/// assert!(clpix::Engine::cpu().gaussian_blur(&img, &big).is_err());
/// ```
pub const MAX_RADIUS: u32 = 1 << 20;

/// What a blur reads outside the image.
///
/// ```
/// use clpix::{Border, GaussianBlur};
/// let blur = GaussianBlur::new(3).border(Border::Wrap);
/// assert_eq!(blur.border_mode(), Border::Wrap);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Border {
    /// The nearest edge pixel (the default).
    #[default]
    Clamp,
    /// Mirror without repeating the edge pixel, as often as needed (`0` for a 1-pixel side).
    Reflect,
    /// Coordinates modulo the size: the image tiles the plane.
    Wrap,
    /// Zero in all four channels.
    Zero,
}

impl Border {
    fn code(self) -> u32 {
        match self {
            Border::Clamp => 0,
            Border::Reflect => 1,
            Border::Wrap => 2,
            Border::Zero => 3,
        }
    }

    /// The source coordinate of `p` on a side of `n > 0` pixels (`None`: a zero pixel).
    ///
    /// ```
    /// use clpix::Border;
    /// assert_eq!(Border::Reflect.map(-2, 5), Some(2));
    /// assert_eq!(Border::Reflect.map(6, 5), Some(2));
    /// assert_eq!(Border::Wrap.map(-1, 5), Some(4));
    /// assert_eq!(Border::Clamp.map(9, 5), Some(4));
    /// assert_eq!(Border::Zero.map(5, 5), None);
    /// assert_eq!(Border::Reflect.map(-7, 1), Some(0));
    /// ```
    pub fn map(self, p: i64, n: u64) -> Option<u64> {
        let n = n as i64;
        if n <= 0 {
            return None;
        }
        if (0..n).contains(&p) {
            return Some(p as u64);
        }
        Some(match self {
            Border::Clamp => p.clamp(0, n - 1) as u64,
            Border::Wrap => p.rem_euclid(n) as u64,
            Border::Reflect => {
                if n == 1 {
                    0
                } else {
                    let period = 2 * (n - 1);
                    let m = p.rem_euclid(period);
                    (if m >= n { period - m } else { m }) as u64
                }
            }
            Border::Zero => return None,
        })
    }
}

/// Parameters of a Gaussian blur: radius, sigma and border mode.
///
/// ```
/// use clpix::{Border, Engine, GaussianBlur};
/// let img = image::RgbaImage::from_fn(32, 16, |x, _| image::Rgba([(x * 8) as u8, 0, 0, 255]));
/// let blur = GaussianBlur::new(4).sigma(1.5).border(Border::Reflect);
/// let out = Engine::new()?.gaussian_blur(&img, &blur)?;
/// assert_eq!(out.dimensions(), (32, 16));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianBlur {
    radius: u32,
    sigma: Option<f64>,
    border: Border,
}

impl GaussianBlur {
    /// A blur of `2 · radius + 1` taps, sigma `radius / 2`, border [`Border::Clamp`].
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(6);
    /// assert_eq!((b.radius(), b.sigma_value()), (6, 3.0));
    /// ```
    pub fn new(radius: u32) -> GaussianBlur {
        GaussianBlur {
            radius,
            sigma: None,
            border: Border::Clamp,
        }
    }

    /// Sets sigma (checked when the blur runs: it must be finite and above 0).
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(2).sigma(0.8);
    /// assert_eq!(b.sigma_value(), 0.8);
    /// ```
    pub fn sigma(mut self, sigma: f64) -> GaussianBlur {
        self.sigma = Some(sigma);
        self
    }

    /// Sets the border mode.
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(2).border(clpix::Border::Zero);
    /// assert_eq!(b.border_mode(), clpix::Border::Zero);
    /// ```
    pub fn border(mut self, border: Border) -> GaussianBlur {
        self.border = border;
        self
    }

    /// The radius `w`.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(3).radius(), 3);
    /// ```
    pub fn radius(&self) -> u32 {
        self.radius
    }

    /// Sigma: the one set, else `radius / 2`.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(5).sigma_value(), 2.5);
    /// ```
    pub fn sigma_value(&self) -> f64 {
        self.sigma.unwrap_or(self.radius as f64 / 2.0)
    }

    /// The border mode.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(3).border_mode(), clpix::Border::Clamp);
    /// ```
    pub fn border_mode(&self) -> Border {
        self.border
    }

    /// The normalised real weights `n_i`, `i = -w..=w` (index `i + w`).
    ///
    /// ```
    /// let n = clpix::GaussianBlur::new(2).weights_f64()?;
    /// assert_eq!(n.len(), 5);
    /// assert!((n.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_f64(&self) -> Result<Vec<f64>> {
        self.check()?;
        let w = self.radius as i64;
        let s = self.sigma_value();
        let g: Vec<f64> = (-w..=w)
            .map(|i| {
                let r = i as f64 / s;
                (-0.5 * (r * r)).exp()
            })
            .collect();
        let sum: f64 = g.iter().sum();
        Ok(g.iter().map(|x| x / sum).collect())
    }

    /// The fixed-point weights `q_i` of the RGBA8 path: symmetric, each within 1 of
    /// `n_i · 65536`, summing to exactly 65536.
    ///
    /// ```
    /// let q = clpix::GaussianBlur::new(3).weights_fixed()?;
    /// assert_eq!(q.iter().sum::<u32>(), 65536);
    /// assert_eq!(q[0], q[6]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_fixed(&self) -> Result<Vec<u32>> {
        let n = self.weights_f64()?;
        let w = self.radius as usize;
        let f: Vec<f64> = n.iter().map(|x| x * 65536.0).collect();
        let mut q: Vec<u32> = f.iter().map(|x| x.floor().max(0.0) as u32).collect();
        let total: u64 = q.iter().map(|&x| x as u64).sum();
        let mut rem = 65536i64 - total as i64;
        if rem % 2 != 0 {
            q[w] += 1;
            rem -= 1;
        }
        // Pairs (w - d, w + d), by largest fractional part, ties to the smaller d.
        let mut pairs: Vec<usize> = (1..=w).collect();
        pairs.sort_by(|&a, &b| {
            let fa = f[w + a] - f[w + a].floor();
            let fb = f[w + b] - f[w + b].floor();
            fb.total_cmp(&fa).then(a.cmp(&b))
        });
        for &d in &pairs {
            if rem < 2 {
                break;
            }
            q[w - d] += 1;
            q[w + d] += 1;
            rem -= 2;
        }
        // Cannot happen (Σ frac < 2w + 1); kept exact all the same.
        if rem > 0 {
            q[w] += rem as u32;
        }
        // Each side weight is at most the centre one and 2 q_d + q_0 <= 2^16, so below 2^15:
        // the CPU path multiplies them as 16-bit values. Checked rather than assumed.
        if q.iter().enumerate().any(|(i, &x)| i != w && x >= 0x8000) {
            return Err(Error::invalid(
                "sigma",
                format!("{:?}", self.sigma),
                "a sigma whose fixed-point side weights stay below 2^15",
            ));
        }
        Ok(q)
    }

    /// The f32 weights `wt_i = n_i as f32` of the f32 path.
    ///
    /// ```
    /// let wt = clpix::GaussianBlur::new(1).sigma(1.0).weights_f32()?;
    /// assert_eq!(wt.len(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_f32(&self) -> Result<Vec<f32>> {
        Ok(self.weights_f64()?.iter().map(|&x| x as f32).collect())
    }

    fn check(&self) -> Result<()> {
        if self.radius > MAX_RADIUS {
            return Err(Error::invalid(
                "radius",
                self.radius,
                "at most clpix::MAX_RADIUS = 1048576",
            ));
        }
        let s = self.sigma_value();
        let valid = s.is_finite() && s > 0.0;
        // A radius-0 blur with the default sigma (0) is a copy.
        if !(valid || self.radius == 0 && self.sigma.is_none()) {
            return Err(Error::invalid(
                "sigma",
                s,
                "a finite number above 0 (default: radius / 2)",
            ));
        }
        Ok(())
    }
}

impl Engine {
    /// Blurs an RGBA8 image (host image, view or device image) with `blur`; see the module
    /// specification. Identical, bit for bit, on the CPU and on every OpenCL device.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let img = image::RgbaImage::from_pixel(20, 10, image::Rgba([50, 100, 150, 255]));
    /// let out = Engine::new()?.gaussian_blur(&img, &GaussianBlur::new(3))?;
    /// assert_eq!(out, img); // a constant image stays constant
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        blur: &GaussianBlur,
    ) -> Result<RgbaImage> {
        let input = img.into();
        check_pixel_count(input.width(), input.height())?;
        blur.check()?;
        self.dispatch(
            "gaussian_blur",
            || cpu_blur_u8(&HostPixels::of(input)?.view(), blur),
            |cl| {
                let (w, h) = (input.width(), input.height());
                let n = w as usize * h as usize;
                let bytes = match cl_blur_u8(cl, input, blur, true)? {
                    ClOut::Empty => return Ok(RgbaImage::new(w, h)),
                    ClOut::Host(bytes) => bytes,
                    ClOut::Buffer(buf) => cl.read_rgba8(&[(&buf, 0, n)], n)?,
                };
                bytes_to_image(w, h, bytes)
            },
        )
    }

    /// Like [`gaussian_blur`](Self::gaussian_blur), leaving the result on the engine (device
    /// memory on OpenCL) for the next operation.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let engine = Engine::new()?;
    /// let img = image::RgbaImage::from_fn(16, 16, |x, y| image::Rgba([(x * y) as u8, 0, 0, 255]));
    /// let dev = engine.gaussian_blur_device(&img, &GaussianBlur::new(2))?;
    /// assert_eq!(engine.download(&dev)?, engine.gaussian_blur(&img, &GaussianBlur::new(2))?);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_device<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        blur: &GaussianBlur,
    ) -> Result<DeviceImage> {
        let input = img.into();
        check_pixel_count(input.width(), input.height())?;
        blur.check()?;
        let (width, height) = (input.width(), input.height());
        self.dispatch(
            "gaussian_blur",
            || {
                let out = cpu_blur_u8(&HostPixels::of(input)?.view(), blur)?;
                Ok(DeviceImage {
                    width,
                    height,
                    storage: Storage::Host(out.into_raw()),
                })
            },
            |cl| {
                let parts = match cl_blur_u8(cl, input, blur, false)? {
                    ClOut::Empty => Vec::new(),
                    // Blurred in bands: uploaded in the parts every operation expects.
                    ClOut::Host(bytes) => {
                        let img = bytes_to_image(width, height, bytes)?;
                        cl.upload(&crate::ImageView::from(&img))?.parts
                    }
                    ClOut::Buffer(buffer) => vec![crate::opencl::Part {
                        buffer,
                        range: crate::opencl::PartRange {
                            first_row: 0,
                            rows: height,
                            x0: 0,
                            cols: width,
                        },
                    }],
                };
                Ok(DeviceImage {
                    width,
                    height,
                    storage: Storage::OpenCl(crate::opencl::DeviceParts {
                        owner: cl.clone(),
                        parts,
                    }),
                })
            },
        )
    }

    /// Blurs an RGBA f32 image (scientific data): f32 weights, a fixed summation order and no
    /// fused multiply-add, so that every backend gives the same bits.
    ///
    /// ```
    /// use clpix::{Engine, GaussianBlur};
    /// let img = image::Rgba32FImage::from_pixel(9, 7, image::Rgba([0.25, 0.5, 1.0, 1.0]));
    /// let out = Engine::new()?.gaussian_blur_f32(&img, &GaussianBlur::new(2))?;
    /// assert_eq!(out.dimensions(), (9, 7));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn gaussian_blur_f32(
        &self,
        img: &Rgba32FImage,
        blur: &GaussianBlur,
    ) -> Result<Rgba32FImage> {
        check_pixel_count(img.width(), img.height())?;
        blur.check()?;
        self.dispatch(
            "gaussian_blur_f32",
            || cpu_blur_f32(img, blur),
            |cl| cl_blur_f32(cl, img, blur),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// CPU path: the executable specification.

/// Channel values per block of the row loops (a few vector registers of u32 or f32).
const BLK: usize = 64;

mod kern {
    use super::BLK;
    use crate::cpu::multiversion;

    multiversion! {
        fn h_u8(pad: &[u8], q: &[u32], out: &mut [u16]) -> () {
            // out[j] = (Σ_i q[i] · pad[j + 4 i] + 128) >> 8, symmetric weights paired.
            let w = q.len() / 2;
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0u32; BLK];
                let c: &[u8; BLK] = pad[j0 + 4 * w..j0 + 4 * w + BLK].try_into().unwrap_or(&[0; BLK]);
                let qc = q[w];
                for k in 0..BLK {
                    acc[k] = qc * c[k] as u32;
                }
                for d in 1..=w {
                    // A side weight is below 2^15 (checked in weights_fixed): with that bound
                    // known the compiler multiplies with 16-bit multiply-adds (about 3% of a
                    // w = 2 blur here).
                    let qd = q[w + d] & 0x7fff;
                    let a: &[u8; BLK] = pad[j0 + 4 * (w - d)..j0 + 4 * (w - d) + BLK].try_into().unwrap_or(&[0; BLK]);
                    let b: &[u8; BLK] = pad[j0 + 4 * (w + d)..j0 + 4 * (w + d) + BLK].try_into().unwrap_or(&[0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k].wrapping_add(qd * (a[k] as u32 + b[k] as u32));
                    }
                }
                if let Ok(o) = <&mut [u16; BLK]>::try_from(&mut out[j0..j0 + BLK]) {
                    for k in 0..BLK {
                        o[k] = (acc[k].wrapping_add(128) >> 8) as u16;
                    }
                }
                j0 += BLK;
                if j0 < n && n >= BLK && j0 + BLK > n {
                    // The last values as one block ending at n, overlapping the one before
                    // (same values written twice) rather than a scalar tail.
                    j0 = n - BLK;
                }
            }
            for j in j0..n {
                let mut acc = q[w] * pad[j + 4 * w] as u32;
                for d in 1..=w {
                    acc = acc.wrapping_add(
                        q[w + d].wrapping_mul(pad[j + 4 * (w - d)] as u32 + pad[j + 4 * (w + d)] as u32),
                    );
                }
                out[j] = (acc.wrapping_add(128) >> 8) as u16;
            }
        }
    }
}

mod kern_v {
    use super::BLK;
    use crate::cpu::multiversion;

    multiversion! {
        fn v_u8(rows: &[&[u16]], q: &[u32], out: &mut [u8]) -> () {
            // out[j] = (Σ_i q[i] · rows[i][j] + 2^23) >> 24, symmetric weights paired.
            let w = q.len() / 2;
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0u32; BLK];
                let c: &[u16; BLK] = rows[w][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                let qc = q[w];
                for k in 0..BLK {
                    acc[k] = qc.wrapping_mul(c[k] as u32);
                }
                for d in 1..=w {
                    let qd = q[w + d];
                    let a: &[u16; BLK] = rows[w - d][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                    let b: &[u16; BLK] = rows[w + d][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k].wrapping_add(qd.wrapping_mul(a[k] as u32 + b[k] as u32));
                    }
                }
                if let Ok(o) = <&mut [u8; BLK]>::try_from(&mut out[j0..j0 + BLK]) {
                    for k in 0..BLK {
                        o[k] = (acc[k].wrapping_add(1 << 23) >> 24) as u8;
                    }
                }
                j0 += BLK;
                if j0 < n && n >= BLK && j0 + BLK > n {
                    // As in h_u8: an overlapping last block instead of a scalar tail.
                    j0 = n - BLK;
                }
            }
            for j in j0..n {
                let mut acc = q[w].wrapping_mul(rows[w][j] as u32);
                for d in 1..=w {
                    acc = acc.wrapping_add(
                        q[w + d].wrapping_mul(rows[w - d][j] as u32 + rows[w + d][j] as u32),
                    );
                }
                out[j] = (acc.wrapping_add(1 << 23) >> 24) as u8;
            }
        }
    }
}

mod kern_f32 {
    // SPEC.md writes the f32 sums as `acc = acc + w * x`: kept literally.
    #![allow(clippy::assign_op_pattern)]
    use super::BLK;
    use crate::cpu::multiversion;

    multiversion! {
        fn h_f32(pad: &[f32], wt: &[f32], out: &mut [f32]) -> () {
            // out[j] = Σ_i wt[i] · pad[j + 4 i], in order i = 0..taps, no fused multiply-add.
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0.0f32; BLK];
                for (i, &wi) in wt.iter().enumerate() {
                    let a: &[f32; BLK] = pad[j0 + 4 * i..j0 + 4 * i + BLK].try_into().unwrap_or(&[0.0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k] + wi * a[k];
                    }
                }
                out[j0..j0 + BLK].copy_from_slice(&acc);
                j0 += BLK;
            }
            for j in j0..n {
                let mut acc = 0.0f32;
                for (i, &wi) in wt.iter().enumerate() {
                    acc = acc + wi * pad[j + 4 * i];
                }
                out[j] = acc;
            }
        }
    }
}

mod kern_vf32 {
    // SPEC.md writes the f32 sums as `acc = acc + w * x`: kept literally.
    #![allow(clippy::assign_op_pattern)]
    use super::BLK;
    use crate::cpu::multiversion;

    multiversion! {
        fn v_f32(rows: &[&[f32]], wt: &[f32], out: &mut [f32]) -> () {
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0.0f32; BLK];
                for (row, &wi) in rows.iter().zip(wt) {
                    let a: &[f32; BLK] = row[j0..j0 + BLK].try_into().unwrap_or(&[0.0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k] + wi * a[k];
                    }
                }
                out[j0..j0 + BLK].copy_from_slice(&acc);
                j0 += BLK;
            }
            for j in j0..n {
                let mut acc = 0.0f32;
                for (row, &wi) in rows.iter().zip(wt) {
                    acc = acc + wi * row[j];
                }
                out[j] = acc;
            }
        }
    }
}

/// A device buffer for a large result or intermediate. On a CPU device the buffer's memory is the host's:
/// mapped once before any kernel touches it and advised to use huge pages, which took the
/// page-fault time of a 64 MiB result on PoCL from about half the blur to a few percent.
fn large_buffer<T>(
    cl: &Arc<ClEngine>,
    count: usize,
    what: &'static str,
) -> Result<opencl3::memory::Buffer<T>> {
    let buf = cl.buffer::<T>(count, what)?;
    if cl.tuning.contiguous {
        cl.with_mapped(&buf, count, advise_huge_pages)?;
    }
    Ok(buf)
}

/// Fills `pad` with the pixels `x0 - w .. x1 + w` (4 channels each) of `row` (`width` pixels),
/// those outside the row read through the border mode.
fn pad_row<T: Copy + Default>(
    row: &[T],
    width: usize,
    (x0, x1): (usize, usize),
    w: usize,
    border: Border,
    pad: &mut Vec<T>,
) {
    pad.clear();
    pad.resize((x1 - x0 + 2 * w) * 4, T::default());
    let first = x0 as i64 - w as i64;
    // The part inside the row is one copy.
    let lo = first.max(0) as usize;
    let hi = (x1 + w).min(width);
    if lo < hi {
        let at = (lo as i64 - first) as usize * 4;
        pad[at..at + (hi - lo) * 4].copy_from_slice(&row[lo * 4..hi * 4]);
    }
    // The pixels before and after it, through the border mode.
    let total = x1 - x0 + 2 * w;
    let (copy_from, copy_to) = if lo < hi {
        ((lo as i64 - first) as usize, (hi as i64 - first) as usize)
    } else {
        (total, total)
    };
    let edges = (0..copy_from.min(total)).chain(copy_to..total);
    for k in edges {
        let dst = &mut pad[4 * k..4 * k + 4];
        match border.map(first + k as i64, width as u64) {
            Some(s) => {
                let s = s as usize * 4;
                dst.copy_from_slice(&row[s..s + 4]);
            }
            None => dst.fill(T::default()),
        }
    }
}

/// The horizontal pass of pixels `x0..x1` of one row into `dst` (`4 (x1 - x0)` values), with
/// `h(input, dst)` filtering `input` (the pixels and their `w`-pixel halo on each side): the
/// part whose halo lies inside the row is read in place, and only the pixels within `w` of an
/// edge go through a padded copy (copying whole edge strips had cost 9% of a w = 2 blur).
#[allow(clippy::too_many_arguments)]
fn h_row<T: Copy + Default, O>(
    row: &[T],
    width: usize,
    (x0, x1): (usize, usize),
    w: usize,
    border: Border,
    pad: &mut Vec<T>,
    dst: &mut [O],
    h: impl Fn(&[T], &mut [O]),
) {
    let (a, b) = (x0.max(w), x1.min(width.saturating_sub(w)));
    if a >= b {
        pad_row(row, width, (x0, x1), w, border, pad);
        h(pad, dst);
        return;
    }
    let (left, rest) = dst.split_at_mut(4 * (a - x0));
    let (middle, right) = rest.split_at_mut(4 * (b - a));
    if a > x0 {
        pad_row(row, width, (x0, a), w, border, pad);
        h(pad, left);
    }
    h(&row[4 * (a - w)..4 * (b + w)], middle);
    if x1 > b {
        pad_row(row, width, (b, x1), w, border, pad);
        h(pad, right);
    }
}

/// Bytes the ring of 2w + 1 filtered rows of one band may take: half of this machine's 1 MiB
/// L2 cache a core, so that the ring stays there. A column strip is as wide as the ring allows.
const RING_BYTES: usize = 512 * 1024;

/// Ring rows start an odd multiple of this many values apart (a row rounded up to a multiple of
/// twice it, plus it), so that they are never a power of two bytes apart (they would share the
/// cache's sets).
const RING_PAD: usize = 32;

/// Pixels per column strip of the ring path at `taps` rows of `size`-byte values. Measured here
/// (2-core EPYC, 4096², three alternating rounds, median ms), against strips of 1024 pixels
/// with ring rows 8 KiB apart: w = 2 16.6–17.5 / 17.8–23.7, w = 8 31.6–32.4 / 34.6–41.0,
/// w = 25 67–82 / 120–138.
fn strip_pixels(taps: usize, size: usize, width: usize) -> usize {
    (RING_BYTES / (taps * 4 * size)).max(64).min(width)
}

/// The two-pass blur over rows, generic in the intermediate `T` and output `O` element types.
///
/// `hfun(src_row, (x0, x1), scratch, out)` fills the intermediate values of pixels `x0..x1`
/// (`4 (x1 - x0)` values) of source row `src_row`; `vfun(rows, out)` combines `2w + 1`
/// intermediate row pieces into output values. Rows outside the image come from the border
/// mode (zero rows for [`Border::Zero`]).
fn two_pass<T, P, O, H, V>(
    width: usize,
    height: usize,
    w: usize,
    border: Border,
    out: &mut [O],
    hfun: H,
    vfun: V,
) where
    T: Copy + Default + Send + Sync + bytemuck::Zeroable,
    P: Send,
    O: Send,
    H: Fn(usize, (usize, usize), &mut Vec<P>, &mut [T]) + Sync,
    V: Fn(&[&[T]], &mut [O]) + Sync,
{
    let n = 4 * width;
    if n == 0 || height == 0 {
        return;
    }
    let taps = 2 * w + 1;
    let zero = vec![T::default(); n];
    let threads = rayon::current_num_threads().max(1);
    // About four bands a thread, but at least 8w rows (the halo costs at most a quarter) while
    // every thread still gets a band.
    let band = height
        .div_ceil(4 * threads)
        .max((8 * w).min(height.div_ceil(threads)))
        .max(16);
    let map_row = |v: i64| border.map(v, height as u64).map(|r| r as usize);
    if 2 * w > band || band >= height {
        // The halo would cost more than the band: compute every intermediate row once.
        let mut t = alloc_zeroed::<T>(n * height);
        t.par_chunks_mut(n)
            .enumerate()
            .for_each_init(Vec::new, |scratch, (y, row)| {
                hfun(y, (0, width), scratch, row)
            });
        out.par_chunks_mut(n).enumerate().for_each_init(
            || Vec::with_capacity(taps),
            |rows: &mut Vec<&[T]>, (y, o)| {
                rows.clear();
                for i in 0..taps {
                    rows.push(match map_row(y as i64 + i as i64 - w as i64) {
                        Some(r) => &t[r * n..(r + 1) * n],
                        None => &zero,
                    });
                }
                vfun(rows, o);
                rows.clear();
            },
        );
        return;
    }
    // Bands of rows in parallel; in each, column strips one after the other, each with a ring
    // of 2w + 1 intermediate rows.
    out.par_chunks_mut(band * n)
        .enumerate()
        .for_each(|(b, chunk)| {
            let y0 = b * band;
            let rows_here = chunk.len() / n;
            let sw = strip_pixels(taps, std::mem::size_of::<T>(), width);
            let ms = (4 * sw).div_ceil(2 * RING_PAD) * 2 * RING_PAD + RING_PAD;
            let mut ring = vec![T::default(); taps * ms];
            let mut scratch = Vec::new();
            let first = y0 as i64 - w as i64;
            let mut x0 = 0;
            while x0 < width {
                let x1 = (x0 + sw).min(width);
                let m = 4 * (x1 - x0);
                let mut fill = |ring: &mut [T], v: i64| {
                    let slot = (v - first) as usize % taps;
                    let dst = &mut ring[slot * ms..slot * ms + m];
                    match map_row(v) {
                        Some(r) => hfun(r, (x0, x1), &mut scratch, dst),
                        None => dst.fill(T::default()),
                    }
                };
                for v in first..(y0 as i64 + w as i64) {
                    fill(&mut ring, v);
                }
                for k in 0..rows_here {
                    let y = (y0 + k) as i64;
                    fill(&mut ring, y + w as i64);
                    let s0 = k % taps;
                    let rows: Vec<&[T]> = (0..taps)
                        .map(|i| {
                            let slot = (s0 + i) % taps;
                            &ring[slot * ms..slot * ms + m]
                        })
                        .collect();
                    vfun(&rows, &mut chunk[k * n + 4 * x0..k * n + 4 * x1]);
                }
                x0 = x1;
            }
        });
}

fn cpu_blur_u8(view: &crate::ImageView<'_>, blur: &GaussianBlur) -> Result<RgbaImage> {
    let (width, height) = (view.width(), view.height());
    if width == 0 || height == 0 {
        return Ok(RgbaImage::new(width, height));
    }
    if blur.radius == 0 {
        blur.check()?;
        return Ok(view.to_image());
    }
    let q = blur.weights_fixed()?;
    let w = blur.radius as usize;
    let mut out = alloc_zeroed::<u8>(width as usize * height as usize * 4);
    two_pass::<u16, u8, u8, _, _>(
        width as usize,
        height as usize,
        w,
        blur.border,
        &mut out,
        |y, xs, pad: &mut Vec<u8>, dst| {
            let row = view.row(y as u32);
            h_row(row, width as usize, xs, w, blur.border, pad, dst, |i, o| {
                kern::h_u8(i, &q, o)
            });
        },
        |rows, o| kern_v::v_u8(rows, &q, o),
    );
    RgbaImage::from_raw(width, height, out).ok_or(Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}

fn cpu_blur_f32(img: &Rgba32FImage, blur: &GaussianBlur) -> Result<Rgba32FImage> {
    let (width, height) = img.dimensions();
    if blur.radius == 0 {
        return Ok(img.clone());
    }
    let wt = blur.weights_f32()?;
    let w = blur.radius as usize;
    let n = width as usize * 4;
    let src = img.as_raw();
    let mut out = alloc_zeroed::<f32>(n * height as usize);
    // The f32 pad holds f32; `two_pass` hands a Vec<T> scratch of the intermediate type.
    two_pass::<f32, f32, f32, _, _>(
        width as usize,
        height as usize,
        w,
        blur.border,
        &mut out,
        |y, xs, pad: &mut Vec<f32>, dst| {
            let row = &src[y * n..(y + 1) * n];
            h_row(row, width as usize, xs, w, blur.border, pad, dst, |i, o| {
                kern_f32::h_f32(i, &wt, o)
            });
        },
        |rows, o| kern_vf32::v_f32(rows, &wt, o),
    );
    Rgba32FImage::from_raw(width, height, out).ok_or(Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.

/// Work-items of a GPU tile (fixed: PoCL and drivers specialise on it) and pixels per item.
const TILE_ITEMS: usize = 128;
const TILE_PX: usize = 4;
/// Output rows per work-item of the GPU vertical pass.
const V_ROWS: usize = 8;

/// Work-items of a group of the fused GPU kernel (FX in cl/blur.cl).
const FUSED_COLUMNS: usize = 64;

/// The largest radius of the register-specialised fused kernel (one program per radius).
const REGISTER_MAX_RADIUS: u32 = 16;

/// The largest radius at which GPUs take the register kernel by default. Measured on an H100
/// (8192², kernel time, register kernel / two passes): w = 2 0.422 / 0.861 ms, w = 4 0.725 /
/// 1.038, w = 6 0.991 / 1.241, w = 8 1.574 / 1.458, w = 12 3.10 / 1.92 ms (the accumulators of
/// 2w + 1 rows crowd the registers). On an H200 (final kernels) the band kernel took 0.362 /
/// 0.417 / 0.471 / 0.549 ms at w = 1 / 2 / 3 / 4 against 0.281 / 0.404 / 0.545 / 0.723 ms for
/// the register kernel.
const REGISTER_DEFAULT_RADIUS: u32 = 2;

/// The largest radius at which GPUs take the band kernel by default. Measured on an H200
/// (8192², kernel ms, band kernel / radius-built passes): w = 8 0.873 / 1.273, w = 12 1.226 /
/// 1.575, w = 16 1.549 / 1.974, w = 20 1.828 / 2.251; w = 25 2.846 / 2.655 (its best shape,
/// (128, 1, 4, 16), before the last 4–9% of the band kernel's gains). GPUs whose radius-built
/// passes run on tensor cores take those from [`TENSOR_DEFAULT_RADIUS`] on: on an H200
/// 0.521–0.522 / 0.516–0.518 / 0.584 / 0.631–0.632 / 0.689–0.692 ms at w = 6 / 8 / 12–16 / 20 /
/// 25 (band kernel 0.664–0.667 / 0.840 ms at w = 6 / 8); forced at w = 2 / 3 / 4 they took
/// 0.531 / 0.536 / 0.535 ms, against 0.402 (register kernel) / 0.456–0.461 / 0.500–0.502 ms.
const BAND_DEFAULT_RADIUS: u32 = 20;

/// Output rows a group of a kernel that walks a strip of rows in unrolled runs of `run` input
/// rows takes at radius `w`: about `target` input rows, a whole number of runs (so that no row
/// is read in vain), while the grid of `xg` groups a strip still fills the device.
fn strip_rows(w: u32, run: usize, target: usize, xg: usize, height: u32, cus: u32) -> usize {
    let w = w as usize;
    let want = 8 * cus.max(1) as usize;
    let mut runs = (target + 2 * w).div_ceil(run).max(1);
    loop {
        let strip = (runs * run).saturating_sub(2 * w).max(1);
        if runs == 1 || xg * (height as usize).div_ceil(strip) >= want {
            return strip;
        }
        runs = runs.div_ceil(2);
    }
}

/// The register kernel's strip: runs of `2w + 1` rows. Measured on an H100 (8192², w = 2 / 4 /
/// 6, ms): about 64 input rows 0.425 / 0.758 / 1.045, 128 rows 0.444 / 0.724 / 0.995, 256 rows
/// 0.441 / 0.762 / 0.978.
fn register_strip(w: u32, xg: usize, height: u32, compute_units: u32) -> usize {
    let target = (32 * w as usize).max(64);
    strip_rows(w, 2 * w as usize + 1, target, xg, height, compute_units)
}

/// The GPU RGBA8 blur's tuning variables, read at each call (a test or a measurement sets them
/// between calls). A value that is not one of those listed is an
/// [`Error::InvalidEnvironment`]: a misspelt variable must not measure or test the default
/// kernels unnoticed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct GpuSettings {
    /// `CLPIX_BLUR_GPU=registers|band|radius|two-pass`: the kernels forced (`auto`, the
    /// default, is `None`). A forced kernel that does not build is an error, not a fallback.
    kernel: Option<GpuBlur>,
    /// `CLPIX_BLUR_COLUMNS=1|2`: columns a work-item of the fused kernel takes.
    columns: Option<usize>,
    /// `CLPIX_BLUR_BAND=T,C,P,R[,S]`: the band kernel's shape.
    band: Option<BandShape>,
    /// `CLPIX_BLUR_CHANNELS=1|2|4`: channels a work-item of the radius-built vertical pass takes.
    channels: Option<u32>,
    /// `CLPIX_BLUR_HPIXELS=4|8`: pixels a work-item of the radius-built horizontal pass filters.
    hpixels: Option<u32>,
    /// `CLPIX_BLUR_TENSOR=0|1|horizontal|vertical`: which radius-built passes run on NVIDIA's
    /// tensor cores (by default both, where they build).
    tensor: Option<TensorPasses>,
}

impl GpuSettings {
    fn from_env() -> Result<GpuSettings> {
        let kernel = env_setting(
            "CLPIX_BLUR_GPU",
            "auto, registers, band, radius or two-pass",
            |v| match v {
                "auto" => Some(None),
                "registers" => Some(Some(GpuBlur::FusedRegisters)),
                "band" => Some(Some(GpuBlur::Band)),
                "radius" => Some(Some(GpuBlur::RadiusPasses)),
                "two-pass" => Some(Some(GpuBlur::TwoPass)),
                _ => None,
            },
        )?
        .flatten();
        let columns = env_setting("CLPIX_BLUR_COLUMNS", "1 or 2", |v| match v {
            "1" => Some(1),
            "2" => Some(2),
            _ => None,
        })?;
        let band = env_setting(
            "CLPIX_BLUR_BAND",
            "T,C,P,R[,S]: T work-items (128 or 256), C channels (1, 2 or 4) with T × C / 4 a \
             multiple of P, P pixels (4 or 8), R rows (4, 8, 16 or 32), S rows a strip",
            BandShape::parse,
        )?;
        let channels = env_setting("CLPIX_BLUR_CHANNELS", "1, 2 or 4", |v| match v {
            "1" => Some(1),
            "2" => Some(2),
            "4" => Some(4),
            _ => None,
        })?;
        let hpixels = env_setting("CLPIX_BLUR_HPIXELS", "4 or 8", |v| match v {
            "4" => Some(4),
            "8" => Some(8),
            _ => None,
        })?;
        let tensor = env_setting("CLPIX_BLUR_TENSOR", "0, 1, horizontal or vertical", |v| {
            let (horizontal, vertical) = match v {
                "0" => (false, false),
                "1" => (true, true),
                "horizontal" => (true, false),
                "vertical" => (false, true),
                _ => return None,
            };
            Some(TensorPasses {
                horizontal,
                vertical,
            })
        })?;
        Ok(GpuSettings {
            kernel,
            columns,
            band,
            channels,
            hpixels,
            tensor,
        })
    }
}

/// The tuning variable `var` parsed by `parse`: `None` when it is unset or blank, an
/// [`Error::InvalidEnvironment`] saying `expected` when `parse` refuses it.
fn env_setting<T>(
    var: &'static str,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::InvalidEnvironment {
            var,
            value: v.to_string_lossy().into_owned(),
            expected,
        }),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match parse(v.trim()) {
            Some(t) => Ok(Some(t)),
            None => Err(Error::InvalidEnvironment {
                var,
                value: v,
                expected,
            }),
        },
    }
}

/// Columns a work-item of the register kernel filters at radius `w` (its accumulators and
/// unrolled code grow with both). `CLPIX_BLUR_COLUMNS=1|2` overrides, to measure (4 lost on
/// an H100: 0.455 against 0.426 ms at w = 2).
fn register_columns(w: u32, settings: &GpuSettings) -> usize {
    match settings.columns {
        Some(c) => c,
        None if w <= 4 => 2,
        None => 1,
    }
}

/// The largest radius of the radius-specialised two passes (one program per radius).
const RADIUS_PASSES_MAX: u32 = 32;

/// The RGBA8 blur kernels of a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GpuBlur {
    /// One kernel, built per radius, the output rows in flight in registers.
    FusedRegisters,
    /// One kernel, built per radius, in column bands: the filtered rows in a local ring.
    Band,
    /// The two passes built per radius: f32 horizontal pass, ring of rows in registers.
    RadiusPasses,
    /// Horizontal pass into an intermediate image, then the vertical pass, any radius.
    TwoPass,
}

/// Which RGBA8 kernels a GPU runs at radius `w`: the register kernel up to
/// [`REGISTER_DEFAULT_RADIUS`], the band kernel up to [`BAND_DEFAULT_RADIUS`], the radius-built
/// passes up to [`RADIUS_PASSES_MAX`], the generic passes beyond (`cl_passes` takes the
/// tensor-core passes instead where they run). `CLPIX_BLUR_GPU=registers` (up to
/// [`REGISTER_MAX_RADIUS`]), `band` (up to [`RADIUS_PASSES_MAX`]), `radius` (up to
/// [`RADIUS_PASSES_MAX`], or [`TENSOR_MAX_RADIUS`] where the tensor-core passes run) or
/// `two-pass` forces a choice, to measure them.
fn gpu_kernel(w: u32, settings: &GpuSettings) -> GpuBlur {
    let (fused, band, radius) = match settings.kernel {
        Some(GpuBlur::FusedRegisters) => (REGISTER_MAX_RADIUS, 0, 0),
        Some(GpuBlur::Band) => (0, RADIUS_PASSES_MAX, 0),
        // Beyond RADIUS_PASSES_MAX only where the tensor-core passes run (else the generic).
        Some(GpuBlur::RadiusPasses) => (0, 0, TENSOR_MAX_RADIUS),
        Some(GpuBlur::TwoPass) => (0, 0, 0),
        None => (
            REGISTER_DEFAULT_RADIUS,
            BAND_DEFAULT_RADIUS,
            RADIUS_PASSES_MAX,
        ),
    };
    if (1..=fused).contains(&w) {
        GpuBlur::FusedRegisters
    } else if (1..=band).contains(&w) {
        GpuBlur::Band
    } else if (1..=radius).contains(&w) {
        GpuBlur::RadiusPasses
    } else {
        GpuBlur::TwoPass
    }
}

/// Channels a work-item of the radius-specialised vertical pass takes (its ring of `2w + 5`
/// rows lives in registers) and pixels a work-item of its horizontal pass filters. Measured on
/// an H200 (8192², kernel ms, vertical pass with 1 / 2 / 4 channels): w = 8 0.81 / 0.78 /
/// 0.68, w = 16 1.22 / 1.34 / 1.46, w = 25 1.81 / 1.92 / 2.56; horizontal pass with 4 / 8
/// pixels: w = 8 0.62 / 0.77, w = 25 0.92 / 0.86 (before the vertical pass's rows were
/// counted in 32 bits, which took w = 8 / 16 to 0.66 / 1.19 ms). `CLPIX_BLUR_CHANNELS=1|2|4` and
/// `CLPIX_BLUR_HPIXELS=4|8` override, to measure.
fn radius_pass_shape(w: u32, settings: &GpuSettings) -> (u32, u32) {
    let channels = match settings.channels {
        Some(c) => c,
        None if w <= 8 => 4,
        None => 1,
    };
    let pixels = match settings.hpixels {
        Some(p) => p,
        None if w <= 12 => 4,
        None => 8,
    };
    (channels, pixels)
}

/// The band kernel's shape at radius `w`: work-items a group (128 or 256), channels a work-item
/// of its vertical pass (1, 2 or 4), pixels a work-item of its horizontal pass (4 or 8), input
/// rows a step (4, 8, 16 or 32; halved while the local arrays do not fit) and about how many
/// input rows a strip takes. `CLPIX_BLUR_BAND=T,C,P,R[,S]` overrides, to measure. The defaults
/// are the best shapes measured on an H200 (8192², kernel ms; shapes as they ran, after any
/// halving of R), with the final kernel:
/// - w = 4: (128, 4, 8, 8) 0.547; (128, 4, 4, 8) 0.582;
/// - w = 6: (128, 4, 8, 8) 0.678; (128, 4, 4, 8) 0.707;
/// - w = 8: (128, 4, 8, 8) 0.873; (128, 2, 8, 16) 0.882, (128, 2, 4, 8) 0.901;
/// - w = 12: (128, 2, 4, 8) 1.226; (128, 2, 8, 8) 1.247, (128, 4, 8, 4) 1.529;
/// - w = 16: (128, 2, 4, 8) 1.549; (128, 2, 8, 8) 1.699, (128, 4, 8, 4) 1.973;
/// - w = 20: (128, 2, 4, 8) 1.828; (128, 2, 8, 8) 2.055.
///
/// With the kernel before its vertical pass took constant offsets into the ring (about 4% slower
/// at w = 8, 9% at w = 20), also: w = 8 (128, 4, 8, 4) 1.023, (256, 2, 4, 8) 1.026, (128, 1, 4, 16)
/// 0.990, and (128, 2, 4, 8) with strips of 128 / 256 / 512 / 1024 input rows 0.997 / 0.978 /
/// 0.978 / 0.973; w = 16 (128, 1, 8, 16) 2.107; w = 20 (128, 1, 4, 16) 2.413; w = 25
/// (128, 1, 4, 16) 2.846 and (128, 2, 4, 4) 3.30, against 2.655 for the radius-built passes.
fn band_shape(w: u32, settings: &GpuSettings) -> BandShape {
    settings.band.unwrap_or(match w {
        0..=8 => BandShape::new(128, 4, 8, 8, 256),
        _ => BandShape::new(128, 2, 4, 8, 256),
    })
}

/// The shape of the band kernel (see [`band_shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BandShape {
    threads: usize,
    channels: usize,
    pixels: usize,
    rows: usize,
    strip: usize,
}

impl BandShape {
    fn new(threads: usize, channels: usize, pixels: usize, rows: usize, strip: usize) -> Self {
        BandShape {
            threads,
            channels,
            pixels,
            rows,
            strip,
        }
    }

    /// `T,C,P,R[,S]` (`CLPIX_BLUR_BAND`), `None` unless the kernel can take that shape: T
    /// work-items (128 or 256), C channels (1, 2 or 4), P pixels (4 or 8) with T × C / 4 a
    /// multiple of P, R rows (4, 8, 16 or 32) and S rows a strip (256 when left out).
    fn parse(v: &str) -> Option<BandShape> {
        let n = v
            .split(',')
            .map(|x| x.trim().parse::<usize>().ok())
            .collect::<Option<Vec<usize>>>()?;
        match n.as_slice() {
            &[t, c, p, r, ref rest @ ..]
                if [128, 256].contains(&t)
                    && [1, 2, 4].contains(&c)
                    && [4, 8].contains(&p)
                    && [4, 8, 16, 32].contains(&r)
                    && t * c / 4 % p == 0
                    && rest.len() <= 1
                    && rest.iter().all(|&s| s > 0) =>
            {
                Some(BandShape::new(
                    t,
                    c,
                    p,
                    r,
                    rest.first().copied().unwrap_or(256),
                ))
            }
            _ => None,
        }
    }

    /// Columns a group owns (BX in cl/blur.cl).
    fn columns(&self) -> usize {
        self.threads * self.channels / 4
    }

    /// Bytes of the kernel's local arrays at radius `w`: the tile of `rows` rows of float4s,
    /// one of padding every 8 (BROW), and the ring of `2w + rows` rows of 4 u16s, one pixel of
    /// padding every 8 (RROW).
    fn local_bytes(&self, w: u32) -> usize {
        let span = self.columns() + 2 * w as usize;
        let tile_row = span + (span - 1) / 8;
        let ring_row = self.columns() + (self.columns() - 1) / 8;
        self.rows * tile_row * 16 + (2 * w as usize + self.rows) * ring_row * 8
    }

    /// The `-D CLPIX_VARIANT` of this shape at radius `w`.
    fn variant(&self, w: u32) -> u32 {
        w | ((self.rows / 4) as u32) << 8
            | u32::from(self.threads == 128) << 12
            | (self.channels as u32) << 20
            | (self.pixels as u32) << 24
    }
}

/// A blur kernel's arguments: the ones every blur kernel begins with (input, width, height,
/// weights, w, border, output), then `rest`.
fn pass_args(
    input: Arg,
    (width, height): (u32, u32),
    weights: Arg,
    (w, code): (u32, u32),
    output: Arg,
    rest: &[Arg],
) -> Vec<Arg> {
    let mut args = vec![
        input,
        Arg::U32(width),
        Arg::U32(height),
        weights,
        Arg::U32(w),
        Arg::U32(code),
        output,
    ];
    args.extend_from_slice(rest);
    args
}

fn too_large(what: &'static str, needed: u64, limit: u64) -> Error {
    Error::TooLargeForDevice {
        what,
        needed,
        limit,
    }
}

/// Runs the blur of `src` (one buffer of `width × height` pixels) into `dst`: on GPUs two
/// passes through an intermediate buffer of `D` (4 a pixel); on CPU devices the fused ring
/// kernel when the halo is small against each group's rows, else the same two passes.
/// `px_bytes` is the size of one pixel in a local-memory tile.
#[allow(clippy::too_many_arguments)]
fn cl_passes<S, D>(
    cl: &Arc<ClEngine>,
    kind: &'static str,
    src: &opencl3::memory::Buffer<S>,
    dst: &opencl3::memory::Buffer<S>,
    weights: Arg,
    width: u32,
    height: u32,
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<()> {
    let (hk, hk_direct, vk, ring_k) = match kind {
        "u8" => ("blur_h_u8", "blur_h_u8_direct", "blur_v_u8", "blur_ring_u8"),
        _ => (
            "blur_h_f32",
            "blur_h_f32_direct",
            "blur_v_f32",
            "blur_ring_f32",
        ),
    };
    let w = blur.radius;
    let code = blur.border.code();
    let n = width as usize * height as usize;
    let mut events = Vec::new();
    if cl.tuning.contiguous {
        let groups = (height as usize).clamp(1, cl.tuning.max_groups);
        let rows = (height as usize).div_ceil(groups);
        let taps = 2 * w as usize + 1;
        // One column strip of at most 1024 pixels a ring row, rounded up to a multiple of 64
        // values and 32 more (STRIP, RING_PAD in cl/blur.cl).
        let ring_elems = groups * taps * ((4 * (width as usize).min(1024)).div_ceil(64) * 64 + 32);
        let ring_bytes = ring_elems as u64 * std::mem::size_of::<D>() as u64;
        if 2 * (w as usize) <= rows && ring_bytes <= cl.max_buffer_bytes {
            let ring = large_buffer::<D>(cl, ring_elems, "the blur's row rings")?;
            let args = pass_args(
                Arg::buf(src),
                (width, height),
                weights,
                (w, code),
                Arg::buf(&ring),
                &[Arg::buf(dst)],
            );
            events.push(cl.launch("blur", ring_k, &args, groups, 1)?);
            return cl.finish(&events);
        }
        let tmp = large_buffer::<D>(cl, 4 * n, "the blur's intermediate image")?;
        let hargs = pass_args(
            Arg::buf(src),
            (width, height),
            weights,
            (w, code),
            Arg::buf(&tmp),
            &[],
        );
        events.push(cl.launch("blur", hk, &hargs, groups, 1)?);
        let vargs = pass_args(
            Arg::buf(&tmp),
            (width, height),
            weights,
            (w, code),
            Arg::buf(dst),
            &[],
        );
        events.push(cl.launch("blur", vk, &vargs, groups, 1)?);
        return cl.finish(&events);
    }
    let settings = match kind {
        "u8" => GpuSettings::from_env()?,
        _ => GpuSettings::default(),
    };
    let choice = match kind {
        "u8" => match gpu_kernel(w, &settings) {
            // Where both radius-built passes run on tensor cores they beat the band kernel.
            GpuBlur::Band
                if settings.kernel.is_none()
                    && w >= TENSOR_DEFAULT_RADIUS
                    && tensor_passes(cl, radius_variant(w, &settings), &settings)?.both() =>
            {
                GpuBlur::RadiusPasses
            }
            // Beyond the CUDA-core passes, the tensor-core passes where they run.
            GpuBlur::TwoPass
                if settings.kernel.is_none()
                    && (RADIUS_PASSES_MAX + 1..=TENSOR_MAX_RADIUS).contains(&w)
                    && tensor_passes(cl, radius_variant(w, &settings), &settings)?.both() =>
            {
                GpuBlur::RadiusPasses
            }
            choice => choice,
        },
        _ => GpuBlur::TwoPass,
    };
    if choice == GpuBlur::FusedRegisters
        && gpu_fused_u8(cl, (src, dst, weights), (width, height), blur, &settings)?
    {
        return Ok(());
    }
    if choice == GpuBlur::Band
        && gpu_band_u8(cl, (src, dst, weights), (width, height), blur, &settings)?
    {
        return Ok(());
    }
    // The intermediate is pooled: allocating hundreds of MB per call cost a GPU (H100, 8192²)
    // about 1 ms, more than the w = 2 kernels themselves. The kernels see it as `D`s.
    let words = (4 * n * std::mem::size_of::<D>()).div_ceil(4);
    let (count, tmp) = cl.take_scratch(GPU_INTERMEDIATE, words)?;
    let result = (|| {
        if matches!(choice, GpuBlur::RadiusPasses | GpuBlur::Band)
            && gpu_radius_passes_u8(
                cl,
                (src, &tmp, dst, weights),
                (width, height),
                blur,
                &settings,
            )?
        {
            return Ok(());
        }
        gpu_two_pass(
            cl,
            (hk, hk_direct, vk),
            src,
            &tmp,
            dst,
            weights,
            (width, height),
            blur,
            px_bytes,
        )
    })();
    cl.give_scratch(GPU_INTERMEDIATE, count, tmp);
    result
}

/// The RGBA8 two passes built for radius `blur.radius` (1 to [`RADIUS_PASSES_MAX`], or
/// [`TENSOR_MAX_RADIUS`] where both run on the tensor cores) from `src`
/// through `tmp` (u16 intermediate, 8 bytes a pixel) into `dst`. `Ok(false)` when this device
/// cannot build them, its local memory cannot hold the horizontal tile or the image is too
/// large for their 32-bit counts (rows of 2^29 pixels, 2^31 rows): the caller runs the generic
/// passes, which give the same bits.
fn gpu_radius_passes_u8<S>(
    cl: &Arc<ClEngine>,
    (src, tmp, dst, weights): (
        &opencl3::memory::Buffer<S>,
        &opencl3::memory::Buffer<u32>,
        &opencl3::memory::Buffer<S>,
        Arg,
    ),
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    settings: &GpuSettings,
) -> Result<bool> {
    let (w, code) = (blur.radius, blur.border.code());
    if !counts_fit_i32(width, height, w) {
        return Ok(false);
    }
    let (channels, pixels) = radius_pass_shape(w, settings);
    let plain = radius_variant(w, settings);
    let tensor = tensor_passes(cl, plain, settings)?;
    if w > RADIUS_PASSES_MAX && !tensor.both() {
        return Ok(false); // beyond 32 the variant holds the tensor-core passes only
    }
    let variant = plain | u32::from(tensor.horizontal || tensor.vertical) << TENSOR_BIT;
    let forced = settings.kernel.is_some();
    let (hkernel, rest, hgroups) = if tensor.horizontal {
        // Groups of 4 warps of 8 rows; strips of whole blocks of 16 pixels.
        let yg = (height as usize).div_ceil(TENSOR_GROUP_ROWS);
        let strip = tensor_strip(yg, width, cl.info.compute_units, tensor_blocks(w).0);
        let xs = (width as usize).div_ceil(strip);
        let rest = vec![Arg::U32(xs as u32), Arg::U32(strip as u32)];
        ("blur_hm_u8", rest, xs * yg)
    } else {
        // The tile: TILE_ITEMS × pixels + 2w float4s, one of padding every 8 (HPAD in
        // cl/blur.cl).
        let span = TILE_ITEMS * pixels as usize + 2 * w as usize;
        let local_bytes = (span + span / 8 + 1) * 16;
        if local_bytes as u64 + 1024 > cl.info.local_mem_bytes {
            return Ok(false);
        }
        let tiles = (width as usize).div_ceil(TILE_ITEMS * pixels as usize);
        let rest = vec![Arg::U32(tiles as u32), Arg::Local(local_bytes)];
        ("blur_hs_u8", rest, tiles * height as usize)
    };
    let hargs = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (w, code),
        Arg::buf(tmp),
        &rest,
    );
    let (vkernel, xg, strip) = if tensor.vertical {
        // Groups of 4 warps, 8 pixels a warp; strips of whole blocks of 16 rows.
        let xg = (width as usize).div_ceil(TENSOR_GROUP_PIXELS);
        (
            "blur_vm_u8",
            xg,
            tensor_strip(xg, height, cl.info.compute_units, tensor_blocks(w).1),
        )
    } else {
        let lanes = width as usize * (4 / channels as usize);
        let xg = lanes.div_ceil(TILE_ITEMS);
        let strip = radius_strip(w, xg, height, cl.info.compute_units);
        ("blur_vs_u8", xg, strip)
    };
    let yg = (height as usize).div_ceil(strip);
    let vargs = pass_args(
        Arg::buf(tmp),
        (width, height),
        weights,
        (w, code),
        Arg::buf(dst),
        &[Arg::U32(xg as u32), Arg::U32(strip as u32)],
    );
    let launched = cl
        .launch_variant(
            ("blur", variant),
            hkernel,
            &hargs,
            hgroups * TILE_ITEMS,
            TILE_ITEMS,
        )
        .and_then(|h| {
            let v = cl.launch_variant(
                ("blur", variant),
                vkernel,
                &vargs,
                xg * yg * TILE_ITEMS,
                TILE_ITEMS,
            )?;
            Ok(vec![h, v])
        });
    finish_per_radius(cl, launched, ("the radius-built blur passes", forced), w)
}

/// The program variant bit of the radius-built passes whose vertical pass runs on NVIDIA's
/// tensor cores (`blur_vm_u8` in cl/blur.cl).
const TENSOR_BIT: u32 = 28;

/// Pixels across a group of the tensor-core vertical pass: 4 warps of 8.
const TENSOR_GROUP_PIXELS: usize = 32;

/// Rows a group of the tensor-core horizontal pass takes: 4 warps of 8.
const TENSOR_GROUP_ROWS: usize = 32;

/// The program variant of the radius-built passes at radius `w` (without [`TENSOR_BIT`]).
fn radius_variant(w: u32, settings: &GpuSettings) -> u32 {
    let (channels, pixels) = radius_pass_shape(w, settings);
    w | channels << 20 | pixels << 24
}

/// The largest radius of the tensor-core passes (their programs beyond [`RADIUS_PASSES_MAX`]
/// hold those passes only): from w = 33 to here NVIDIA GPUs take them instead of the generic
/// passes. 64 keeps their emulation (the tests') within 48 KiB of local memory: 9 halves of
/// 16 rows a block a warp and 5 chunks of weights a group, 41 KiB. On an H200 (8192², kernel
/// ms): w = 40 0.741–0.745 (generic passes 5.215), w = 48 0.810–0.816, w = 64 0.979–0.984
/// (generic 8.07); 96 and 134 registers (horizontal, vertical) at w = 40, 128 and 137 at
/// w = 48, 130 and 177 at w = 64, no spills.
const TENSOR_MAX_RADIUS: u32 = 64;

/// The radius from which GPUs whose radius-built passes both run on tensor cores take those
/// rather than the band kernel (below [`BAND_DEFAULT_RADIUS`]; see [`BAND_DEFAULT_RADIUS`] for
/// the times).
const TENSOR_DEFAULT_RADIUS: u32 = 6;

/// Which of the radius-built passes run on the tensor cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TensorPasses {
    horizontal: bool,
    vertical: bool,
}

impl TensorPasses {
    /// Whether both passes run on the tensor cores.
    fn both(&self) -> bool {
        self.horizontal && self.vertical
    }
}

/// Which of the radius-built passes of variant `plain` run on NVIDIA's tensor cores: both on
/// NVIDIA GPUs where that program builds (`mma.sync` on 8-bit integers: compute capability
/// 8.0 and later; elsewhere the f32 tile and the ring of rows, with a warning), unless
/// `CLPIX_BLUR_TENSOR` says otherwise (`0`, `horizontal`, `vertical`). A pass forced onto the
/// tensor cores that does not build is an error, and so is a device that is not an NVIDIA GPU
/// unless the instruction is emulated (`-D CLPIX_WARP_EMULATED=1` in `CLPIX_BUILD_OPTIONS`, as
/// the tests do).
fn tensor_passes(cl: &ClEngine, plain: u32, settings: &GpuSettings) -> Result<TensorPasses> {
    const NONE: TensorPasses = TensorPasses {
        horizontal: false,
        vertical: false,
    };
    let (wanted, forced) = match settings.tensor {
        Some(t) if t == NONE => return Ok(NONE),
        Some(t) => (t, true),
        None => (
            TensorPasses {
                horizontal: true,
                vertical: true,
            },
            false,
        ),
    };
    if cl.tuning.contiguous {
        return Ok(NONE);
    }
    let refused = Error::InvalidEnvironment {
        var: "CLPIX_BLUR_TENSOR",
        value: match (wanted.horizontal, wanted.vertical) {
            (true, true) => "1",
            (true, false) => "horizontal",
            _ => "vertical",
        }
        .into(),
        expected: "0 on this device: the tensor-core passes need an NVIDIA GPU, or \
                   -D CLPIX_WARP_EMULATED=1 in CLPIX_BUILD_OPTIONS",
    };
    let built = cl.nvidia_variant(
        ("blur", plain | 1 << TENSOR_BIT),
        "the tensor-core blur passes",
        forced.then_some(refused),
    )?;
    Ok(if built { wanted } else { NONE })
}

/// Outputs along its strip a group of a tensor-core pass takes (rows of the vertical pass,
/// pixels of the horizontal one, `length` of them): whole blocks of 16, `blocks` of them, fewer
/// while the grid of `across` groups a strip does not fill the device.
fn tensor_strip(across: usize, length: u32, compute_units: u32, blocks: usize) -> usize {
    let want = 8 * compute_units.max(1) as usize;
    let mut blocks = blocks.max(1);
    while blocks > 1 && across * (length as usize).div_ceil(16 * blocks) < want {
        blocks /= 2;
    }
    16 * blocks
}

/// Blocks of 16 outputs a strip of the tensor-core passes at radius `w`, (horizontal,
/// vertical): short strips for the horizontal pass and long ones for the vertical pass, longer
/// where the halo (w rows or pixels each side) is wider. Measured on the H200 (8192², kernel
/// ms of both passes; horizontal, vertical blocks):
///
/// | blocks | w = 6 | w = 8 | w = 16 | w = 20 | w = 25 |
/// |---|---|---|---|---|---|
/// | 16, 16 (before) | 0.559 | 0.561–0.564 | 0.622 | 0.695 | 0.744–0.749 |
/// | 8, 16 | 0.532–0.538 | 0.535–0.539 | 0.584–0.590 | 0.650–0.655 | 0.702–0.704 |
/// | 4, 16 | 0.525 | 0.522–0.523 | 0.586 | 0.676–0.677 | 0.747–0.748 |
/// | 2, 16 | 0.555 | 0.554 | 0.650 | 0.770 | 0.876 |
/// | 8, 32 | 0.540 | 0.536 | 0.588 | 0.641 | 0.688 |
/// | 4, 32 | 0.527 | 0.530 | 0.584 | 0.661 | 0.733 |
/// | 4, 64 | 0.550 | 0.546 | 0.587 | 0.660 | 0.727 |
fn tensor_blocks(w: u32) -> (usize, usize) {
    match w {
        0..=8 => (4, 16),
        9..=16 => (8, 16),
        _ => (8, 32),
    }
}

/// Whether the per-radius passes' 32-bit counts hold this image: channels of a row with a tile
/// beyond it, rows with the halo and a step of rows beyond them.
fn counts_fit_i32(width: u32, height: u32, w: u32) -> bool {
    4 * width as u64 + 1024 <= i32::MAX as u64
        && height as u64 + 2 * w as u64 + 64 <= i32::MAX as u64
}

/// The fused band kernel built for radius `blur.radius` (1 to [`RADIUS_PASSES_MAX`]) from `src`
/// into `dst`. `Ok(false)` when this device cannot build it, its local memory cannot hold the
/// tile and the ring even with 4 rows a step, or the image is too large for its 32-bit counts:
/// the caller runs the radius passes or the generic ones, which give the same bits.
fn gpu_band_u8<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): (
        &opencl3::memory::Buffer<S>,
        &opencl3::memory::Buffer<S>,
        Arg,
    ),
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    settings: &GpuSettings,
) -> Result<bool> {
    let w = blur.radius;
    if !counts_fit_i32(width, height, w) {
        return Ok(false);
    }
    let mut shape = band_shape(w, settings);
    while shape.local_bytes(w) as u64 + 1024 > cl.info.local_mem_bytes {
        if shape.rows == 4 {
            return Ok(false);
        }
        shape.rows /= 2;
    }
    let xg = (width as usize).div_ceil(shape.columns());
    let strip = strip_rows(
        w,
        shape.rows,
        shape.strip,
        xg,
        height,
        cl.info.compute_units,
    );
    launch_strips(
        cl,
        (src, dst, weights),
        (width, height),
        blur,
        ("blur_band_u8", shape.variant(w), shape.threads),
        (xg, strip),
        &[],
        ("the blur band kernel", settings.kernel.is_some()),
    )
}

/// Runs a per-radius kernel that walks strips of output rows: `xg` groups of `threads`
/// work-items across the image, `strip` output rows a group. Its arguments are those every blur
/// kernel begins with, then `xg`, `strip` and `rest`. `Ok(false)` when it does not build (see
/// [`finish_per_radius`]).
#[allow(clippy::too_many_arguments)]
fn launch_strips<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): (
        &opencl3::memory::Buffer<S>,
        &opencl3::memory::Buffer<S>,
        Arg,
    ),
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    (kernel, variant, threads): (&'static str, u32, usize),
    (xg, strip): (usize, usize),
    rest: &[Arg],
    (what, forced): (&str, bool),
) -> Result<bool> {
    let yg = (height as usize).div_ceil(strip);
    let args = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (blur.radius, blur.border.code()),
        Arg::buf(dst),
        &[&[Arg::U32(xg as u32), Arg::U32(strip as u32)], rest].concat(),
    );
    let launched = cl.launch_variant(("blur", variant), kernel, &args, xg * yg * threads, threads);
    finish_per_radius(cl, launched.map(|e| vec![e]), (what, forced), blur.radius)
}

/// Waits for the per-radius kernels `launched` (`what`): `Ok(false)` when they did not build on
/// this device (said as a `log` warning), for the caller to run the generic passes instead,
/// unless they were `forced` by `CLPIX_BLUR_GPU` (to measure or test them): then their build
/// error, so that a measurement or a test never runs another kernel unnoticed.
fn finish_per_radius(
    cl: &ClEngine,
    launched: Result<Vec<opencl3::event::Event>>,
    (what, forced): (&str, bool),
    w: u32,
) -> Result<bool> {
    match launched {
        Ok(events) => cl.finish(&events).map(|()| true),
        Err(e @ Error::KernelBuild { .. }) if !forced => {
            log::warn!(
                "{what} (w = {w}) did not build on {}; the generic passes instead: {e}",
                cl.info.name
            );
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The radius-built vertical pass's strip: about 256 input rows in runs of `2w + 5` (VRING
/// in cl/blur.cl: the `2w + 1` rows of a window and 4 loaded ahead).
fn radius_strip(w: u32, xg: usize, height: u32, compute_units: u32) -> usize {
    strip_rows(w, 2 * w as usize + 5, 256, xg, height, compute_units)
}

/// The fused RGBA8 kernel built for radius `blur.radius` (1 to [`REGISTER_MAX_RADIUS`]) from
/// `src` into `dst`. `Ok(false)` when this device's compiler cannot build it (its unrolled
/// code and registers): the caller runs the two passes, which give the same bits.
fn gpu_fused_u8<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): (
        &opencl3::memory::Buffer<S>,
        &opencl3::memory::Buffer<S>,
        Arg,
    ),
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    settings: &GpuSettings,
) -> Result<bool> {
    let w = blur.radius;
    let per_item = register_columns(w, settings);
    let cols = FUSED_COLUMNS * per_item;
    let xg = (width as usize).div_ceil(cols);
    let strip = register_strip(w, xg, height, cl.info.compute_units);
    launch_strips(
        cl,
        (src, dst, weights),
        (width, height),
        blur,
        (
            "blur_fused_reg_u8",
            w | (per_item as u32) << 16,
            FUSED_COLUMNS,
        ),
        (xg, strip),
        &[Arg::Local(2 * (cols + 2 * w as usize) * 4)],
        ("the fused blur kernel", settings.kernel.is_some()),
    )
}

/// Scratch-pool name of the GPU blur's intermediate image.
const GPU_INTERMEDIATE: &str = "blur intermediate";

/// The GPU two passes: horizontal (row tiles in local memory) into `tmp`, vertical into `dst`.
#[allow(clippy::too_many_arguments)]
fn gpu_two_pass<S>(
    cl: &Arc<ClEngine>,
    (hk, hk_direct, vk): (&'static str, &'static str, &'static str),
    src: &opencl3::memory::Buffer<S>,
    tmp: &opencl3::memory::Buffer<u32>,
    dst: &opencl3::memory::Buffer<S>,
    weights: Arg,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<()> {
    let (w, code) = (blur.radius, blur.border.code());
    let mut events = Vec::new();
    let tile = TILE_ITEMS * TILE_PX;
    let tiles = (width as usize).div_ceil(tile);
    let groups = tiles * height as usize;
    let local_bytes = (tile + 2 * w as usize) * px_bytes;
    let mut hargs = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (w, code),
        Arg::buf(tmp),
        &[Arg::U32(tiles as u32)],
    );
    // Leave room for the driver's own use of local memory.
    if (local_bytes as u64) + 1024 <= cl.info.local_mem_bytes {
        hargs.push(Arg::Local(local_bytes));
        events.push(cl.launch("blur", hk, &hargs, groups * TILE_ITEMS, TILE_ITEMS)?);
    } else {
        events.push(cl.launch("blur", hk_direct, &hargs, groups * TILE_ITEMS, TILE_ITEMS)?);
    }
    let xg = (width as usize).div_ceil(TILE_ITEMS);
    let yg = (height as usize).div_ceil(V_ROWS);
    let vargs = pass_args(
        Arg::buf(tmp),
        (width, height),
        weights,
        (w, code),
        Arg::buf(dst),
        &[Arg::U32(xg as u32)],
    );
    events.push(cl.launch("blur", vk, &vargs, xg * yg * TILE_ITEMS, TILE_ITEMS)?);
    cl.finish(&events)
}

/// Packed pixels as an RGBA8 image.
fn bytes_to_image(width: u32, height: u32, bytes: Vec<u8>) -> Result<RgbaImage> {
    RgbaImage::from_raw(width, height, bytes).ok_or(Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}

/// The result of the RGBA8 blur on a device.
enum ClOut {
    /// An image without pixels.
    Empty,
    /// The whole result in one device buffer.
    Buffer(opencl3::memory::Buffer<u32>),
    /// The whole result as packed RGBA8 bytes on the host: blurred in bands (an image larger
    /// than one buffer), or written there by a CPU device.
    Host(Vec<u8>),
}

/// The RGBA8 blur on a device; `to_host` when the caller wants the result on the host (a CPU
/// device then writes it there directly: [`ClOut::Host`]).
fn cl_blur_u8(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    blur: &GaussianBlur,
    to_host: bool,
) -> Result<ClOut> {
    let (width, height) = (input.width(), input.height());
    let n = width as usize * height as usize;
    if n == 0 {
        return Ok(ClOut::Empty);
    }
    let limit = cl.max_buffer_bytes;
    // The intermediate (4 u16 a pixel) is the largest buffer of the one-buffer blur; larger
    // images (and device images held in several parts) are blurred in bands.
    if n as u64 * 8 > limit {
        let host = HostPixels::of(input)?;
        let view = host.view();
        if blur.radius == 0 {
            let mut bytes = alloc_zeroed::<u8>(n * 4);
            for (y, row) in bytes.chunks_exact_mut(4 * width as usize).enumerate() {
                row.copy_from_slice(view.row(y as u32));
            }
            return Ok(ClOut::Host(bytes));
        }
        let qbuf = fixed_weights_buffer(cl, blur)?;
        let out = cl_banded::<u32, u16, u32>(
            cl,
            "u8",
            width,
            height,
            1,
            blur,
            Arg::buf(&qbuf),
            4,
            |y, dst| bytemuck::cast_slice_mut::<u32, u8>(dst).copy_from_slice(view.row(y as u32)),
        )?;
        return Ok(ClOut::Host(bytemuck::cast_slice(&out).to_vec()));
    }
    // The input in one buffer: a device image of this engine in one part is used in place.
    let own = match input {
        ImageInput::Device(d) => match &d.storage {
            Storage::OpenCl(p) if Arc::ptr_eq(&p.owner, cl) && p.parts.len() == 1 => {
                Some(&p.parts[0].buffer)
            }
            _ => None,
        },
        ImageInput::Host(_) => None,
    };
    // A CPU device reads the caller's packed, 4-aligned pixels where they are, and writes a
    // result for the host straight into that result's memory (PoCL 3.1, 4096², w = 2: 94-105 ms
    // a call with an upload and two copies back, 12.6-13.7 ms now, the kernel 12-12.6 ms).
    let in_place = cl.uses_host_memory();
    // The host memory the kernels may use, then the guard that waits for them (dropped first).
    let host;
    let mut result = (to_host && in_place).then(|| alloc_zeroed::<u8>(n * 4));
    let mut drain = cl.queue_drain();
    let (over_host, uploaded);
    let src = match own {
        Some(b) => b,
        None => {
            host = HostPixels::of(input)?;
            let words = host
                .view()
                .packed_bytes()
                .and_then(|b| bytemuck::try_cast_slice::<u8, u32>(b).ok());
            match words.filter(|_| in_place) {
                Some(words) => {
                    // SAFETY: `host` lives until this function returns, after `drain` (or the
                    // blocking read of the result) has waited for every kernel.
                    over_host = unsafe { cl.buffer_over_host_read_only(words, "the image")? };
                    drain.armed = true;
                    &over_host
                }
                None => {
                    uploaded = cl.upload(&host.view())?;
                    match uploaded.parts.as_slice() {
                        [p] => &p.buffer,
                        // Cannot happen: one part holds 4 bytes a pixel, fewer than the 8 checked.
                        _ => {
                            return Err(too_large("an image part of the blur", n as u64 * 4, limit))
                        }
                    }
                }
            }
        }
    };
    let result_words = result
        .as_mut()
        .and_then(|r| bytemuck::try_cast_slice_mut::<u8, u32>(r).ok());
    let mut dst = match result_words {
        Some(words) => {
            drain.armed = true;
            // SAFETY: `result` holds n words, untouched until the blocking read of `dst` into
            // that same memory below (or `drain`, on an error path) has waited for the kernels.
            unsafe { cl.buffer_over_host(words.as_mut_ptr(), n, "the blurred image")? }
        }
        None => {
            result = None;
            large_buffer::<u32>(cl, n, "the blurred image")?
        }
    };
    if blur.radius == 0 {
        // A copy, on the device.
        cl.copy(src, &mut dst, n)?;
    } else {
        let qbuf = fixed_weights_buffer(cl, blur)?;
        cl_passes::<u32, u16>(cl, "u8", src, &dst, Arg::buf(&qbuf), width, height, blur, 4)?;
    }
    let Some(bytes) = result.as_mut() else {
        return Ok(ClOut::Buffer(dst));
    };
    // Waits for the kernels (an in-order queue); reading into the buffer's own memory copies
    // nothing. The bytes stay in `result` until then, so that an error here drains the queue
    // before they are freed.
    cl.read(&dst, 0, bytemuck::cast_slice_mut::<u8, u32>(bytes))?;
    drain.armed = false;
    drop(dst);
    Ok(ClOut::Host(result.take().unwrap_or_default()))
}

/// The RGBA8 blur's weights on the device, in one buffer written once a call: the `2w + 1`
/// fixed-point weights `q`, then the same values as f32 bits (exact: each is at most 65536),
/// which the band kernel's f32 horizontal pass reads from `q + 2w + 1` beyond w = 16.
fn fixed_weights_buffer(
    cl: &ClEngine,
    blur: &GaussianBlur,
) -> Result<opencl3::memory::Buffer<u32>> {
    let q = blur.weights_fixed()?;
    let words: Vec<u32> = q
        .iter()
        .copied()
        .chain(q.iter().map(|&v| (v as f32).to_bits()))
        .collect();
    let mut buf = cl.buffer::<u32>(words.len(), "blur weights")?;
    cl.write(&mut buf, 0, &words)?;
    Ok(buf)
}

fn cl_blur_f32(
    cl: &Arc<ClEngine>,
    img: &Rgba32FImage,
    blur: &GaussianBlur,
) -> Result<Rgba32FImage> {
    let (width, height) = img.dimensions();
    let n = width as usize * height as usize;
    if n == 0 || blur.radius == 0 {
        return Ok(img.clone());
    }
    let limit = cl.max_buffer_bytes;
    let wt = blur.weights_f32()?;
    let mut wbuf = cl.buffer::<f32>(wt.len(), "blur weights")?;
    cl.write(&mut wbuf, 0, &wt)?;
    let out = if n as u64 * 16 > limit {
        let src = img.as_raw();
        let m = 4 * width as usize;
        cl_banded::<f32, f32, f32>(
            cl,
            "f32",
            width,
            height,
            4,
            blur,
            Arg::buf(&wbuf),
            16,
            |y, dst| dst.copy_from_slice(&src[y * m..(y + 1) * m]),
        )?
    } else {
        // The result's memory, advised to use huge pages before its first write; a CPU device
        // reads the image where it is and writes the result straight into that memory (PoCL
        // 3.1, 4096², w = 8: 199 ms a call with the copies, the kernels 53 ms).
        let mut out = alloc_zeroed::<f32>(4 * n);
        // Dropped before `out` and `img`: drains the queue on an error path.
        let mut drain = cl.queue_drain();
        let (src, dst) = if cl.uses_host_memory() {
            drain.armed = true;
            // SAFETY: `img` (borrowed for this call) and `out` hold 4n f32 each and stay
            // allocated and otherwise untouched until their kernels have finished (the
            // blocking read below, or `drain`); `out` is only read into through that blocking
            // read of `dst` into the same memory.
            unsafe {
                (
                    cl.buffer_over_host_read_only(img.as_raw(), "an f32 image")?,
                    cl.buffer_over_host(out.as_mut_ptr(), 4 * n, "the blurred image")?,
                )
            }
        } else {
            let mut src = large_buffer::<f32>(cl, 4 * n, "an f32 image")?;
            cl.write(&mut src, 0, img.as_raw())?;
            (src, large_buffer::<f32>(cl, 4 * n, "the blurred image")?)
        };
        cl_passes::<f32, f32>(
            cl,
            "f32",
            &src,
            &dst,
            Arg::buf(&wbuf),
            width,
            height,
            blur,
            16,
        )?;
        cl.read(&dst, 0, &mut out)?;
        drain.armed = false;
        drop((src, dst));
        out
    };
    Rgba32FImage::from_raw(width, height, out).ok_or(Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}

/// How an image larger than one buffer is blurred: bands of `rows` output rows, each taking
/// its `2w + 1` taps in chunks of `k` (a window of `rows + k - 1` intermediate rows a chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BandPlan {
    rows: usize,
    k: usize,
}

/// The bands for an image `width` pixels wide under a cap of `limit` bytes a buffer: every
/// buffer of a band (input window, intermediate window, accumulator, result) takes at most
/// 16 bytes a pixel, so a window of `rows + k - 1 ≤ limit / (16 · width)` rows fits. An error
/// when not even one row fits.
fn band_plan(limit: u64, width: u32, height: u32, taps: usize) -> Result<BandPlan> {
    let row_bytes = 16 * width as u64;
    // The band kernels index with 32 bits: at most 2^32 bytes (2^30 values) a buffer.
    let cap = limit.min(1 << 32);
    let fit = (cap / row_bytes.max(1)) as usize;
    if fit == 0 {
        return Err(too_large(
            "one image row of the blur (with its intermediate and accumulator rows, 16 bytes a pixel)",
            row_bytes,
            limit,
        ));
    }
    let k = if 2 * taps <= fit {
        taps
    } else {
        (fit / 2).max(1)
    };
    let rows = (fit + 1 - k).min(height as usize).max(1);
    Ok(BandPlan { rows, k })
}

/// The horizontal pass over `rows` whole rows of `src` into `t`, on either kernel layout.
#[allow(clippy::too_many_arguments)]
fn h_pass<S, D>(
    cl: &Arc<ClEngine>,
    kind: &'static str,
    src: &opencl3::memory::Buffer<S>,
    t: &opencl3::memory::Buffer<D>,
    weights: Arg,
    width: u32,
    rows: u32,
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<opencl3::event::Event> {
    let (hk, hk_direct) = match kind {
        "u8" => ("blur_h_u8", "blur_h_u8_direct"),
        _ => ("blur_h_f32", "blur_h_f32_direct"),
    };
    let w = blur.radius;
    let code = blur.border.code();
    if cl.tuning.contiguous {
        let groups = (rows as usize).clamp(1, cl.tuning.max_groups);
        let args = [
            Arg::buf(src),
            Arg::U32(width),
            Arg::U32(rows),
            weights,
            Arg::U32(w),
            Arg::U32(code),
            Arg::buf(t),
        ];
        return cl.launch("blur", hk, &args, groups, 1);
    }
    let tile = TILE_ITEMS * TILE_PX;
    let tiles = (width as usize).div_ceil(tile);
    let groups = tiles * rows as usize;
    let local_bytes = (tile + 2 * w as usize) * px_bytes;
    let mut args = vec![
        Arg::buf(src),
        Arg::U32(width),
        Arg::U32(rows),
        weights,
        Arg::U32(w),
        Arg::U32(code),
        Arg::buf(t),
        Arg::U32(tiles as u32),
    ];
    if (local_bytes as u64) + 1024 <= cl.info.local_mem_bytes {
        args.push(Arg::Local(local_bytes));
        cl.launch("blur", hk, &args, groups * TILE_ITEMS, TILE_ITEMS)
    } else {
        cl.launch("blur", hk_direct, &args, groups * TILE_ITEMS, TILE_ITEMS)
    }
}

/// The blur of an image larger than one buffer, in bands of output rows (see [`band_plan`]).
///
/// For each band `y0..y1` and chunk of taps `i0..i1`, the host gathers the input rows of the
/// virtual rows `y0 - w + i0 .. y1 - w + i1 - 1`, each mapped through the border
/// ([`Border::map`]; a zero row for [`Border::Zero`]), into one contiguous staging window;
/// the device filters the window's rows horizontally (the horizontal border applies inside
/// each whole row) and adds taps `i0..i1` of the vertical pass to the band's accumulator, in
/// tap order. The vertical border is thereby applied on the host, at the real image edges
/// only, for any radius (a radius above the image height maps rows many times, as the
/// one-buffer kernels do). `fill(y, dst)` copies image row `y` (`epp · width` elements).
/// Returns the result on the host, `epp · width · height` elements in scan order.
#[allow(clippy::too_many_arguments)]
fn cl_banded<S, D, A>(
    cl: &Arc<ClEngine>,
    kind: &'static str,
    width: u32,
    height: u32,
    epp: usize,
    blur: &GaussianBlur,
    weights: Arg,
    px_bytes: usize,
    fill: impl Fn(usize, &mut [S]),
) -> Result<Vec<S>>
where
    S: bytemuck::Pod + Default,
{
    let w = blur.radius as usize;
    let taps = 2 * w + 1;
    let plan = band_plan(cl.max_buffer_bytes, width, height, taps)?;
    let m = epp * width as usize; // source elements a row
    let nv = 4 * width as usize; // intermediate / accumulator values a row
    let window = plan.rows + plan.k - 1;
    let mut stage = cl.buffer::<S>(window * m, "a band of the blur's input")?;
    let t = cl.buffer::<D>(window * nv, "a band of the blur's intermediate")?;
    let acc = cl.buffer::<A>(plan.rows * nv, "a band of the blur's accumulator")?;
    let dst = cl.buffer::<S>(plan.rows * m, "a band of the blurred image")?;
    let vk = match kind {
        "u8" => "blur_band_v_u8",
        _ => "blur_band_v_f32",
    };
    let mut host = vec![S::default(); window * m];
    let mut out = vec![S::default(); height as usize * m];
    let mut kernel_ns = (0u64, 0u64);
    let mut y0 = 0usize;
    while y0 < height as usize {
        let rows = plan.rows.min(height as usize - y0);
        let mut i0 = 0usize;
        while i0 < taps {
            let k = plan.k.min(taps - i0);
            let win = rows + k - 1;
            let first = y0 as i64 - w as i64 + i0 as i64;
            for (r, dst_row) in host[..win * m].chunks_exact_mut(m).enumerate() {
                match blur.border.map(first + r as i64, height as u64) {
                    Some(y) => fill(y as usize, dst_row),
                    None => dst_row.fill(S::default()),
                }
            }
            cl.write(&mut stage, 0, &host[..win * m])?;
            let mut events = vec![h_pass(
                cl, kind, &stage, &t, weights, width, win as u32, blur, px_bytes,
            )?];
            let total = rows * nv;
            let (global, local) = if cl.tuning.contiguous {
                (rows.clamp(1, cl.tuning.max_groups), 1)
            } else {
                let wg = cl.tuning.wg.max(1);
                (total.div_ceil(wg).clamp(1, cl.tuning.max_groups) * wg, wg)
            };
            let args = [
                Arg::buf(&t),
                Arg::U32(nv as u32),
                Arg::U32(rows as u32),
                weights,
                Arg::U32(i0 as u32),
                Arg::U32(k as u32),
                Arg::buf(&acc),
                Arg::U32((i0 == 0) as u32),
                Arg::U32((i0 + k == taps) as u32),
                Arg::buf(&dst),
            ];
            events.push(cl.launch("blur", vk, &args, global, local)?);
            cl.finish(&events)?;
            let (sum, span) = crate::opencl::last_kernel_ns().unwrap_or((0, 0));
            kernel_ns.0 += sum;
            kernel_ns.1 += span;
            i0 += k;
        }
        cl.read(&dst, 0, &mut out[y0 * m..(y0 + rows) * m])?;
        y0 += rows;
    }
    // The kernel time of the whole blur, every band and chunk (the spans of its waits added
    // up: the host's work between them is not device time).
    crate::opencl::set_last_kernel_ns(Some(kernel_ns));
    Ok(out)
}

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
                (
                    what,
                    ("blur", s.variant(w)),
                    "blur_band_u8",
                    s.local_bytes(w) as u64,
                )
            })
            .collect()
        });
    }

    #[test]
    fn fixed_weights_are_symmetric_exact_and_close() {
        for w in 1..=200u32 {
            for s in [w as f64 / 2.0, 0.3, 1.0, w as f64 * 3.0] {
                let b = GaussianBlur::new(w).sigma(s);
                let q = b.weights_fixed().unwrap();
                let n = b.weights_f64().unwrap();
                assert_eq!(q.iter().map(|&x| x as u64).sum::<u64>(), 65536);
                for i in 0..q.len() {
                    assert!(
                        (q[i] as f64 - n[i] * 65536.0).abs() < 1.0,
                        "w {w} s {s} i {i}"
                    );
                    assert_eq!(q[i], q[q.len() - 1 - i]);
                }
            }
        }
    }
}
