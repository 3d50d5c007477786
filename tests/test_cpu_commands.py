"""The commands' --version, and what python -m pygemv reports (here, with no GPU)."""
import subprocess
import sys

import pytest

import pygemv
from conftest import gpu_absent_reason


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", *argv], capture_output=True, text=True, timeout=120, cwd="/")


@pytest.mark.parametrize("prog, argv", [("pygemv", ["-m", "pygemv"]), ("pygemv-bench", ["-m", "pygemv.bench"]),
                                        ("pygemv-tune", ["-m", "pygemv.tuning.cli"])])
def test_every_command_reports_its_version(prog, argv):
    r = run(*argv, "--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{prog} {pygemv.__version__} (libgemv {pygemv.library_version()})"


def test_module_reports_versions_level_devices_and_operations():
    r = run("-m", "pygemv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"pygemv {pygemv.__version__} (libgemv {pygemv.library_version()}), log level warning"
    if gpu_absent_reason():  # the library's own reason, as device_count raises it
        assert lines[1].startswith("no GPU: device_count: ")
    else:
        assert lines[1].startswith("device 0: ") and "CUDA runtime " in lines[1] and ", driver " in lines[1]
        assert "tuned table" in lines[1]
    assert "operations:" in lines
    assert sum(line.startswith("  ") for line in lines) == len(pygemv.variants())
