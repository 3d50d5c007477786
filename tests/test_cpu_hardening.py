"""The thirteen defects fuzzing found in the host code (issue 16), one test (or more) each.
Each failed before its fix. Those that need a GPU's answers run libgemv's host code on the
stand-in CUDA runtime (tests/hostcheck, ``hostcheck_lib.run``), which also checks every
launch plan and address; the rest run on the real library without a GPU."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

import pygemv
from pygemv import _lib
from pygemv._table import Entry, Fingerprint, write_table

import hostcheck_lib
from hostcheck_lib import run

H100 = Fingerprint("NVIDIA H100 80GB HBM3", 132, 9, 0, 13000, pygemv.library_version())
SHIPPED = next((hostcheck_lib.ROOT / "libgemv" / "tables").glob("*.gemvtable"))
# Under AddressSanitizer (scripts/hostcheck.sh) times and resident memory mean nothing: the
# allocator quarantines what is freed. Those checks then run for the sanitizer's sake only.
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")


def big_table(path, n: int, gpu: Fingerprint = H100):
    """A table of n distinct op N fp16 entries on a grid like a tune's, but 2^(1/8) apart in
    M and K instead of 4x (so about 600 entries lie within reach of a lookup)."""
    side = int(n ** 0.5) + 1
    grid = sorted({int(round(16 * 2 ** (j / 8))) for j in range(4 * side)})[:side]
    es = [Entry("float16", grid[i // side], grid[i % side], pygemv.Config("warp_per_row", 32, 4, False, 1), 1.0, 1.2)
          for i in range(n)]
    return write_table(path, gpu, es)


# 1 -------------------------------------------------------------------------------------

def test_1_load_table_with_a_failing_device_changes_no_device(tmp_path):
    """It installed on device 0, then freed the table when device 1's properties failed:
    device 0 then dispatched from freed memory. Now every device is read first."""
    first, second = tmp_path / "first.gemvtable", tmp_path / "second.gemvtable"
    shutil.copy(SHIPPED, first)
    shutil.copy(SHIPPED, second)
    run(f"""
    pygemv.load_table({str(first)!r})
    fake.gemv_fake_fail_props(1)
    try:
        pygemv.load_table({str(second)!r})
        raise AssertionError("load_table succeeded although device 1 failed")
    except pygemv.CudaError as e:
        assert "ECC" in str(e) or "ecc" in str(e).lower(), e
    st = pygemv.table_status(0)
    assert st.path == {str(first)!r}, st  # untouched, not the half-installed second table
    A, x, y = (pygemv.DeviceArray.from_numpy(np.ones(s, np.float16)) for s in ((64, 64), (64,), (64,)))
    pygemv.gemv(A, x, y)
    no_violations()
    """, devices=2)


# 2 -------------------------------------------------------------------------------------

def lookup_us(path, found: bool) -> float:
    """Microseconds a lookup, the best of 5 rounds (a busy 2-core CI machine added 3-5 us to
    single rounds). found: most lookups find an entry (some fall where the heuristic's load
    mode differs from the entry's shape: 8-byte rows, phased rows), or none does. No
    workspace: with one, the large misaligned shapes take x's phase copies, which no entry
    of this table has."""
    rounds = []
    with pygemv.Table(path) as t:
        for _ in range(5):
            t0 = time.perf_counter()
            hits = sum(t.lookup(100 + 37 * i, 300 + 53 * i, "float16", workspace_bytes=0) is not None
                       for i in range(500))
            rounds.append((time.perf_counter() - t0) / 500 * 1e6)
            assert hits >= 300 if found else hits == 0, hits
    return min(rounds)


def test_2_a_large_table_parses_and_looks_up_fast(tmp_path):
    """The duplicate check scanned the whole list per entry (80k entries: 3.8 s) and every
    lookup scanned every entry (~70 us at 80k). Now: sorted once, binary-searched."""
    path = big_table(tmp_path / "big.gemvtable", 65536)
    t0 = time.perf_counter()
    with pygemv.Table(path) as t:
        parse_s = time.perf_counter() - t0
        assert len(t) == 65536
    if SANITIZED:
        pytest.skip("timing under AddressSanitizer")
    assert parse_s < 1.5, f"65536 entries took {parse_s:.2f} s to parse"
    # Against a 64-entry table: the difference is the search (Python's call costs ~25 us).
    extra = lookup_us(path, True) - lookup_us(big_table(tmp_path / "small.gemvtable", 64), False)
    assert extra < 20, f"a lookup in 65536 entries took {extra:.1f} us more than in 64"


def test_2_entry_count_is_capped(tmp_path):
    path = big_table(tmp_path / "huge.gemvtable", 65537)
    with pytest.raises(pygemv.TableInvalidError, match="too many entries"):
        pygemv.Table(path)


def test_2_duplicates_are_still_refused(tmp_path):
    es = [Entry("float16", 64, 64, pygemv.Config("warp_per_row", 32, 4, False, 1), 1.0, 1.0)] * 2
    path = write_table(tmp_path / "dup.gemvtable", H100, es)
    with pytest.raises(pygemv.TableInvalidError, match="duplicate entry"):
        pygemv.Table(path)


def test_2_another_gpus_table_is_passed_over_by_its_header(tmp_path):
    """A foreign table in the shared folder was parsed in full before its fingerprint was
    checked, so a corrupt entry in it was reported (and a huge one stalled the first call)."""
    folder = tmp_path / "pygemv" / "tables"
    foreign = big_table(folder / "a100.gemvtable", 100, Fingerprint("NVIDIA A100-SXM4-80GB", 108, 8, 0, 13000,
                                                                    pygemv.library_version()))
    text = foreign.read_text().replace("\nend\n", "\nN float16 1 7 7 no_such_variant 1 1 1 1 0 1 1 1\nend\n")
    foreign.write_text(text.replace("entries 100", "entries 101"))
    run("""
    st = pygemv.table_status(0)
    assert st.problem == 0 and "a100" not in st.message, st
    """, env={"XDG_CACHE_HOME": str(tmp_path)})


# 3 -------------------------------------------------------------------------------------

def test_3_a_fifo_as_a_table_does_not_block(tmp_path):
    fifo = tmp_path / "pipe.gemvtable"
    os.mkfifo(fifo)
    code = f"""
    import pygemv
    try:
        pygemv.Table({str(fifo)!r})
    except pygemv.TableInvalidError as e:
        assert "not a regular file" in str(e), e
    else:
        raise AssertionError("a FIFO was read as a table")
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_3_a_fifo_in_gemv_table_or_a_folder_does_not_block_the_first_call(tmp_path):
    fifo = tmp_path / "pipe.gemvtable"
    os.mkfifo(fifo)
    for place in (str(fifo), str(tmp_path)):
        run("""
        st = pygemv.table_status(0)
        assert st.source == "none" and "not a regular file" in st.message, st
        """, env={"GEMV_TABLE": place, "GEMV_LOG_LEVEL": "off"}, timeout=60)


# 4 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    (dict(m=2**64 + 8, k=8), "m"),
    (dict(m=8, k=-2**63 - 1), "k"),
    (dict(m=8, k=8, lda=2**63), "lda"),
    (dict(m=8, k=8, incx=2**64 + 1), "incx"),
    (dict(m=8, k=8, batch=2**64 + 2), "batch"),
    (dict(m=8, k=8, workspace=(256, -1)), "workspace bytes"),
    (dict(m=8, k=8, workspace=(-256, 16)), "workspace pointer"),
])
def test_4_ints_that_ctypes_would_wrap_raise_value_error(kwargs, name):
    with pytest.raises(ValueError, match=name):
        pygemv.gemv(256, 256, 256, dtype="float32", **kwargs)
    with pytest.raises(ValueError, match="A"):
        pygemv.gemv(2**64, 256, 256, m=8, k=8, dtype="float32")


