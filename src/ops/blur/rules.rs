//! The blur's rules, beneath its CPU and OpenCL halves: the radius, sigma and border of a
//! [`GaussianBlur`], what each [`Border`] reads outside the image, and the weights every path
//! uses (f64, the RGBA8 path's fixed point, f32).

use crate::error::{Error, Result};

/// The largest radius accepted: the weight arrays then take 2·2²⁰+1 entries.
///
/// ```
/// let img = image::RgbaImage::new(2, 2);
/// let big = clpix::GaussianBlur::new(clpix::MAX_RADIUS + 1);
/// assert!(clpix::Engine::cpu().gaussian_blur(&img, &big).is_err());
/// ```
pub const MAX_RADIUS: u32 = 1 << 20;

/// What a blur reads outside the image.
///
/// ```
/// use clpix::{Border, GaussianBlur};
/// let blur = GaussianBlur::new(3).border(Border::Wrap);
/// assert_eq!(blur.border_mode(), Border::Wrap);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Border {
    /// The nearest edge pixel (the default).
    #[default]
    Clamp,
    /// Mirror without repeating the edge pixel, as often as needed (`0` for a 1-pixel side).
    Reflect,
    /// Coordinates modulo the size: the image tiles the plane.
    Wrap,
    /// Zero in all four channels.
    Zero,
}

impl Border {
    pub(super) fn code(self) -> u32 {
        match self {
            Border::Clamp => 0,
            Border::Reflect => 1,
            Border::Wrap => 2,
            Border::Zero => 3,
        }
    }

    /// The source coordinate of `p` on a side of `n > 0` pixels (`None`: a zero pixel).
    ///
    /// ```
    /// use clpix::Border;
    /// assert_eq!(Border::Reflect.map(-2, 5), Some(2));
    /// assert_eq!(Border::Reflect.map(6, 5), Some(2));
    /// assert_eq!(Border::Wrap.map(-1, 5), Some(4));
    /// assert_eq!(Border::Clamp.map(9, 5), Some(4));
    /// assert_eq!(Border::Zero.map(5, 5), None);
    /// assert_eq!(Border::Reflect.map(-7, 1), Some(0));
    /// ```
    pub fn map(self, p: i64, n: u64) -> Option<u64> {
        let n = n as i64;
        if n <= 0 {
            return None;
        }
        if (0..n).contains(&p) {
            return Some(p as u64);
        }
        Some(match self {
            Border::Clamp => p.clamp(0, n - 1) as u64,
            Border::Wrap => p.rem_euclid(n) as u64,
            Border::Reflect => {
                if n == 1 {
                    0
                } else {
                    let period = 2 * (n - 1);
                    let m = p.rem_euclid(period);
                    (if m >= n { period - m } else { m }) as u64
                }
            }
            Border::Zero => return None,
        })
    }
}

/// Parameters of a Gaussian blur: radius, sigma and border mode.
///
/// ```
/// use clpix::{Border, Engine, GaussianBlur};
/// let img = image::RgbaImage::from_fn(32, 16, |x, _| image::Rgba([(x * 8) as u8, 0, 0, 255]));
/// let blur = GaussianBlur::new(4).sigma(1.5).border(Border::Reflect);
/// let out = Engine::new()?.gaussian_blur(&img, &blur)?;
/// assert_eq!(out.dimensions(), (32, 16));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianBlur {
    pub(super) radius: u32,
    pub(super) sigma: Option<f64>,
    pub(super) border: Border,
}

impl GaussianBlur {
    /// A blur of `2 · radius + 1` taps, sigma `radius / 2`, border [`Border::Clamp`].
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(6);
    /// assert_eq!((b.radius(), b.sigma_value()), (6, 3.0));
    /// ```
    pub fn new(radius: u32) -> GaussianBlur {
        GaussianBlur {
            radius,
            sigma: None,
            border: Border::Clamp,
        }
    }

    /// Sets sigma (checked when the blur runs: it must be finite and above 0).
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(2).sigma(0.8);
    /// assert_eq!(b.sigma_value(), 0.8);
    /// ```
    pub fn sigma(mut self, sigma: f64) -> GaussianBlur {
        self.sigma = Some(sigma);
        self
    }

    /// Sets the border mode.
    ///
    /// ```
    /// let b = clpix::GaussianBlur::new(2).border(clpix::Border::Zero);
    /// assert_eq!(b.border_mode(), clpix::Border::Zero);
    /// ```
    pub fn border(mut self, border: Border) -> GaussianBlur {
        self.border = border;
        self
    }

    /// The radius `w`.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(3).radius(), 3);
    /// ```
    pub fn radius(&self) -> u32 {
        self.radius
    }

    /// Sigma: the one set, else `radius / 2`.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(5).sigma_value(), 2.5);
    /// ```
    pub fn sigma_value(&self) -> f64 {
        self.sigma.unwrap_or(self.radius as f64 / 2.0)
    }

    /// The border mode.
    ///
    /// ```
    /// assert_eq!(clpix::GaussianBlur::new(3).border_mode(), clpix::Border::Clamp);
    /// ```
    pub fn border_mode(&self) -> Border {
        self.border
    }

