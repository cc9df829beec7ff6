//! The RGBA8 blur's GPU variants: the tensor-core passes emulated, every per-radius kernel and shape, NVIDIA's byte permutes, and per-radius programs that do not build.

use super::*;

/// The radius-built passes on the tensor cores, their intrinsics emulated, on every device.
#[test]
pub(super) fn emulated_tensor_passes_match_cpu() {
    let mut tuning = emulated();
    tuning.blur.kernel = Some(BlurKernel::Radius);
    tuning.blur.tensor = Some((true, true));
    let engines = gpu_layout_engines_tuned(&tuning);
    let cpu = Engine::cpu();
    // Radii whose blocks read 2 to 9 halves of 16 rows (w = 1, 8; 17; 25, 32; 40; 48; 64: the
    // largest the passes take; from 33 their programs hold no CUDA-core passes), each a
    // program of its own to build (about 10 s on PoCL 3.1); images shorter than a block, than a
    // half, rows not a multiple of 16, widths not a multiple of a warp's 8 pixels or a group's
    // 32, strided.
    let radii = [1u32, 8, 17, 25, 32, 40, 48, 64];
    let fixed = [
        (make_image(1, 1, 0, Content::White, 1), 1, Border::Clamp),
        (
            make_image(37, 5, 0, Content::Random, 2),
            17,
            Border::Reflect,
        ),
        (make_image(70, 83, 3, Content::Random, 3), 25, Border::Zero),
        (make_image(33, 200, 0, Content::Random, 4), 32, Border::Wrap),
        (
            make_image(50, 130, 2, Content::Random, 7),
            48,
            Border::Reflect,
        ),
        (make_image(20, 3, 0, Content::Random, 8), 40, Border::Clamp),
        (make_image(90, 150, 0, Content::Random, 9), 64, Border::Wrap),
        (
            make_image(
                64,
                48,
                0,
                Content::TwoColours([0, 0, 0, 255], [255, 255, 255, 255]),
                5,
            ),
            8,
            Border::Clamp,
        ),
        (make_image(9, 300, 1, Content::Random, 6), 8, Border::Clamp),
    ];
    for (img, radius, border) in &fixed {
        let blur = GaussianBlur::new(*radius).border(*border);
        let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
        for e in &engines {
            let got = match e.gaussian_blur(img.view(), &blur) {
                Err(err) if refused_there(&err) => continue,
                got => got.unwrap(),
            };
            assert!(got == expected, "{} {img:?} {blur:?}", e.backend());
        }
    }
    let engines: Vec<&Engine> = engines.iter().collect();
    random_blurs_match_cpu(&engines, &radii, 12, "tensor passes, emulated");
}

/// A kernel shape: the blur kernels forced and the settings beside them.
pub(super) fn shape(kernel: BlurKernel, set: impl Fn(&mut Tuning)) -> Tuning {
    let mut t = env_tuning();
    t.blur.kernel = Some(kernel);
    set(&mut t);
    t
}

/// The per-radius shapes' tunings: the vertical passes' channels and horizontal pixels.
fn passes(c: u32, p: u32) -> Tuning {
    shape(BlurKernel::Radius, move |t| {
        t.blur.channels = Some(c);
        t.blur.hpixels = Some(p);
        t.blur.tensor = Some((false, false));
    })
}

/// The vertical pass as a ring of rows unrolled (`rows` 0), or in blocks of `rows` rows.
fn vertical(c: u32, rows: u32) -> Tuning {
    shape(BlurKernel::Radius, move |t| {
        t.blur.channels = Some(c);
        t.blur.vrows = Some(rows);
        t.blur.tensor = Some((false, false));
    })
}

/// The band kernel in the shape `s` names.
fn band_shape(s: &str) -> Tuning {
    let b = BlurBand::parse(s).expect("a band shape");
    shape(BlurKernel::Band, move |t| t.blur.band = Some(b))
}

/// The fused register kernel with `columns` blocks of `adjacent` columns a work-item, with
/// NVIDIA's byte permute (emulated) or shifts and masks.
fn blocks(columns: u32, adjacent: u32, permute: bool) -> Tuning {
    shape(BlurKernel::Registers, move |t| {
        t.blur.columns = Some(columns);
        t.blur.adjacent = Some(adjacent);
        t.blur.permute = Some(permute);
        t.emulate_nvidia = permute;
    })
}

/// Each shape at its radii against the CPU path: random blurs, and a strided image of two
/// horizontal tiles and several strips of rows at the shape's largest and a middle radius.
fn shapes_match_cpu(shapes: Vec<(Tuning, &[u32])>) {
    let cpu = Engine::cpu();
    for (tuning, radii) in shapes {
        let engines = gpu_layout_engines_tuned(&tuning);
        let engines: Vec<&Engine> = engines.iter().collect();
        let label = format!("{:?}", tuning.blur);
        let fixed = [radii[radii.len() - 1], radii[radii.len() / 2]];
        random_blurs_match_cpu(&engines, radii, 16, &label);
        let img = make_image(1100, 270, 3, Content::Random, 11);
        for (radius, border) in [(fixed[0], Border::Reflect), (fixed[1], Border::Zero)] {
            let blur = GaussianBlur::new(radius).border(border);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for e in &engines {
                let got = match e.gaussian_blur(img.view(), &blur) {
                    Err(err) if refused_there(&err) => continue,
                    got => got.unwrap(),
                };
                assert!(got == expected, "{label} w = {radius}");
            }
        }
    }
}

// The GPU blur kernels built per radius, each shape at a few radii that cover it (the smallest,
// either side of the defaults' switches, the target's 8 and 25, the largest): each radius is a
// program of its own to build (seconds for the unrolled kernels, on each driver), so the shapes
// are four tests that the harness runs at once. About 46 programs: with 70, the GPU machine's
// NVIDIA and PoCL 5 drivers took over 250 s to build them.