@pytest.mark.parametrize("shape", [(2**62 + 4,), (-5,), (2**40, 2**40)])
def test_4_device_array_sizes_are_checked_before_allocating(shape):
    with pytest.raises(ValueError, match="shape|spans"):
        pygemv.DeviceArray.empty(shape)


def test_4_config_fields_beyond_int32_raise():
    c = pygemv.Config("warp_per_row", 2**32 + 32, 4)
    with pytest.raises(ValueError, match="threads_per_row"):
        c.to_c()
    with pytest.raises(ValueError, match="threads_per_row"):
        pygemv.can_implement(c, 64, 64)


# 5 -------------------------------------------------------------------------------------

def test_5_negative_strides_stay_inside_the_allocation():
    """An owned array with a negative stride was allocated from ptr upward while its
    elements lie below ptr: to_numpy read before the buffer, gemv addressed below it."""
    run("""
    a = np.arange(8, dtype=np.float32)
    d = pygemv.DeviceArray.from_numpy(a)
    r = d.view((8,), (-1,), offset=7)
    assert (r.to_numpy() == a[::-1]).all()
    own = pygemv.DeviceArray((4,), "float32", (-1,))
    assert own.ptr - own._base == 3 * 4 and own.nbytes == 16
    own.to_numpy()
    A = pygemv.DeviceArray.from_numpy(np.ones((3, 4), np.float32))
    y = pygemv.DeviceArray((3,), "float32", (-1,))
    pygemv.gemv(A, pygemv.DeviceArray.from_numpy(np.ones(4, np.float32)), y)
    for bad in (((9,), (1,), 0), ((8,), (-1,), 6), ((2,), (1,), 7)):
        try:
            d.view(*bad)
        except ValueError as e:
            assert "outside" in str(e)
        else:
            raise AssertionError(f"view{bad} reaches outside the allocation")
    no_violations()
    """)


