"""Type stubs of clpix's extension module (re-exported by ``clpix``)."""

from typing import Final, List, Literal, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

Backend = Literal["auto", "cpu", "opencl"]
BorderMode = Literal["clamp", "reflect", "wrap", "zero"]
Order = Literal["scan", "luminance"]
Which = Literal["brightest", "darkest"]
Connectivity = Literal[4, 8]
ImageU8 = npt.NDArray[np.uint8]
ImageF32 = npt.NDArray[np.float32]
ImageU16 = npt.NDArray[np.uint16]
AnyImage = Union[ImageU8, ImageU16, ImageF32, "DeviceImage"]
"""An image of any pixel format: ``uint8``, ``uint16`` or ``float32`` of shape ``(H, W)``
(mono), ``(H, W, 3)`` (RGB8, ``uint8`` only) or ``(H, W, 4)`` (RGBA), any strides."""
Records = np.ndarray
"""A 1-D structured array of :data:`HIT_DTYPE`: fields ``x``, ``y`` (uint32), ``luminance``
(uint16) and ``rgba`` (4 × uint8)."""
FormatRecords = np.ndarray
"""The records of :meth:`Engine.compact` and :meth:`Engine.extremes` on an image of another
format than RGBA8: a 1-D
structured array (packed, native byte order) of fields ``x``, ``y`` (uint32), ``key`` (the
key's dtype: uint8 for mono8; uint16 for mono16, RGB8 (the luminance, 0..=1023) and RGBA16;
float32 for the float32 formats, −0 given as +0) and ``value`` (the pixel's channels, in the
image's dtype: of shape ``()`` for mono, ``(3,)`` or ``(4,)`` for colour)."""

Centroids = np.ndarray
"""The records of :meth:`Engine.centroids`: a 1-D structured array of :data:`CENTROID_DTYPE`,
one record a point, in the points' order."""

BlobStats = np.ndarray
"""The statistics of :meth:`Engine.blobs`: a 1-D structured array of :data:`BLOB_DTYPE`, one
record a blob, in label order."""

HIT_DTYPE: Final[np.dtype]
"""The records' dtype: ``[("x", "<u4"), ("y", "<u4"), ("luminance", "<u2"), ("rgba", "u1", (4,))]``."""
BLOB_DTYPE: Final[np.dtype]
"""The blob records' dtype (packed, native byte order): ``label`` (u4), ``area`` (u8), the
inclusive bounding box ``min_x``, ``min_y``, ``max_x``, ``max_y`` (u4), ``first_x`` (u4: the
column of the blob's first pixel in scan order, in row ``min_y``), ``key_sum`` (u8: Σ key),
``weight_sum`` (u8: Σ (key − background)), ``centroid_x``, ``centroid_y`` (f8: the
weighted centroid, pixel centres at integer coordinates), ``peak_x``, ``peak_y``, ``peak_key``
(u4: the greatest key, the first in scan order among equals)."""
BLOB_F32_DTYPE: Final[np.dtype]
"""The blob records of float32 images: :data:`BLOB_DTYPE` with ``key_sum`` and ``weight_sum``
as f8 (the exact integer sums of the weights times their unit ``2^-s``, rounded once; the
key sum of a float image is its weight sum) and ``peak_key`` as f4."""
CENTROID_F32_DTYPE: Final[np.dtype]
"""The centroid records of float32 images: :data:`CENTROID_DTYPE` with ``weight_sum`` as f8
(the exact integer sum of the weights times their unit ``2^-s``, rounded once)."""
CENTROID_DTYPE: Final[np.dtype]
"""The records of :meth:`Engine.centroids` (packed, native byte order): ``x``, ``y`` (f8: the
weighted centre, pixel centres at integer coordinates) and ``weight_sum`` (u8: Σ max(key −
background, 0) over the window)."""
_BLOB_EXACT_DTYPE: Final[np.dtype]
""":data:`BLOB_DTYPE` and ``wx_q``, ``wx_r``, ``wy_q``, ``wy_r`` (u8): ``Σ w·x = wx_q · Σ w +
wx_r`` with ``wx_r < Σ w``, the same in y (for ``clpix.dask``)."""
MAX_BINS: Final[int]
"""The most bins a histogram may have, 2^20."""
MAX_LUMINANCE: Final[int]
"""The largest luminance, 1023."""
MAX_RADIUS: Final[int]
"""The largest blur radius, 2^20."""