/// The fused kernel (built for radii 1 to 16; by default GPUs take it up to 2) with one and two
/// blocks a work-item of one column, one block of 4 adjacent columns and two of 2, with shifts
/// and masks.
#[test]
pub(super) fn fused_blur_kernels_match_cpu() {
    let registers: &[u32] = &[1, 2, 3, 16];
    let adjacent: &[u32] = &[1, 2, 4];
    shapes_match_cpu(vec![
        (blocks(1, 1, false), registers),
        (blocks(2, 1, false), registers),
        (blocks(1, 4, false), adjacent),
        (blocks(2, 2, false), adjacent),
    ]);
}

/// The fused kernel with NVIDIA's byte permute, emulated: the accumulators (w = 1) and the
/// ring of rows; and the band kernel (1 to 32; by default GPUs take it from 3 to 20) in its
/// default shapes and in two more (256 work-items with one channel each; 32 rows a step, which
/// the local memory of a GPU holds only halved at w = 25).
#[test]
pub(super) fn permuted_and_band_blur_kernels_match_cpu() {
    let adjacent: &[u32] = &[1, 2, 4];
    let band: &[u32] = &[1, 3, 8, 9, 13, 20, 32];
    let band_more: &[u32] = &[3, 8, 25];
    shapes_match_cpu(vec![
        (blocks(1, 4, true), adjacent),
        (blocks(2, 1, true), &[2, 3]),
        (blocks(1, 2, true), &[2]),
        (shape(BlurKernel::Band, |_| {}), band),
        (band_shape("256,1,4,16"), band_more),
        (band_shape("128,2,8,32,64"), band_more),
    ]);
}

/// The radius-specialised two passes (1 to 32) in their default shapes and with 1 channel a
/// work-item of the vertical pass and 4 pixels a work-item of the horizontal pass ((1, 4) is a
/// default only for 9 <= w <= 12).
#[test]
pub(super) fn radius_blur_passes_match_cpu() {
    let radius: &[u32] = &[1, 8, 9, 13, 25, 32];
    let radius_more: &[u32] = &[1, 13, 25];
    shapes_match_cpu(vec![
        (shape(BlurKernel::Radius, |_| {}), radius),
        (passes(1, 4), radius_more),
    ]);
}

/// The radius passes with 2 and 4 channels a work-item of the vertical pass and 8 pixels of the
/// horizontal ((2, 8) and (4, 8) are no default), and the vertical pass as an unrolled ring of
/// rows in registers (where NVIDIA GPUs would take the tensor cores: their own test,
/// `emulated_tensor_passes_match_cpu`) and in blocks of 8 rows with 1 channel.
#[test]
pub(super) fn radius_blur_pass_shapes_match_cpu() {
    let radius_more: &[u32] = &[1, 13, 25];
    shapes_match_cpu(vec![
        (passes(2, 8), radius_more),
        (passes(4, 8), radius_more),
        (vertical(2, 0), radius_more),
        (vertical(1, 8), radius_more),
    ]);
}

/// The register blur's byte permutes forced, not emulated: on an NVIDIA GPU they give the CPU
/// path's bits; on any other device the call is an error that names the variable.
#[test]
pub(super) fn forced_byte_permutes_run_on_nvidia_and_are_refused_elsewhere() {
    let img = make_image(300, 90, 1, Content::Random, 12);
    let tuning = shape(BlurKernel::Registers, |t| t.blur.permute = Some(true));
    let engines = gpu_layout_engines_tuned(&tuning);
    assert!(!engines.is_empty() || std::env::var_os("CLPIX_REQUIRE_OPENCL").is_none());
    for w in [1u32, 2, 3, 4] {
        let blur = GaussianBlur::new(w).border(Border::Reflect);
        let expected = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        for e in &engines {
            let got = e.gaussian_blur(img.view(), &blur);
            native_or_refused(e, got, &expected, "blur.permute", &format!("w = {w}"));
        }
    }
}

/// A compiler that cannot build the per-radius programs: the variant section of a copy of the
/// kernels made invalid. The blur falls back to the generic two passes, with the same bits.
#[test]
pub(super) fn per_radius_programs_that_do_not_build_fall_back() {
    let cpu = Engine::cpu();
    let dir = kernel_dir_copy("broken-variant", |name, text| {
        if name == "blur/blur_radius.cl" {
            let at = text.find("#ifdef BLUR_W").unwrap() + "#ifdef BLUR_W".len();
            text.insert_str(at, "\nthis does not compile;\n");
        }
    });
    let mut tuning = env_tuning();
    tuning.kernel_dir = Some(dir.clone());
    let img = make_image(150, 40, 0, Content::Random, 7);
    for e in gpu_layout_engines_tuned(&tuning) {
        // The fused kernel (2), the band kernel (3, 9) and the radius-built passes (20) by
        // default.
        // Each radius three times: the first two calls run the generic passes (the second
        // starts the radius-built programs' builds, which fail in the background); the third
        // tries them and falls back.
        for radius in [2, 3, 9, 20] {
            let blur = GaussianBlur::new(radius);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for _ in 0..3 {
                let got = e.gaussian_blur(img.view(), &blur);
                assert!(
                    got.as_ref().ok() == Some(&expected),
                    "{}: {:?}",
                    e.backend(),
                    got.err()
                );
                e.wait_for_builds();
            }
        }
        // Only the generic programs were made ready.
        assert!(
            e.programs().iter().all(|p| !p.variant.contains("BLUR_W")),
            "{:?}",
            e.programs()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
