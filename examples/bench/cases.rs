//! The benchmarked operations on images: each case's name, the bytes it moves a pixel and how it runs (blurs of host, reused and device images, RGBA8 and f32).

use super::*;

/// One benchmarked operation: its name, the bytes it must move per pixel (for GB/s) and how
/// to run it on an input.
pub struct Case {
    pub name: &'static str,
    pub bytes_per_pixel: f64,
    pub content: Content,
    pub run: fn(&Engine, ImageInput<'_>) -> clpix::Result<()>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Content {
    Random,
    Constant,
    /// Black with a white 5×5 spot in every 256×256 block: a star field or motion-capture
    /// markers (0.04% of the pixels bright).
    Spots,
}

/// A case blurring the RGBA8 image on the device at radius `$w`.
macro_rules! blur_case {
    ($name:literal, $w:literal) => {
        Case {
            name: $name,
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| {
                e.gaussian_blur_device(i, &clpix::GaussianBlur::new($w))
                    .map(drop)
            },
        }
    };
}

/// An f32 blur row at radius `$w` run by `$run`: [`blur_f32_case`] (a host f32 image) or
/// [`blur_f32_device_case`] (an image kept on the engine).
macro_rules! blur_f32_row {
    ($name:literal, $run:ident, $w:literal) => {
        Case {
            name: $name,
            bytes_per_pixel: 32.0,
            content: Content::Random,
            run: |e, i| $run(e, i, $w),
        }
    };
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "brightest",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.extreme(i, clpix::Extreme::Brightest).map(drop),
        },
        Case {
            name: "darkest",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.extreme(i, clpix::Extreme::Darkest).map(drop),
        },
        Case {
            name: "luminance_stats",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.luminance_stats(i).map(drop),
        },
        blur_case!("blur_w2", 2),
        blur_case!("blur_w8", 8),
        blur_case!("blur_w25", 25),
        blur_f32_row!("blur_f32_w2", blur_f32_case, 2),
        blur_f32_row!("blur_f32_w8", blur_f32_case, 8),
        blur_f32_row!("blur_f32_w25", blur_f32_case, 25),
        blur_f32_row!("blur_f32_device_w8", blur_f32_device_case, 8),
        Case {
            name: "histogram_rgba",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.histogram_rgba(i).map(drop),
        },
        Case {
            name: "histogram_rgba",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: |e, i| e.histogram_rgba(i).map(drop),
        },
        Case {
            name: "histogram_luminance",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.histogram_luminance(i).map(drop),
        },
        Case {
            name: "histogram_luminance",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: |e, i| e.histogram_luminance(i).map(drop),
        },
        // Threshold 512 keeps 49.9% of the pixels of the Random image (measured: its L has
        // median 511), the anchors' "about half kept".
        Case {
            name: "compact",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.compact(i, 512, clpix::CompactOrder::ScanOrder).map(drop),
        },
        Case {
            name: "compact_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| {
                e.compact(i, 512, clpix::CompactOrder::LuminanceDescending)
                    .map(drop)
            },
        },
        Case {
            name: "compacted_image",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: compacted_image_scan,
        },
        Case {
            name: "compacted_image",
            bytes_per_pixel: 4.0,
            content: Content::Spots,
            run: compacted_image_scan,
        },
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: compacted_image_sorted,
        },
        // Every pixel kept, all with one luminance: on GPUs every group's pixels have one
        // digit in both radix passes, so each pass is a relocation in scan order.
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: compacted_image_sorted,
        },
        // Bright spots on black: most groups keep nothing, and return at once on GPUs.
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Spots,
            run: compacted_image_sorted,
        },
        Case {
            name: "brightest_k16_d0",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.extremes(i, clpix::Extreme::Brightest, 16, 0.0).map(drop),
        },
        Case {
            name: "brightest_k16_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.extremes(i, clpix::Extreme::Brightest, 16, 20.0).map(drop),
        },
        Case {
            name: "brightest_k1024_d0",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| {
                e.extremes(i, clpix::Extreme::Brightest, 1024, 0.0)
                    .map(drop)
            },
        },
        Case {
            name: "brightest_k1024_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| {
                e.extremes(i, clpix::Extreme::Brightest, 1024, 20.0)
                    .map(drop)
            },
        },
        Case {
            name: "darkest_k1024_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.extremes(i, clpix::Extreme::Darkest, 1024, 20.0).map(drop),
        },
        // Other operations add their cases here.
    ]
}

