"""Tuned tables without a GPU: Python writes, libgemv's C reader parses, checks the
fingerprint and looks up the nearest shape; corrupt, truncated, foreign and stale tables
give a status, never a crash."""
import math
from pathlib import Path
import os
import subprocess
import sys

import pytest
from conftest import gpu_absent_reason

import pygemv
import pygemv._table
from pygemv._table import Entry, Fingerprint, write_table

H100 = Fingerprint("NVIDIA H100 80GB HBM3", 132, 9, 0, 13000, pygemv.library_version())
C = pygemv.Config


def entries():
    return [
        Entry("float16", 1024, 1024, C("block_per_row", 64, 2, True, 2), 2.7, 3.5),
        Entry("float16", 1, 65536, C("splitk_twopass", 256, 1, True, 4, False, 64), 4.7, 5.0),
        Entry("float16", 65536, 16, C("rows_per_warp", 2, 64, True, 1, True), 6.0, 6.5),
        Entry("float32", 4096, 4096, C("block_per_row", 128, 1, True, 2), 20.0, 23.0),
        Entry("float32", 16, 16, C("thread_per_row", 1, 32, False, 1), 1.9, 2.0),
        Entry("float32", 16, 17, C("rows_per_warp", 4, 16, False, 2), 1.9, 2.2),  # rows of 68 bytes
        # The descriptor keys the table: op T and batched entries live apart from op N's.
        Entry("float16", 1024, 1024, C("t_columns", 32, 8, True, 4), 3.1, 3.3, op="T"),
        Entry("float16", 1024, 1024, C("warp_per_row", 32, 4, True, 2), 40.0, 41.0, batch=16),
    ]


@pytest.fixture
def table_file(tmp_path):
    return write_table(tmp_path / "h100.gemvtable", H100, entries(), info={"created": "2026-11-21", "tool": "test"})


def test_round_trip_through_the_c_reader(table_file):
    text = table_file.read_text()
    assert text.splitlines()[2] == "gemv-table 2" and text.rstrip().endswith("end")
    assert "\nT float16 1 1024 1024 t_columns 32 8 1 4 0 1 " in text
    assert "\nN float16 16 1024 1024 warp_per_row " in text
    with pygemv.Table(table_file) as t:
        assert t.fingerprint == H100
        assert len(t) == 8
        for e in entries():
            config, dist = t.lookup(e.m, e.k, e.dtype, trans=e.op == "T", batch=e.batch)
            assert config == e.config and dist == 0.0


def test_lookup_matches_the_descriptor_exactly_and_the_shape_nearest():
    """op, dtype and single/batched must match; within them the nearest (M, K, batch)."""
    es = entries()
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = write_table(os.path.join(d, "t.gemvtable"), H100, es)
        with pygemv.Table(path) as t:
            assert t.lookup(1000, 1024, "float16", trans=True)[0] == es[6].config
            assert t.lookup(1000, 1024, "bfloat16", trans=True) is None  # no op T bf16 entry
            assert t.lookup(1000, 1024, "float16", batch=20)[0] == es[7].config
            assert t.lookup(1000, 1024, "float16", batch=20, trans=True) is None  # no batched op T entry
            assert t.lookup(1024, 1024, "float16", batch=64) is None  # 2 octaves of batch away: beyond reach
            assert t.lookup(1024, 1024, "float16", batch=22)[1] == pytest.approx(math.log2(22 / 16))
            # op T, batched and quantized entries reach 0.5 (their grids are coarse); op N
            # singles 1.5.
            assert t.lookup(1024, 1024, "float16", batch=32) is None
            assert t.lookup(1448, 1024, "float16", trans=True)[1] == pytest.approx(math.log2(1448 / 1024))
            assert t.lookup(1024, 1536, "float16", trans=True) is None
            assert t.lookup(2048, 2048, "float16")[1] == pytest.approx(2 ** 0.5)
            assert t.lookup(1000, 1024, "float16")[0] == es[0].config  # single op N: not the batched entry
            # A batched op N problem with no batched entry in reach runs batch * M rows: the
            # single entry at (batch * M, K) speaks for it. op T has no such fallback.
            assert t.lookup(128, 1024, "float16", batch=8) == (es[0].config, 0.0)
            assert t.lookup(128, 1024, "float16", batch=8, trans=True) is None


