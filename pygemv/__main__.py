"""``python -m pygemv``: where the install is, and what it sees."""
import argparse
import sys

import pygemv


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pygemv", description=__doc__)
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
    print(f"pygemv {pygemv.__version__}, libgemv {pygemv.library_version()}")
    for v in pygemv.variants():
        print(f"  {v.id} {v.name:<16} {v.description}")
    try:
        print(f"device {pygemv.current_device()}: {pygemv.device_name()}")
    except pygemv.GemvError as e:
        print(f"no GPU: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
