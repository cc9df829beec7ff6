//! Python bindings of clpix (`clpix._clpix`): NumPy arrays in, NumPy arrays out, the same bits
//! as the Rust library. The Python package `clpix` re-exports everything here and adds
//! module-level functions on a default engine and `clpix.dask`.

mod blobs;
mod blur;
mod centroids;
mod compact;
mod convert;
mod engine;
mod errors;
mod formats;
mod held;
mod holding;
mod keysum;
mod params;
mod records;
mod types;

use pyo3::prelude::*;

#[pymodule]
fn _clpix(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<engine::PyEngine>()?;
    m.add_class::<types::Hit>()?;
    m.add_class::<types::LuminanceStats>()?;
    m.add_class::<types::FormatHit>()?;
    m.add_class::<types::FloatStats>()?;
    m.add_class::<types::Device>()?;
    m.add_class::<held::DeviceImage>()?;
    m.add_function(wrap_pyfunction!(engine::devices, m)?)?;
    m.add_function(wrap_pyfunction!(engine::luminance, m)?)?;
    m.add_function(wrap_pyfunction!(engine::blob_weight_exponent, m)?)?;
    m.add_function(wrap_pyfunction!(engine::_time_rust, m)?)?;
    m.add_function(wrap_pyfunction!(keysum::_f32_key_sum, m)?)?;
    m.add("ClpixError", py.get_type::<errors::ClpixError>())?;
    m.add("HIT_DTYPE", convert::hit_dtype(py)?)?;
    m.add(
        "BLOB_DTYPE",
        blobs::blob_dtype(py, blobs::Records::Integer)?,
    )?;
    m.add(
        "BLOB_F32_DTYPE",
        blobs::blob_dtype(py, blobs::Records::Float)?,
    )?;
    m.add("CENTROID_DTYPE", centroids::centroid_dtype(py, false)?)?;
    m.add("CENTROID_F32_DTYPE", centroids::centroid_dtype(py, true)?)?;
    m.add(
        "_BLOB_EXACT_DTYPE",
        blobs::blob_dtype(py, blobs::Records::Exact)?,
    )?;
    m.add("MAX_BINS", clpix::MAX_BINS)?;
    m.add("MAX_LUMINANCE", clpix::MAX_LUMINANCE)?;
    m.add("MAX_RADIUS", clpix::MAX_RADIUS)?;
    Ok(())
}
