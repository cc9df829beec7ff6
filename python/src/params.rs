//! The parameters of `clpix.Engine`'s methods as Python passes them, checked: borders, orders,
//! extremes, bins, counts, blur parameters (a `ValueError` or `TypeError` that says what is
//! accepted).

use crate::errors::{invalid, value_error, IntoPyResult};
use clpix::{Bins, Border, CompactOrder, GaussianBlur};
use pyo3::prelude::*;

pub(crate) fn parse_border(border: &str) -> PyResult<Border> {
    match border {
        "clamp" => Ok(Border::Clamp),
        "reflect" => Ok(Border::Reflect),
        "wrap" => Ok(Border::Wrap),
        "zero" => Ok(Border::Zero),
        other => Err(invalid(
            "border",
            format!("{other:?}"),
            "\"clamp\", \"reflect\", \"wrap\" or \"zero\"",
        )),
    }
}

pub(crate) fn parse_order(order: &str) -> PyResult<CompactOrder> {
    match order {
        "scan" => Ok(CompactOrder::ScanOrder),
        "luminance" => Ok(CompactOrder::LuminanceDescending),
        other => Err(invalid(
            "order",
            format!("{other:?}"),
            "\"scan\" (scan order) or \"luminance\" (luminance, or a mono image's value, \
             descending; ties in scan order)",
        )),
    }
}

pub(crate) fn parse_extreme(which: &str) -> PyResult<clpix::Extreme> {
    match which {
        "brightest" => Ok(clpix::Extreme::Brightest),
        "darkest" => Ok(clpix::Extreme::Darkest),
        other => Err(invalid(
            "which",
            format!("{other:?}"),
            "\"brightest\" (largest luminance first) or \"darkest\" (smallest first)",
        )),
    }
}

/// The bins of a histogram: `count` bins over `range`, a sequence `(lo, hi)` (clpix's own
/// checks).
pub(crate) fn histogram_bins(count: i64, range: &Bound<'_, PyAny>) -> PyResult<Bins> {
    let count = u32::try_from(count)
        .map_err(|_| invalid("bins", count, "1 to 1,048,576 bins (clpix.MAX_BINS)"))?;
    let bounds: Vec<f64> = range.extract().map_err(|_| {
        crate::errors::type_error(format!(
            "range must be a sequence of two numbers (lo, hi); got {range}"
        ))
    })?;
    match bounds[..] {
        [lo, hi] => Bins::new(count, lo, hi).py(),
        _ => Err(value_error(format!(
            "range must be (lo, hi), two numbers; got {} of them",
            bounds.len()
        ))),
    }
}

/// A number of pixels to select (0 or more).
pub(crate) fn count(k: i64) -> PyResult<usize> {
    usize::try_from(k).map_err(|_| invalid("k", k, "a number of pixels, 0 or more"))
}

/// The blur's parameters (sigma defaults to radius / 2).
pub(crate) fn blur_params(radius: i64, sigma: Option<f64>, border: &str) -> PyResult<GaussianBlur> {
    let r = u32::try_from(radius)
        .map_err(|_| invalid("radius", radius, "0..=MAX_RADIUS (2^20) pixels"))?;
    let mut blur = GaussianBlur::new(r).border(parse_border(border)?);
    if let Some(s) = sigma {
        blur = blur.sigma(s);
    }
    Ok(blur)
}
