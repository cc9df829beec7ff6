//! Windows of held images (`Engine::crop`, `Engine::assemble`) of every pixel format: a crop
//! holds exactly the host image's rectangle, an assembly of a random tiling gives the image
//! back, on the CPU engine and every OpenCL device, whole and in parts of a few KiB (rows split
//! over parts, and rows longer than a buffer, which the host assembles); tiles held by another
//! engine are read back; windows outside the image and tiles that do not fit are refused.

mod common;

use clpix::{Engine, Pixel};
use common::formats::{Chan, channels};
use common::*;
use image::{ImageBuffer, Luma, Rgb, Rgba};
use proptest::prelude::*;

/// Rows of held mono16 tiles.
type Grid<'a> = Vec<Vec<&'a clpix::DeviceImage<Luma<u16>>>>;

type Img<P> = ImageBuffer<P, Vec<<P as image::Pixel>::Subpixel>>;

/// The host rectangle of `img`: `w`×`h` from (`x`, `y`), its bytes.
fn host_window<P: Pixel>(img: &Img<P>, x: u32, y: u32, w: u32, h: u32) -> Vec<u8> {
    let bpp = P::FORMAT.bytes_per_pixel();
    let bytes: &[u8] = bytemuck::cast_slice(img.as_raw());
    let row = img.width() as usize * bpp;
    (y as usize..(y + h) as usize)
        .flat_map(|r| {
            let s = r * row + x as usize * bpp;
            bytes[s..s + w as usize * bpp].to_vec()
        })
        .collect()
}

/// `v`'s bytes as a host image of `P`, `w`×`h`.
fn image_of<P: Pixel>(bytes: Vec<u8>, w: u32, h: u32) -> Img<P> {
    let channels: Vec<P::Subpixel> = bytemuck::pod_collect_to_vec(&bytes);
    Img::<P>::from_raw(w, h, channels).expect("the bytes of a w×h image")
}

/// Cuts of `0..len` at the sorted, distinct points of `picks` inside it.
fn cuts(len: u32, picks: &[u32]) -> Vec<(u32, u32)> {
    let mut at: Vec<u32> = picks
        .iter()
        .map(|p| p % len.max(1))
        .filter(|&p| p > 0)
        .collect();
    at.sort_unstable();
    at.dedup();
    at.push(len);
    let mut start = 0;
    at.into_iter()
        .map(|end| {
            let c = (start, end - start);
            start = end;
            c
        })
        .collect()
}

#[derive(Debug)]
struct Case {
    w: u32,
    h: u32,
    kind: u8,
    seed: u64,
    window: (u32, u32, u32, u32),
    rows: Vec<u32>,
    cols: Vec<u32>,
}

fn windows_of<P>(c: &Case) -> Result<(), TestCaseError>
where
    P: Pixel,
    P::Subpixel: Chan,
{
    let (data, _) = channels::<P>(c.w, c.h, 0, c.kind, c.seed);
    let img = Img::<P>::from_raw(c.w, c.h, data).expect("a packed image");
    let fail = |e: clpix::Error| TestCaseError::fail(e.to_string());
    let bytes = |i: &Img<P>| bytemuck::cast_slice::<_, u8>(i.as_raw()).to_vec();
    let (x, y) = (c.window.0 % c.w, c.window.1 % c.h);
    let (w, h) = (c.window.2 % (c.w - x + 1), c.window.3 % (c.h - y + 1));
    let cpu = Engine::cpu();
    for e in cpu_opencl_and_capped_engines() {
        let held = e.upload(&img).map_err(fail)?;
        let crop = e.crop(&held, x, y, w, h).map_err(fail)?;
        prop_assert_eq!((crop.width(), crop.height()), (w, h));
        let got = e.download(&crop).map_err(fail)?;
        prop_assert!(
            bytes(&got) == host_window(&img, x, y, w, h),
            "{:?} crop {w}×{h} at ({x}, {y}) of {}×{} on {}",
            P::FORMAT,
            c.w,
            c.h,
            e.backend()
        );
        // An operation on the crop reads the crop's pixels only (its padding is zeros).
        let want = image_of::<P>(host_window(&img, x, y, w, h), w, h);
        prop_assert_eq!(
            format!("{:?}", e.luminance_stats(&crop)),
            format!("{:?}", cpu.luminance_stats(&want))
        );
        // The image cut into a random grid of tiles, every other one held by the CPU engine,
        // assembled again.
        let rows = cuts(c.h, &c.rows);
        let cols = cuts(c.w, &c.cols);
        let mut tiles = Vec::new();
        for (i, &(ty, th)) in rows.iter().enumerate() {
            let mut row = Vec::new();
            for (j, &(tx, tw)) in cols.iter().enumerate() {
                let tile = image_of::<P>(host_window(&img, tx, ty, tw, th), tw, th);
                let by = if (i + j) % 2 == 0 { e } else { &cpu };
                row.push(by.upload(&tile).map_err(fail)?);
            }
            tiles.push(row);
        }
        let refs: Vec<Vec<&clpix::DeviceImage<P>>> =
            tiles.iter().map(|r| r.iter().collect()).collect();
        let whole = e.assemble(&refs).map_err(fail)?;
        let got = e.download(&whole).map_err(fail)?;
        prop_assert!(
            bytes(&got) == bytes(&img),
            "{:?} assembled from {} × {} tiles on {}",
            P::FORMAT,
            rows.len(),
            cols.len(),
            e.backend()
        );
        prop_assert_eq!(
            format!("{:?}", e.extreme(&whole, clpix::Extreme::Brightest)),
            format!("{:?}", cpu.extreme(&img, clpix::Extreme::Brightest))
        );
    }
    Ok(())
}

