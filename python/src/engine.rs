//! `clpix.Engine`: the operations on NumPy arrays, each run with the GIL released.

use crate::blobs::BlobArgs;
use crate::convert::{array_u32, hit_bytes, image_u8, ImageU8};
use crate::errors::{to_py, value_error, IntoPyResult};
use crate::formats::{self, any_image, ExtremeJob, ExtremesJob, HistogramJob, StatsJob};
use crate::held::DeviceImage;
use crate::holding::{self, hold, BlurDeviceJob, UploadJob};
use crate::params::{blur_params, count, histogram_bins, parse_extreme, parse_order};
use crate::types::Device;
use clpix::{CompactOrder, Engine, GaussianBlur, ImageView};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;

/// Runs clpix's operations on one backend: an OpenCL device, or the CPU with rayon.
#[pyclass(module = "clpix", name = "Engine", frozen)]
pub(crate) struct PyEngine {
    pub(crate) engine: Engine,
}

/// Which engine `Engine(backend, device)` asks for.
fn open(backend: &str, device: Option<DeviceQuery>) -> clpix::Result<Engine> {
    match (backend, device) {
        ("cpu", None) => Ok(Engine::cpu()),
        ("auto", None) => Engine::new(),
        ("opencl", None) => Engine::opencl(),
        ("auto" | "opencl", Some(q)) => Engine::with_device(&q.find()?),
        ("cpu", Some(_)) => Err(clpix::Error::InvalidParameter {
            name: "device",
            value: "given with backend=\"cpu\"".into(),
            expected: "None for the CPU backend (a device is an OpenCL device)",
        }),
        (other, _) => Err(clpix::Error::InvalidParameter {
            name: "backend",
            value: format!("{other:?}"),
            expected: "\"auto\", \"cpu\" or \"opencl\"",
        }),
    }
}

/// A device asked for by index, by part of its name, or as a `Device` from `devices()`.
enum DeviceQuery {
    Index(usize),
    Name(String),
}

impl DeviceQuery {
    fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(d) = obj.cast::<Device>() {
            return Ok(DeviceQuery::Index(d.get().index));
        }
        if let Ok(i) = obj.extract::<usize>() {
            return Ok(DeviceQuery::Index(i));
        }
        if let Ok(s) = obj.extract::<String>() {
            return Ok(DeviceQuery::Name(s));
        }
        Err(crate::errors::type_error(
            "device must be None, an index into clpix.devices(), part of a device name, or a \
             clpix.Device"
                .into(),
        ))
    }

    /// The device, as `CLPIX_DEVICE` finds it: an index, or the best device whose name
    /// contains the text (case-insensitive).
    fn find(&self) -> clpix::Result<clpix::DeviceInfo> {
        let all = clpix::devices()?;
        let found = match self {
            DeviceQuery::Index(i) => all.get(*i).cloned(),
            DeviceQuery::Name(q) => {
                let lower = q.trim().to_lowercase();
                let rank = |d: &clpix::DeviceInfo| {
                    let t = match d.device_type {
                        clpix::DeviceType::Gpu => 3,
                        clpix::DeviceType::Accelerator => 2,
                        clpix::DeviceType::Cpu => 0,
                        _ => 1,
                    };
                    (t, d.compute_units, d.global_mem_bytes)
                };
                all.iter()
                    .filter(|d| d.name.to_lowercase().contains(&lower))
                    .max_by_key(|d| rank(d))
                    .cloned()
            }
        };
        found.ok_or_else(|| clpix::Error::NoSuchDevice {
            query: match self {
                DeviceQuery::Index(i) => i.to_string(),
                DeviceQuery::Name(q) => q.clone(),
            },
        })
    }
}

/// Luminance of every pixel, `H×W` (the SPEC's integer formula, clpix's `luminance`).
pub(crate) fn luminance_of(view: &ImageView<'_>) -> Vec<u16> {
    let (w, h) = (view.width() as usize, view.height() as usize);
    let mut out = vec![0u16; w * h];
    if w == 0 {
        return out;
    }
    out.par_chunks_mut(w).enumerate().for_each(|(y, row_out)| {
        let row = view.row(y as u32);
        for (o, px) in row_out.iter_mut().zip(row.chunks_exact(4)) {
            *o = clpix::luminance(px[0], px[1], px[2]);
        }
    });
    out
}