def test_nearest_shape_in_log_m_and_log_k(table_file):
    with pygemv.Table(table_file) as t:
        # 900x1200 is nearest to 1024x1024 in log2 space; 2x50000 to 1x65536.
        config, dist = t.lookup(900, 1200, "float16")
        assert config == entries()[0].config and 0 < dist < 0.5
        assert t.lookup(2, 50000, "float16")[0] == entries()[1].config
        assert t.lookup(3, 40000, "float16") is None  # 1.7 away: beyond an entry's reach (1.5)
        assert t.lookup(3000, 5000, "float32")[0] == entries()[3].config
        assert t.lookup(8, 8, "float32")[0] == entries()[4].config


def test_an_entry_no_faster_than_the_heuristic_serves_its_own_shape_alone(tmp_path):
    """An op N entry that beat the heuristic at its shape by less than 5% (heuristic_us /
    tuned_us) says the heuristic is as good in its cell: between grid points the heuristic
    decides. Entries of op T, batches and quantized weights are not gated."""
    es = [Entry("float32", 4096, 1024, C("block_per_row", 128, 1, True, 2), 10.0, 10.4),   # gain 1.04
          Entry("float32", 64, 64, C("warp_per_row", 32, 4, True, 1), 1.0, 1.06),           # gain 1.06
          Entry("float16", 1024, 1024, C("t_columns", 16, 16, True, 4), 3.0, 3.0, op="T"),
          Entry("float16", 64, 64, C("warp_per_row", 32, 4, True, 1), 4.0, 4.0, batch=16)]
    with pygemv.Table(write_table(tmp_path / "gain.gemvtable", H100, es)) as t:
        assert t.lookup(4096, 1024, "float32")[0] == es[0].config      # its own shape
        assert t.lookup(6972, 1004, "float32") is None                  # elsewhere: the heuristic
        assert t.lookup(80, 72, "float32")[0] == es[1].config           # 1.06: it speaks for its cell
        assert t.lookup(1100, 1000, "float16", trans="T")[0] == es[2].config
        assert t.lookup(70, 64, "float16", batch=16)[0] == es[3].config
        # A batch with no batched entry in reach takes the single entry at (batch x M, K),
        # gated the same way.
        assert t.lookup(64, 1024, "float32", batch=64)[0] == es[0].config  # 4096 x 1024: its shape
        assert t.lookup(64, 1024, "float32", batch=100) is None


def test_entries_of_unaligned_rows_reach_1_in_log2(tmp_path):
    """Rows that are not 16-byte multiples are tuned 16x apart in K: their entries reach 1.0
    (op N single products), those of 16-byte rows 1.5."""
    es = [Entry("float16", 65536, 260, C("rows_per_warp", 8, 16, 2, 2), 8.0, 9.0),
          Entry("float16", 16384, 256, C("rows_per_warp", 8, 16, 1, 2), 8.0, 9.0)]
    with pygemv.Table(write_table(tmp_path / "reach.gemvtable", H100, es)) as t:
        assert t.lookup(65536, 300, "float16")[0] == es[0].config             # 0.21 away
        assert t.lookup(10208, 636, "float16") is None                        # 1.46 away
        assert t.lookup(10208, 640, "float16")[0] == es[1].config             # aligned rows: 1.5


