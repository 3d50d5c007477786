"""The library builds, installs and loads; every C symbol is declared for ctypes with the
header's prototype; versions agree; the loader names what it tried."""
import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path

import pygemv
from pygemv import _lib

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "libgemv" / "include" / "gemv.h"
EXPERIMENTAL = ROOT / "libgemv" / "include" / "gemv_experimental.h"


def header_prototypes() -> dict[str, int]:
    """Exported function name -> number of parameters, parsed from gemv.h and gemv_experimental.h."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text() + EXPERIMENTAL.read_text(), flags=re.S)
    protos = {}
    for m in re.finditer(r"GEMV_API\s+[\w\s\*]+?\b(gemv\w*)\s*\(([^)]*)\)\s*;", text):
        params = [p for p in m.group(2).split(",") if p.strip() and p.strip() != "void"]
        protos[m.group(1)] = len(params)
    return protos


def test_library_loads_from_the_installed_package():
    lib = _lib.load()
    assert isinstance(lib, ctypes.CDLL)
    assert Path(lib._name).name == _lib.LIBRARY_NAME
    assert Path(lib._name).parent == Path(pygemv.__file__).resolve().parent or os.environ.get(_lib.ENV_LIBRARY)


def test_every_header_function_is_declared_with_matching_arity():
    protos = header_prototypes()
    assert len(protos) >= 20, protos
    assert set(protos) == set(_lib.SIGNATURES), set(protos) ^ set(_lib.SIGNATURES)
    lib = _lib.load()
    for name, nparams in protos.items():
        fn = getattr(lib, name)
        restype, argtypes = _lib.SIGNATURES[name]
        assert fn.restype is restype, name
        assert fn.argtypes == argtypes, name
        assert len(fn.argtypes) == nparams, f"{name}: header has {nparams} parameters, ctypes {len(fn.argtypes)}"


def test_pointer_returning_and_size_functions_have_wide_restypes():
    # An unset restype is a C int: it would truncate pointers and size_t.
    assert _lib.SIGNATURES["gemv_status_string"][0] is ctypes.c_char_p
    assert _lib.SIGNATURES["gemv_last_error"][0] is ctypes.c_char_p
    assert _lib.SIGNATURES["gemv_workspace_size"][0] is ctypes.c_size_t


def test_struct_layouts_match_the_header():
    text = HEADER.read_text()
    for struct, cls in (("gemv_config", _lib.Config), ("gemv_variant_info", _lib.VariantInfo),
                        ("gemv_args", _lib.Args), ("gemv_qmatrix", _lib.QMatrix), ("gemv_device_props", _lib.DeviceProps),
                        ("gemv_table_fingerprint", _lib.TableFingerprint), ("gemv_table_status", _lib.TableStatus)):
        body = re.search(r"typedef struct %s \{(.*?)\}" % struct, text, re.S).group(1)
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        names = []
        for decl in body.split(";"):
            decl = decl.strip()
            if decl:
                names += [n.strip().lstrip("*") for n in decl.split(None, 1)[1].replace("*", " ").split(",")]
        names = [n.split()[-1].split("[")[0] for n in names]
        assert [f[0] for f in cls._fields_] == names, struct


def test_args_pack_layout_fills_every_field_of_args():
    # The torch hot path fills an Args with ARGS_LAYOUT.pack_into: same size, and each
    # value must land in its own field.
    assert _lib.ARGS_LAYOUT.size <= ctypes.sizeof(_lib.Args)
    assert ctypes.sizeof(_lib.Args) - _lib.ARGS_LAYOUT.size < ctypes.alignment(_lib.Args)  # only tail padding
    values = [_lib.ARGS_SIZE, 1, 2, 3 << 33, 5 << 33, 0.5, -2.0, 0x7F0000001000, 7 << 33, 0x7F0000002000, -11,
              0x7F0000003000, 13, 0x7F0000004000, 17 << 33, 0x7F0000005000, 0xFFFFFFFE, 19 << 33, -(23 << 33),
              29 << 33, -(31 << 33), 0x7F0000006000]
    a = _lib.Args()
    _lib.ARGS_LAYOUT.pack_into(a, 0, *values)
    assert [getattr(a, f) for f, _ in _lib.Args._fields_] == values


def header_define(name: str, text: str | None = None) -> str:
    return re.search(r"^#define %s (\S+)" % name, text or HEADER.read_text(), re.M).group(1)


def test_versions_agree():
    # The header's string is derived from its three numbers (one place to bump).
    assert 'GEMV_STRINGIFY(GEMV_VERSION_MAJOR) "."' in HEADER.read_text()
    header_version = ".".join(header_define(f"GEMV_VERSION_{p}") for p in ("MAJOR", "MINOR", "PATCH"))
    assert pygemv.library_version() == header_version == pygemv.__version__
    from importlib.metadata import version
    assert version("pygemv") == header_version


def header_enum(name: str) -> dict[str, int]:
    """The members of `typedef enum name {...}` in gemv.h, with their explicit values."""
    body = re.search(r"typedef enum %s \{(.*?)\}" % name, HEADER.read_text(), re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", body)}


def test_python_constants_match_the_header():
    """Every constant Python mirrors is checked here against gemv.h: typed in one place
    that a test holds to the other."""
    assert header_enum("gemv_dtype") == {f"GEMV_DTYPE_{k}": v for k, v in
                                         (("F32", _lib.DTYPES["float32"]), ("F16", _lib.DTYPES["float16"]),
                                          ("BF16", _lib.DTYPES["bfloat16"]))}
    assert header_enum("gemv_op") == {"GEMV_OP_N": _lib.OP_N, "GEMV_OP_T": _lib.OP_T}
    assert header_enum("gemv_loads") == {
        "GEMV_LOADS_SCALAR": pygemv.LOADS_SCALAR, "GEMV_LOADS_ALIGNED16": pygemv.LOADS_ALIGNED,
        "GEMV_LOADS_REALIGNED16": pygemv.LOADS_REALIGNED, "GEMV_LOADS_PHASED16": pygemv.LOADS_PHASED,
        "GEMV_LOADS_ALIGNED8": pygemv.LOADS_ALIGNED8,
        "GEMV_LOADS_PHASED16_X_COPIES": pygemv.LOADS_PHASED_X_COPIES}
    statuses = header_enum("gemv_status")
    from pygemv import errors
    assert statuses["GEMV_STATUS_SUCCESS"] == _lib.STATUS_SUCCESS
    for name, code in statuses.items():  # every status has its own exception class but success
        assert code == 0 or errors.error_class(code) is not errors.GemvError, name
    sources = header_enum("gemv_table_source")
    assert [k.removeprefix("GEMV_TABLE_SOURCE_").lower() for k, _ in sorted(sources.items(), key=lambda kv: kv[1])] \
        == list(_lib.TABLE_SOURCES)
    levels = header_enum("gemv_log_level")
    assert levels == {f"GEMV_LOG_{name.upper()}": i for i, name in enumerate(_lib.LOG_LEVELS)}
    variants = header_enum("gemv_variant")
    assert {k: v for k, v in variants.items() if v >= 0} == \
        {f"GEMV_VARIANT_{v.name.upper()}": v.id for v in pygemv.variants()}
    assert int(header_define("GEMV_VARIANT_COUNT")) == len(pygemv.variants())
    assert int(header_define("GEMV_FLAG_TRUSTED_POINTERS").rstrip("u")) == _lib.FLAG_TRUSTED_POINTERS
    assert int(header_define("GEMV_FLAG_NO_TABLE").rstrip("u")) == _lib.FLAG_NO_TABLE
    assert header_define("GEMV_WORKSPACE_RECOMMENDED_BYTES") == "((size_t)4"  # 4 << 20
    assert _lib.WORKSPACE_RECOMMENDED_BYTES == 4 << 20
    from pygemv import _table
    assert int(header_define("GEMV_TABLE_SCHEMA")) == _table.SCHEMA


def test_extensible_structs_lead_with_struct_size_and_the_library_checks_it():
    lib = _lib.load()
    for cls in (_lib.Config, _lib.Args, _lib.VariantInfo, _lib.QMatrix):
        assert cls._fields_[0] == ("struct_size", ctypes.c_size_t)
        assert cls().struct_size == ctypes.sizeof(cls)
    info = _lib.VariantInfo()
    info.struct_size = 8
    assert lib.gemv_variant_info(0, ctypes.byref(info)) == 1
    assert "struct_size = 8" in lib.gemv_last_error().decode()
    args = pygemv._registry.problem_args(4, 4)
    args.struct_size = ctypes.sizeof(args) - 4
    assert lib.gemv_ex(ctypes.byref(args), None) == 1
    assert "args->struct_size" in lib.gemv_last_error().decode()
    q = _lib.QMatrix()
    assert lib.gemv_qmatrix_init(ctypes.byref(q), 4, 128, 1, 1, 64, 256) == 0
    q.struct_size -= 8
    assert lib.gemv_quantized(ctypes.byref(q), 1.0, None, 1, 0.0, None, 1, None, 0, None) == 1
    assert "W->struct_size" in lib.gemv_last_error().decode()


def test_structs_of_libgemv_0_4_are_still_read():
    """Fields appended in 0.5 (gemv_args_t.qweight, gemv_variant_info_t.weight_bits_mask): a
    program built against 0.4 passes the shorter struct_size and gets the 0.4 behaviour."""
    lib = _lib.load()
    info = _lib.VariantInfo()
    info.struct_size = _lib.VariantInfo.weight_bits_mask.offset
    info.weight_bits_mask = 0xDEAD
    assert lib.gemv_variant_info(9, ctypes.byref(info)) == 0
    assert info.name == b"q_rows" and info.weight_bits_mask == 0xDEAD  # not written past the old size
    assert info.struct_size == _lib.VariantInfo.weight_bits_mask.offset
    args = pygemv._registry.problem_args(4, 4)
    args.struct_size = _lib.Args.qweight.offset
    args.qweight = 12345  # beyond the old struct: never read
    c = pygemv.Config("warp_per_row", 32, 8).to_c()
    assert lib.gemv_check_config(ctypes.byref(c), ctypes.byref(args)) == 0, lib.gemv_last_error()
    c = pygemv.Config("warp_per_row", 32, 8).to_c()
    c.struct_size = 0
    assert lib.gemv_check_config(ctypes.byref(c), ctypes.byref(pygemv._registry.problem_args(4, 4))) == 1
    assert "config->struct_size" in lib.gemv_last_error().decode()


def test_benchmark_entry_points_live_in_the_experimental_header():
    stable = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    for name in ("gemv_capture_begin", "gemv_graph_replay_ms", "gemv_read_ceiling"):
        assert name not in stable and name in EXPERIMENTAL.read_text()


def test_status_strings_are_distinct_and_total():
    lib = _lib.load()
    texts = [lib.gemv_status_string(s).decode() for s in range(12)]
    assert texts[0] == "success"
    assert len(set(texts)) == 12 and all(texts) and "unknown status" not in texts
    assert lib.gemv_status_string(12345).decode() == "unknown status"


def test_each_status_maps_to_its_exception_class():
    from pygemv import errors
    expected = {1: errors.InvalidValueError, 2: errors.InvalidPointerError, 3: errors.NotSupportedError,
                4: errors.InsufficientWorkspaceError, 5: errors.NoDeviceError, 6: errors.NoDriverError,
                7: errors.CudaError, 8: errors.AllocationError, 9: errors.TableInvalidError,
                10: errors.TableMismatchError, 11: errors.InternalError}
    for status, cls in expected.items():
        assert errors.error_class(status) is cls
        try:
            _lib.check(status, "what")
        except cls as e:
            assert e.status == status
            assert str(e).startswith("what: " + _lib.load().gemv_status_string(status).decode())
        else:  # pragma: no cover
            raise AssertionError(f"status {status} raised nothing")
    assert issubclass(errors.InvalidValueError, ValueError)
    assert errors.error_class(99) is errors.GemvError


def test_loader_names_the_paths_it_tried(tmp_path):
    missing = tmp_path / "nowhere" / "libgemv.so"
    code = ("import pygemv, sys\n"
            "try:\n    pygemv.variants()\n"
            "except pygemv.LibraryNotFoundError as e:\n    print(e); sys.exit(3)\n")
    env = dict(os.environ, PYGEMV_LIBRARY=str(missing))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert str(missing) in r.stdout and "no such file" in r.stdout and "PYGEMV_LIBRARY" in r.stdout


def test_loader_without_a_built_library_names_the_package_path(tmp_path):
    import shutil
    pkg = tmp_path / "pygemv"
    shutil.copytree(Path(pygemv.__file__).parent, pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    code = ("import pygemv, sys\n"
            "assert pygemv.__file__.startswith(sys.argv[1]), pygemv.__file__\n"
            "try:\n    pygemv.variants()\n"
            "except pygemv.LibraryNotFoundError as e:\n    print(e); sys.exit(3)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYGEMV_LIBRARY"}
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    assert str(pkg / _lib.LIBRARY_NAME) in r.stdout and "pip install" in r.stdout


def test_environment_override_loads_that_library(tmp_path):
    real = Path(_lib.load()._name)
    code = "import pygemv._lib as l; print(l.load()._name)"
    env = dict(os.environ, PYGEMV_LIBRARY=str(real))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(real)
