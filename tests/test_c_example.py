"""The CMake package: find_package(gemv) on the installed pygemv, build the C example,
run it. Without a GPU it must exit 2 with the library's no-GPU message."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pygemv
from conftest import gpu_absent_reason

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "c"


@pytest.fixture(scope="module")
def example_binary(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    build = tmp_path_factory.mktemp("example")
    cfg = subprocess.run(["cmake", "-S", str(EXAMPLE), "-B", str(build), f"-DCMAKE_PREFIX_PATH={pygemv.cmake_prefix()}"],
                         capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    b = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    return build / "gemv_example"


def test_c_example_builds_against_the_installed_package(example_binary):
    assert example_binary.is_file()
    assert (Path(pygemv.include_dir()) / "gemv.h").is_file()


@pytest.mark.skipif(gpu_absent_reason() is None, reason="asserts the no-GPU path; this machine has a GPU")
def test_c_example_without_gpu_reports_why(example_binary):
    r = subprocess.run([str(example_binary)], capture_output=True, text=True)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"libgemv {pygemv.library_version()}" in r.stdout
    assert "no CUDA driver" in r.stderr or "no CUDA device" in r.stderr


@pytest.mark.gpu
def test_c_example_runs_correctly_on_the_gpu(example_binary):
    r = subprocess.run([str(example_binary)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 of 1000 rows outside the error bound" in r.stdout


def test_cmake_prefix_from_the_source_tree_names_the_cause():
    """From the repository root, `python -m pygemv` imports the source tree: the command
    says so instead of printing a folder with no gemvConfig.cmake; from elsewhere it works."""
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "pygemv", "--cmake-prefix"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 1 and "is the source tree, not the installed package" in r.stderr, r
    r = subprocess.run([sys.executable, "-m", "pygemv", "--cmake-prefix"], cwd="/", capture_output=True, text=True)
    assert r.returncode == 0 and (Path(r.stdout.strip()) / "lib" / "cmake" / "gemv" / "gemvConfig.cmake").is_file()
