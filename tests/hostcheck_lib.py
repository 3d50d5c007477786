"""libgemv's host code on the stand-in CUDA runtime (tests/hostcheck): built once per
session with CMake, then each check runs in a subprocess whose pygemv loads it
(``PYGEMV_LIBRARY``) and sees ``GEMV_FAKE_DEVICES`` fake H100s. The stand-in checks every
launch plan and address; ``fake`` in those subprocesses is a ctypes handle to its controls.
``GEMV_HOSTCHECK_LIBRARY`` names a prebuilt one (the sanitizer builds of scripts/hostcheck.sh)."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PRELUDE = '''
import ctypes, os, sys, threading
import numpy as np
import pygemv
from pygemv import _lib
fake = ctypes.CDLL(os.environ["PYGEMV_LIBRARY"])
fake.gemv_fake_violations.restype = ctypes.c_long
fake.gemv_fake_launches.restype = ctypes.c_long
fake.gemv_fake_waits.restype = ctypes.c_long
fake.gemv_fake_live_bytes.restype = ctypes.c_size_t
fake.gemv_fake_log.restype = ctypes.c_size_t
fake.gemv_fake_log.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
fake.gemv_fake_violation_text.restype = ctypes.c_size_t
fake.gemv_fake_violation_text.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
fake.gemv_fake_fail_new_after.argtypes = [ctypes.c_long]

def fake_text(fn):
    buf = ctypes.create_string_buffer(1 << 20)
    fn(buf, len(buf))
    return buf.value.decode()

def no_violations():
    n = fake.gemv_fake_violations()
    assert n == 0, f"{n} launch-plan violations:\\n" + fake_text(fake.gemv_fake_violation_text)
'''


@functools.lru_cache(maxsize=None)
def library() -> Path:
    """The stand-in build of libgemv (built here unless GEMV_HOSTCHECK_LIBRARY names one)."""
    given = os.environ.get("GEMV_HOSTCHECK_LIBRARY")
    if given:
        return Path(given)
    build = ROOT / "build" / "hostcheck"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    for cmd in (["cmake", "-S", str(ROOT / "tests" / "hostcheck"), "-B", str(build), *gen],
                ["cmake", "--build", str(build), "--target", "gemv_hostcheck", "-j", str(os.cpu_count() or 2)]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"building the stand-in libgemv failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return build / "libgemv_hostcheck.so"


def run(code: str, *, devices: int = 1, env: dict | None = None, timeout: float = 120,
        check: bool = True) -> subprocess.CompletedProcess:
    """Run ``code`` (after PRELUDE) in a fresh interpreter on the stand-in; ``check``: assert
    it exits 0, showing its output otherwise."""
    e = {k: v for k, v in os.environ.items() if k not in ("GEMV_TABLE", "GEMV_LOG_LEVEL")}
    e.update(PYGEMV_LIBRARY=str(library()), GEMV_FAKE_DEVICES=str(devices), PYTHONPATH=str(ROOT / "tests"))
    e.setdefault("XDG_CACHE_HOME", "/nonexistent-pygemv-test-cache")
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True,
                       env=e, timeout=timeout, cwd=ROOT)
    if check and r.returncode:
        raise AssertionError(f"exit {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr[-6000:]}")
    return r
