//! Images of every pixel format that the reductions and histograms take, from NumPy arrays:
//! `uint8`, `uint16` and `float32` arrays shaped `(H, W)` (mono), `(H, W, 3)` (RGB8, `uint8`
//! only) or `(H, W, 4)` (RGBA), of any strides.
//!
//! An array whose pixels are contiguous within rows (rows a positive multiple of the channel
//! size apart, its data aligned) is read in place through [`ImageView::from_channels`]; any
//! other layout is copied into a packed buffer first. A `clpix.DeviceImage` (an image an engine
//! holds) is taken as it is. The operations run with the GIL released, through [`Job`], one
//! generic run per format.

use crate::errors::{to_py, type_error, value_error, IntoPyResult};
use crate::held::{AnyHeld, DeviceImage, HeldPixel};
pub(crate) use crate::records::{Dtype, IntoValues, Values};
use crate::records::{HitRecord, Records, Scalar};
use crate::types::{FloatStats, FormatHit, Hit, LuminanceStats, Num};
use clpix::{Bins, Engine, Extreme, ImageView, IntoImage, Pixel};
use image::{Luma, Rgb, Rgba};
use numpy::{
    Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

/// What the operations of every format accept, as the error messages say it.
pub(crate) const ACCEPTED: &str =
    "uint8, uint16 or float32 of shape (H, W), (H, W, 3) (uint8 only) or (H, W, 4)";

/// A shape as Python writes it: `(4, 4, 3)`, `(5,)`.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Where an image's channels are: in the caller's array (rows `stride` bytes apart), or in a
/// packed copy.
enum Stored<'py, T: Element> {
    Borrowed {
        array: PyReadonlyArrayDyn<'py, T>,
        stride: usize,
    },
    Copied(Vec<T>),
}

/// The channels of an image of `width × height` pixels of `channels` channels of `T`.
pub(crate) struct Channels<'py, T: Element> {
    stored: Stored<'py, T>,
    width: u32,
    height: u32,
    channels: usize,
}

/// The row stride in bytes at which an array of this layout can be read in place: pixels of
/// `channels × size` bytes contiguous within rows, rows a positive multiple of `size` bytes
/// apart and not overlapping, the first element aligned; `None` when it must be copied.
/// Strides of axes of length 1 do not matter (NumPy leaves them arbitrary).
fn in_place_stride(
    shape: &[usize],
    strides: &[isize],
    address: usize,
    channels: usize,
    size: usize,
) -> Option<usize> {
    let (height, width) = (shape[0], shape[1]);
    let pixel = channels * size;
    let row = width * pixel;
    let channels_packed = shape.len() == 2 || strides[2] == size as isize;
    let pixels_packed = width <= 1 || strides[1] == pixel as isize;
    if !(channels_packed && pixels_packed && address.is_multiple_of(size)) {
        return None;
    }
    if height <= 1 {
        return Some(row);
    }
    usize::try_from(strides[0])
        .ok()
        .filter(|&s| s >= row && s.is_multiple_of(size))
}

impl<'py, T: Element + Copy> Channels<'py, T> {
    /// Reads an array already checked to be `H×W` or `H×W×channels` of `T`.
    fn read(array: &Bound<'py, PyUntypedArray>, channels: usize) -> PyResult<Self> {
        let shape = array.shape();
        let (width, height) = sides(shape)?;
        let typed = array.cast::<PyArrayDyn<T>>()?;
        let readonly = typed
            .try_readonly()
            .map_err(|e| value_error(format!("the array cannot be read: {e}")))?;
        let stored = if width == 0 || height == 0 {
            Stored::Copied(Vec::new())
        } else {
            let size = std::mem::size_of::<T>();
            let address = readonly.data() as usize;
            match in_place_stride(shape, typed.strides(), address, channels, size) {
                Some(stride) => Stored::Borrowed {
                    array: readonly,
                    stride,
                },
                // Logical (C) order: rows, pixels, channels, packed.
                None => Stored::Copied(readonly.as_array().iter().copied().collect()),
            }
        };
        Ok(Channels {
            stored,
            width,
            height,
            channels,
        })
    }