    /// The normalised real weights `n_i`, `i = -w..=w` (index `i + w`).
    ///
    /// ```
    /// let n = clpix::GaussianBlur::new(2).weights_f64()?;
    /// assert_eq!(n.len(), 5);
    /// assert!((n.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_f64(&self) -> Result<Vec<f64>> {
        self.check()?;
        let w = self.radius as i64;
        let s = self.sigma_value();
        let g: Vec<f64> = (-w..=w)
            .map(|i| {
                let r = i as f64 / s;
                (-0.5 * (r * r)).exp()
            })
            .collect();
        let sum: f64 = g.iter().sum();
        Ok(g.iter().map(|x| x / sum).collect())
    }

    /// The fixed-point weights `q_i` of the RGBA8 path: symmetric, each within 1 of
    /// `n_i · 65536`, summing to exactly 65536.
    ///
    /// ```
    /// let q = clpix::GaussianBlur::new(3).weights_fixed()?;
    /// assert_eq!(q.iter().sum::<u32>(), 65536);
    /// assert_eq!(q[0], q[6]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_fixed(&self) -> Result<Vec<u32>> {
        let q = self.fixed_point(16)?;
        // Each side weight is at most the centre one and 2 q_d + q_0 <= 2^16, so below 2^15:
        // the CPU path multiplies them as 16-bit values. Checked rather than assumed.
        let w = self.radius as usize;
        if q.iter().enumerate().any(|(i, &x)| i != w && x >= 0x8000) {
            return Err(Error::invalid(
                "sigma",
                format!("{:?}", self.sigma),
                "a sigma whose fixed-point side weights stay below 2^15",
            ));
        }
        Ok(q)
    }

    /// The fixed-point weights of 16-bit channels (`Luma<u16>`, `Rgba<u16>`): the rule of
    /// [`weights_fixed`](Self::weights_fixed) with 24 bits, each within 1 of `n_i · 2^24`,
    /// summing to exactly 2^24 (16-bit weights left the blur of 16-bit values up to 3.1 from
    /// the real-valued one; 24-bit weights keep it within 1: docs/formats.md).
    ///
    /// ```
    /// let q = clpix::GaussianBlur::new(3).weights_fixed24()?;
    /// assert_eq!(q.iter().sum::<u32>(), 1 << 24);
    /// assert_eq!(q[0], q[6]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_fixed24(&self) -> Result<Vec<u32>> {
        self.fixed_point(24)
    }

    /// Symmetric integer weights summing to exactly `2^bits`, each within 1 of `n_i · 2^bits`:
    /// every weight floored, the remainder handed out in pairs by largest fractional part
    /// (ties to the smaller `|i|`), an odd unit going to the centre.
    fn fixed_point(&self, bits: u32) -> Result<Vec<u32>> {
        let n = self.weights_f64()?;
        let w = self.radius as usize;
        let one = (1u64 << bits) as f64;
        let f: Vec<f64> = n.iter().map(|x| x * one).collect();
        let mut q: Vec<u32> = f.iter().map(|x| x.floor().max(0.0) as u32).collect();
        let total: u64 = q.iter().map(|&x| x as u64).sum();
        let mut rem = (1i64 << bits) - total as i64;
        if rem % 2 != 0 {
            q[w] += 1;
            rem -= 1;
        }
        // Pairs (w - d, w + d), by largest fractional part, ties to the smaller d.
        let mut pairs: Vec<usize> = (1..=w).collect();
        pairs.sort_by(|&a, &b| {
            let fa = f[w + a] - f[w + a].floor();
            let fb = f[w + b] - f[w + b].floor();
            fb.total_cmp(&fa).then(a.cmp(&b))
        });
        for &d in &pairs {
            if rem < 2 {
                break;
            }
            q[w - d] += 1;
            q[w + d] += 1;
            rem -= 2;
        }
        // Cannot happen (Σ frac < 2w + 1); kept exact all the same.
        if rem > 0 {
            q[w] += rem as u32;
        }
        Ok(q)
    }

    /// The f32 weights `wt_i = n_i as f32` of the f32 path.
    ///
    /// ```
    /// let wt = clpix::GaussianBlur::new(1).sigma(1.0).weights_f32()?;
    /// assert_eq!(wt.len(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn weights_f32(&self) -> Result<Vec<f32>> {
        Ok(self.weights_f64()?.iter().map(|&x| x as f32).collect())
    }

    pub(super) fn check(&self) -> Result<()> {
        if self.radius > MAX_RADIUS {
            return Err(Error::invalid(
                "radius",
                self.radius,
                "at most clpix::MAX_RADIUS = 1048576",
            ));
        }
        let s = self.sigma_value();
        let valid = s.is_finite() && s > 0.0;
        // A radius-0 blur with the default sigma (0) is a copy.
        if !(valid || self.radius == 0 && self.sigma.is_none()) {
            return Err(Error::invalid(
                "sigma",
                s,
                "a finite number above 0 (default: radius / 2)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_weights_are_symmetric_exact_and_close() {
        for w in 1..=200u32 {
            for s in [w as f64 / 2.0, 0.3, 1.0, w as f64 * 3.0] {
                let b = GaussianBlur::new(w).sigma(s);
                let n = b.weights_f64().unwrap();
                for (q, one) in [
                    (b.weights_fixed().unwrap(), 65536.0),
                    (b.weights_fixed24().unwrap(), 16777216.0),
                ] {
                    assert_eq!(q.iter().map(|&x| x as u64).sum::<u64>(), one as u64);
                    for i in 0..q.len() {
                        assert!((q[i] as f64 - n[i] * one).abs() < 1.0, "w {w} s {s} i {i}");
                        assert_eq!(q[i], q[q.len() - 1 - i]);
                    }
                }
            }
        }
    }
}
