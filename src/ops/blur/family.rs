//! The blurs' kernel families and their known-answer probes (see [`Family`]): each probes at
//! the radius of its first call, whose programs that call builds anyway.

use super::GaussianBlur;
use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::image::RawView;
use crate::ops::probe::{PROBE_SIZE, compare, probe_image, probe_raw, unknown};
use crate::spec::Format;

/// The RGBA8 blur's kernels.
pub(crate) static FAMILY: Family = Family {
    name: "blur",
    program: PROGRAM,
    probe,
};

/// The f32 blur's kernels.
pub(crate) static F32_FAMILY: Family = Family {
    name: "blur_f32",
    program: PROGRAM,
    probe: probe_f32,
};

/// The call's blur, or a default where the call gave none.
fn blur_of(call: &dyn std::any::Any) -> GaussianBlur {
    call.downcast_ref::<GaussianBlur>()
        .cloned()
        .unwrap_or_else(|| GaussianBlur::new(2))
}

fn probe(e: &Engine, _: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let (img, blur) = (probe_image(), blur_of(call));
    compare(
        "the blur",
        e.gaussian_blur(&img, &blur),
        Engine::cpu().gaussian_blur(&img, &blur),
    )
}

fn probe_f32(e: &Engine, _: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let blur = blur_of(call);
    let bytes = probe_image();
    // Values of every sign and size, a zero and a negative zero among them.
    let img = image::Rgba32FImage::from_fn(PROBE_SIZE.0, PROBE_SIZE.1, |x, y| {
        let p = bytes.get_pixel(x, y).0;
        image::Rgba(
            p.map(|c| (c as f32 - 128.0) * 0.37)
                .map(|v| if v == 0.0 { -0.0 } else { v }),
        )
    });
    compare(
        "the f32 blur",
        e.gaussian_blur_f32(&img, &blur),
        Engine::cpu().gaussian_blur_f32(&img, &blur),
    )
}

crate::ops::common::format_families!(pub(super) fn typed_family, "blur_typed", super::kernels::TYPED_PROGRAM, probe_typed);

/// The blur of `view` by `e` as channel values, every NaN made one NaN (a NaN's sign and
/// payload are the hardware's, docs/SPEC.md).
pub(super) fn blurred_values(
    e: &Engine,
    view: RawView<'_>,
    blur: &GaussianBlur,
) -> Result<Vec<u32>> {
    let bytes = view.row_bytes() * view.height as usize;
    let mut words = vec![0u32; bytes.div_ceil(4)];
    e.raw_blur(
        crate::device::RawSource::Host(view),
        blur,
        &mut bytemuck::cast_slice_mut(&mut words)[..bytes],
    )?;
    if view.format.is_float() {
        for v in &mut words {
            if f32::from_bits(*v).is_nan() {
                *v = f32::NAN.to_bits();
            }
        }
    }
    Ok(words)
}

fn probe_typed(e: &Engine, op: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some((format, blur)) = call.downcast_ref::<(Format, GaussianBlur)>() else {
        return Err(unknown(op));
    };
    let raw = probe_raw(*format);
    compare(
        "the blur",
        blurred_values(e, raw.view(), blur),
        blurred_values(&Engine::cpu(), raw.view(), blur),
    )
}