    /// The shape of the array: `(H, W)`, or `(H, W, channels)`.
    fn shape(&self) -> Vec<usize> {
        let (h, w) = (self.height as usize, self.width as usize);
        match self.channels {
            1 => vec![h, w],
            c => vec![h, w, c],
        }
    }

    /// Whether the values are the caller's array's (borrowed from NumPy).
    fn is_borrowed(&self) -> bool {
        matches!(self.stored, Stored::Borrowed { .. })
    }

    /// A packed copy of the values, the array's borrow given back (for an `out=` that shares
    /// memory with the image).
    fn into_copied(self) -> Self {
        let stored = match self.stored {
            // Logical (C) order: rows, pixels, channels, packed; the borrow ends here.
            Stored::Borrowed { array, .. } => {
                Stored::Copied(array.as_array().iter().copied().collect())
            }
            copied => copied,
        };
        Channels { stored, ..self }
    }

    /// The pixels as clpix's view of `P` (no copy).
    pub(crate) fn view<P>(&self) -> PyResult<ImageView<'_, P>>
    where
        P: Pixel<Subpixel = T>,
        T: bytemuck::Pod,
    {
        let (w, h) = (self.width, self.height);
        let size = std::mem::size_of::<T>();
        match &self.stored {
            Stored::Borrowed { array, stride } => {
                let len = (h as usize - 1) * (stride / size) + w as usize * self.channels;
                // SAFETY: the array is borrowed read-only for `self`'s life (numpy's borrow
                // checker); with h > 0 and w > 0, its first element is at `data()`, aligned
                // for T, pixels are `channels` contiguous elements, and rows start `stride`
                // bytes (a multiple of T's size) apart (checked in `in_place_stride`): its
                // last element lies (h - 1) * stride / size + w * channels - 1 elements on.
                let data = unsafe { std::slice::from_raw_parts(array.data() as *const T, len) };
                ImageView::from_channels(data, w, h, *stride).py()
            }
            Stored::Copied(values) => {
                ImageView::from_channels(values, w, h, w as usize * self.channels * size).py()
            }
        }
    }
}

/// Width and height of an image array, each at most `u32::MAX`.
fn sides(shape: &[usize]) -> PyResult<(u32, u32)> {
    let side = |n: usize| {
        u32::try_from(n).map_err(|_| {
            to_py(clpix::Error::ImageTooLarge {
                width: shape[1] as u64,
                height: shape[0] as u64,
                reason: "a side above u32::MAX pixels",
            })
        })
    };
    Ok((side(shape[1])?, side(shape[0])?))
}

