"""libgemv's log: levels, $GEMV_LOG_LEVEL, and messages routed to Python's logging."""
import ctypes
import logging
import subprocess
import sys

import pytest

import pygemv
from pygemv import _lib


@pytest.fixture
def level():
    """Restore the library's level after a test changes it."""
    before = pygemv.get_log_level()
    yield
    pygemv.set_log_level(before)


def rejected_call() -> int:
    """A call the library rejects for its arguments (m < 0), before any GPU is needed."""
    args = _lib.Args(_lib.OP_N, _lib.DTYPES["float32"], -1, 4, 1.0, 0.0, 256, 4, 256, 1, 256, 1, None, 0, None)
    return _lib.load().gemv_ex(ctypes.byref(args), None)


def test_levels_round_trip_and_bad_levels_name_the_choices(level):
    for name in ("off", "error", "warning", "info", "trace"):
        pygemv.set_log_level(name)
        assert pygemv.get_log_level() == name
    pygemv.set_log_level(3)
    assert pygemv.get_log_level() == "info"
    for bad in ("loud", 5, -1, True, None):
        with pytest.raises(ValueError, match="off, error, warning, info, trace or 0-4"):
            pygemv.set_log_level(bad)
    assert pygemv.errors.error_class(_lib.load().gemv_set_log_level(9)) is pygemv.InvalidValueError
    assert "GEMV_LOG_OFF (0) .. GEMV_LOG_TRACE (4)" in _lib.load().gemv_last_error().decode()
    assert pygemv.get_log_level() == "info"


def test_messages_reach_the_pygemv_logger_at_their_level(level, caplog):
    caplog.set_level(logging.DEBUG, logger="pygemv")
    pygemv.set_log_level("warning")  # the default: a rejected call is the caller's business
    assert rejected_call() != _lib.STATUS_SUCCESS
    assert not caplog.records
    pygemv.set_log_level("info")
    assert pygemv.errors.error_class(rejected_call()) is pygemv.InvalidValueError
    (rec,) = caplog.records
    assert rec.name == "pygemv" and rec.levelno == logging.INFO
    assert rec.getMessage().startswith("libgemv: call failed: invalid value: ") and "m = -1" in rec.getMessage()
    caplog.clear()
    pygemv.set_log_level("off")
    assert rejected_call() != _lib.STATUS_SUCCESS
    assert not caplog.records


def run_child(env_level: str | None) -> subprocess.CompletedProcess:
    import os
    env = {k: v for k, v in os.environ.items() if k != "GEMV_LOG_LEVEL"}
    if env_level is not None:
        env["GEMV_LOG_LEVEL"] = env_level
    code = "import pygemv; print(pygemv.get_log_level())"
    return subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("env, expected", [(None, "warning"), ("trace", "trace"), ("0", "off"), ("3", "info")])
def test_the_level_starts_from_the_environment(env, expected):
    out = run_child(env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected and not out.stderr


def test_a_bad_environment_level_is_reported_and_the_default_kept():
    out = run_child("chatty")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "warning"
    assert "GEMV_LOG_LEVEL = 'chatty' is not 0..4, off, error, warning, info or trace; using warning" in out.stderr