impl PyEngine {
    /// Runs `f` on the image's view with the GIL released.
    fn with_view<T: Send>(
        &self,
        py: Python<'_>,
        img: &ImageU8<'_>,
        f: impl FnOnce(&Engine, ImageView<'_>) -> clpix::Result<T> + Send,
    ) -> PyResult<T> {
        let view = img.view()?;
        py.detach(|| f(&self.engine, view)).py()
    }
}

#[pymethods]
impl PyEngine {
    #[new]
    #[pyo3(signature = (backend = "auto", device = None))]
    fn new(py: Python<'_>, backend: &str, device: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let query = device.map(DeviceQuery::from_py).transpose()?;
        let backend = backend.to_owned();
        let engine = py.detach(move || open(&backend, query)).py()?;
        Ok(PyEngine { engine })
    }

    /// What runs, and why: the same text as Rust's `engine.backend()`.
    #[getter]
    fn backend(&self) -> String {
        self.engine.backend().to_string()
    }

    /// `"cpu"` or `"opencl"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.engine.backend().kind() {
            clpix::BackendKind::Cpu => "cpu",
            _ => "opencl",
        }
    }

    /// The OpenCL device, or None on the CPU backend.
    #[getter]
    fn device(&self) -> Option<Device> {
        self.engine.device().map(Device::of)
    }

    fn __repr__(&self) -> String {
        format!("Engine({:?})", self.engine.backend().to_string())
    }

    /// The brightest or the darkest pixel (`which`: "brightest" or "darkest"; ties: the first
    /// in scan order) of an image of any format: a `Hit` for RGBA8, a `FormatHit` otherwise.
    fn extreme<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        which: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let which = parse_extreme(which)?;
        let img = any_image(img)?;
        formats::run(py, &self.engine, &img, ExtremeJob(which))?.into_py(py)
    }

    /// Sum, count, mean, min and max of the keys of an image of any format: `LuminanceStats`
    /// for integer formats, `FloatStats` for float32.
    fn luminance_stats<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let img = any_image(img)?;
        formats::run(py, &self.engine, &img, StatsJob)?.into_py(py)
    }

    /// Histograms of each channel of an image of any format with `bins` bins over `range`
    /// (lo, hi): a `(channels, bins)` uint32 array.
    fn histogram<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        bins: i64,
        range: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let bins = histogram_bins(bins, range)?;
        let img = any_image(img)?;
        let job = HistogramJob { bins, keys: false };
        let (counts, rows) = formats::run(py, &self.engine, &img, job)?;
        PyArray1::from_vec(py, counts).reshape([rows, bins.count() as usize])
    }

    /// The histogram of the keys of an image of any format with `bins` bins over `range`
    /// (lo, hi): a `(bins,)` uint32 array.
    fn histogram_keys<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        bins: i64,
        range: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let bins = histogram_bins(bins, range)?;
        let img = any_image(img)?;
        let job = HistogramJob { bins, keys: true };
        let (counts, _) = formats::run(py, &self.engine, &img, job)?;
        Ok(PyArray1::from_vec(py, counts))
    }

    /// The k brightest or darkest pixels (`which`) at least `min_distance` apart (greedy) of an
    /// image of any format, by key (NaN keys never), as records: RGBA8's (x, y, luminance,
    /// rgba), or x, y, key and value for the other formats (as `compact`'s).
    #[pyo3(signature = (img, which, k, min_distance = 0.0))]
    fn extremes<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        which: &str,
        k: i64,
        min_distance: f32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (which, k) = (parse_extreme(which)?, count(k)?);
        let img = any_image(img)?;
        let job = ExtremesJob {
            which,
            k,
            min_distance,
        };
        formats::run(py, &self.engine, &img, job)?.into_array(py)
    }

    /// Counts of each channel value: a `(4, 256)` uint32 array (R, G, B, A).
    fn histogram_rgba<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let h = match img.cast::<DeviceImage>() {
            Ok(held) => {
                let d = held.get().rgba8()?;
                py.detach(|| self.engine.histogram_rgba(d)).py()?
            }
            Err(_) => self.with_view(py, &image_u8(img)?, |e, v| e.histogram_rgba(v))?,
        };
        PyArray1::from_vec(py, h.counts.concat()).reshape([4, 256])
    }

    /// Counts of each luminance value: a `(1024,)` uint32 array.
    fn histogram_luminance<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let h = match img.cast::<DeviceImage>() {
            Ok(held) => {
                let d = held.get().rgba8()?;
                py.detach(|| self.engine.histogram_luminance(d)).py()?
            }
            Err(_) => self.with_view(py, &image_u8(img)?, |e, v| e.histogram_luminance(v))?,
        };
        Ok(PyArray1::from_vec(py, h.counts.to_vec()))
    }

    /// The pixels of an image of any format whose key (the luminance of colour, the value of
    /// mono) is above `threshold` (an integer in 0..= the format's largest key; a number for
    /// float32, rounded to float32, NaN refused; NaN keys never kept), in `order` ("scan", or
    /// "luminance": key descending, ties in scan order), as a structured array: RGBA8's
    /// records (x, y, luminance, rgba), or x, y, key and value for the other formats.
    #[pyo3(signature = (img, threshold, order = "scan"))]
    fn compact<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        threshold: &Bound<'py, PyAny>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = parse_order(order)?;
        crate::compact::compact(py, &self.engine, img, threshold, order)
    }

    /// An array of the input's shape and dtype (any format, C-contiguous) whose first pixels
    /// in scan order are the pixels `compact(img, threshold, order)` keeps (the threshold as
    /// `compact`'s), in `order`, and whose other pixels are zeros.
    #[pyo3(signature = (img, threshold, order = "scan"))]
    fn compacted_image<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        threshold: &Bound<'py, PyAny>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = parse_order(order)?;
        crate::compact::compacted_image(py, &self.engine, img, threshold, order)
    }

    /// The blobs of an image of any format (uint8 `(H, W)`, `(H, W, 3)`, `(H, W, 4)`; uint16
    /// or float32 `(H, W)`, `(H, W, 4)`): the connected components (`connectivity` 4 or 8) of
    /// the pixels whose key is above `threshold` (as `compact`'s; NaN never), those of
    /// `min_area..=max_area` pixels kept, numbered 1..=n in the scan order of their first
    /// pixels. Returns `(labels, stats)`: the `(H, W)` uint32 label image (0 for background;
    /// None for `labels=False`) and a structured array of `BLOB_DTYPE` (`BLOB_F32_DTYPE` for
    /// float32), one record a blob in label order; the centroids weigh each pixel by its key
    /// minus `background`. Of float32 the weights are exact integers in units of `2^-s`, `s`
    /// from the largest key (`blob_weight_exponent`) or `weight_exponent`.
    #[pyo3(signature = (img, threshold, connectivity = 8, min_area = 1, max_area = None, background = None, labels = true, weight_exponent = None))]
    #[allow(clippy::too_many_arguments)]
    fn blobs<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        threshold: &Bound<'py, PyAny>,
        connectivity: i64,
        min_area: i128,
        max_area: Option<i128>,
        background: Option<&Bound<'py, PyAny>>,
        labels: bool,
        weight_exponent: Option<i32>,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, Bound<'py, PyAny>)> {
        let zero = 0i32.into_pyobject(py)?.into_any();
        let args = BlobArgs {
            threshold,
            connectivity,
            min_area,
            max_area,
            background: background.unwrap_or(&zero),
            labels,
            weight_exponent,
        };
        crate::blobs::blobs(py, &self.engine, img, args, false)
    }

    /// `blobs` with every area and the label image, the statistics of `_BLOB_EXACT_DTYPE`:
    /// four more fields, the quotients and remainders of `Σ w·x` and `Σ w·y` by `Σ w` (for
    /// `clpix.dask`, which adds the exact sums of the chunks' parts of a blob; of float32, the
    /// integer weights in the unit `weight_exponent` fixes and the peak as its order key).
    #[pyo3(signature = (img, threshold, connectivity = 8, background = None, weight_exponent = None))]
    fn _blobs_exact<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        threshold: &Bound<'py, PyAny>,
        connectivity: i64,
        background: Option<&Bound<'py, PyAny>>,
        weight_exponent: Option<i32>,
    ) -> PyResult<(Option<Bound<'py, PyAny>>, Bound<'py, PyAny>)> {
        let zero = 0i32.into_pyobject(py)?.into_any();
        let args = BlobArgs {
            threshold,
            connectivity,
            min_area: 1,
            max_area: None,
            background: background.unwrap_or(&zero),
            labels: true,
            weight_exponent,
        };
        crate::blobs::blobs(py, &self.engine, img, args, true)
    }

    /// The intensity-weighted centroid of the `(2 radius + 1)²` window around each of `points`
    /// (clipped to the image) in an image of any format (as `blobs` takes), each pixel weighing
    /// `max(key − background, 0)` (of float32 exact integers in units of `2^-s`, `s` from the
    /// windows' largest key), from exact integer sums: a structured array of `CENTROID_DTYPE`
    /// (x, y, weight_sum; `CENTROID_F32_DTYPE` for float32), one record a point, in order;
    /// where every weight is 0 the centre is the point itself. `points`: an `(N, 2)` integer
    /// array-like of `(x, y)`, or records with fields `x` and `y` (as `extremes` gives).
    #[pyo3(signature = (img, points, radius, background = None))]
    fn centroids<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        points: &Bound<'py, PyAny>,
        radius: i64,
        background: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let zero = 0i32.into_pyobject(py)?.into_any();
        let background = background.unwrap_or(&zero);
        crate::centroids::centroids(py, &self.engine, img, points, radius, background)
    }

    /// Separable Gaussian blur of an image of any format (uint8, uint16 or float32, shaped
    /// `(H, W)`, `(H, W, 3)` (uint8) or `(H, W, 4)`), each channel alone: 8-bit channels in
    /// fixed point, 16-bit ones with 24-bit weights, float32 with one fused multiply-add a tap;
    /// into `out` (a C-contiguous array of the image's shape and dtype, returned) when given,
    /// which may be the image itself (copied first), except for an `(H, W, 4)` uint8 image.
    #[pyo3(signature = (img, radius, sigma = None, border = "clamp", out = None))]
    fn gaussian_blur<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        radius: i64,
        sigma: Option<f64>,
        border: &str,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let blur = blur_params(radius, sigma, border)?;
        crate::blur::gaussian_blur(py, &self.engine, img, blur, out)
    }

    /// The image held by this engine (on its device; in host memory for the CPU engine): a
    /// `DeviceImage` of `img`'s shape and dtype (any format), which every operation takes in
    /// place of an array, read where it is.
    fn upload<'py>(&self, py: Python<'py>, img: &Bound<'py, PyAny>) -> PyResult<DeviceImage> {
        hold(py, &self.engine, img, UploadJob)
    }

    /// The pixels of a `DeviceImage`, read back: an array of its shape and dtype.
    fn download<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, DeviceImage>,
    ) -> PyResult<Bound<'py, PyAny>> {
        img.get().download(py, &self.engine)
    }

    /// `gaussian_blur` with the result kept on the engine: a `DeviceImage` (of any format, from
    /// an array or a `DeviceImage`), for the next operation without a round trip.
    #[pyo3(signature = (img, radius, sigma = None, border = "clamp"))]
    fn gaussian_blur_device<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
        radius: i64,
        sigma: Option<f64>,
        border: &str,
    ) -> PyResult<DeviceImage> {
        let blur = blur_params(radius, sigma, border)?;
        hold(py, &self.engine, img, BlurDeviceJob(blur))
    }

    /// The `height`×`width` window of a `DeviceImage` whose top-left pixel is row `y`, column
    /// `x`, as a new `DeviceImage` (copied by the device on an OpenCL engine).
    fn crop<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, DeviceImage>,
        y: i64,
        x: i64,
        height: i64,
        width: i64,
    ) -> PyResult<DeviceImage> {
        holding::crop(py, &self.engine, img.get(), [y, x, height, width])
    }

    /// `DeviceImage`s (or arrays, uploaded first) of one format side by side and row on row, as
    /// one `DeviceImage`, like `numpy.block`: a list of rows, each a list of images of one
    /// height, every row of one width.
    fn assemble<'py>(&self, py: Python<'py>, rows: &Bound<'py, PyAny>) -> PyResult<DeviceImage> {
        holding::assemble(py, &self.engine, rows)
    }

    /// Exclusive prefix sum of a 1-D uint32 array (wrapping).
    fn exclusive_scan<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let values = array_u32(values)?;
        let data = values.as_slice();
        let out = py.detach(|| self.engine.exclusive_scan(data)).py()?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Luminance of every pixel: an `H×W` uint16 array.
    fn luminance<'py>(
        &self,
        py: Python<'py>,
        img: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<u16>>> {
        luminance(py, img)
    }
}

