//! What an engine does with held images besides the operations: `Engine.upload`,
//! `gaussian_blur_device` (both through [`hold`]), `crop` and `assemble`.

use crate::errors::{value_error, IntoPyResult};
use crate::formats::{self, any_image, FormatPixel, Job};
use crate::held::{AnyHeld, DeviceImage};
use clpix::{DeviceImage as Held, Engine, GaussianBlur, IntoImage};
use pyo3::prelude::*;

/// The image `job` makes of `img` (any format) and leaves on the engine, as a `DeviceImage` of
/// `img`'s shape and dtype.
pub(crate) fn hold<J: Job<Out = AnyHeld>>(
    py: Python<'_>,
    engine: &Engine,
    img: &Bound<'_, PyAny>,
    job: J,
) -> PyResult<DeviceImage> {
    let image = any_image(img)?;
    let (shape, dtype) = (image.shape(), image.dtype());
    let held = formats::run(py, engine, &image, job)?;
    Ok(DeviceImage { held, shape, dtype })
}

/// The image held by the engine (`Engine.upload`).
pub(crate) struct UploadJob;

impl Job for UploadJob {
    type Out = AnyHeld;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        img: I,
    ) -> clpix::Result<AnyHeld> {
        engine.upload(img).map(P::any_held)
    }
}

/// The blur kept on the engine (`Engine.gaussian_blur_device`).
pub(crate) struct BlurDeviceJob(pub(crate) GaussianBlur);

impl Job for BlurDeviceJob {
    type Out = AnyHeld;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        img: I,
    ) -> clpix::Result<AnyHeld> {
        engine.gaussian_blur_device(img, &self.0).map(P::any_held)
    }
}

/// `Engine.crop`: the window `[y, x, height, width]` of `img`, held.
pub(crate) fn crop(
    py: Python<'_>,
    engine: &Engine,
    img: &DeviceImage,
    window: [i64; 4],
) -> PyResult<DeviceImage> {
    let names = ["y", "x", "height", "width"];
    let mut w = [0u32; 4];
    for ((v, out), name) in window.iter().zip(&mut w).zip(names) {
        *out = u32::try_from(*v)
            .map_err(|_| value_error(format!("invalid {name} = {v}: 0 to 2^32 - 1 pixels")))?;
    }
    let [y, x, height, width] = w;
    macro_rules! go {
        ($($v:ident),*) => {
            match &img.held {
                $(AnyHeld::$v(d) => AnyHeld::$v(
                    py.detach(|| engine.crop(d, x, y, width, height)).py()?,
                ),)*
            }
        };
    }
    let held = go!(Luma8, Luma16, LumaF32, Rgb8, Rgba8, Rgba16, RgbaF32);
    let mut shape = img.shape.clone();
    shape[..2].copy_from_slice(&[height as usize, width as usize]);
    Ok(DeviceImage {
        held,
        shape,
        dtype: img.dtype,
    })
}

/// `Engine.assemble`: rows of held images (arrays uploaded first) of one format as one.
pub(crate) fn assemble(
    py: Python<'_>,
    engine: &Engine,
    rows: &Bound<'_, PyAny>,
) -> PyResult<DeviceImage> {
    let rows: Vec<Vec<Bound<'_, PyAny>>> = rows.extract().map_err(|_| {
        crate::errors::type_error(
            "rows: a list of rows, each a list of DeviceImages or arrays".into(),
        )
    })?;
    let mut tiles: Vec<Vec<Bound<'_, DeviceImage>>> = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut out = Vec::with_capacity(row.len());
        for t in row {
            out.push(match t.cast::<DeviceImage>() {
                Ok(d) => d.clone(),
                Err(_) => Bound::new(py, hold(py, engine, t, UploadJob)?)?,
            });
        }
        tiles.push(out);
    }
    let Some(first) = tiles.iter().flatten().next().map(|t| t.get()) else {
        return Err(value_error("rows: no image to assemble".into()));
    };
    let (format, dtype, channels) = (first.format(), first.dtype, first.shape[2..].to_vec());
    if let Some(other) = tiles
        .iter()
        .flatten()
        .map(|t| t.get())
        .find(|t| t.format() != format)
    {
        return Err(value_error(format!(
            "rows: images of one format, but {} and {} {}",
            first.repr(),
            other.repr(),
            "are given"
        )));
    }
    macro_rules! go {
        ($($v:ident),*) => {
            match &first.held {
                $(AnyHeld::$v(_) => {
                    let grid: Vec<Vec<&Held<_>>> = tiles
                        .iter()
                        .map(|r| {
                            r.iter()
                                .filter_map(|t| match &t.get().held {
                                    AnyHeld::$v(d) => Some(d),
                                    _ => None,
                                })
                                .collect()
                        })
                        .collect();
                    let d = py.detach(|| engine.assemble(&grid)).py()?;
                    let (h, w) = (d.height(), d.width());
                    (AnyHeld::$v(d), h, w)
                })*
            }
        };
    }
    let (held, h, w) = go!(Luma8, Luma16, LumaF32, Rgb8, Rgba8, Rgba16, RgbaF32);
    let mut shape = vec![h as usize, w as usize];
    shape.extend(channels);
    Ok(DeviceImage { held, shape, dtype })
}