def test_a_one_wave_entry_does_not_serve_a_shape_that_needs_two(tmp_path):
    """An aligned row-kernel entry whose blocks made one wave at its own shape (132 SMs) is
    passed over where they would need a second, mostly empty one, if its blocks are coarse
    (512 threads: 528 of them a wave) or the rows shorter than its own (fp16 4096^2's 64 x 8
    ran 4800 x 4096 at 17.25 us, the heuristic 15.14; 4096 x 1024's 64 x 2 ran 6700 x 664 at
    7.0, the heuristic 4.4). Finer blocks on rows as long stay (2048^2's 128 x 1 ran 2500 x
    2048 at 5.3 us, the heuristic 6.0)."""
    es = [Entry("float16", 4096, 4096, C("block_per_row", 64, 8, True, 1), 11.65, 12.99),     # 512 blocks of 512
          Entry("float32", 4096, 4096, C("block_per_row", 128, 1, True, 2), 20.0, 23.0),      # 1.94 waves
          Entry("bfloat16", 4096, 1024, C("block_per_row", 64, 2, True, 2), 4.0, 4.7),        # 2048 of 128
          Entry("bfloat16", 2048, 2048, C("block_per_row", 128, 1, True, 2), 3.9, 5.3)]       # 2048 of 128
    with pygemv.Table(write_table(tmp_path / "wave.gemvtable", H100, es)) as t:
        assert t.lookup(4096, 4096, "float16")[0] == es[0].config
        assert t.lookup(4096, 4608, "float16")[0] == es[0].config      # the same blocks
        assert t.lookup(3600, 4096, "float16")[0] == es[0].config      # 450 blocks: still one wave
        assert t.lookup(4224, 4096, "float16")[0] == es[0].config      # 528: exactly one
        assert t.lookup(4232, 4096, "float16") is None                 # 529: a second wave
        assert t.lookup(4800, 4096, "float16") is None
        assert t.lookup(600, 4096, "float16", batch=8) is None          # 4800 rows in all
        # Entries of more than one wave at their own shape are not gated by it.
        assert t.lookup(3000, 5000, "float32")[0] == es[1].config
        # 128-thread blocks: shorter rows past one wave are passed over, rows as long stay.
        assert t.lookup(6700, 664, "bfloat16") is None
        assert t.lookup(4000, 664, "bfloat16")[0] == es[2].config       # one wave still
        assert t.lookup(4500, 1024, "bfloat16")[0] == es[2].config
        assert t.lookup(2500, 2048, "bfloat16")[0] == es[3].config


def test_entries_that_cannot_run_the_shape_are_skipped(table_file):
    with pygemv.Table(table_file) as t:
        # Rows of 16-byte multiples take entries tuned on such rows, other rows the others:
        # K = 3000 fp32 rows are 16-byte multiples, K = 3001 rows are not, and the only entry
        # tuned on such rows (16x17) is out of reach, so the heuristic decides.
        assert t.lookup(3000, 3000, "float32")[0] == entries()[3].config
        assert t.lookup(3000, 3001, "float32") is None
        assert t.lookup(20, 23, "float32")[0] == entries()[5].config
        assert t.lookup(20, 24, "float32")[0] == entries()[4].config
        assert t.lookup(16, 16, "float32", lda=17)[0] == entries()[5].config  # padded rows count too
        # Far from every tuned shape: the heuristic decides.
        assert t.lookup(1 << 20, 4096, "float32") is None
        # Without workspace the split-K entry is passed over (and nothing else is in reach).
        assert t.lookup(1, 65536, "float16")[0].variant == "splitk_twopass"
        assert t.lookup(1, 65536, "float16", workspace_bytes=0) is None
        # A dtype with no entry that runs the shape: None, and the heuristic decides.
        assert t.lookup(100, 100, "bfloat16") is None


def test_fingerprint_check_foreign_and_stale(table_file):
    with pygemv.Table(table_file) as t:
        t.check(H100)
        for other, needle in [
            (Fingerprint("NVIDIA A100-SXM4-80GB", 108, 8, 0, 13000, H100.libgemv), "not this NVIDIA A100"),
            (Fingerprint(H100.gpu, 114, 9, 0, 13000, H100.libgemv), "114 SMs"),
            (Fingerprint(H100.gpu, 132, 9, 0, 12080, H100.libgemv), "CUDA runtime 13000"),
        ]:
            with pytest.raises(pygemv.TableMismatchError, match=needle):
                t.check(other)
    stale = write_table(table_file.parent / "stale.gemvtable",
                        Fingerprint(H100.gpu, 132, 9, 0, 13000, "0.0.1"), entries())
    with pygemv.Table(stale) as t:
        with pytest.raises(pygemv.TableMismatchError, match="stale: tuned with libgemv 0.0.1"):
            t.check(H100)


