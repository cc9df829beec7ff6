//! `Engine::warm_up`: every program the operations need, made ready before the first real call.

use crate::engine::Engine;
use crate::error::Result;
use crate::opencl::ProgramRecord;
use crate::ops::blur::{Border, GaussianBlur};
use crate::ops::compact::CompactOrder;
use crate::spec::Extreme;

impl Engine {
    /// Makes ready every OpenCL program the operations need on this engine, and the GPU blur's
    /// programs for each radius in `blur_radii` (RGBA8 and f32), by running each operation once on
    /// a small image (the blur's radius-built programs build in parallel, each on its own thread),
    /// where each kernel is a program of its own (GPUs) after every file whole, so that the kernels
    /// a call chooses by its size are ready too: a service calls it at start so that no later call
    /// waits for a compiler or runs a generic kernel. Programs come from the persistent cache where
    /// they are there (see [`programs`](Self::programs)). Returns what this call made ready;
    /// nothing on the CPU engine.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// for p in engine.warm_up(&[2, 8])? {
    ///     println!("{} {:?} {} {:?} {:.1} ms", p.program, p.kernel, p.variant, p.origin, p.millis);
    /// }
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn warm_up(&self, blur_radii: &[u32]) -> Result<Vec<ProgramRecord>> {
        if self.device().is_none() {
            return Ok(Vec::new());
        }
        let before = self.programs().len();
        // With one kernel a program (GPUs), every file whole first: the kernels the calls below
        // do not choose (a long array's scan, a huge image's bands) are then ready too, and
        // the calls build only their variants (radius-built, NVIDIA's).
        if let crate::engine::Backend::OpenCl(cl) = &self.backend {
            cl.make_every_file_ready(&super::PROGRAMS)?;
        }
        // Large enough for several work-groups and every path's kernels, small enough to take
        // no time beside the builds.
        let img = image::RgbaImage::from_fn(160, 96, |x, y| {
            let v = ((x * 7 + y * 13) ^ (x * y)) % 256;
            image::Rgba([v as u8, (x * 3 % 256) as u8, (y * 5 % 256) as u8, 255])
        });
        let words: Vec<u32> = img.pixels().map(|p| u32::from_le_bytes(p.0)).collect();
        self.extreme(&img, Extreme::Brightest)?;
        self.extreme(&img, Extreme::Darkest)?;
        self.luminance_stats(&img)?;
        self.histogram_rgba(&img)?;
        self.histogram_luminance(&img)?;
        self.extremes(&img, Extreme::Brightest, 4, 8.0)?;
        self.extremes(&img, Extreme::Darkest, 4, 8.0)?;
        self.compact(&img, 500, CompactOrder::ScanOrder)?;
        self.compact(&img, 500, CompactOrder::LuminanceDescending)?;
        self.compacted_image(&img, 500, CompactOrder::ScanOrder)?;
        self.compacted_image(&img, 500, CompactOrder::LuminanceDescending)?;
        self.exclusive_scan(&words)?;
        self.array_stats(&words)?;
        let array = self.upload_array(&words)?;
        self.exclusive_scan_device(&array)?;
        self.array_stats(&array)?;
        let f32_img = image::Rgba32FImage::from_fn(img.width(), img.height(), |x, y| {
            image::Rgba(img.get_pixel(x, y).0.map(|c| c as f32))
        });
        // A device that flushes f32 denormals refuses the f32 blur (its calls are an error, or
        // answered from the CPU): nothing to build for it there.
        let f32_blur = match &self.backend {
            crate::engine::Backend::OpenCl(cl) => cl.info.f32_denormals,
            crate::engine::Backend::Cpu => true,
        };
        for &w in blur_radii {
            let blur = GaussianBlur::new(w).border(Border::Reflect);
            // Enough calls to start the radius-built programs' builds (Tuning::specialise_after).
            let calls = self.tuning_specialise_after();
            for _ in 0..calls {
                self.gaussian_blur(&img, &blur)?;
                if f32_blur {
                    self.gaussian_blur_f32(&f32_img, &blur)?;
                }
            }
        }
        // The radius-built programs started building in the background (in parallel).
        self.wait_for_builds();
        let mut all = self.programs();
        Ok(all.split_off(before.min(all.len())))
    }

