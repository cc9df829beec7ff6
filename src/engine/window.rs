//! Windows of held images: a rectangle of one as a new held image (`crop`), and held images
//! side by side and row on row as one (`assemble`), copied by the device where the images are.

use super::{Backend, Engine};
use crate::device::{DeviceImage, Storage, Window, whole_rows};
use crate::error::{Error, Result};
use crate::image::{ImageView, RawView, check_pixel_count};
use crate::opencl::ClEngine;
use crate::spec::{Format, Pixel};
use std::sync::Arc;

impl Engine {
    /// The `width`×`height` rectangle of a held image whose top-left pixel is (`x`, `y`), as a
    /// new held image of the same format (copied by the device on an OpenCL engine: no pixel
    /// crosses the bus). The rectangle must lie inside the image.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::ImageBuffer::from_fn(6, 4, |x, y| image::Luma([(10 * y + x) as u16]));
    /// let held = engine.upload(&img)?;
    /// let window = engine.crop(&held, 2, 1, 3, 2)?;
    /// let back = engine.download(&window)?;
    /// assert_eq!((back.width(), back.height()), (3, 2));
    /// assert_eq!(back.get_pixel(0, 0).0, [12]);
    /// assert_eq!(back.get_pixel(2, 1).0, [24]);
    /// assert!(engine.crop(&held, 4, 0, 3, 1).is_err()); // reaches past the right edge
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn crop<P: Pixel>(
        &self,
        img: &DeviceImage<P>,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
    ) -> Result<DeviceImage<P>> {
        let inside = |at: u32, len: u32, side: u32| at as u64 + len as u64 <= side as u64;
        if !inside(x, width, img.width) || !inside(y, height, img.height) {
            return Err(Error::InvalidParameter {
                name: "window",
                value: format!(
                    "{width}×{height} at ({x}, {y}) of a {}×{} image",
                    img.width, img.height
                ),
                expected: "a rectangle inside the image",
            });
        }
        let w = Window {
            from: (x, y),
            to: (0, 0),
            size: (width, height),
        };
        self.place(width, height, &[(img, w)])
    }