def corrupt(table_file, how):
    lines = table_file.read_text().splitlines()
    if how == "no end":
        lines = lines[:-1]
    elif how == "cut entries":
        lines = lines[:-3]
    elif how == "cut mid-line":
        return table_file.read_text()[:-40]
    elif how == "unknown variant":
        lines = [l.replace("block_per_row", "tensor_core_magic", 1) if l.startswith("N float32 1 4096") else l
                 for l in lines]
    elif how == "bad dtype":
        lines = [l.replace("float32 1 16 16", "float64 1 16 16") for l in lines]
    elif how == "bad op":
        lines = [l.replace("N float32 1 16 16", "X float32 1 16 16") for l in lines]
    elif how == "op of another variant":
        lines = [l.replace("N float32 1 16 16", "T float32 1 16 16") for l in lines]
    elif how == "schema 1 entry":
        lines = [l.replace("N float32 1 16 16", "float32 16 16") for l in lines]
    elif how == "invalid config":
        lines = [l.replace("thread_per_row 1 32", "thread_per_row 4 32") for l in lines]
    elif how == "duplicate":
        lines.insert(-1, lines[-2])
        lines = [l.replace("entries 8", "entries 9") for l in lines]
    elif how == "missing header key":
        lines = [l for l in lines if not l.startswith("sm_count")]
    elif how == "not a table":
        lines = ["hello"] + lines
    elif how == "empty":
        lines = []
    elif how == "text after end":
        lines.append("N float32 1 1 1 thread_per_row 1 32 0 1 0 1 1 1")
    elif how == "negative time":
        lines = [l.replace(" 1.900 ", " -1.900 ") for l in lines]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("how, needle", [
    ("no end", "no closing"), ("cut entries", "truncated"), ("cut mid-line", "line"),
    ("unknown variant", "unknown variant: tensor_core_magic"), ("bad dtype", "unknown dtype"),
    ("invalid config", "invalid config"), ("duplicate", "duplicate entry"), ("missing header key", "header needs"),
    ("not a table", "not a gemv table"), ("empty", "truncated"), ("text after end", "after \"end\""),
    ("negative time", "times"), ("bad op", "op must be N, T or W<bits>G<group>"),
    ("op of another variant", "computes the other op"), ("schema 1 entry", "14 fields"),
])
def test_corrupt_tables_give_a_status_and_a_message(table_file, how, needle):
    table_file.write_text(corrupt(table_file, how))
    with pytest.raises(pygemv.TableInvalidError, match=needle) as e:
        pygemv.Table(table_file)
    assert e.value.status == 9 and str(table_file) in str(e.value)


def test_binary_missing_and_future_schema(tmp_path):
    blob = tmp_path / "x.gemvtable"
    blob.write_bytes(os.urandom(256) + b"\0")
    with pytest.raises(pygemv.TableInvalidError, match="binary"):
        pygemv.Table(blob)
    with pytest.raises(pygemv.TableInvalidError, match="cannot open"):
        pygemv.Table(tmp_path / "missing.gemvtable")
    future = tmp_path / "future.gemvtable"
    future.write_text("gemv-table 3\nwhatever\n")
    with pytest.raises(pygemv.TableMismatchError, match="schema 3"):
        pygemv.Table(future)


def test_an_old_schema_table_is_refused_with_a_clear_status(tmp_path):
    """A schema-1 table (keyed by dtype, M, K alone) is refused: TABLE_MISMATCH, naming both
    schemas; the device then dispatches with the heuristic (tests/test_gpu_table.py)."""
    old = tmp_path / "old.gemvtable"
    old.write_text("gemv-table 1\ngpu NVIDIA H100 80GB HBM3\nsm_count 132\ncompute_capability 9.0\n"
                   "cuda_runtime 13000\nlibgemv 0.1.0\nentries 1\n"
                   "float16 1024 1024 block_per_row 128 1 1 2 0 1 3.12 3.40\nend\n")
    with pytest.raises(pygemv.TableMismatchError, match="schema 1; this libgemv reads schema 2"):
        pygemv.Table(old)