/// Luminance of every pixel of an RGBA8 image: an `H×W` uint16 array,
/// `(1023 · (21 r + 72 g + 7 b)) / 25500` (integer division).
#[pyfunction]
pub(crate) fn luminance<'py>(
    py: Python<'py>,
    img: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<u16>>> {
    let img = image_u8(img)?;
    let (w, h) = img.size();
    let view = img.view()?;
    let out = py.detach(|| luminance_of(&view));
    PyArray1::from_vec(py, out).reshape([h as usize, w as usize])
}

/// The weights' exponent `s` of the blobs of a float32 image whose largest key above the
/// threshold is `largest`, the background `background` (both as float32): the largest `s` whose
/// weights `⌊k·2^s⌋ − ⌊b·2^s⌋` fit 32 bits (`clpix.dask` fixes it for every chunk of an image).
#[pyfunction]
pub(crate) fn blob_weight_exponent(largest: f64, background: f64) -> PyResult<i32> {
    clpix::blob_weight_exponent(largest as f32, background as f32).map_err(to_py)
}

/// Every OpenCL device found (empty where there is no OpenCL loader or platform).
#[pyfunction]
pub(crate) fn devices(py: Python<'_>) -> PyResult<Vec<Device>> {
    match py.detach(clpix::devices) {
        Ok(list) => Ok(list.iter().map(Device::of).collect()),
        Err(clpix::Error::OpenClUnavailable { .. }) => Ok(Vec::new()),
        Err(e) => Err(to_py(e)),
    }
}