# 6 -------------------------------------------------------------------------------------

def test_6_table_close_racing_lookups_is_safe(tmp_path):
    """close() freed the table while another thread's lookup was inside C (ctypes releases
    the GIL); two closes freed it twice. Under AddressSanitizer (scripts/hostcheck.sh) the
    old code fails here with a use after free."""
    path = big_table(tmp_path / "t.gemvtable", 4096)
    run(f"""
    errors = []
    for rep in range(20):
        t = pygemv.Table({str(path)!r})
        stop = threading.Event()
        def look():
            while not stop.is_set():
                try:
                    t.lookup(100, 300, "float16")
                except ValueError as e:
                    assert "closed" in str(e)
                except Exception as e:
                    errors.append(e)
        threads = [threading.Thread(target=look) for _ in range(4)]
        closers = [threading.Thread(target=t.close) for _ in range(2)]
        for th in threads: th.start()
        for th in closers: th.start()
        for th in closers: th.join()
        stop.set()
        for th in threads: th.join()
    assert not errors, errors
    """, devices=0)


# 7 -------------------------------------------------------------------------------------

def test_7_workspace_pool_keys_streams_by_id_and_thread_and_stays_bounded():
    """pygemv keyed its workspaces by (device, stream handle): every thread's per-thread
    default stream (handle 2) shared one buffer, a destroyed stream's reused handle got the
    old stream's buffer, and entries were never freed (296 MiB after 200 streams)."""
    run("""
    import re
    split = pygemv.Config("splitk_twopass", 256, 1, False, 1, False, 4)
    A = pygemv.DeviceArray.from_numpy(np.ones((4, 4096), np.float32))
    x = pygemv.DeviceArray.from_numpy(np.ones(4096, np.float32))
    y = pygemv.DeviceArray.from_numpy(np.zeros(4, np.float32))

    def partials_buffer(stream):
        fake.gemv_fake_clear_log()
        pygemv.gemv(A, x, y, stream=stream, config=split)
        return re.search(r"row(?:group|block) .* acc=(0x[0-9a-f]+)", fake_text(fake.gemv_fake_log)).group(1)

    seen, one_at_a_time, all_done = {}, threading.Lock(), threading.Barrier(3)
    def on_per_thread_stream(i):
        with one_at_a_time:  # the stand-in's log is shared; the threads stay alive to the end
            seen[i] = partials_buffer(2)
        all_done.wait()
    ts = [threading.Thread(target=on_per_thread_stream, args=(i,)) for i in range(3)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert len(set(seen.values())) == 3, seen  # one per thread's per-thread stream

    s1 = pygemv.Stream(); h = s1.handle; b1 = partials_buffer(s1); s1.close()
    s2 = pygemv.Stream(); assert s2.handle == h  # the stand-in reuses the handle at once
    assert partials_buffer(s2) != b1  # a new stream, a new buffer, despite the handle

    base = fake.gemv_fake_live_bytes()
    for _ in range(200):
        s = pygemv.Stream(); partials_buffer(s); s.close()
    assert fake.gemv_libgemv_pool_size(0) <= 16
    grown = fake.gemv_fake_live_bytes() - base
    assert grown <= 16 * pygemv.WORKSPACE_RECOMMENDED_BYTES, grown
    assert fake.gemv_fake_waits() > 0  # handed over in stream order once full
    no_violations()
    """)


