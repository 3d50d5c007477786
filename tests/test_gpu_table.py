"""Tuned dispatch on the GPU: libgemv finds the device's table by itself (user folder,
$GEMV_TABLE, the shipped one), dispatches with it, skips entries that cannot run a
shape, warns about foreign, stale and corrupt tables and falls back, and stays correct
and thread-safe. Each case runs in a fresh process: a device's table is found once."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import pygemv
from pygemv._table import Entry, Fingerprint, shipped_table_dir, write_table

pytestmark = pytest.mark.gpu
C = pygemv.Config

# Entries that the heuristic would not pick, so that their use is visible.
ENTRIES = [
    ("float16", 1000, 3000, C("rows_per_warp", 16, 8, True, 1, True)),
    ("float32", 64, 65536, C("splitk_twopass", 128, 2, True, 2, False, 32)),
    ("bfloat16", 50000, 64, C("thread_per_row", 1, 64, True, 2)),
]

CHILD_PRELUDE = """
import json, sys, threading
import torch, pygemv
sys.path.insert(0, {tests!r})
from gpu_cases import CASES, Problem
def correct(dtype, m, k, case=0):
    p = Problem(torch, m, k, dtype, CASES[case])
    y = p.run()
    torch.cuda.synchronize()
    return p.violations(y)
"""


def run_child(body: str, tmp_path, **env) -> tuple[dict, str]:
    code = CHILD_PRELUDE.format(tests=os.path.dirname(__file__)) + textwrap.dedent(body)
    full_env = {k: v for k, v in os.environ.items() if k != "GEMV_TABLE"}
    full_env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    full_env.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def user_table(tmp_path, fp=None, entries=ENTRIES, name="mine.gemvtable"):
    fp = fp or Fingerprint.of_device()
    # 1.2x the heuristic at their shapes: entries that speak for their cells too (an entry
    # no faster than the heuristic serves its own shape alone).
    return write_table(tmp_path / "cache" / "pygemv" / "tables" / name, fp,
                       [Entry(d, m, k, c, 1.0, 1.2) for d, m, k, c in entries])


def test_user_table_is_found_and_used_and_stays_correct(tmp_path):
    path = user_table(tmp_path)
    out, err = run_child("""
        s = pygemv.table_status()
        res = {"source": s.source, "path": s.path, "entries": s.entries, "chosen": [], "bad": 0}
        for dtype, m, k in [("float16", 1000, 3000), ("float32", 64, 65536), ("bfloat16", 50000, 64),
                            ("float16", 1100, 2800), ("float16", 999, 3001)]:
            res["chosen"].append(pygemv.select_config(m, k, dtype).as_dict())
            for case in range(len(CASES)):  # padding, misalignment, strides: entries that cannot run are skipped
                res["bad"] += correct(dtype, m, k, case)
        print(json.dumps(res))
    """, tmp_path)
    assert out["source"] == "user" and out["path"] == str(path) and out["entries"] == 3
    for (d, m, k, c), chosen in zip(ENTRIES, out["chosen"]):
        assert chosen == c.as_dict(), (d, m, k)
    assert out["chosen"][3] == ENTRIES[0][3].as_dict()  # nearest tuned shape
    assert out["chosen"][4]["vector_loads"] == 2  # K = 3001: the entry cannot run it, the heuristic realigns
    assert out["bad"] == 0
    assert "libgemv: " not in err


def test_trace_and_info_levels_name_the_table_and_each_dispatch(tmp_path):
    """GEMV_LOG_LEVEL=trace: the table in use (info) and, for every call, the operation,
    config and its source (trace) reach Python's logging; the default says nothing here."""
    path = user_table(tmp_path)
    body = """
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s %(message)s")
        bad = correct("float16", 1000, 3000) + correct("float32", 64, 65536)
        print(json.dumps({"bad": bad}))
    """
    out, err = run_child(body, tmp_path, GEMV_LOG_LEVEL="trace")
    assert out["bad"] == 0
    assert err.count(f"INFO pygemv libgemv: dispatch uses the tuned table {path} (3 entries)") == 1
    assert ("DEBUG pygemv libgemv: op N float16 batch 1 1000x3000 lda 3000 incx 1 incy 1 on device 0: "
            "rows_per_warp p=16 r=8 vector_loads=1 unroll=1 x_in_smem=1 split=1 (tuned table)") in err
    assert "splitk_twopass p=128 r=2 vector_loads=1 unroll=2 x_in_smem=0 split=32 (tuned table)" in err
    out, err = run_child(body, tmp_path)
    assert out["bad"] == 0 and "libgemv" not in err