/// An input image of one of the seven formats, or an image an engine holds.
pub(crate) enum AnyImage<'py> {
    Held(Bound<'py, DeviceImage>),
    Luma8(Channels<'py, u8>),
    Luma16(Channels<'py, u16>),
    LumaF32(Channels<'py, f32>),
    Rgb8(Channels<'py, u8>),
    Rgba8(Channels<'py, u8>),
    Rgba16(Channels<'py, u16>),
    RgbaF32(Channels<'py, f32>),
}

impl AnyImage<'_> {
    /// The shape of the array: `(H, W)`, or `(H, W, channels)`.
    pub(crate) fn shape(&self) -> Vec<usize> {
        match self {
            AnyImage::Held(h) => h.get().shape.clone(),
            AnyImage::Luma8(c) | AnyImage::Rgb8(c) | AnyImage::Rgba8(c) => c.shape(),
            AnyImage::Luma16(c) | AnyImage::Rgba16(c) => c.shape(),
            AnyImage::LumaF32(c) | AnyImage::RgbaF32(c) => c.shape(),
        }
    }

    /// The pixel format.
    pub(crate) fn format(&self) -> clpix::Format {
        use clpix::Format as F;
        match self {
            AnyImage::Held(h) => h.get().format(),
            AnyImage::Luma8(_) => F::Luma8,
            AnyImage::Luma16(_) => F::Luma16,
            AnyImage::LumaF32(_) => F::LumaF32,
            AnyImage::Rgb8(_) => F::Rgb8,
            AnyImage::Rgba8(_) => F::Rgba8,
            AnyImage::Rgba16(_) => F::Rgba16,
            AnyImage::RgbaF32(_) => F::RgbaF32,
        }
    }

    /// The channel type.
    pub(crate) fn dtype(&self) -> Dtype {
        match self {
            AnyImage::Held(h) => h.get().dtype,
            AnyImage::Luma8(_) | AnyImage::Rgb8(_) | AnyImage::Rgba8(_) => Dtype::U8,
            AnyImage::Luma16(_) | AnyImage::Rgba16(_) => Dtype::U16,
            AnyImage::LumaF32(_) | AnyImage::RgbaF32(_) => Dtype::F32,
        }
    }

    /// Whether the values are the caller's array's (borrowed from NumPy).
    pub(crate) fn is_borrowed(&self) -> bool {
        match self {
            AnyImage::Held(_) => false,
            AnyImage::Luma8(c) | AnyImage::Rgb8(c) | AnyImage::Rgba8(c) => c.is_borrowed(),
            AnyImage::Luma16(c) | AnyImage::Rgba16(c) => c.is_borrowed(),
            AnyImage::LumaF32(c) | AnyImage::RgbaF32(c) => c.is_borrowed(),
        }
    }

    /// The image with its values copied, the array's borrow given back.
    pub(crate) fn into_copied(self) -> Self {
        match self {
            AnyImage::Held(h) => AnyImage::Held(h),
            AnyImage::Luma8(c) => AnyImage::Luma8(c.into_copied()),
            AnyImage::Luma16(c) => AnyImage::Luma16(c.into_copied()),
            AnyImage::LumaF32(c) => AnyImage::LumaF32(c.into_copied()),
            AnyImage::Rgb8(c) => AnyImage::Rgb8(c.into_copied()),
            AnyImage::Rgba8(c) => AnyImage::Rgba8(c.into_copied()),
            AnyImage::Rgba16(c) => AnyImage::Rgba16(c.into_copied()),
            AnyImage::RgbaF32(c) => AnyImage::RgbaF32(c.into_copied()),
        }
    }
}

/// Reads an image of any format (see the module's documentation): a `TypeError` for another
/// object or dtype, a `ValueError` for another shape, each naming what is accepted.
pub(crate) fn any_image<'py>(obj: &Bound<'py, PyAny>) -> PyResult<AnyImage<'py>> {
    any_image_accepting(obj, ACCEPTED)
}

/// [`any_image`], its messages saying that `accepted` is (an operation that takes fewer
/// formats checks the format it reads).
pub(crate) fn any_image_accepting<'py>(
    obj: &Bound<'py, PyAny>,
    accepted: &str,
) -> PyResult<AnyImage<'py>> {
    if let Ok(held) = obj.cast::<DeviceImage>() {
        return Ok(AnyImage::Held(held.clone()));
    }
    let py = obj.py();
    let array = crate::convert::ndarray(obj, accepted)?;
    let dtype = array.dtype();
    let kind = if dtype.is_equiv_to(&numpy::dtype::<u8>(py)) {
        Dtype::U8
    } else if dtype.is_equiv_to(&numpy::dtype::<u16>(py)) {
        Dtype::U16
    } else if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) {
        Dtype::F32
    } else {
        return Err(type_error(format!(
            "expected an image of {accepted} (native byte order); got dtype {dtype}"
        )));
    };
    let shape = array.shape();
    let channels = match shape {
        [_, _] => 1,
        [_, _, 3] if kind == Dtype::U8 => 3,
        [_, _, 3] => {
            return Err(value_error(format!(
                "an (H, W, 3) image is RGB8, uint8 only; a {dtype} image is of shape (H, W) or \
                 (H, W, 4) (expected {accepted}); got shape {}",
                shape_text(shape)
            )))
        }
        [_, _, 4] => 4,
        _ => {
            return Err(value_error(format!(
                "expected an image of {accepted}; got an array of shape {}",
                shape_text(shape)
            )))
        }
    };
    Ok(match (kind, channels) {
        (Dtype::U8, 1) => AnyImage::Luma8(Channels::read(array, 1)?),
        (Dtype::U8, 3) => AnyImage::Rgb8(Channels::read(array, 3)?),
        (Dtype::U8, _) => AnyImage::Rgba8(Channels::read(array, 4)?),
        (Dtype::U16, 1) => AnyImage::Luma16(Channels::read(array, 1)?),
        (Dtype::U16, _) => AnyImage::Rgba16(Channels::read(array, 4)?),
        (Dtype::F32, 1) => AnyImage::LumaF32(Channels::read(array, 1)?),
        (Dtype::F32, _) => AnyImage::RgbaF32(Channels::read(array, 4)?),
    })
}

/// A number of a result: an integer key or channel, or an f32 one.
trait ToNum: Copy {
    fn num(self) -> Num;
}

impl ToNum for u8 {
    fn num(self) -> Num {
        Num::Int(self.into())
    }
}

impl ToNum for u16 {
    fn num(self) -> Num {
        Num::Int(self.into())
    }
}

impl ToNum for f32 {
    fn num(self) -> Num {
        Num::Float(self)
    }
}

/// The brightest or darkest pixel of any format, before it becomes a Python object.
pub(crate) enum AnyHit {
    /// RGBA8: `clpix.Hit`, as always.
    Rgba8(Hit),
    /// The other formats: `clpix.FormatHit`.
    Other(FormatHit),
}

impl AnyHit {
    /// The Python record.
    pub(crate) fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            AnyHit::Rgba8(h) => h.into_bound_py_any(py),
            AnyHit::Other(h) => h.into_bound_py_any(py),
        }
    }
}