def test_reader_survives_random_damage(table_file):
    """Every prefix of the file, and random byte flips: a status, never a crash."""
    good = table_file.read_bytes()
    import random
    rng = random.Random(1)
    damaged = [good[:n] for n in range(0, len(good), 7)]
    for _ in range(200):
        b = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(1, 256)
        damaged.append(bytes(b))
    code = ("import sys, pygemv\n"
            "ok = bad = 0\n"
            "for path in sys.argv[1:]:\n"
            "    try:\n        pygemv.Table(path); ok += 1\n"
            "    except (pygemv.TableInvalidError, pygemv.TableMismatchError):\n        bad += 1\n"
            "print(ok, bad)\n")
    paths = []
    for i, data in enumerate(damaged):
        p = table_file.parent / f"d{i}.gemvtable"
        p.write_bytes(data)
        paths.append(str(p))
    r = subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True, cwd=table_file.parent)
    assert r.returncode == 0, r.stderr  # a crash would be a signal, not an exception
    ok, bad = map(int, r.stdout.split())
    assert ok + bad == len(paths) and bad > len(good) // 7


def test_writer_rejects_header_keys_it_owns(tmp_path):
    with pytest.raises(ValueError, match="entries"):
        write_table(tmp_path / "t.gemvtable", H100, entries(), info={"entries": "3"})


@pytest.mark.skipif(gpu_absent_reason() is None, reason="asserts the no-GPU errors; this machine has a GPU")
def test_loading_and_status_without_a_gpu_name_the_cause(table_file):
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError), match="driver|device"):
        pygemv.load_table(table_file)
    with pytest.raises((pygemv.NoDriverError, pygemv.NoDeviceError)):
        pygemv.table_status()


def test_fingerprint_file_names_tell_gpus_apart():
    a = H100.slug()
    assert a == "NVIDIA-H100-80GB-HBM3-sm90-132sm"
    assert Fingerprint("NVIDIA H100 PCIe", 114, 9, 0, 13000, "0.1.0").slug() != a


def test_quantized_entries_are_keyed_by_bits_and_group_size(tmp_path):
    """Quantized weights (op token W<bits>G<group>) have entries of their own: a lookup
    takes only entries of the problem's bits and group size, nearest in (M, K); dense
    lookups never see them."""
    q_rows = C("q_rows", 8, 64, True, 4, True, 8)
    q_rows_row = C("q_rows", 16, 32, True, 4, True, 1)
    q_mma = C("q_mma", 32, 4, True, 1, True, 16)
    es = entries() + [Entry("float16", 4096, 4096, q_mma, 5.0, 5.4, bits=4, group=128),
                      Entry("float16", 4096, 4096, q_rows, 6.0, 6.1, bits=4, group=32),   # same shape, other group
                      Entry("bfloat16", 8192, 8192, q_rows, 12.7, 13.0, bits=4, group=128),
                      Entry("float16", 4096, 4096, q_rows_row, 9.0, 9.5, bits=8, group=0),
                      Entry("float16", 900, 20000, q_rows, 5.0, 5.4, bits=4, group=32),
                      Entry("bfloat16", 900, 20000, q_rows, 5.0, 5.4, bits=4, group=128)]
    path = write_table(tmp_path / "q.gemvtable", H100, es)
    text = path.read_text()
    assert "\nW4G128 float16 1 4096 4096 q_mma 32 4 1 1 1 16 " in text and "\nW8G0 float16 1 4096 4096 q_rows " in text
    with pygemv.Table(path) as t:
        assert len(t) == len(es)
        # int4 of 2048 to 4096 rows and 2048 columns up to 2^24 codes, x in place, is q_mma_rounds' regime: other
        # operations' entries serve no shape there; with x strided they do.
        assert t.lookup(4096, 4096, "float16", weights=(4, 128, 1)) is None
        assert t.lookup(4096, 4096, "float16", weights=(4, 128, 1), incx=2) == (q_mma, 0.0)
        assert t.lookup(4600, 4096, "float16", weights=(4, 128, 0))[0] == q_mma  # nearest; symmetric zeros too
        assert t.lookup(5000, 4096, "float16", weights=(4, 128, 0)) is None      # q_mma_rounds' fp16 regime
        assert t.lookup(4096, 4096, "float16", weights=(4, 32, 1)) is None        # groups of 32 too (s32)
        assert t.lookup(4096, 4096, "float16", weights=(4, 32, 1), incx=2) == (q_rows, 0.0)
        assert t.lookup(4096, 4096, "float16", weights=(4, 64, 1)) is None      # no entry of that group size
        assert t.lookup(5800, 5800, "float16", weights=(4, 128, 1)) is None    # 0.71 away: beyond the reach
        # int8 with x in place from 2048 rows and 2^23 codes is q_block_rows' regime: other
        # operations' entries serve no shape there, their own included; with x strided they do.
        assert t.lookup(4096, 4096, "float16", weights=(8, 0, 0)) is None
        assert t.lookup(4096, 4096, "float16", weights=(8, 0, 0), incx=2) == (q_rows_row, 0.0)
        assert t.lookup(4096, 4096, "float16", weights=(8, 128, 0)) is None
        assert t.lookup(8192, 8192, "bfloat16", weights=(4, 128, 1)) == (q_rows, 0.0)
        # Where the heuristic's x-held rule for smaller matrices runs, an entry of groups of
        # 128 up serves its own shape alone; with x strided (no x held) it serves its
        # neighbours as before, and so do entries of groups of 32 and 64.
        # (Past 2^24 codes: under it q_mma_rounds' regime (k) takes these rows.)
        assert t.lookup(900, 20000, "bfloat16", weights=(4, 128, 2)) == (q_rows, 0.0)
        assert t.lookup(880, 20400, "bfloat16", weights=(4, 128, 2)) is None
        assert t.lookup(880, 20400, "bfloat16", weights=(4, 128, 2), incx=2)[0] == q_rows
        assert t.lookup(880, 20400, "float16", weights=(4, 32, 1))[0] == q_rows
        assert t.lookup(880, 4700, "float16", weights=(4, 32, 1)) is None    # regime (k)
        # q_mma serves fp16 with symmetric or integer zeros only: with float zeros the fp16
        # W4G128 entry cannot run, and nothing else is in reach.
        assert t.lookup(4096, 4096, "float16", weights=(4, 128, 2)) is None
        # A dense problem takes dense entries only: none is in reach of fp16 4096 x 4096.
        assert t.lookup(4096, 4096, "float16") is None
        assert t.lookup(1024, 1024, "float16")[0] == C("block_per_row", 64, 2, True, 2)


