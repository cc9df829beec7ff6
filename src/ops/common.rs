//! What the operations' folders share beneath them: the per-format kernel families and the
//! RGBA8 paths' results as generic result types.

/// `fn $lookup(format) -> &'static Family`: seven kernel families of `$program` checked by
/// `$probe`, one per pixel format (each format a build of its own, with its own verdict), named
/// `<$prefix>_mono8`, `_mono16`, `_mono_f32`, `_rgb8`, `_rgba8`, `_rgba16`, `_rgba_f32`.
macro_rules! format_families {
    ($vis:vis fn $lookup:ident, $prefix:literal, $program:expr, $probe:expr) => {
        $vis fn $lookup(format: $crate::spec::Format) -> &'static $crate::engine::Family {
            use $crate::engine::Family;
            use $crate::spec::Format;
            macro_rules! one {
                ($suffix:literal) => {
                    Family { name: concat!($prefix, $suffix), program: $program, probe: $probe }
                };
            }
            static MONO8: Family = one!("_mono8");
            static MONO16: Family = one!("_mono16");
            static MONO_F32: Family = one!("_mono_f32");
            static RGB8: Family = one!("_rgb8");
            static RGBA8: Family = one!("_rgba8");
            static RGBA16: Family = one!("_rgba16");
            static RGBA_F32: Family = one!("_rgba_f32");
            match format {
                Format::Luma8 => &MONO8,
                Format::Luma16 => &MONO16,
                Format::LumaF32 => &MONO_F32,
                Format::Rgb8 => &RGB8,
                Format::Rgba8 => &RGBA8,
                Format::Rgba16 => &RGBA16,
                Format::RgbaF32 => &RGBA_F32,
            }
        }
    };
}
pub(crate) use format_families;

/// `value` as the type `B` it is (an RGBA8 path's result as the generic result type of an
/// `Rgba<u8>` call), an error if it were not.
pub(crate) fn same_type<A: 'static, B: 'static>(value: A) -> crate::error::Result<B> {
    let boxed: Box<dyn std::any::Any> = Box::new(value);
    boxed.downcast::<B>().map(|b| *b).map_err(|_| {
        crate::error::Error::invalid(
            "pixel type",
            std::any::type_name::<B>(),
            "the pixel type of the input",
        )
    })
}