class ClpixError(RuntimeError):
    """A device or driver failure (no usable OpenCL device, a failed OpenCL call or kernel
    build, data too large for the device). Bad input is a ValueError or TypeError instead."""

class Hit:
    """One pixel: column ``x``, row ``y``, ``luminance`` (0..=1023) and ``rgba``."""

    @property
    def x(self) -> int: ...
    @property
    def y(self) -> int: ...
    @property
    def luminance(self) -> int: ...
    @property
    def rgba(self) -> Tuple[int, int, int, int]: ...
    @property
    def format(self) -> Literal["rgba8"]:
        """``"rgba8"``, as :attr:`FormatHit.format`."""
    @property
    def key(self) -> int:
        """The luminance, as :attr:`FormatHit.key`."""
    @property
    def value(self) -> Tuple[int, int, int, int]:
        """The RGBA, as :attr:`FormatHit.value`."""
    def __init__(self, x: int, y: int, luminance: int, rgba: Tuple[int, int, int, int]) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class FormatHit:
    """One pixel of an image of a format other than RGBA8 (whose pixels are :class:`Hit`):
    its ``format``, column ``x``, row ``y``, ``key`` (what it was ranked by) and ``value`` (its
    channels). Keys: mono, the value; RGB8, the luminance ``(1023 (21 r + 72 g + 7 b)) //
    25500`` (0..=1023); RGBA16, ``(21 r + 72 g + 7 b) // 100``; RGBA float32,
    ``fma(0.07, b, fma(0.72, g, 0.21 r))`` in float32 (−0 as +0)."""

    @property
    def format(self) -> Literal["mono8", "mono16", "mono-f32", "rgb8", "rgba16", "rgba-f32"]: ...
    @property
    def x(self) -> int: ...
    @property
    def y(self) -> int: ...
    @property
    def key(self) -> Union[int, float]:
        """An int for integer formats, a float (an f32's value) for float32."""
    @property
    def value(self) -> Union[Tuple[int, ...], Tuple[float, ...]]:
        """The pixel's 1, 3 or 4 channels: ints, or floats for float32."""
    def __init__(
        self,
        format: str,
        x: int,
        y: int,
        key: Union[int, float],
        value: Union[Tuple[int, ...], Tuple[float, ...]],
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class LuminanceStats:
    """Luminance statistics: ``sum`` (exact), ``count``, ``mean`` (``sum / count`` in
    float64), ``min`` and ``max``."""

    @property
    def sum(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def mean(self) -> float: ...
    @property
    def min(self) -> int: ...
    @property
    def max(self) -> int: ...
    def __init__(self, sum: int, count: int, min: int, max: int) -> None: ...
    def __eq__(self, other: object) -> bool: ...

class FloatStats:
    """Statistics of the float32 keys of an image (mono: the values; RGBA: the luminance), NaN
    keys left out: ``sum`` (the exact sum, rounded once to float64; ±inf where infinite keys of
    one sign are present, NaN where both), ``count`` (keys that are not NaN), ``mean``
    (``sum / count`` in float64), ``min`` and ``max`` (float32 values, −0 as +0)."""

    @property
    def sum(self) -> float: ...
    @property
    def count(self) -> int: ...
    @property
    def mean(self) -> float: ...
    @property
    def min(self) -> float: ...
    @property
    def max(self) -> float: ...
    def __init__(self, sum: float, count: int, min: float, max: float) -> None: ...
    def __eq__(self, other: object) -> bool: ...

class DeviceImage:
    """An image an engine holds (on its device; in host memory for the CPU engine), made by
    :meth:`Engine.upload` or :meth:`Engine.gaussian_blur_device`. Every operation of
    :class:`Engine` takes it in place of an array (an engine reads an image another engine
    holds back first); :meth:`Engine.download` reads it back."""

    @property
    def shape(self) -> Tuple[int, ...]:
        """``(H, W)`` or ``(H, W, channels)``, as the array it came from."""
    @property
    def dtype(self) -> np.dtype: ...
    @property
    def size(self) -> int:
        """The number of channel values, as NumPy's ``size``."""

class Device:
    """One OpenCL device, as :func:`devices` lists it."""

    @property
    def index(self) -> int:
        """Position in ``devices()``; ``Engine(device=index)`` takes it."""
    @property
    def name(self) -> str: ...
    @property
    def platform(self) -> str: ...
    @property
    def vendor(self) -> str: ...
    @property
    def device_type(self) -> str:
        """``"GPU"``, ``"CPU"``, ``"accelerator"`` or ``"other"``."""
    @property
    def compute_units(self) -> int: ...
    @property
    def global_mem_bytes(self) -> int: ...
    @property
    def max_alloc_bytes(self) -> int: ...
    @property
    def local_mem_bytes(self) -> int: ...
    @property
    def max_work_group_size(self) -> int: ...
    @property
    def opencl_c_version(self) -> str: ...
    @property
    def driver_version(self) -> str: ...

class Engine:
    """Runs clpix's operations on one backend: an OpenCL device, or the CPU with rayon; both
    give the same results, bit for bit.

    Images are ``(H, W, 4)`` arrays of dtype ``uint8`` (RGBA8) of any strides: a C-contiguous
    array, or one with padded rows (pixels contiguous within a row), is read in place; other
    layouts are copied first. :meth:`gaussian_blur`, :meth:`extreme`,
    :meth:`luminance_stats`, :meth:`histogram`, :meth:`histogram_keys` and :meth:`compact`
    take every format (:data:`AnyImage`), read in place likewise; :meth:`blobs` and
    :meth:`centroids` the integer-key ones. The GIL is released while clpix
    works, so threads run in parallel; an engine may be shared between threads.
    Luminance is ``(1023 * (21 r + 72 g + 7 b)) // 25500`` (0..=1023); ties go to the smallest
    scan index ``y * W + x``.
    """

    def __init__(self, backend: Backend = "auto", device: Union[None, int, str, Device] = None) -> None:
        """``"auto"``: the best GPU or accelerator, else the CPU (honours ``CLPIX_BACKEND`` and
        ``CLPIX_DEVICE``); ``"cpu"``: rayon; ``"opencl"``: the best OpenCL device of any type, or
        ``device`` (an index into :func:`devices`, part of a device name, or a :class:`Device`).
        Raises ``ClpixError`` when OpenCL is asked for and unusable, ``ValueError`` for a bad
        backend name or a device that matches nothing."""
    @property
    def backend(self) -> str:
        """What runs, and why: the text of Rust's ``engine.backend()``, e.g.
        ``"CPU: rayon, 2 threads (auto: …)"`` or ``"OpenCL: NVIDIA H100 … (NVIDIA CUDA 580…)"``."""
    @property
    def kind(self) -> Literal["cpu", "opencl"]: ...
    @property
    def device(self) -> Optional[Device]:
        """The OpenCL device, or None on the CPU backend."""
    @overload
    def extreme(self, img: ImageU8, which: Which) -> Union[Hit, FormatHit]: ...
    @overload
    def extreme(self, img: Union[ImageU16, ImageF32], which: Which) -> FormatHit: ...
    def extreme(self, img: AnyImage, which: Which) -> Union[Hit, FormatHit]:
        """The pixel of largest (``"brightest"``) or smallest (``"darkest"``) key (ties: the
        first in scan order) of an image of any format (:data:`AnyImage`): the luminance for
        colour, the value for mono; a float32 pixel whose key is NaN is never chosen. A
        :class:`Hit` for RGBA8 (``(H, W, 4)`` uint8), a :class:`FormatHit` otherwise.
        ValueError for an image without pixels (or whose every key is NaN) or another
        ``which``; TypeError for another dtype, ValueError for another shape."""
    @overload
    def luminance_stats(self, img: Union[ImageU8, ImageU16]) -> LuminanceStats: ...
    @overload
    def luminance_stats(self, img: ImageF32) -> FloatStats: ...
    def luminance_stats(self, img: AnyImage) -> Union[LuminanceStats, FloatStats]:
        """Sum, count, mean, min and max of the keys (luminance for colour, value for mono) of
        an image of any format: :class:`LuminanceStats` for integer formats,
        :class:`FloatStats` for float32 (NaN keys left out). ValueError for an image without
        pixels (or whose every key is NaN)."""
    def histogram(self, img: AnyImage, bins: int, range: Tuple[float, float]) -> npt.NDArray[np.uint32]:
        """``(channels, bins)`` uint32: ``h[c, b]`` counts the pixels whose channel c falls in
        bin b of ``bins`` (1..=MAX_BINS) bins over ``range = (lo, hi)``; values outside the
        range (and NaN) are not counted. Integer formats: ``lo`` and ``hi`` integers (else
        ValueError), value v in ``lo..=hi`` goes to bin ``(v - lo) * bins // (hi - lo + 1)``.
        float32: the bins of ``numpy.histogram(values.astype(numpy.float64), bins, range)``,
        exactly (edges in float64; note that ``numpy.histogram`` of a float32 array itself
        uses float32 edges, which may put a value next to an edge in the other bin). An image
        without pixels gives zeros."""
    def histogram_keys(self, img: AnyImage, bins: int, range: Tuple[float, float]) -> npt.NDArray[np.uint32]:
        """``(bins,)`` uint32: the histogram of the keys (see :meth:`extreme`), with the bins
        of :meth:`histogram`; NaN keys are not counted."""
    def extremes(
        self, img: AnyImage, which: Which, k: int, min_distance: float = 0.0
    ) -> Union[Records, FormatRecords]:
        """The k brightest (or darkest) pixels at least ``min_distance`` apart of an image of
        any format (:data:`AnyImage`): candidates by key (see :class:`FormatHit`: the luminance
        of colour, the value of mono) descending (ascending for ``"darkest"``; ties in scan
        order; float32 keys numerically, −0 = +0, a NaN key never a candidate), each taken when
        ``dx² + dy² ≥ min_distance²`` to all taken before it (the distance as float32, compared
        in float64). ``min_distance = 0``: plainly the top k; fewer than k when the image runs
        out. RGBA8 (``(H, W, 4)`` uint8) gives :data:`Records` (x, y, luminance, rgba), the
        other formats :data:`FormatRecords` (x, y, key, value), as :meth:`compact`. ValueError
        for a negative or NaN ``min_distance``, a negative ``k``, another ``which`` or shape;
        TypeError for another dtype."""
    def histogram_rgba(self, img: Union[ImageU8, DeviceImage]) -> npt.NDArray[np.uint32]:
        """``(4, 256)`` uint32: ``h[c, v]`` counts the pixels whose channel c (R, G, B, A) is v."""
    def histogram_luminance(self, img: Union[ImageU8, DeviceImage]) -> npt.NDArray[np.uint32]:
        """``(1024,)`` uint32: ``h[l]`` counts the pixels of luminance l."""
    def compact(self, img: AnyImage, threshold: Union[int, float], order: Order = "scan") -> Union[Records, FormatRecords]:
        """The pixels of an image of any format (:data:`AnyImage`) whose key (see
        :class:`FormatHit`: the luminance of colour, the value of mono) is strictly above
        ``threshold``, in ``order``: ``"scan"``, or ``"luminance"`` (key descending; equal keys
        in scan order). ``threshold``: an integer in 0..= the format's largest key (255 for
        mono8; 1023 for RGB8 and RGBA8; 65535 for mono16 and RGBA16), or, for float32 images,
        a number, rounded to float32 (as NumPy compares a float32 array with a Python float);
        a float32 pixel whose key is NaN is never kept. RGBA8 (``(H, W, 4)`` uint8) gives
        :data:`Records` (x, y, luminance, rgba), the other formats :data:`FormatRecords` (x, y,
        key, value). ValueError for a threshold out of range, NaN or another ``order``;
        TypeError for a float threshold on an integer format, another dtype; ValueError for
        another shape. An image without pixels gives no records."""
    @overload
    def compacted_image(self, img: ImageU8, threshold: int, order: Order = "scan") -> ImageU8: ...
    @overload
    def compacted_image(self, img: ImageU16, threshold: int, order: Order = "scan") -> ImageU16: ...
    @overload
    def compacted_image(
        self, img: ImageF32, threshold: Union[int, float], order: Order = "scan"
    ) -> ImageF32: ...
    def compacted_image(
        self, img: AnyImage, threshold: Union[int, float], order: Order = "scan"
    ) -> AnyImage:
        """A C-contiguous array of the image's shape and dtype (any format, :data:`AnyImage`)
        whose first n pixels (scan order) are the values of the n pixels :meth:`compact` keeps
        (key strictly above ``threshold``, the threshold as :meth:`compact`'s, with its
        errors), in ``order`` (``"scan"`` or ``"luminance"``), and whose other pixels are zeros
        (every channel, alpha included)."""
    @overload
    def gaussian_blur(
        self,
        img: ImageU8,
        radius: int,
        sigma: Optional[float] = None,
        border: BorderMode = "clamp",
        out: Optional[ImageU8] = None,
    ) -> ImageU8: ...
    @overload
    def gaussian_blur(
        self,
        img: ImageU16,
        radius: int,
        sigma: Optional[float] = None,
        border: BorderMode = "clamp",
        out: Optional[ImageU16] = None,
    ) -> ImageU16: ...
    @overload
    def gaussian_blur(
        self,
        img: ImageF32,
        radius: int,
        sigma: Optional[float] = None,
        border: BorderMode = "clamp",
        out: Optional[ImageF32] = None,
    ) -> ImageF32: ...
    def gaussian_blur(
        self,
        img: AnyImage,
        radius: int,
        sigma: Optional[float] = None,
        border: BorderMode = "clamp",
        out: Optional[AnyImage] = None,
    ) -> AnyImage:
        """Separable Gaussian blur of ``2 radius + 1`` taps (sigma default ``radius / 2``),
        horizontal then vertical, of an image of any format (:data:`AnyImage`: ``uint8``,
        ``uint16`` or ``float32`` of shape ``(H, W)``, ``(H, W, 3)`` (``uint8`` only) or
        ``(H, W, 4)``), each channel blurred alone; the result has the image's shape and
        dtype. uint8 channels in fixed point (16-bit weights; within 1 of the real-valued
        blur), uint16 channels with 24-bit weights (within 1), float32 with one fused
        multiply-add a tap in a fixed order. Borders: ``"clamp"`` (the edge pixel),
        ``"reflect"`` (mirror without repeating the edge, NumPy's ``"reflect"``), ``"wrap"``,
        ``"zero"``. Read in place where the layout allows (pixels contiguous within rows; a
        ``(H, W, 4)`` float32 image only when C-contiguous), else copied first. ``out``: an
        array of the image's shape and dtype, C-contiguous and writeable, that receives the
        result and is returned (no fresh result each call); it may share memory with the image
        (which is then copied first), except for a ``(H, W, 4)`` uint8 image. TypeError for
        another dtype, ValueError for another shape (of the image or of ``out``)."""
    def blobs(
        self,
        img: AnyImage,
        threshold: Union[int, float],
        connectivity: Connectivity = 8,
        min_area: int = 1,
        max_area: Optional[int] = None,
        background: Union[int, float] = 0,
        labels: bool = True,
        weight_exponent: Optional[int] = None,
    ) -> Tuple[Optional[npt.NDArray[np.uint32]], BlobStats]:
        """The blobs (connected components) of the pixels whose key (see :class:`FormatHit`)
        is strictly above ``threshold`` (of the key's type, as :meth:`compact`'s; NaN never)
        in an image of any format: uint8 of shape ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)``,
        uint16 or float32 of shape ``(H, W)`` or ``(H, W, 4)``, any strides. Of float32 the
        weights are exact integers ``max(⌊k·2^s⌋ − ⌊background·2^s⌋, 1)``, ``s`` from the
        largest key above the threshold (:func:`blob_weight_exponent`) unless
        ``weight_exponent`` fixes it, and the records are :data:`BLOB_F32_DTYPE`'s; a blob
        pixel of +inf is a ValueError. ``connectivity``: 8 (the diagonals too) or 4. The blobs of fewer than
        ``min_area`` or more than ``max_area`` pixels are dropped; the others are numbered
        1..n in the scan order of their first pixels. Returns ``(labels, stats)``: the
        C-contiguous ``(H, W)`` uint32 label image (0 for background and dropped blobs; None
        for ``labels=False``) and :data:`BlobStats` (:data:`BLOB_DTYPE`), exact integer sums,
        each pixel weighing ``key − background`` in ``weight_sum`` and the centroid
        (``background`` at most ``threshold``): ``x̄ = q + r / Σw`` with ``q, r =
        divmod(Σ w·x, Σ w)``, in float64. TypeError for another dtype or a threshold not of
        the key's type; ValueError for another shape, a
        connectivity other than 4 or 8, a threshold out of range, ``min_area > max_area``, a
        negative area, a background above the threshold. An image without pixels has no
        blobs."""
    def _blobs_exact(
        self,
        img: AnyImage,
        threshold: Union[int, float],
        connectivity: Connectivity = 8,
        background: Union[int, float] = 0,
        weight_exponent: Optional[int] = None,
    ) -> Tuple[npt.NDArray[np.uint32], np.ndarray]:
        """:meth:`blobs` of every area with the label image, the statistics of
        :data:`_BLOB_EXACT_DTYPE` (for ``clpix.dask``)."""
    def centroids(
        self,
        img: AnyImage,
        points: npt.ArrayLike,
        radius: int,
        background: Union[int, float] = 0,
    ) -> Centroids:
        """The intensity-weighted centroid of the ``(2 radius + 1)²`` window around each of
        ``points`` (clipped to the image) in an image of any format (as
        :meth:`blobs` takes: uint8 of shape ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)``, uint16
        or float32 of shape ``(H, W)`` or ``(H, W, 4)``, any strides), each pixel weighing
        ``max(key − background, 0)`` (the key as :class:`FormatHit`'s; of float32 exact
        integers ``max(⌊k·2^s⌋ − ⌊b·2^s⌋, 0)``, ``s`` from the windows' largest key as
        :func:`blob_weight_exponent` gives it, NaN and −inf weighing 0; the records then
        :data:`CENTROID_F32_DTYPE`'s): exact integer sums, ``x̄ = q + r /
        Σw`` with ``q, r = divmod(Σ w·x, Σ w)`` in float64, as :meth:`blobs`' centroids; where
        every weight is 0 the centre is the point itself and ``weight_sum`` 0. ``points``: an
        ``(N, 2)`` integer array-like of ``(x, y)``, or a 1-D structured array with integer
        fields ``x`` and ``y`` (the records of :meth:`extremes` or :meth:`compact`). Computed
        on the host. Returns :data:`Centroids`. TypeError for another image dtype or a
        non-integer ``points``; ValueError for another shape, a point outside the image, a
        negative ``radius`` or ``background`` (of integer keys), a background that is not
        finite or a window's key of +inf (float32)."""
    def upload(self, img: AnyImage) -> DeviceImage:
        """The image held by this engine, any format: every operation takes it, read where it
        is (no upload a call)."""
    def download(self, img: DeviceImage) -> Union[ImageU8, ImageU16, ImageF32]:
        """The pixels of a held image: a C-contiguous array of its shape and dtype."""
    def gaussian_blur_device(
        self, img: AnyImage, radius: int, sigma: Optional[float] = None, border: BorderMode = "clamp"
    ) -> DeviceImage:
        """:meth:`gaussian_blur` with the result kept on the engine, for the next operation."""
    def crop(self, img: DeviceImage, y: int, x: int, height: int, width: int) -> DeviceImage:
        """The ``height`` × ``width`` window of a held image whose top-left pixel is row ``y``,
        column ``x``, held (copied by the device on an OpenCL engine; ValueError outside the
        image)."""
    def assemble(self, rows: Sequence[Sequence[Union[DeviceImage, AnyImage]]]) -> DeviceImage:
        """Held images (arrays are uploaded first) of one format side by side and row on row,
        as one held image, like ``numpy.block``: the images of a row of one height, every row of
        one width (ValueError otherwise)."""
    def exclusive_scan(self, values: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
        """``out[i] = values[0] + … + values[i - 1]`` (wrapping), ``out[0] = 0``; 1-D uint32."""
    def luminance(self, img: ImageU8) -> npt.NDArray[np.uint16]:
        """The luminance of every pixel, ``(H, W)`` uint16 (as :func:`luminance`)."""

def blob_weight_exponent(largest: float, background: float) -> int:
    """The weights' exponent ``s`` of the blobs of a float32 image whose largest key above the
    threshold is ``largest`` (both as float32): the largest ``s`` with ``⌊largest·2^s⌋ −
    ⌊background·2^s⌋ < 2^32``; 0 where ``largest`` is not above ``background``. ValueError
    for values that are not finite."""
def devices() -> List[Device]:
    """Every OpenCL device found; empty without an OpenCL loader or platform."""

def luminance(img: ImageU8) -> npt.NDArray[np.uint16]:
    """The luminance of every pixel of an RGBA8 image: ``(H, W)`` uint16,
    ``(1023 * (21 r + 72 g + 7 b)) // 25500``."""

def _time_rust(
    engine: Engine, op: str, img: ImageU8, reps: int, threshold: int = 512, radius: int = 8
) -> List[float]:
    """Seconds each of ``reps`` runs of operation ``op`` took inside Rust (for the benchmark)."""

def _f32_key_sum(img: ImageF32) -> Tuple[List[int], bool, bool]:
    """The exact sum of the keys of a float32 image (NaN left out), for ``clpix.dask``:
    ``(buckets, pos_inf, neg_inf)``; the finite keys sum to exactly
    ``sum(s << e for e, s in enumerate(buckets)) / 2**149``."""