fn case() -> impl Strategy<Value = Case> {
    (
        1u32..80,
        1u32..60,
        0u8..4,
        any::<u64>(),
        any::<(u32, u32, u32, u32)>(),
        proptest::collection::vec(any::<u32>(), 0..4),
        proptest::collection::vec(any::<u32>(), 0..4),
    )
        .prop_map(|(w, h, kind, seed, window, rows, cols)| Case {
            w,
            h,
            kind,
            seed,
            window,
            rows,
            cols,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn crops_and_assemblies_of_every_format(c in case()) {
        windows_of::<Luma<u8>>(&c)?;
        windows_of::<Luma<u16>>(&c)?;
        windows_of::<Luma<f32>>(&c)?;
        windows_of::<Rgb<u8>>(&c)?;
        windows_of::<Rgba<u8>>(&c)?;
        windows_of::<Rgba<u16>>(&c)?;
        windows_of::<Rgba<f32>>(&c)?;
    }
}

#[test]
fn windows_outside_and_tiles_that_do_not_fit_are_refused() {
    let img = Img::<Luma<u16>>::from_fn(7, 5, |x, y| Luma([(x + 10 * y) as u16]));
    for e in cpu_opencl_and_capped_engines() {
        let held = e.upload(&img).expect("upload");
        for (x, y, w, h) in [
            (5, 0, 3, 1),
            (0, 4, 1, 2),
            (u32::MAX, 0, 2, 1),
            (8, 0, 0, 0),
        ] {
            let err = e.crop(&held, x, y, w, h).expect_err("outside the image");
            assert!(err.to_string().contains("inside the image"), "{err}");
        }
        // Empty windows inside the image are empty images.
        let empty = e
            .crop(&held, 7, 5, 0, 0)
            .expect("an empty window at the corner");
        assert_eq!((empty.width(), empty.height()), (0, 0));
        let small = e.crop(&held, 0, 0, 2, 2).expect("crop");
        let no_rows: [Vec<&clpix::DeviceImage<Luma<u16>>>; 0] = [];
        let grids: [(Grid<'_>, &str); 3] = [
            (vec![vec![&held, &small]], "rows high"),
            (vec![vec![&held], vec![&small]], "pixels wide"),
            (vec![vec![&held], vec![]], "is empty"),
        ];
        for (rows, says) in grids {
            let err = e.assemble(&rows).expect_err("tiles that do not fit");
            assert!(err.to_string().contains(says), "{err}");
        }
        let err = e.assemble(&no_rows).expect_err("no rows");
        assert!(err.to_string().contains("no rows"), "{err}");
    }
}

/// Rows longer than a buffer (4 KiB on the capped engines: RGBA f32 rows of more than 256
/// pixels) are held in segments of a row; crops and assemblies of them are made on the host.
#[test]
fn rows_longer_than_a_buffer_are_assembled_on_the_host() {
    let img = Img::<Rgba<f32>>::from_fn(300, 4, |x, y| Rgba([x as f32, y as f32, -0.5, 1e-3]));
    let want = |x, y, w, h| image_of::<Rgba<f32>>(host_window(&img, x, y, w, h), w, h);
    for e in cpu_opencl_and_capped_engines() {
        let held = e.upload(&img).expect("upload");
        let crop = e.crop(&held, 7, 1, 290, 2).expect("crop");
        assert_eq!(
            e.download(&crop).expect("download"),
            want(7, 1, 290, 2),
            "{}",
            e.backend()
        );
        let (a, b) = (
            e.crop(&held, 0, 0, 300, 1).expect("crop"),
            e.crop(&held, 0, 1, 300, 3).expect("crop"),
        );
        let whole = e.assemble(&[[&a], [&b]]).expect("assemble");
        assert_eq!(
            e.download(&whole).expect("download"),
            img,
            "{}",
            e.backend()
        );
    }
}