def test_an_in_place_q_mma_entry_serves_only_shapes_whose_tiles_share_out_evenly(tmp_path):
    """q_mma reading x in place (x_in_smem 0) runs a whole 16-row tile a block, so an entry
    applies at another M only where those tiles share out evenly on the table's 132 SMs (the
    heuristic's rule): within a wave each SM's share at least 80% of the largest, beyond it
    the last wave at least 80% full."""
    inplace = C("q_mma", 256, 1, True, 1, False, 1)
    es = entries() + [Entry("float16", 8192, 8192, inplace, 19.4, 20.4, bits=4, group=128)]
    with pygemv.Table(write_table(tmp_path / "q.gemvtable", H100, es)) as t:
        assert t.lookup(8192, 8192, "float16", weights=(4, 128, 1)) == (inplace, 0.0)  # 512 tiles: 3.9 of 4 an SM
        assert t.lookup(8192, 10944, "float16", weights=(4, 128, 1))[0] == inplace     # the same tiles
        assert t.lookup(6000, 8192, "float16", weights=(4, 128, 1))[0] == inplace      # 375 tiles: 2.8 of 3 an SM
        assert t.lookup(5008, 8192, "float16", weights=(4, 128, 1)) is None            # 313 tiles: 2.4 of 3 an SM
        assert t.lookup(11008, 10944, "float16", weights=(4, 128, 1)) is None          # 688 tiles: 1.3 waves
        assert t.lookup(8192, 8192, "float16", weights=(4, 128, 1), incx=2) is None   # x not contiguous: can't run