/// Statistics of any format, before they become a Python object.
pub(crate) enum AnyStats {
    /// Integer keys: `clpix.LuminanceStats`.
    Int(LuminanceStats),
    /// f32 keys: `clpix.FloatStats`.
    Float(FloatStats),
}

impl AnyStats {
    /// The Python record.
    pub(crate) fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            AnyStats::Int(s) => s.into_bound_py_any(py),
            AnyStats::Float(s) => s.into_bound_py_any(py),
        }
    }
}

/// A hit of some format as [`AnyHit`].
pub(crate) trait IntoAnyHit {
    fn into_any_hit(self) -> AnyHit;
}

impl IntoAnyHit for clpix::PixelHit {
    fn into_any_hit(self) -> AnyHit {
        AnyHit::Rgba8(self.into())
    }
}

impl<P> IntoAnyHit for clpix::Hit<P>
where
    P: Pixel<Subpixel: ToNum, Key: ToNum>,
{
    fn into_any_hit(self) -> AnyHit {
        let value = self.value.channels().iter().map(|c| c.num()).collect();
        AnyHit::Other(FormatHit::of(
            P::FORMAT,
            self.x,
            self.y,
            self.key.num(),
            value,
        ))
    }
}

/// Statistics of some format as [`AnyStats`].
pub(crate) trait IntoAnyStats {
    fn into_any_stats(self) -> AnyStats;
}

impl IntoAnyStats for clpix::LuminanceStats {
    fn into_any_stats(self) -> AnyStats {
        AnyStats::Int(self.into())
    }
}

impl IntoAnyStats for clpix::FloatStats {
    fn into_any_stats(self) -> AnyStats {
        AnyStats::Float(self.into())
    }
}

