//! SPEC.md's blurs written out plainly: the borders, the RGBA8 blur from the published fixed-point weights, the f32 blur; sequential index loops.

use super::*;

/// SPEC.md borders, written out plainly.
pub(super) fn spec_map(p: i64, n: i64, border: Border) -> Option<i64> {
    if (0..n).contains(&p) {
        return Some(p);
    }
    match border {
        Border::Clamp => Some(p.clamp(0, n - 1)),
        Border::Wrap => Some(((p % n) + n) % n),
        Border::Zero => None,
        Border::Reflect => {
            if n == 1 {
                return Some(0);
            }
            // Walk the mirror one reflection at a time.
            let mut q = p;
            loop {
                if q < 0 {
                    q = -q;
                } else if q >= n {
                    q = 2 * (n - 1) - q;
                } else {
                    return Some(q);
                }
            }
        }
    }
}

/// SPEC.md RGBA8 blur, sequential, from the published fixed-point weights.
pub(super) fn reference_u8(img: &TestImage, blur: &GaussianBlur) -> image::RgbaImage {
    let (w, h) = (img.width as i64, img.height as i64);
    if blur.radius() == 0 {
        return img.to_image();
    }
    let q = blur.weights_fixed().unwrap();
    let r = blur.radius() as i64;
    let b = blur.border_mode();
    let mut t = vec![[0u16; 4]; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0u32;
                for i in -r..=r {
                    if let Some(s) = spec_map(x + i, w, b) {
                        acc += q[(i + r) as usize] * img.pixel(s as u32, y as u32)[c] as u32;
                    }
                }
                t[(y * w + x) as usize][c] = ((acc + 128) >> 8) as u16;
            }
        }
    }
    image::RgbaImage::from_fn(w as u32, h as u32, |x, y| {
        let mut px = [0u8; 4];
        for (c, out) in px.iter_mut().enumerate() {
            let mut acc = 0u32;
            for i in -r..=r {
                if let Some(s) = spec_map(y as i64 + i, h, b) {
                    acc += q[(i + r) as usize] * t[(s * w + x as i64) as usize][c] as u32;
                }
            }
            *out = ((acc + (1 << 23)) >> 24) as u8;
        }
        image::Rgba(px)
    })
}

/// SPEC.md f32 blur, sequential.
pub(super) fn reference_f32(img: &image::Rgba32FImage, blur: &GaussianBlur) -> Vec<f32> {
    let (w, h) = (img.width() as i64, img.height() as i64);
    if blur.radius() == 0 {
        return img.as_raw().clone();
    }
    let wt = blur.weights_f32().unwrap();
    let r = blur.radius() as i64;
    let b = blur.border_mode();
    let src = img.as_raw();
    let mut t = vec![0f32; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0.0f32;
                for i in -r..=r {
                    let v =
                        spec_map(x + i, w, b).map_or(0.0, |s| src[((y * w + s) * 4 + c) as usize]);
                    acc = wt[(i + r) as usize].mul_add(v, acc);
                }
                t[((y * w + x) * 4 + c) as usize] = acc;
            }
        }
    }
    let mut out = vec![0f32; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0.0f32;
                for i in -r..=r {
                    let v =
                        spec_map(y + i, h, b).map_or(0.0, |s| t[((s * w + x) * 4 + c) as usize]);
                    acc = wt[(i + r) as usize].mul_add(v, acc);
                }
                out[((y * w + x) * 4 + c) as usize] = acc;
            }
        }
    }
    out
}