    /// Held images of one format side by side (each row of `rows`, left to right) and row on
    /// row (top to bottom), as one new held image, like NumPy's `block`: the images of a row
    /// have one height, and every row the same total width. Copied by the device on an OpenCL
    /// engine (an image another engine holds is read back first): a chunk and its neighbours'
    /// edges become one image without an assembly on the host.
    ///
    /// ```
    /// use image::{Luma, ImageBuffer};
    /// let engine = clpix::Engine::new()?;
    /// let tile = |w, h, v: u8| engine.upload(&ImageBuffer::from_pixel(w, h, Luma([v])));
    /// let (a, b, c) = (tile(2, 1, 1)?, tile(3, 1, 2)?, tile(5, 2, 3)?);
    /// let whole = engine.download(&engine.assemble(&[vec![&a, &b], vec![&c]])?)?;
    /// assert_eq!((whole.width(), whole.height()), (5, 3));
    /// assert_eq!(whole.as_raw()[..5], [1, 1, 2, 2, 2]);
    /// assert_eq!(whole.as_raw()[5..], [3; 10]);
    /// assert!(engine.assemble(&[vec![&a], vec![&b]]).is_err()); // rows of widths 2 and 3
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn assemble<'t, P: Pixel, R: AsRef<[&'t DeviceImage<P>]>>(
        &self,
        rows: &[R],
    ) -> Result<DeviceImage<P>> {
        let mut pieces = Vec::new();
        let (mut width, mut height) = (None, 0u64);
        for (i, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            let Some(first) = row.first() else {
                return Err(tiles_error(format!("row {i} is empty")));
            };
            let mut x = 0u64;
            for (j, tile) in row.iter().enumerate() {
                if tile.height != first.height {
                    return Err(tiles_error(format!(
                        "image {j} of row {i} is {} rows high, image 0 {}",
                        tile.height, first.height
                    )));
                }
                let to = (
                    x.min(u32::MAX as u64) as u32,
                    height.min(u32::MAX as u64) as u32,
                );
                let size = (tile.width, tile.height);
                pieces.push((*tile, (to, size)));
                x += tile.width as u64;
            }
            match width {
                Some(w) if w != x => {
                    return Err(tiles_error(format!(
                        "row {i} is {x} pixels wide, row 0 {w}"
                    )));
                }
                _ => width = Some(x),
            }
            height += first.height as u64;
        }
        let Some(width) = width else {
            return Err(tiles_error("no rows".to_string()));
        };
        if width > u32::MAX as u64 || height > u32::MAX as u64 {
            return Err(Error::ImageTooLarge {
                width,
                height,
                reason: "the assembled image's sides exceed 2^32 - 1 pixels",
            });
        }
        let pieces: Vec<_> = pieces
            .into_iter()
            .map(|(img, (to, size))| {
                let from = (0, 0);
                (img, Window { from, to, size })
            })
            .collect();
        self.place(width as u32, height as u32, &pieces)
    }

    /// A new held image of `width`×`height` with each piece's window of its image copied in
    /// (the windows tile it): by the device where every image is of this engine's device and
    /// held in whole rows, else on the host.
    fn place<P: Pixel>(
        &self,
        width: u32,
        height: u32,
        pieces: &[(&DeviceImage<P>, Window)],
    ) -> Result<DeviceImage<P>> {
        check_pixel_count(width, height)?;
        let _one = self.one_call_at_a_time();
        if let Backend::OpenCl(cl) = &self.backend
            && let Some(storage) = self.place_on_device(cl, width, height, pieces)?
        {
            return Ok(DeviceImage::new(width, height, storage));
        }
        let bpp = P::FORMAT.bytes_per_pixel();
        let mut out = crate::cpu::alloc_zeroed::<u8>(width as usize * height as usize * bpp);
        for (img, w) in pieces {
            let bytes = super::held::held_bytes(img)?;
            let (cols, rows) = (w.size.0 as usize * bpp, w.size.1 as usize);
            let (sp, dp) = (img.width as usize * bpp, width as usize * bpp);
            for r in 0..rows {
                let s = (w.from.1 as usize + r) * sp + w.from.0 as usize * bpp;
                let d = (w.to.1 as usize + r) * dp + w.to.0 as usize * bpp;
                out[d..d + cols].copy_from_slice(&bytes[s..s + cols]);
            }
        }
        let storage = match &self.backend {
            Backend::Cpu => Storage::Host(out),
            Backend::OpenCl(cl) if P::FORMAT == Format::Rgba8 => {
                Storage::OpenCl(cl.upload(&ImageView::new(&out, width, height)?)?)
            }
            Backend::OpenCl(cl) => {
                let view = RawView {
                    data: &out,
                    width,
                    height,
                    stride: width as usize * bpp,
                    format: P::FORMAT,
                };
                Storage::OpenCl(cl.upload_raw(&view)?)
            }
        };
        Ok(DeviceImage::new(width, height, storage))
    }

    /// [`place`](Self::place) by the device: `None` where an image (or the new one) is held in
    /// segments of rows, which the host assembles instead.
    fn place_on_device<P: Pixel>(
        &self,
        cl: &Arc<ClEngine>,
        width: u32,
        height: u32,
        pieces: &[(&DeviceImage<P>, Window)],
    ) -> Result<Option<Storage>> {
        // Images held elsewhere (another engine, the host) come to this device first.
        let mut local = Vec::with_capacity(pieces.len());
        for (img, _) in pieces {
            local.push(match &img.storage {
                Storage::OpenCl(p) if Arc::ptr_eq(&p.owner, cl) => None,
                _ => Some(self.upload(*img)?),
            });
        }
        let held = |k: usize| -> Option<(&crate::device::DeviceParts, u32)> {
            let img = local[k].as_ref().unwrap_or(pieces[k].0);
            match &img.storage {
                Storage::OpenCl(p) => Some((p, img.width)),
                Storage::Host(_) => None,
            }
        };
        let mut events = Vec::new();
        let mut out = cl.new_held(P::FORMAT, width, height, &mut events)?;
        let all_whole = whole_rows(&out, width)
            && (0..pieces.len()).all(|k| held(k).is_some_and(|(p, w)| whole_rows(p, w)));
        if !all_whole {
            cl.finish(&events)?;
            return Ok(None);
        }
        let bpp = P::FORMAT.bytes_per_pixel();
        let copied = pieces
            .iter()
            .enumerate()
            .try_for_each(|(k, (_, w))| match held(k) {
                Some((src, src_width)) => {
                    cl.copy_window(src, src_width, &mut out, width, bpp, *w, &mut events)
                }
                None => Ok(()),
            });
        // Waited for on every way out: no buffer goes back to the pool with a copy in flight.
        cl.finish(&events)?;
        copied?;
        Ok(Some(Storage::OpenCl(out)))
    }
}

/// The error of tiles that do not fit together.
fn tiles_error(value: String) -> Error {
    Error::InvalidParameter {
        name: "rows",
        value,
        expected: "one or more rows of held images, the images of a row of one height, every row of one width",
    }
}
