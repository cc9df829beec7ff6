//! The one error type of the crate.

/// What went wrong, with enough context to act on it.
///
/// Every public function of clpix returns [`Result`]; nothing panics on bad input.
///
/// ```
/// use clpix::{Engine, Error, ImageView};
/// let pixels = [0u8; 4];
/// // Two pixels claimed, one given.
/// let err = ImageView::new(&pixels, 2, 1).unwrap_err();
/// assert!(matches!(err, Error::BufferTooShort { .. }));
/// println!("{err}");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The image has no pixels but the operation needs at least one.
    #[error("{operation} needs at least one pixel, but the image is {width}×{height}")]
    EmptyImage {
        /// The operation that was asked for.
        operation: &'static str,
        /// Image width.
        width: u32,
        /// Image height.
        height: u32,
    },
    /// The pixel buffer is shorter than its width, height and stride require.
    #[error(
        "pixel buffer too short: a {width}×{height} RGBA8 image with a row stride of {stride} bytes \
         needs {needed} bytes, but {actual} were given"
    )]
    BufferTooShort {
        /// Image width.
        width: u32,
        /// Image height.
        height: u32,
        /// Bytes between row starts.
        stride: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        actual: usize,
    },
    /// A row stride below `4 * width` bytes.
    #[error("row stride {stride} bytes is below 4 × width = {min} bytes; rows would overlap")]
    StrideTooSmall {
        /// The stride given.
        stride: usize,
        /// The smallest valid stride.
        min: usize,
    },
    /// Width × height (× bytes per pixel) does not fit the address space or the u32 counters.
    #[error("image of {width}×{height} pixels is too large: {reason}")]
    ImageTooLarge {
        /// Image width.
        width: u64,
        /// Image height.
        height: u64,
        /// Which limit it exceeds.
        reason: &'static str,
    },
    /// A parameter out of its range (threshold, sigma, radius, k …).
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// The valid range, in words.
        expected: &'static str,
    },
    /// No usable OpenCL: no loader, no platform, or no device.
    #[error("no OpenCL device is usable: {reason}")]
    OpenClUnavailable {
        /// What was missing (the loader, a platform, a device), and what to install.
        reason: String,
    },
    /// `CLPIX_DEVICE` or [`Engine::with_device`](crate::Engine::with_device) named no device.
    #[error("no OpenCL device matches {query:?}; `cargo run --example devices` lists them")]
    NoSuchDevice {
        /// What was asked for.
        query: String,
    },
    /// An environment variable has a value clpix does not understand.
    #[error("environment variable {var}={value:?} is not understood: {expected}")]
    InvalidEnvironment {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
    /// A tuning setting ([`Tuning::set`](crate::tuning::Tuning::set)) has a name or value
    /// clpix does not understand, or forces a kernel variant this device cannot run.
    #[error("tuning setting {setting}={value:?} is not understood: {expected}")]
    InvalidTuning {
        /// The setting (a field of [`Tuning`](crate::tuning::Tuning), such as
        /// `compact_relocate` or `blur.band`).
        setting: &'static str,
        /// Its value.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
    /// An OpenCL call failed.
    #[error("OpenCL error {code} ({name}) in {call}")]
    OpenCl {
        /// What clpix was doing.
        call: &'static str,
        /// The OpenCL error code.
        code: i32,
        /// Its symbolic name.
        name: &'static str,
    },
    /// A kernel source did not compile for the device; `log` is the compiler's build log.
    #[error("OpenCL program {program:?} failed to build for {device}:\n{log}")]
    KernelBuild {
        /// The program (the `.cl` file's stem).
        program: &'static str,
        /// The device it was built for.
        device: String,
        /// The build log.
        log: String,
    },
    /// A program a call needs is still building on a thread of the engine's own. Only an
    /// automatic engine's calls small enough for the CPU path meet it, and the CPU path then
    /// answers (see [`Tuning::host_while_building`](crate::tuning::Tuning::host_while_building)): no
    /// public function returns it.
    ///
    /// ```
    /// let e = clpix::Error::ProgramBuilding { program: "reduce", device: "a GPU".into() };
    /// assert!(!e.is_device_failure());
    /// ```
    #[error("the {program} program is still building for {device}")]
    ProgramBuilding {
        /// The program (the `.cl` file's stem).
        program: &'static str,
        /// The device it is building for.
        device: String,
    },
    /// `CLPIX_KERNEL_DIR` is set but a kernel file could not be read from it.
    #[error("cannot read kernel source {path}: {reason}")]
    KernelSource {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The data does not fit the device even when split into parts.
    #[error("{what} needs {needed} bytes in one buffer, but the device allows at most {limit}")]
    TooLargeForDevice {
        /// What did not fit.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// The device's (or the configured) limit.
        limit: u64,
    },
    /// A kernel needs more of the device than it allows: work-items a group, local memory, or
    /// other resources the driver refused at launch (`CL_OUT_OF_RESOURCES`). Automatic engines
    /// ([`Engine::new`](crate::Engine::new)) answer such a call from the CPU instead, with the
    /// same bits; an engine asked for OpenCL explicitly returns this error.
    #[error(
        "kernel {kernel} needs {needed} {what} on {device}, which allows {limit}; an automatic \
         engine (Engine::new) answers from the CPU instead, as does Engine::cpu()"
    )]
    DeviceLimit {
        /// The kernel, as `program/kernel`.
        kernel: String,
        /// The device.
        device: String,
        /// What ran short, in words (`work-items a group`, `bytes of local memory`).
        what: &'static str,
        /// How much the kernel needed.
        needed: u64,
        /// How much the device (or the engine's tuning) allows; 0 where the driver did not say.
        limit: u64,
    },
    /// The device's driver cannot run what was asked of it correctly (found when the engine
    /// opened: see docs/design.md, "Other implementations"), such as the contiguous kernel
    /// layout on a driver that stops long loops. The reason says what to ask for instead.
    #[error("{what} is not available on {device}: {reason}")]
    Unsupported {
        /// What was asked for.
        what: &'static str,
        /// The device.
        device: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A [`DeviceImage`](crate::DeviceImage) was passed to an engine that did not make it.
    #[error(
        "this DeviceImage lives on {owner}, not on this engine ({this}); \
         upload the image with this engine, or download it first"
    )]
    ForeignDeviceImage {
        /// Where the image lives.
        owner: String,
        /// The engine it was given to.
        this: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the error lies with the device or its driver rather than with the input: an
    /// OpenCL call that failed, a kernel that did not build or could not be read, a device
    /// limit, data too large for the device, no device. Another device, or the CPU, may succeed
    /// where this one failed: an [`EnginePool`](crate::EnginePool) gives such a job to another
    /// engine and stops giving work to this one.
    ///
    /// ```
    /// use clpix::{Engine, Error};
    /// let err = Engine::cpu().extreme(&image::RgbaImage::new(0, 0), clpix::Extreme::Brightest).unwrap_err();
    /// assert!(!err.is_device_failure()); // an empty image is the input's fault
    /// ```
    pub fn is_device_failure(&self) -> bool {
        matches!(
            self,
            Error::OpenCl { .. }
                | Error::KernelBuild { .. }
                | Error::KernelSource { .. }
                | Error::TooLargeForDevice { .. }
                | Error::DeviceLimit { .. }
                | Error::Unsupported { .. }
                | Error::OpenClUnavailable { .. }
                | Error::NoSuchDevice { .. }
        )
    }

    /// Wraps an OpenCL error code with the call that produced it.
    pub(crate) fn cl(call: &'static str, code: i32) -> Self {
        Error::OpenCl {
            call,
            code,
            name: cl3::error_codes::error_text(code),
        }
    }

    #[allow(dead_code)]
    pub(crate) fn invalid(
        name: &'static str,
        value: impl ToString,
        expected: &'static str,
    ) -> Self {
        Error::InvalidParameter {
            name,
            value: value.to_string(),
            expected,
        }
    }
}
