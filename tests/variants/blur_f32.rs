//! The f32 blur's GPU kernels, each forced, against the CPU path.

use super::*;

/// The f32 blur on GPUs: the tile kernel (`blur_fused_f32`, forced up to w = 16), the
/// register kernel built per radius with 4, 2 and 1 channels and 2 columns a work-item, the two
/// passes built per radius with 8 and 16 rows a work-item of the vertical pass, the generic two
/// passes, and the tile kernel with 32 KiB of local memory (w = 16 then takes the two passes),
/// against the CPU, bit for bit, on groups cut by the image's edges, every border, specials
/// (NaN, infinities, denormals, signed zeros) in the data.
#[test]
pub(super) fn f32_blur_kernels_match_cpu() {
    let kernel = |k: BlurF32Kernel, channels: Option<u32>| {
        let mut t = env_tuning();
        t.blur.f32_kernel = Some(k);
        t.blur.f32_channels = channels;
        t
    };
    let mut small = kernel(BlurF32Kernel::Tile, None);
    small.max_local_memory = Some(32 << 10);
    let cpu = Engine::cpu();
    let mut s = 5u64;
    let specials = [f32::NAN, f32::INFINITY, -0.0, f32::from_bits(1000), -3.0e38];
    for (name, tuning) in [
        ("tile", kernel(BlurF32Kernel::Tile, None)),
        ("registers", kernel(BlurF32Kernel::Registers, None)),
        ("registers 1", kernel(BlurF32Kernel::Registers, Some(1))),
        ("registers 2", kernel(BlurF32Kernel::Registers, Some(2))),
        ("registers 2 columns", {
            let mut t = kernel(BlurF32Kernel::Registers, None);
            t.blur.f32_columns = Some(2);
            t
        }),
        ("band", kernel(BlurF32Kernel::Band, None)),
        ("radius", kernel(BlurF32Kernel::Radius, None)),
        ("radius, vertical in columns", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(0);
            t
        }),
        ("radius, vertical in columns of 16 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(0);
            t.blur.f32_rows = Some(16);
            t
        }),
        ("radius, vertical in blocks of 4 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(4);
            t
        }),
        ("radius, vertical in blocks of 16 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(16);
            t
        }),
        ("two-pass", kernel(BlurF32Kernel::TwoPass, None)),
        ("32 KiB", small),
    ] {
        let engines = gpu_layout_engines_tuned(&tuning);
        for (w, h, r, border) in [
            (1u32, 1u32, 1u32, Border::Clamp),
            (33, 31, 2, Border::Reflect),
            (70, 65, 8, Border::Zero),
            (31, 97, 16, Border::Wrap),
            (64, 40, 15, Border::Zero),
            (5, 200, 3, Border::Reflect),
            (131, 90, 25, Border::Clamp),
            (300, 21, 20, Border::Reflect),
        ] {
            let img = image::Rgba32FImage::from_fn(w, h, |_, _| {
                let mut px = [0f32; 4];
                for v in &mut px {
                    let x = splitmix(&mut s);
                    *v = match x % 50 {
                        k @ 0..=4 => specials[k as usize],
                        _ => (x >> 20) as u16 as f32 / 311.0 - 100.0,
                    };
                }
                image::Rgba(px)
            });
            let blur = GaussianBlur::new(r).border(border);
            let expected = cpu.gaussian_blur_f32(&img, &blur).unwrap();
            // Bit for bit; a NaN is any NaN (NVIDIA's fma returns the canonical one).
            let bits = |i: &image::Rgba32FImage| {
                let bits = |v: &f32| {
                    if v.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        v.to_bits()
                    }
                };
                i.as_raw().iter().map(bits).collect::<Vec<_>>()
            };
            for e in &engines {
                let got = match e.gaussian_blur_f32(&img, &blur) {
                    Err(err) if refused_there(&err) => continue,
                    got => got.unwrap(),
                };
                assert!(
                    bits(&got) == bits(&expected),
                    "{name} {} {w}x{h} w {r} {border:?}",
                    e.backend()
                );
            }
        }
    }
}