/// More blur radii, run only when named in `--ops`: where the GPU's kernels cross over
/// (`blur.kernel` forces one).
pub(super) fn radius_cases() -> Vec<Case> {
    vec![
        blur_case!("blur_w1", 1),
        blur_case!("blur_w3", 3),
        blur_case!("blur_w4", 4),
        blur_case!("blur_w5", 5),
        blur_case!("blur_w6", 6),
        blur_case!("blur_w12", 12),
        blur_case!("blur_w16", 16),
        blur_case!("blur_w20", 20),
        blur_case!("blur_w21", 21),
        blur_case!("blur_w32", 32),
        blur_case!("blur_w40", 40),
        blur_case!("blur_w48", 48),
        blur_case!("blur_w64", 64),
        blur_f32_row!("blur_f32_device_w2", blur_f32_device_case, 2),
        blur_f32_row!("blur_f32_device_w1", blur_f32_device_case, 1),
        blur_f32_row!("blur_f32_device_w3", blur_f32_device_case, 3),
        blur_f32_row!("blur_f32_device_w4", blur_f32_device_case, 4),
        blur_f32_row!("blur_f32_device_w5", blur_f32_device_case, 5),
        blur_f32_row!("blur_f32_device_w6", blur_f32_device_case, 6),
        blur_f32_row!("blur_f32_device_w12", blur_f32_device_case, 12),
        blur_f32_row!("blur_f32_device_w16", blur_f32_device_case, 16),
        blur_f32_row!("blur_f32_device_w25", blur_f32_device_case, 25),
        blur_f32_row!("blur_f32_device_w32", blur_f32_device_case, 32),
        Case {
            name: "blur_host_w2",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| e.gaussian_blur(i, &clpix::GaussianBlur::new(2)).map(drop),
        },
        Case {
            name: "blur_into_w2",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| blur_into_case(e, i, 2),
        },
        Case {
            name: "blur_into_w8",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| blur_into_case(e, i, 8),
        },
        blur_f32_row!("blur_f32_into_w8", blur_f32_into_case, 8),
    ]
}

/// The RGBA8 blur of a host image into one result image reused call after call
/// (`Engine::gaussian_blur_into`; made once per thread and size).
pub(super) fn blur_into_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static OUT: RefCell<image::RgbaImage> = RefCell::new(image::RgbaImage::new(0, 0));
    }
    OUT.with(|c| {
        let mut out = c.borrow_mut();
        if out.dimensions() != (i.width(), i.height()) {
            *out = image::RgbaImage::new(i.width(), i.height());
        }
        e.gaussian_blur_into(i, &clpix::GaussianBlur::new(radius), &mut out)
    })
}

/// [`blur_f32_case`] into one result image reused call after call
/// (`Engine::gaussian_blur_f32_into`).
pub(super) fn blur_f32_into_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static IO: RefCell<Option<(image::Rgba32FImage, image::Rgba32FImage)>> =
            const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    IO.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|(f, _)| f.dimensions() != (w, h)) {
            *c = None;
            *c = Some((f32_image(e, i)?, image::Rgba32FImage::new(w, h)));
        }
        let (img, out) = c.as_mut().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32_into",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32_into(img, &clpix::GaussianBlur::new(radius), out)
    })
}

/// The f32 blur of an f32 image kept on the engine (`Engine::upload_f32` once per thread and
/// size, not timed after the first call): the result stays there, nothing crosses the bus.
pub(super) fn blur_f32_device_case(
    e: &Engine,
    i: ImageInput<'_>,
    radius: u32,
) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static DEV: RefCell<Option<clpix::DeviceImageF32>> = const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    DEV.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|d| (d.width(), d.height()) != (w, h)) {
            *c = None; // the old image goes before the new one is made
            *c = Some(e.upload_f32(&f32_image(e, i)?)?);
        }
        let d = c.as_ref().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32_device",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32_device(d, &clpix::GaussianBlur::new(radius))
            .map(drop)
    })
}

/// The f32 blur takes host f32 images only: the RGBA8 input converted once per thread and
/// size (not timed after the first call), upload and download included in the timing.
pub(super) fn blur_f32_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static F32: RefCell<Option<image::Rgba32FImage>> = const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    F32.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|f| f.dimensions() != (w, h)) {
            *c = Some(f32_image(e, i)?);
        }
        let f = c.as_ref().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32(f, &clpix::GaussianBlur::new(radius))
            .map(drop)
    })
}

/// The bench's RGBA8 input as a host f32 image.
pub(super) fn f32_image(e: &Engine, i: ImageInput<'_>) -> clpix::Result<image::Rgba32FImage> {
    let host = match i {
        ImageInput::Host(v) => v.to_image(),
        ImageInput::Device(d) => e.download(d)?,
    };
    Ok(image::DynamicImage::ImageRgba8(host).into_rgba32f())
}
