"""The engines of ``clpix.dask``'s worker processes: one a backend, made on first use and kept,
and the one :func:`use_device` chose. ``clpix.dask`` re-exports :func:`engine` and
:func:`use_device`; its other modules take their engines here."""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional

import clpix

_engines: Dict[str, clpix.Engine] = {}
_engines_lock = threading.Lock()
# The engine use_device() chose for this process, if it was called.
_device_engine: Optional[clpix.Engine] = None


def engine(backend: Optional[str] = None) -> clpix.Engine:
    """This process's engine: for ``backend=None`` the one :func:`use_device` chose, else
    ``clpix.default_engine()``; otherwise one engine of that backend (``"auto"``, ``"cpu"`` or
    ``"opencl"``), made on first use and kept."""
    if backend is None:
        chosen = _device_engine
        return chosen if chosen is not None else clpix.default_engine()
    e = _engines.get(backend)
    if e is None:
        with _engines_lock:
            e = _engines.get(backend)
            if e is None:
                e = clpix.Engine(backend)
                _engines[backend] = e
    return e


def use_device(device: Any) -> clpix.Engine:
    """Makes this process's engine for ``backend=None`` one on ``device`` (an index into
    ``clpix.devices()``, part of a device name, or a ``clpix.Device``) and returns it: run it on
    a worker (``client.run(clpix.dask.use_device, 1, workers=[address])``) to pin that worker to
    a device. A device that does not open raises, and the worker keeps its engine."""
    global _device_engine
    e = clpix.Engine("opencl", device)
    with _engines_lock:
        _device_engine = e
    return e