def test_foreign_stale_and_corrupt_tables_warn_and_fall_back(tmp_path):
    me = Fingerprint.of_device()
    foreign = write_table(tmp_path / "foreign.gemvtable",
                          Fingerprint("Some Other GPU", 7, 7, 5, me.cuda_runtime, me.libgemv),
                          [Entry(d, m, k, c, 1.0, 1.0) for d, m, k, c in ENTRIES])
    body = """
        s = pygemv.table_status()
        picks = [(pygemv.select_config(1000, 3000, "float16").as_dict(),
                  pygemv.select_config(1000, 3000, "float16", use_table=False).as_dict())]
        print(json.dumps({"source": s.source, "problem": s.problem, "message": s.message, "picks": picks,
                          "bad": correct("float16", 1000, 3000)}))
    """
    out, err = run_child(body, tmp_path, GEMV_TABLE=str(foreign))
    assert out["source"] == "none" and out["problem"] == 10 and "Some Other GPU" in out["message"]
    assert "libgemv: " in err and "Some Other GPU" in err
    assert out["picks"][0][0] == out["picks"][0][1] and out["bad"] == 0

    out, err = run_child(body, tmp_path, GEMV_TABLE="off")
    assert out["source"] == "none" and "off" in out["message"] and not err

    user_table(tmp_path, Fingerprint(me.gpu, me.sm_count, me.cc_major, me.cc_minor, me.cuda_runtime, "0.0.1"),
               name="a-stale.gemvtable")
    bad = user_table(tmp_path, name="b-corrupt.gemvtable")
    bad.write_text(bad.read_text().replace("rows_per_warp", "warp_drive"))
    out, err = run_child(body, tmp_path)
    assert "stale" in err and "warp_drive" in err and err.count("libgemv: ") == 2
    assert out["source"] in ("none", "shipped") and out["bad"] == 0
    if out["source"] == "none":
        assert out["picks"][0][0] == out["picks"][0][1]


def test_an_old_schema_table_is_refused_once_and_the_heuristic_decides(tmp_path):
    """A schema-1 table for this very GPU (keyed without op or batch) is refused with
    TABLE_MISMATCH, reported once, and dispatch falls back to the heuristic, correctly."""
    me = Fingerprint.of_device()
    old = tmp_path / "old.gemvtable"
    old.write_text(f"gemv-table 1\ngpu {me.gpu}\nsm_count {me.sm_count}\n"
                   f"compute_capability {me.cc_major}.{me.cc_minor}\ncuda_runtime {me.cuda_runtime}\n"
                   f"libgemv {me.libgemv}\nentries 1\nfloat16 1024 3072 block_per_row 1024 1 1 1 0 1 1.0 1.0\nend\n")
    out, err = run_child("""
        s = pygemv.table_status()
        picks = [pygemv.select_config(1000, 3000, "float16").as_dict(),
                 pygemv.select_config(1000, 3000, "float16", use_table=False).as_dict()]
        bad = correct("float16", 1000, 3000) + correct("float16", 1000, 3000)
        print(json.dumps({"source": s.source, "problem": s.problem, "message": s.message, "picks": picks,
                          "bad": bad}))
    """, tmp_path, GEMV_TABLE=str(old))
    assert out["source"] == "none" and out["problem"] == 10 and "schema 1" in out["message"]
    assert err.count("libgemv: ") == 1 and "schema 1; this libgemv reads schema 2" in err
    assert out["picks"][0] == out["picks"][1] and out["bad"] == 0