# 8 -------------------------------------------------------------------------------------

def test_8_the_cai_stream_of_x_and_y_is_waited_on():
    run("""
    class Cai:
        def __init__(self, d, stream):
            self.d, self.stream = d, stream
        @property
        def __cuda_array_interface__(self):
            i = dict(self.d.__cuda_array_interface__)
            i["stream"] = self.stream
            return i
    A = pygemv.DeviceArray.from_numpy(np.ones((8, 8), np.float32))
    x = pygemv.DeviceArray.from_numpy(np.ones(8, np.float32))
    y = pygemv.DeviceArray.from_numpy(np.zeros(8, np.float32))
    run_on, producer = pygemv.Stream(), pygemv.Stream()
    before = fake.gemv_fake_waits()
    pygemv.gemv(A, Cai(x, producer.handle), Cai(y, producer.handle), stream=run_on)
    assert fake.gemv_fake_waits() - before == 2, fake.gemv_fake_waits() - before
    pygemv.gemv(A, Cai(x, run_on.handle), y, stream=run_on)  # the same stream: no wait
    assert fake.gemv_fake_waits() - before == 2
    no_violations()
    """)


# 9 -------------------------------------------------------------------------------------

def two_pass(split: int = 2):
    return pygemv.Config("splitk_twopass", 256, 1, False, 1, False, split)


def test_9_workspace_sizes_saturate_instead_of_wrapping():
    """2^61 rows x 2 slices x 4 bytes is 2^64: it wrapped to 0 and passed the check."""
    m, batch = 2**30, 2**31
    args = dict(batch=batch, stride_a=0, stride_x=0, stride_y=m)
    assert pygemv.workspace_size(two_pass(), m, 16, "float16", **args) == 2**64 - 1
    run(f"""
    c = pygemv.Config("splitk_twopass", 256, 1, False, 1, False, 2).to_c()
    a = _lib.Args(_lib.OP_N, 1, {m}, 16, 1.0, 0.0, 1 << 20, 16, 1 << 20, 1, 1 << 30, 1, 1 << 40, 4 << 20, 0,
                  _lib.FLAG_TRUSTED_POINTERS, {batch}, 0, 0, {m})
    st = _lib.load().gemv_ex(ctypes.byref(a), ctypes.byref(c))
    assert st == 4, (st, _lib.load().gemv_last_error())  # INSUFFICIENT_WORKSPACE, nothing launched
    assert fake.gemv_fake_launches() == 0
    """)