/// Seconds each of `reps` runs of operation `op` took inside Rust (no Python in the loop),
/// for the benchmark's overhead figure. `op`: brightest, darkest, luminance_stats,
/// histogram_rgba, histogram_luminance, compact, compact_sorted, compacted_image,
/// gaussian_blur, luminance.
#[pyfunction]
#[pyo3(signature = (engine, op, img, reps, threshold = 512, radius = 8))]
pub(crate) fn _time_rust(
    py: Python<'_>,
    engine: &PyEngine,
    op: &str,
    img: &Bound<'_, PyAny>,
    reps: usize,
    threshold: u16,
    radius: u32,
) -> PyResult<Vec<f64>> {
    let img = image_u8(img)?;
    let view = img.view()?;
    let e = &engine.engine;
    let blur = GaussianBlur::new(radius);
    let run = |v: ImageView<'_>| -> clpix::Result<()> {
        match op {
            "brightest" => e.extreme(v, clpix::Extreme::Brightest).map(drop),
            "darkest" => e.extreme(v, clpix::Extreme::Darkest).map(drop),
            "luminance_stats" => e.luminance_stats(v).map(drop),
            "histogram_rgba" => e.histogram_rgba(v).map(drop),
            "histogram_luminance" => e.histogram_luminance(v).map(drop),
            "compact" => e
                .compact(v, threshold, clpix::CompactOrder::ScanOrder)
                .map(|h| drop(hit_bytes(&h))),
            "compact_sorted" => e
                .compact(v, threshold, clpix::CompactOrder::LuminanceDescending)
                .map(|h| drop(hit_bytes(&h))),
            "compacted_image" => e
                .compacted_image(v, threshold, CompactOrder::ScanOrder)
                .map(drop),
            "gaussian_blur" => e.gaussian_blur(v, &blur).map(drop),
            "luminance" => {
                drop(luminance_of(&v));
                Ok(())
            }
            _ => Err(clpix::Error::InvalidParameter {
                name: "op",
                value: op.into(),
                expected: "an operation name",
            }),
        }
    };
    py.detach(|| {
        (0..reps)
            .map(|_| {
                let t = std::time::Instant::now();
                run(view).map(|()| t.elapsed().as_secs_f64())
            })
            .collect::<clpix::Result<Vec<f64>>>()
    })
    .map_err(|e| match e {
        clpix::Error::InvalidParameter { name: "op", .. } => value_error(e.to_string()),
        e => to_py(e),
    })
}