def test_explicit_load_replaces_and_unloads(tmp_path):
    path = user_table(tmp_path, name="explicit.gemvtable")
    me = Fingerprint.of_device()
    other = write_table(tmp_path / "other.gemvtable", Fingerprint("Other", 1, 8, 0, me.cuda_runtime, me.libgemv),
                        [Entry("float16", 1, 1, C("thread_per_row", 1, 32, False, 1), 1.0, 1.0)])
    out, _ = run_child(f"""
        pygemv.load_table({str(path)!r})
        s1 = pygemv.table_status()
        a = pygemv.select_config(1000, 3000, "float16").as_dict()
        try:
            pygemv.load_table({str(other)!r})
            mismatch = None
        except pygemv.TableMismatchError as e:
            mismatch = str(e)
        s2 = pygemv.table_status()
        pygemv.load_table(None)
        s3 = pygemv.table_status()
        b = pygemv.select_config(1000, 3000, "float16").as_dict()
        h = pygemv.select_config(1000, 3000, "float16", use_table=False).as_dict()
        print(json.dumps({{"s1": s1.source, "a": a, "mismatch": mismatch, "s2": s2.source, "s3": s3.source,
                          "b": b, "h": h, "bad": correct("float16", 1000, 3000)}}))
    """, tmp_path, GEMV_TABLE="off")
    assert out["s1"] == "explicit" and out["a"] == ENTRIES[0][3].as_dict()
    assert "not this" in out["mismatch"] and out["s2"] == "explicit"  # a foreign table changes nothing
    assert out["s3"] == "none" and out["b"] == out["h"] and out["bad"] == 0


def test_first_dispatch_from_many_threads_while_another_loads(tmp_path):
    path = user_table(tmp_path)
    out, _ = run_child(f"""
        errors, bad = [], []
        def work(i):
            try:
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    for dtype, m, k, _ in [("float16", 1000, 3000, 0), ("float32", 64, 65536, 0),
                                           ("bfloat16", 50000, 64, 0)]:
                        bad.append(correct(dtype, m, k, i % 6))
            except Exception as e:
                errors.append(repr(e))
        def loader():
            for _ in range(50):
                pygemv.load_table({str(path)!r})
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)] + [threading.Thread(target=loader)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(json.dumps({{"errors": errors, "bad": sum(bad), "n": len(bad)}}))
    """, tmp_path)
    assert out["errors"] == [] and out["n"] == 24 and out["bad"] == 0


def shipped_entries():
    fp = Fingerprint.of_device()
    for path in sorted(shipped_table_dir().glob("*.gemvtable")):
        with pygemv.Table(path) as t:
            try:
                t.check(fp)
            except pygemv.TableMismatchError:
                continue
        return path
    return None


def test_shipped_table_is_found_and_every_tuned_dispatch_is_correct(tmp_path):
    path = shipped_entries()
    if path is None:
        pytest.skip(f"no table for {Fingerprint.of_device().gpu} ships in {shipped_table_dir()}")
    out, err = run_child("""
        s = pygemv.table_status()
        lines = [l.split()[1:] for l in open(s.path) if l.startswith("N ") and l.split()[2] == "1"]
        bad, n = [], 0
        for l in lines:
            dtype, m, k = l[0], int(l[2]), int(l[3])
            if m * k > (1 << 22):
                continue
            for mm, kk, case in ((m, k, 0), (m + 1, k + 3, 3), (max(1, m - 1), k, 1)):
                wrong = correct(dtype, mm, kk, case)
                n += 1
                if wrong:
                    c = pygemv.select_config(mm, kk, dtype, lda=kk + CASES[case].lda_pad)
                    bad.append([dtype, mm, kk, case, wrong, c.as_dict()])
        print(json.dumps({"source": s.source, "path": s.path, "bad": bad, "n": n}))
    """, tmp_path)
    assert out["source"] == "shipped" and os.path.samefile(out["path"], path)
    assert out["n"] > 100 and out["bad"] == [], out["bad"]
    assert "libgemv: " not in err
