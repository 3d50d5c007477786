"""Shared fixtures. GPU tests carry the ``gpu`` marker and skip, with the reason, where no
CUDA device answers; they use torch for data and float64 references when it is there."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def gpu_absent_reason() -> str | None:
    """None when a CUDA device is usable, else why not (the library's own message)."""
    try:
        import pygemv
    except Exception as e:  # pragma: no cover - the CPU tests report this properly
        return f"pygemv does not import: {e}"
    try:
        pygemv.device_count()
    except pygemv.GemvError as e:
        return f"no GPU: {e}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = gpu_absent_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def torch():
    """torch with CUDA, or a skip that says why."""
    torch = pytest.importorskip("torch", reason="the GPU tests use torch for data and references")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch
