//! The blur of every format through the engine: RGBA f32 to its tuned path, the other formats
//! (and RGBA8 given as raw pixels) to `cpu_typed.rs` and `cl_typed.rs`.

use super::cl_typed::{BlurTo, cl_blur_raw};
use super::cpu_typed::cpu_blur_raw;
use super::family::typed_family;
use super::*;
use crate::device::RawSource;
use crate::engine::Backend;
use crate::image::RawView;
use crate::spec::Format;

/// The channel type of a pixel type.
pub(super) type Subpixel<P> = <P as image::Pixel>::Subpixel;

/// An image of pixels `P` owning its channel values.
pub(super) type Owned<P> = ImageBuffer<P, Vec<Subpixel<P>>>;

impl Engine {
    /// The blur of `raw` into `out` (its channel values, rows packed, as bytes; checked by the
    /// caller and aligned for the channel type).
    pub(crate) fn blur_raw_into(
        &self,
        src: RawSource<'_>,
        blur: &GaussianBlur,
        out: &mut [u8],
    ) -> Result<()> {
        if src.format() != Format::RgbaF32 {
            return self.raw_blur(src, blur, out);
        }
        // RGBA f32 by its tuned path from the host (its held images are `DeviceImageF32`).
        let host = src.host()?;
        let raw = host.raw();
        let out: &mut [f32] = bytemuck::try_cast_slice_mut(out)
            .map_err(|_| Error::invalid("out", "a buffer", "one aligned for f32 values"))?;
        let values: std::borrow::Cow<'_, [f32]> = match raw
            .packed_bytes()
            .and_then(|b| bytemuck::try_cast_slice::<u8, f32>(b).ok())
        {
            Some(v) => v.into(),
            None => (0..raw.height)
                .flat_map(|y| raw.row(y).chunks_exact(4))
                .map(bytemuck::pod_read_unaligned)
                .collect::<Vec<f32>>()
                .into(),
        };
        let img =
            F32View::from_raw(raw.width, raw.height, &values[..]).ok_or(Error::ImageTooLarge {
                width: raw.width as u64,
                height: raw.height as u64,
                reason: "the image's values do not match its size",
            })?;
        self.blur_f32_values(&img, blur, out)
    }

    /// The blur of `raw` (any format) by the kernels of every format, into `out`.
    pub(super) fn raw_blur(
        &self,
        src: RawSource<'_>,
        blur: &GaussianBlur,
        out: &mut [u8],
    ) -> Result<()> {
        if src.pixel_count() == 0 {
            return Ok(());
        }
        if blur.radius == 0 {
            // A copy, on the host.
            return cpu_blur_raw(&src.host()?.raw(), blur, out);
        }
        // Both paths write into `out`; the CPU one may run after the device's failed.
        let out = std::cell::RefCell::new(out);
        self.dispatch(
            typed_family(src.format()),
            &(src.format(), *blur),
            "gaussian_blur",
            src.pixel_count(),
            || cpu_blur_raw(&src.host()?.raw(), blur, &mut out.borrow_mut()),
            |cl| cl_blur_raw(cl, &src, blur, BlurTo::Host(&mut out.borrow_mut())).map(drop),
        )
    }
}

impl Engine {
    /// The blur of `src` (any format but RGBA8) kept on the engine: the storage of a held
    /// image of its format and size. On OpenCL the kernels' result stays in its buffer (one
    /// part, padded to whole chunks); what the CPU answers (radius 0, RGBA f32's tuned path,
    /// an image beyond one buffer, a device that cannot) is uploaded in parts.
    pub(super) fn blur_raw_device(
        &self,
        src: RawSource<'_>,
        blur: &GaussianBlur,
    ) -> Result<(u32, u32, Storage)> {
        let (width, height, format) = (src.width(), src.height(), src.format());
        check_pixel_count(width, height)?;
        blur.check()?;
        let len = src.pixel_count() as usize * format.bytes_per_pixel();
        // The blur into host memory, aligned for the channel type (4-byte words).
        let on_host = || -> Result<Vec<u8>> {
            let mut words = vec![0u32; len.div_ceil(4)];
            let bytes = &mut bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..len];
            self.blur_raw_into(src, blur, bytes)?;
            let mut out = bytemuck::cast_slice::<u32, u8>(&words).to_vec();
            out.truncate(len);
            Ok(out)
        };
        let cl = match &self.backend {
            Backend::Cpu => return Ok((width, height, Storage::Host(on_host()?))),
            Backend::OpenCl(cl) => cl,
        };
        let kept = match blur.radius == 0 || format == Format::RgbaF32 || len == 0 {
            true => None,
            false => self.dispatch(
                typed_family(format),
                &(format, *blur),
                "gaussian_blur",
                src.pixel_count(),
                || Ok(None),
                |cl| cl_blur_raw(cl, &src, blur, BlurTo::Held),
            )?,
        };
        let parts = match kept {
            Some((buffer, words)) => crate::device::DeviceParts {
                owner: cl.clone(),
                parts: vec![crate::device::Part {
                    buffer,
                    range: crate::opencl::PartRange {
                        first_row: 0,
                        rows: height,
                        x0: 0,
                        cols: width,
                    },
                    words,
                }],
            },
            // Answered on the host: uploaded as a held image of the format.
            None => {
                let bytes = on_host()?;
                let view = RawView {
                    data: &bytes,
                    width,
                    height,
                    stride: width as usize * format.bytes_per_pixel(),
                    format,
                };
                cl.upload_raw(&view)?
            }
        };
        Ok((width, height, Storage::OpenCl(parts)))
    }
}
