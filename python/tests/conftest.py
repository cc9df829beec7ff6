"""Engines for the tests: the CPU backend always; the OpenCL backend where a device is found.
With CLPIX_REQUIRE_OPENCL=1 a missing OpenCL device fails the run instead of skipping."""

from __future__ import annotations

import os
import tempfile

import pytest

# PoCL lists no device without a writable kernel cache; set one before OpenCL starts.
os.environ.setdefault("POCL_CACHE_DIR", os.path.join(tempfile.gettempdir(), "clpix-pytest-pocl"))

import clpix  # noqa: E402

REQUIRE_OPENCL = os.environ.get("CLPIX_REQUIRE_OPENCL") == "1"
_engines: dict = {}


def opencl_engine() -> "clpix.Engine":
    """The OpenCL engine (one for the session), or a skip (a failure when OpenCL is required)."""
    if "opencl" not in _engines:
        try:
            _engines["opencl"] = clpix.Engine("opencl")
        except (clpix.ClpixError, ValueError) as e:
            _engines["opencl"] = e
    e = _engines["opencl"]
    if isinstance(e, Exception):
        if REQUIRE_OPENCL:
            pytest.fail(f"CLPIX_REQUIRE_OPENCL=1 but no OpenCL engine: {e}")
        pytest.skip(f"no OpenCL device: {e}")
    return e


@pytest.fixture(scope="session", params=["cpu", "opencl"])
def engine(request) -> "clpix.Engine":
    if request.param == "cpu":
        return clpix.Engine("cpu")
    return opencl_engine()


@pytest.fixture(scope="session")
def cpu() -> "clpix.Engine":
    return clpix.Engine("cpu")