def test_an_x_held_entry_serves_its_own_shape_alone(tmp_path):
    """q_mma_x_held's tiles a block and slices set its grid's wave at the entry's shape: at
    another shape the lookup passes the entry over for the next in reach, then the heuristic
    (which shares the tiles out for that shape). Tables round-trip its non-power-of-two tiles."""
    held = C("q_mma_x_held", 128, 15, True, 2, False, 11)
    staged = C("q_mma", 32, 4, True, 1, True, 8)
    es = entries() + [Entry("float16", 11008, 10944, held, 29.4, 29.4, bits=4, group=128),
                      Entry("float16", 11008, 8192, staged, 30.0, 30.0, bits=4, group=128)]
    path = write_table(tmp_path / "q.gemvtable", H100, es)
    assert "\nW4G128 float16 1 11008 10944 q_mma_x_held 128 15 1 2 0 11 " in path.read_text()
    with pygemv.Table(path) as t:
        assert t.lookup(11008, 10944, "float16", weights=(4, 128, 1)) == (held, 0.0)
        assert t.lookup(11008, 10000, "float16", weights=(4, 128, 1))[0] == staged  # the next entry in reach
        assert t.lookup(12000, 10944, "float16", weights=(4, 128, 1))[0] == staged
        assert t.lookup(11008, 12288, "float16", weights=(4, 128, 1)) is None      # nothing else: the heuristic


@pytest.mark.parametrize("line, needle", [
    ("W3G128 float16 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "op must be N, T or W<bits>G<group>"),
    ("W4G48 float16 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "op must be N, T or W<bits>G<group>"),
    ("W4G2048 float16 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "op must be N, T or W<bits>G<group>"),
    ("W4 float16 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "op must be N, T or W<bits>G<group>"),
    ("W4G128 float16 1 64 64 warp_per_row 32 4 1 1 0 1 1.0 1.0", "does not take weights"),
    ("N float16 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "takes quantized weights"),
    ("W8G0 float16 1 64 64 q_mma 32 4 1 1 1 1 1.0 1.0", "does not take weights"),
    ("W4G128 float32 1 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "single products of float16 or bfloat16"),
    ("W4G128 float16 4 64 64 q_rows 8 64 1 4 1 1 1.0 1.0", "single products of float16 or bfloat16"),
])
def test_bad_quantized_entries_are_refused(tmp_path, line, needle):
    path = write_table(tmp_path / "q.gemvtable", H100, entries())
    lines = path.read_text().splitlines()
    lines.insert(-1, line)
    text = "\n".join(lines).replace(f"entries {len(entries())}", f"entries {len(entries()) + 1}") + "\n"
    path.write_text(text)
    with pytest.raises(pygemv.TableInvalidError, match=needle):
        pygemv.Table(path)


def test_a_quantized_duplicate_is_one_of_the_same_group(tmp_path):
    e = Entry("float16", 64, 64, C("q_rows", 8, 64, True, 4, True, 1), 1.0, 1.0, bits=4, group=128)
    write_table(tmp_path / "ok.gemvtable", H100, [e, Entry(**{**e.__dict__, "group": 64})])
    pygemv.Table(tmp_path / "ok.gemvtable").close()
    with pytest.raises(pygemv.TableInvalidError, match="duplicate entry for op W4G128 float16"):
        write_table(tmp_path / "dup.gemvtable", H100, [e, e])
        pygemv.Table(tmp_path / "dup.gemvtable")



def test_every_shipped_table_parses_and_holds_what_its_lines_say():
    """A shipped table edited by hand (or by retime_entries.py) must still pass the C reader:
    a wrong entry count or a duplicate key would make every GPU refuse it and fall back to
    the heuristic, which no CPU run would otherwise notice."""
    repo = sorted((Path(__file__).resolve().parents[1] / "libgemv" / "tables").glob("*.gemvtable"))
    assert repo
    # An installed package carries the same files (the sanitized stand-in imports the source
    # tree, which has none).
    shipped = sorted(pygemv._table.shipped_table_dir().glob("*.gemvtable"))
    assert not shipped or [p.name for p in shipped] == [p.name for p in repo]
    for path in repo:
        lines = [l.split() for l in path.read_text().splitlines() if l and not l.startswith("#")]
        body = [w for w in lines if w[0] in ("N", "T") or w[0].startswith("W")]
        with pygemv.Table(path) as t:
            assert len(t) == len(body), path.name
            fp = t.fingerprint
            assert fp.schema == 2 and fp.libgemv == pygemv.library_version(), (path.name, fp)
        assert len({tuple(w[:5]) for w in body}) == len(body), f"{path.name}: a key twice"
