"""``python -m pygemv``: the versions, the CUDA runtime and driver, each GPU with the tuned
table it dispatches with, and the registry. ``--cmake-prefix`` and ``--include`` print
the folders a C or C++ build needs."""
import argparse
import ctypes
import sys

import pygemv
from pygemv import _lib


def cuda_version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def describe_devices() -> list[str]:
    """A line per visible GPU: name, compute capability, SMs, runtime, driver, tuned table."""
    lines = []
    for d in range(pygemv.device_count()):
        p = _lib.DeviceProps()
        _lib.check(_lib.load().gemv_device_props(d, ctypes.byref(p)), "device_props")
        t = pygemv.table_status(d)
        table = (f"tuned table {t.path} ({t.entries} entries, {t.source})" if t.source != "none"
                 else f"no tuned table, the heuristic decides ({t.message or 'none found'})")
        lines.append(f"device {d}: {p.name.decode()}, compute capability {p.cc_major}.{p.cc_minor}, {p.sm_count} SMs; "
                     f"CUDA runtime {cuda_version(p.runtime_version)}, driver {cuda_version(p.driver_version)}; {table}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pygemv", description=__doc__)
    ap.add_argument("--version", action="version", version=pygemv.version_string("pygemv"))
    ap.add_argument("--cmake-prefix", action="store_true", help="print the CMAKE_PREFIX_PATH for find_package(gemv)")
    ap.add_argument("--include", action="store_true", help="print the folder holding gemv.h")
    args = ap.parse_args(argv)
    if args.cmake_prefix:
        try:
            print(pygemv.cmake_prefix())
        except pygemv.LibraryNotFoundError as e:
            print(f"python -m pygemv: {e}", file=sys.stderr)
            return 1
        return 0
    if args.include:
        print(pygemv.include_dir())
        return 0
    print(f"{pygemv.version_string('pygemv')}, log level {pygemv.get_log_level()}")
    try:
        for line in describe_devices():
            print(line)
    except pygemv.GemvError as e:
        print(f"no GPU: {e}")
    print("operations:")
    for v in pygemv.variants():
        print(f"  {v.id} {v.name:<16} {v.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