def test_9_dispatch_of_huge_row_counts_and_extreme_increments():
    """rows * p overflowed int64 in the heuristic (2^60 rows with a shared A), and the
    first-element offset negated INT64_MIN; UBSan (scripts/hostcheck.sh) reports both on
    the old code. Here: the choice must still be a config that runs the problem."""
    run("""
    c = pygemv.select_config(2**20, 65536, "float16", batch=2**40, stride_a=0, stride_x=0, stride_y=2**20)
    ok, why = pygemv.can_implement(c, 2**20, 65536, "float16", batch=2**40, stride_a=0, stride_x=0,
                                   stride_y=2**20)
    assert ok, why
    A = pygemv.DeviceArray.from_numpy(np.ones((1, 1), np.float32))
    y = pygemv.DeviceArray.from_numpy(np.ones(1, np.float32))
    pygemv.gemv(A.ptr, A.ptr, y.ptr, m=1, k=1, dtype="float32", incx=-2**63)
    no_violations()
    """)


def test_9_extents_beyond_int64_are_invalid():
    for kwargs in (dict(m=2**40, k=2**30, lda=2**30), dict(m=2, k=2, incx=2**62), dict(m=2**62, k=1, incy=4)):
        with pytest.raises(pygemv.InvalidValueError, match="spans more than 2\\^63"):
            pygemv.gemv(256, 256, 256, dtype="float32", **kwargs)


# 10 ------------------------------------------------------------------------------------

def header_table(tmp_path, header_edit, name="t.gemvtable", prefix=b""):
    path = write_table(tmp_path / name, H100, [])
    text = header_edit(path.read_text())
    path.write_bytes(prefix + text.encode())
    return path


def test_10_compute_capability_that_overflows_int_is_refused(tmp_path):
    path = header_table(tmp_path, lambda t: t.replace("compute_capability 9.0", "compute_capability 4294967305.0"))
    with pytest.raises(pygemv.TableInvalidError, match="compute_capability"):
        pygemv.Table(path)


def test_10_indented_lines_read_like_any_other(tmp_path):
    path = header_table(tmp_path, lambda t: t.replace("\ngpu ", "\n   gpu ").replace("\nsm_count", "\n\tsm_count"))
    with pygemv.Table(path) as t:
        assert t.fingerprint == H100


def test_10_duplicate_header_keys_are_refused(tmp_path):
    path = header_table(tmp_path, lambda t: t.replace("sm_count 132", "sm_count 132\nsm_count 114"))
    with pytest.raises(pygemv.TableInvalidError, match="duplicate header key"):
        pygemv.Table(path)


def test_10_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = header_table(tmp_path, lambda t: t, prefix=b"\xef\xbb\xbf")
    with pygemv.Table(path) as t:
        assert t.fingerprint == H100


# 11 ------------------------------------------------------------------------------------

def test_11_allocation_failures_are_a_status_not_an_abort(tmp_path):
    """std::bad_alloc escaped the C ABI and aborted the process, on the first gemv() too."""
    shutil.copy(SHIPPED, tmp_path / "h100.gemvtable")
    r = run(f"""
    if not fake.gemv_fake_fail_new_after(-1):
        print("SKIP: a sanitizer's operator new is in charge"); sys.exit(0)
    lib = _lib.load()
    for n in (0, 3, 50, 400):
        fake.gemv_fake_fail_new_after(n)
        h = _lib.table_t()
        st = lib.gemv_table_read({str(tmp_path / "h100.gemvtable")!r}.encode(), ctypes.byref(h))
        fake.gemv_fake_fail_new_after(-1)
        assert st == 8 and b"out of host memory" in lib.gemv_last_error(), (n, st, lib.gemv_last_error())
    A = pygemv.DeviceArray.from_numpy(np.ones((8, 8), np.float32))
    x = pygemv.DeviceArray.from_numpy(np.ones(8, np.float32))
    y = pygemv.DeviceArray.from_numpy(np.ones(8, np.float32))
    fake.gemv_fake_fail_new_after(0)  # the first call finds and reads the table: it allocates
    a = _lib.Args(0, 0, 8, 8, 1.0, 0.0, A.ptr, 8, x.ptr, 1, y.ptr, 1, 0, 0, 0, 0)
    st = lib.gemv_ex(ctypes.byref(a), None)
    fake.gemv_fake_fail_new_after(-1)
    assert st == 8, (st, lib.gemv_last_error())
    pygemv.gemv(A, x, y)  # and the library works on afterwards
    """, env={"GEMV_TABLE": str(tmp_path)})
    if "SKIP" in r.stdout:
        pytest.skip(r.stdout.strip())