    /// Makes ready the programs of every operation on images of `formats` (each format other
    /// than RGBA8 is a build of its own, made on its first call) and their blurs at each radius
    /// in `blur_radii`, by running each once on a small image of the format: a service that
    /// takes mono16 frames, say, calls it at start beside [`warm_up`](Self::warm_up), so that no
    /// later call waits for a compiler. Returns what this call made ready; nothing on the CPU
    /// engine.
    ///
    /// ```
    /// use clpix::Format;
    /// let engine = clpix::Engine::new()?;
    /// let made = engine.warm_up_formats(&[Format::Luma16, Format::Luma8], &[2])?;
    /// println!("{} programs made ready", made.len());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn warm_up_formats(
        &self,
        formats: &[crate::spec::Format],
        blur_radii: &[u32],
    ) -> Result<Vec<ProgramRecord>> {
        use crate::ops::histogram::bins::{Bins, Of};
        if self.device().is_none() {
            return Ok(Vec::new());
        }
        let before = self.programs().len();
        let (w, h) = (160u32, 96u32);
        for &format in formats {
            // RGBA8's own programs are warm_up's; its histograms with bins per call and its
            // blobs take the programs of every format.
            let rgba8 = format == crate::spec::Format::Rgba8;
            let bpp = format.bytes_per_pixel();
            // Values of every size, with ties, in words (aligned for every channel type); f32
            // formats get small finite numbers.
            let mut words: Vec<u32> = (0..(w * h) as usize * bpp / 4)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 7)
                .collect();
            if format.is_float() {
                for v in &mut words {
                    *v = ((*v % 1000) as f32 / 7.0).to_bits();
                }
            }
            let raw = crate::device::RawSource::Host(crate::image::RawView {
                data: bytemuck::cast_slice(&words),
                width: w,
                height: h,
                stride: w as usize * bpp,
                format,
            });
            let half = format.max_key().map_or(0x8000_0000 | 1_000, |m| m / 2);
            // Bins of 2^k values (a shift), of other widths (a table of bounds), and more bins
            // than local memory holds.
            for bins in [
                Bins::new(64, 0.0, 255.0)?,
                Bins::new(37, 3.0, 60_000.0)?,
                Bins::new(65_536, 0.0, 65_535.0)?,
            ] {
                self.raw_histogram(raw, Of::Channels, bins)?;
                self.raw_histogram(raw, Of::Key, bins)?;
            }
            // Above 0 (0.0 of f32: the order key 2^31): blobs in any of these images, so that
            // their statistics' kernels run.
            let above = format.max_key().map_or(0x8000_0000, |_| 0);
            self.raw_blobs(raw, above, &crate::ops::blobs::BlobOptions::new())?;
            if rgba8 {
                continue;
            }
            self.typed_extreme(raw, Extreme::Brightest)?;
            self.typed_extreme(raw, Extreme::Darkest)?;
            self.typed_stats(raw)?;
            self.raw_compact(raw, Some(half), 0, true)?;
            self.raw_extremes(raw, Extreme::Darkest, 4, 8.0)?;
            let mut out = vec![0u32; words.len()];
            for &radius in blur_radii {
                let blur = GaussianBlur::new(radius).border(Border::Reflect);
                match self.blur_raw_into(raw, &blur, bytemuck::cast_slice_mut(&mut out)) {
                    // A device that flushes denormals refuses f32 blurs (answered on the CPU).
                    Err(crate::error::Error::DeviceLimit { .. }) if format.is_float() => {}
                    other => other?,
                }
            }
        }
        self.wait_for_builds();
        let mut all = self.programs();
        Ok(all.split_off(before.min(all.len())))
    }

    /// Calls at a blur radius before its radius-built programs start building.
    fn tuning_specialise_after(&self) -> u32 {
        match &self.backend {
            crate::engine::Backend::OpenCl(cl) => cl
                .tuning
                .specialise_after
                .unwrap_or(crate::opencl::SPECIALISE_AFTER),
            crate::engine::Backend::Cpu => 1,
        }
    }
}