/// A pixel type of the seven, with what its results become.
pub(crate) trait FormatPixel:
    HeldPixel
    + Pixel<
        Subpixel: bytemuck::Pod + IntoValues,
        Key: Scalar,
        Hit: IntoAnyHit + HitRecord,
        Stats: IntoAnyStats,
    >
{
}

impl<P> FormatPixel for P where
    P: HeldPixel
        + Pixel<
            Subpixel: bytemuck::Pod + IntoValues,
            Key: Scalar,
            Hit: IntoAnyHit + HitRecord,
            Stats: IntoAnyStats,
        >
{
}

/// An operation run on an image of any format (a closure cannot be generic over the format):
/// a view of a NumPy array's pixels, or an image an engine holds.
pub(crate) trait Job: Send {
    /// Its result.
    type Out: Send;
    /// Runs on `view` (with the GIL released).
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Self::Out>;
}

/// Runs `job` on the image with the GIL released.
pub(crate) fn run<J: Job>(
    py: Python<'_>,
    engine: &Engine,
    img: &AnyImage<'_>,
    job: J,
) -> PyResult<J::Out> {
    macro_rules! go {
        ($channels:expr, $pixel:ty) => {{
            let view = $channels.view::<$pixel>()?;
            py.detach(|| job.run(engine, view)).py()
        }};
    }
    match img {
        AnyImage::Held(h) => run_held(py, engine, h.get(), job),
        AnyImage::Luma8(c) => go!(c, Luma<u8>),
        AnyImage::Luma16(c) => go!(c, Luma<u16>),
        AnyImage::LumaF32(c) => go!(c, Luma<f32>),
        AnyImage::Rgb8(c) => go!(c, Rgb<u8>),
        AnyImage::Rgba8(c) => go!(c, Rgba<u8>),
        AnyImage::Rgba16(c) => go!(c, Rgba<u16>),
        AnyImage::RgbaF32(c) => go!(c, Rgba<f32>),
    }
}

/// Runs `job` on a held image with the GIL released.
fn run_held<J: Job>(
    py: Python<'_>,
    engine: &Engine,
    img: &DeviceImage,
    job: J,
) -> PyResult<J::Out> {
    macro_rules! go {
        ($($variant:ident),*) => {
            match &img.held {
                $(AnyHeld::$variant(d) => py.detach(|| job.run(engine, d)).py(),)*
            }
        };
    }
    go!(Luma8, Luma16, LumaF32, Rgb8, Rgba8, Rgba16, RgbaF32)
}

/// The brightest or darkest pixel.
pub(crate) struct ExtremeJob(pub(crate) Extreme);

impl Job for ExtremeJob {
    type Out = AnyHit;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<AnyHit> {
        engine.extreme(view, self.0).map(IntoAnyHit::into_any_hit)
    }
}

/// The k brightest or darkest pixels at least `min_distance` apart (greedy), as records.
pub(crate) struct ExtremesJob {
    pub(crate) which: Extreme,
    pub(crate) k: usize,
    pub(crate) min_distance: f32,
}

impl Job for ExtremesJob {
    type Out = Records;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Records> {
        let hits = engine.extremes(view, self.which, self.k, self.min_distance)?;
        Ok(Records::of(&hits))
    }
}

/// The statistics of the keys.
pub(crate) struct StatsJob;

impl Job for StatsJob {
    type Out = AnyStats;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<AnyStats> {
        engine
            .luminance_stats(view)
            .map(IntoAnyStats::into_any_stats)
    }
}

/// A histogram of each channel (`keys: false`) or of the keys: the counts, one row per
/// histogram, concatenated, and the number of rows.
pub(crate) struct HistogramJob {
    pub(crate) bins: Bins,
    pub(crate) keys: bool,
}

impl Job for HistogramJob {
    type Out = (Vec<u32>, usize);
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<(Vec<u32>, usize)> {
        if self.keys {
            return engine.histogram_keys(view, self.bins).map(|h| (h, 1));
        }
        let rows = engine.histogram(view, self.bins)?;
        Ok((rows.concat(), P::FORMAT.channels()))
    }
}