# 12 ------------------------------------------------------------------------------------

def test_12_float_sizes_are_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="m must be an integer"):
        pygemv.gemv(256, 256, 256, m=3.0, k=8, dtype="float32")
    with pytest.raises(TypeError, match="k must be an integer"):
        pygemv.gemv(256, 256, 256, m=3, k=8.5, dtype="float32")


def test_12_alpha_beyond_float32_is_a_value_error():
    with pytest.raises(ValueError, match="alpha = 1e\\+39 overflows float32"):
        pygemv.gemv(256, 256, 256, m=3, k=8, dtype="float32", alpha=1e39)
    with pytest.raises(TypeError, match="beta must be a real number"):
        pygemv.gemv(256, 256, 256, m=3, k=8, dtype="float32", beta=1j)


class _Cai:
    def __init__(self, **iface):
        self.__cuda_array_interface__ = iface


@pytest.mark.parametrize("iface", [
    dict(shape=(4,), data=(256, False), version=3),                       # no typestr
    dict(shape=(4,), typestr="<f4", version=3),                           # no data
    dict(shape=(4,), typestr="<f4", data=256, version=3),                 # data not a pair
    dict(shape=(4,), typestr="<f4", data=(256, False), strides=(), version=3),
    dict(shape=("4",), typestr="<f4", data=(256, False), version=3),
])
def test_12_a_malformed_array_interface_names_the_argument(iface):
    A = _Cai(shape=(4, 4), typestr="<f4", data=(256, False), version=3)
    with pytest.raises((TypeError, ValueError), match="^x: "):
        pygemv.gemv(A, _Cai(**iface))


def test_12_a_malformed_dlpack_object_names_the_argument():
    class Bad:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self):
            return 42  # not a capsule

    A = _Cai(shape=(4, 4), typestr="<f4", data=(256, False), version=3)
    with pytest.raises((TypeError, ValueError), match="^x: "):
        pygemv.gemv(A, Bad())


def test_12_a_nul_in_a_table_path_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="path contains a NUL"):
        pygemv.Table(str(tmp_path / "a\0b.gemvtable"))
    with pytest.raises(ValueError, match="path contains a NUL"):
        pygemv.load_table(str(tmp_path / "a\0b.gemvtable"))


# 13 ------------------------------------------------------------------------------------

def test_13_table_reloads_free_the_tables_they_replace(tmp_path):
    """Installed tables were kept until exit: 200 reloads of a 16k-entry table held them all."""
    path = big_table(tmp_path / "t.gemvtable", 16384)
    run(f"""
    def rss_mb():
        return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    pygemv.load_table({str(path)!r})
    A = pygemv.DeviceArray.from_numpy(np.ones((8, 8), np.float16))
    x = pygemv.DeviceArray.from_numpy(np.ones(8, np.float16))
    pygemv.gemv(A, x, x)
    base = rss_mb()
    for _ in range(200):
        pygemv.load_table({str(path)!r})
        pygemv.gemv(A, x, pygemv.DeviceArray.from_numpy(np.ones(8, np.float16)))
    grown = rss_mb() - base
    assert {SANITIZED} or grown < 60, f"{{grown:.0f}} MB more after 200 reloads"
    no_violations()
    """, timeout=300)
