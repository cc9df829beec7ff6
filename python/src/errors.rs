//! clpix's errors as Python exceptions, each carrying clpix's own message.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::{create_exception, PyErr};

create_exception!(
    clpix,
    ClpixError,
    PyRuntimeError,
    "A device or driver failure: no usable OpenCL device, an OpenCL call or kernel build that \
     failed, data too large for the device, a kernel needing more than the device allows. Bad \
     input is a ValueError or TypeError instead."
);

/// Maps a clpix error to `ValueError` (bad input, parameter or environment) or `ClpixError`
/// (a device or driver failure), with clpix's message.
pub(crate) fn to_py(e: clpix::Error) -> PyErr {
    use clpix::Error as E;
    let msg = e.to_string();
    match e {
        E::EmptyImage { .. }
        | E::BufferTooShort { .. }
        | E::StrideTooSmall { .. }
        | E::ImageTooLarge { .. }
        | E::InvalidParameter { .. }
        | E::InvalidEnvironment { .. }
        | E::InvalidTuning { .. }
        | E::NoSuchDevice { .. } => PyValueError::new_err(msg),
        _ => ClpixError::new_err(msg),
    }
}

/// `Result<T, clpix::Error>` into `PyResult<T>`.
pub(crate) trait IntoPyResult<T> {
    /// Maps the error with [`to_py`].
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for clpix::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}

/// A `ValueError` carrying clpix's own `InvalidParameter` message.
pub(crate) fn invalid(name: &'static str, value: impl ToString, expected: &'static str) -> PyErr {
    to_py(clpix::Error::InvalidParameter {
        name,
        value: value.to_string(),
        expected,
    })
}

/// A `TypeError` with `msg`.
pub(crate) fn type_error(msg: String) -> PyErr {
    PyTypeError::new_err(msg)
}

/// A `ValueError` with `msg`.
pub(crate) fn value_error(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}
