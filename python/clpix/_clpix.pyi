"""Type stubs of clpix's extension module (re-exported by ``clpix``)."""

from typing import Final, List, Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

Backend = Literal["auto", "cpu", "opencl"]
BorderMode = Literal["clamp", "reflect", "wrap", "zero"]
Order = Literal["scan", "luminance"]
Which = Literal["brightest", "darkest"]
ImageU8 = npt.NDArray[np.uint8]
ImageF32 = npt.NDArray[np.float32]
Records = np.ndarray
"""A 1-D structured array of :data:`HIT_DTYPE`: fields ``x``, ``y`` (uint32), ``luminance``
(uint16) and ``rgba`` (4 × uint8)."""

HIT_DTYPE: Final[np.dtype]
"""The records' dtype: ``[("x", "<u4"), ("y", "<u4"), ("luminance", "<u2"), ("rgba", "u1", (4,))]``."""
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
    def __init__(self, x: int, y: int, luminance: int, rgba: Tuple[int, int, int, int]) -> None: ...
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

    Images are ``(H, W, 4)`` arrays of dtype ``uint8`` (RGBA8; ``float32`` for the f32 blur)
    of any strides: a C-contiguous array, or one with padded rows (pixels contiguous within a
    row), is read in place; other layouts are copied first. The GIL is released while clpix
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
    def extreme(self, img: ImageU8, which: Which) -> Hit:
        """The pixel of largest (``"brightest"``) or smallest (``"darkest"``) luminance (ties:
        the first in scan order). ValueError for an image without pixels or another ``which``."""
    def luminance_stats(self, img: ImageU8) -> LuminanceStats:
        """Sum, count, mean, min and max of the luminance."""
    def extremes(self, img: ImageU8, which: Which, k: int, min_distance: float = 0.0) -> Records:
        """The k brightest (or darkest) pixels at least ``min_distance`` apart: candidates by
        luminance descending (ascending for ``"darkest"``; ties in scan order), each taken when
        ``dx² + dy² ≥ min_distance²`` to all taken before it (the distance as float32, compared
        in float64). ``min_distance = 0``: plainly the top k; fewer than k when the image runs
        out."""
    def histogram_rgba(self, img: ImageU8) -> npt.NDArray[np.uint32]:
        """``(4, 256)`` uint32: ``h[c, v]`` counts the pixels whose channel c (R, G, B, A) is v."""
    def histogram_luminance(self, img: ImageU8) -> npt.NDArray[np.uint32]:
        """``(1024,)`` uint32: ``h[l]`` counts the pixels of luminance l."""
    def compact(self, img: ImageU8, threshold: int, order: Order = "scan") -> Records:
        """The pixels with luminance above ``threshold`` (0..=1023), in ``order``: ``"scan"``,
        or ``"luminance"`` (descending; equal luminance in scan order)."""
    def compacted_image(self, img: ImageU8, threshold: int, order: Order = "scan") -> ImageU8:
        """An image of the input's shape whose first n pixels (scan order) are the n kept
        pixels, in ``order`` (``"scan"`` or ``"luminance"``), the others (0, 0, 0, 0)."""
    def gaussian_blur(
        self,
        img: Union[ImageU8, ImageF32],
        radius: int,
        sigma: Optional[float] = None,
        border: BorderMode = "clamp",
        out: Optional[Union[ImageU8, ImageF32]] = None,
    ) -> Union[ImageU8, ImageF32]:
        """Separable Gaussian blur of ``2 radius + 1`` taps (sigma default ``radius / 2``),
        horizontal then vertical; uint8 in fixed point (within 1 of the real-valued blur),
        float32 with one fused multiply-add a tap in a fixed order. Borders: ``"clamp"`` (the
        edge pixel), ``"reflect"`` (mirror without repeating the edge, NumPy's
        ``"reflect"``), ``"wrap"``, ``"zero"``. Read in place when C-contiguous (a float32
        image of another layout is copied first). ``out``: an array of the image's shape and
        dtype, C-contiguous and writeable, that receives the result and is returned (no fresh
        result each call); a uint8 ``out`` must not share memory with the image, a float32 one
        may (the image is then copied first)."""
    def exclusive_scan(self, values: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
        """``out[i] = values[0] + … + values[i - 1]`` (wrapping), ``out[0] = 0``; 1-D uint32."""
    def luminance(self, img: ImageU8) -> npt.NDArray[np.uint16]:
        """The luminance of every pixel, ``(H, W)`` uint16 (as :func:`luminance`)."""

def devices() -> List[Device]:
    """Every OpenCL device found; empty without an OpenCL loader or platform."""

def luminance(img: ImageU8) -> npt.NDArray[np.uint16]:
    """The luminance of every pixel of an RGBA8 image: ``(H, W)`` uint16,
    ``(1023 * (21 r + 72 g + 7 b)) // 25500``."""

def _time_rust(
    engine: Engine, op: str, img: ImageU8, reps: int, threshold: int = 512, radius: int = 8
) -> List[float]:
    """Seconds each of ``reps`` runs of operation ``op`` took inside Rust (for the benchmark)."""
