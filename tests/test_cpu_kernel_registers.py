"""Occupancy guard for the streaming kernels, checked at compile time (no GPU needed).

An SM holds 64K registers, so 2048 resident threads leave each thread at most 32. The
16-byte-load row kernels with unroll 1 and 2 sit at or under that, and the tuned table and
the heuristic assume it. A change that pushed them to 44-49 registers (four accumulators a
thread, benchmarks/NOTES.md section 12) halved the blocks per SM and made fp32 4096x4096
1.48x slower, with no warning from the compiler. This test makes that visible on CPU.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "libgemv" / "src"
FAMILIES = ("rowblock", "rowgroup")
TYPES = {"f": "float32", "6__half": "float16", "13__nv_bfloat16": "bfloat16"}
MAX_REGISTERS = 65536 // 2048  # full occupancy on sm_90
KERNEL = re.compile(r"gemv_(rowblock|rowgroup)_kernelI(f|6__half|13__nv_bfloat16)Li([0-5])ELi(\d)ELb([01])ELb([01])E")


def find_nvcc() -> str | None:
    """nvcc where CMake would look: $CUDACXX, PATH, $CUDA_HOME or $CUDA_PATH, /usr/local/cuda."""
    candidates = [os.environ.get("CUDACXX"), shutil.which("nvcc")]
    candidates += [str(Path(os.environ[v]) / "bin" / "nvcc") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates.append("/usr/local/cuda/bin/nvcc")
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


NVCC = find_nvcc()


def ptxas_report(family: str) -> tuple[dict, dict]:
    """({key: registers}, {key: spill-store bytes}) of one kernel family on sm_90, keyed by
    (dtype, loads (gemv_loads_t), unroll, x_in_smem, batched)."""
    out = subprocess.run(
        [NVCC, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-Xptxas", "-v",
         "-I", str(ROOT / "libgemv" / "include"), "-I", str(SRC), "-c", str(SRC / f"{family}.cu"),
         "-o", "/dev/null"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    regs, spills, current = {}, {}, None
    for line in out.stderr.splitlines():
        if "Compiling entry function" in line:
            m = KERNEL.search(line)
            current = ((TYPES[m.group(2)], int(m.group(3)), int(m.group(4)), m.group(5) == "1", m.group(6) == "1")
                       if m else None)
        elif current is not None and (m := re.search(r"(\d+) bytes spill stores", line)):
            spills[current] = int(m.group(1))
        elif current is not None and (m := re.search(r"Used (\d+) registers", line)):
            regs[current] = int(m.group(1))
            current = None
    return regs, spills


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
@pytest.mark.parametrize("family", FAMILIES)
def test_16_and_8_byte_kernels_with_unroll_up_to_2_fit_full_occupancy(family):
    regs, spills = ptxas_report(family)
    # Batched kernels too: unbounded, they took 44-50 (min_blocks_per_sm holds them now).
    wanted = [(t, v, u, s, b) for t in TYPES.values() for v in (1, 4) for u in (1, 2) for s in (False, True)
              for b in (False, True)]  # 16- and 8-byte packs
    missing = [k for k in wanted if k not in regs]
    assert not missing, f"ptxas reported no register count for {missing}; found {sorted(regs)}"
    over = {k: regs[k] for k in wanted if regs[k] > MAX_REGISTERS}
    assert not over, (f"{family}: these 16-byte-load kernels use more than {MAX_REGISTERS} registers, so fewer "
                      f"than 2048 threads fit an SM (dtype, vector, unroll, x_in_smem, batched): {over}")
    # The batched kernels reach 32 by launch bounds: that must not push work to local memory
    # (a 64-bit division a row spilled 28-36 bytes and ran batched fp16 4096 x 64^2 at 0.6x).
    spilled = {k: spills.get(k) for k in wanted if k[4] and spills.get(k, 0) > 8}
    assert not spilled, f"{family}: batched kernels spill more than 8 bytes: {spilled}"


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
@pytest.mark.parametrize("family", FAMILIES)
def test_realigned_kernels_do_not_spill(family):
    """Realigned rows (loads 2) keep two x packs and a shift a pack: they run with more than
    32 registers by design (no launch bound), and must not spill beyond the 8-byte register
    save of the out-of-line prefetch call (common.cuh); held to 32, they spilled 40-52 bytes."""
    regs, spills = ptxas_report(family)
    realigned = [k for k in regs if k[1] == 2]
    assert len(realigned) == 3 * 3 * 2 * 2, sorted(realigned)
    spilled = {k: spills[k] for k in realigned if spills.get(k, 0) > 8}
    assert not spilled, f"{family}: realigned kernels spill: {spilled}"


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
@pytest.mark.parametrize("family", FAMILIES)
def test_phased_rows_at_unroll_1_fit_32_registers_without_spilling(family):
    """Phased rows (x staged, loads 3; x's phase copies, loads 5) at unroll 1, the configs
    dispatch takes for 16-bit rows: held to 32 registers, at most the 8 bytes of the prefetch
    call's register save. With A's extent held in registers through the loop they spilled
    16-48 bytes, and x's phase copies ran fp16 8191 x 8191 in 53.1 us against 48.2."""
    regs, spills = ptxas_report(family)
    wanted = [(t, v, 1, s, False) for t in TYPES.values() for v, s in ((3, True), (5, False))]
    missing = [k for k in wanted if k not in regs]
    assert not missing, f"ptxas reported no register count for {missing}"
    over = {k: (regs[k], spills.get(k, 0)) for k in wanted if regs[k] > MAX_REGISTERS or spills.get(k, 0) > 8}
    assert not over, f"{family}: phased rows at unroll 1 over 32 registers or spilling (registers, bytes): {over}"


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
def test_q_mma_keeps_six_blocks_of_128_an_sm():
    """q_mma (tensor-core int4 rows) staging x at 80 registers or fewer: 6 of the dispatcher's
    128-thread blocks an SM. Its register count moves with the form of small expressions
    (the zero terms in fp16 arithmetic took the integer-zero kernel from 80 to 100, and
    int4 g128 28672 x 8192 from 61 to 66 us; benchmarks/NOTES.md section 29). Reading x in
    place it is held to 64 (1024 threads an SM, which the dispatcher's rule counts on; 80
    registers ran 8192^2 23.7 us against 20.2, NOTES section 32) with at most 32 bytes spilled;
    holding x in registers (q_mma_x_held), 64 for one step a chunk and 128 for two."""
    out = subprocess.run(
        [NVCC, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-Xptxas", "-v",
         "-I", str(ROOT / "libgemv" / "include"), "-I", str(SRC), "-c", str(SRC / "qmma.cu"), "-o", "/dev/null"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    kernels = {}  # name -> (registers, spill store bytes)
    for block in out.stderr.split("Compiling entry function")[1:]:
        name = re.search(r"'(\S+)'", block).group(1)
        spill = re.search(r"(\d+) bytes spill stores", block)
        kernels[name] = (int(re.search(r"Used (\d+) registers", block).group(1)), int(spill.group(1)) if spill else 0)
    staged = [v for n, v in kernels.items() if "qmma_kernel" in n]
    in_place = [v for n, v in kernels.items() if "qmma_inplace_kernel" in n]
    assert len(staged) == 2 and len(in_place) == 2, kernels  # symmetric and integer zeros each
    # x held in registers (fp16 and bf16, every zero mode): one step a chunk at 64 registers (8 blocks of 128 an SM), two at
    # most 128 (the dispatcher's 4 blocks of 128 an SM assume 124), neither spilling more than
    # 32 bytes (benchmarks/NOTES.md section 33).
    unroll = re.compile(r"x_held_kernelI\w+?Li\dELi(\d)ELi(\d)ELi(\d)E")  # <T, ZMODE, S, PPG, BITS>
    held = {}
    for n, v in kernels.items():
        if "x_held_kernel" in n:
            u, ppg, bits = unroll.search(n).groups()
            held.setdefault((int(u), ppg != "0"), []).append(v)
    # int4 in fp16 and bf16 and int8 in fp16 (groups of 128 up), three zero modes each; int4
    # groups of 32 and 64 (PPG 1 and 2 packs a group: 3 blocks of 256 an SM, 85 registers, for
    # one step) in fp16 and bf16, three zero modes each
    assert sorted(held) == [(1, False), (1, True), (2, False), (2, True)], kernels
    assert [len(held[key]) for key in sorted(held)] == [9, 12, 9, 12], kernels
    assert max(r for r, _ in held[(1, False)]) <= 64 and max(r for r, _ in held[(1, True)]) <= 85, held
    assert max(r for r, _ in held[(2, False)] + held[(2, True)]) <= 128, held
    assert max(s for v in held.values() for _, s in v) <= 32, held
    assert max(r for r, _ in staged) <= 80, f"staged q_mma kernels use {staged} (registers, spill bytes)"
    assert max(r for r, _ in in_place) <= 64 and max(s for _, s in in_place) <= 32, \
        f"in-place q_mma kernels use {in_place} (registers, spill bytes)"

@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
def test_q_block_rows_fits_the_register_counts_its_prefetch_wave_assumes():
    """q_block_rows' launch (registry.cpp qblock_launch) sizes the first wave, the blocks that
    prefetch before the PDL wait, from 64 registers a thread for 1 or 2 rows a block, 80 for 4
    rows at unroll 1 and 128 at unroll 2. A kernel over its count makes the wave smaller than
    assumed, and blocks past it prefetch lines they then read again."""
    out = subprocess.run(
        [NVCC, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-Xptxas", "-v",
         "-I", str(ROOT / "libgemv" / "include"), "-I", str(SRC), "-c", str(SRC / "qblock.cu"), "-o", "/dev/null"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    name = re.compile(r"gemv_qblock_kernelI\w+?Li(\d)ELi(\d)ELi(\d)EE")  # <T, ZMODE, R, U>
    found = {}
    for block in out.stderr.split("Compiling entry function")[1:]:
        zmode, rows, unroll = map(int, name.search(block).groups())
        spill = re.search(r"(\d+) bytes spill stores", block)
        found.setdefault((rows, unroll), []).append(
            (int(re.search(r"Used (\d+) registers", block).group(1)), int(spill.group(1)) if spill else 0))
    assert sorted(found) == [(r, u) for r in (1, 2, 4) for u in (1, 2)], sorted(found)
    assert all(len(v) == 6 for v in found.values()), found  # 2 dtypes x 3 zero modes
    bound = {(1, 1): 64, (1, 2): 64, (2, 1): 64, (2, 2): 64, (4, 1): 80, (4, 2): 128}
    over = {k: v for k, v in found.items() if max(r for r, _ in v) > bound[k] or max(s for _, s in v) > 0}
    assert not over, f"q_block_rows kernels over their assumed registers {bound} or spilling: {over}"


# The registers dispatch.cpp's lane_class_pass_registers counts on for the batched lane-class
# one pass (t_columns, loads 16: kLoadsLaneClasses), by (dtype, unroll, walk, batched): walk 0
# the loops (unroll 4, and fp32 at 2), 1 one step, 2 one tile (16 bits at unroll 2). Its rule
# takes 2 rows in flight where that needs fewer waves of blocks at these registers.
LANE_CLASS_PASS_REGISTERS = {
    ("float32", 4, 0, False): 56, ("float16", 4, 0, False): 56, ("bfloat16", 4, 0, False): 48,
    ("float32", 2, 0, False): 44, ("float16", 2, 2, True): 39, ("bfloat16", 2, 2, True): 38,
    ("float32", 4, 1, True): 40, ("float16", 4, 1, True): 49, ("bfloat16", 4, 1, True): 56,
    ("float32", 2, 1, True): 32, ("float16", 2, 1, True): 32, ("bfloat16", 2, 1, True): 32,
}


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
def test_lane_class_one_pass_registers_match_the_dispatcher():
    """The dispatcher picks the lane-class one pass's rows in flight by the waves of blocks its
    registers allow (fp16 901 x 2263 x 64: 640 blocks of 256 take 2 waves at unroll 4's 56
    registers, 1 at unroll 2's 39; benchmarks/NOTES.md section 72). A compiler or kernel change
    that moves them must move lane_class_pass_registers in dispatch.cpp too."""
    out = subprocess.run(
        [NVCC, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-Xptxas", "-v",
         "-I", str(ROOT / "libgemv" / "include"), "-I", str(SRC), "-c", str(SRC / "columns.cu"), "-o", "/dev/null"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    kernel = re.compile(r"gemv_columns_kernelI(f|6__half|13__nv_bfloat16)Li16ELi(\d)ELi(\d)ELb([01])E")
    found = {}
    for block in out.stderr.split("Compiling entry function")[1:]:
        if m := kernel.search(block.split("\n")[0]):
            key = (TYPES[m.group(1)], int(m.group(2)), int(m.group(3)), m.group(4) == "1")
            found[key] = int(re.search(r"Used (\d+) registers", block).group(1))
    moved = {k: (v, found.get(k)) for k, v in LANE_CLASS_PASS_REGISTERS.items() if found.get(k) != v}
    assert not moved, f"lane-class one-pass registers (dispatcher's, ptxas's) by (dtype, unroll, walk, batched): {moved}"


@pytest.mark.skipif(NVCC is None, reason="no nvcc found (CUDACXX, PATH, CUDA_HOME, /usr/local/cuda)")
@pytest.mark.skipif(not SRC.is_dir(), reason="needs the source tree (libgemv/src)")
def test_row_tiles_issue_first_fit_the_dispatchers_blocks_an_sm():
    """Row tiles (rowtile.cu) of 4 rows at one slot in flight, realigned, in their edge slots'
    issue-first form (tile_launch takes it up to 8 blocks an SM): the dispatcher's tile_config
    sizes the split of large misaligned rows to one wave of 6 blocks of 128 threads an SM in
    fp32 and 8 in 16 bits (dispatch.cpp tile_blocks_an_sm). At 79 registers fp32 fits 6
    (registers are allocated 8 at a time: 80 x 128 x 6 <= 65536); past 80, or 16 bits past 64,
    the split's last blocks wait a whole block's time (fp32 47 x 918792: 45.9 us in one wave,
    63.4 a block an SM past it; benchmarks/NOTES.md section 86)."""
    out = subprocess.run(
        [NVCC, "-std=c++17", "-O3", "-arch=sm_90", "-DGEMV_BUILDING_LIBRARY", "-Xptxas", "-v",
         "-I", str(ROOT / "libgemv" / "include"), "-I", str(SRC), "-c", str(SRC / "rowtile.cu"), "-o", "/dev/null"],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    kernel = re.compile(r"gemv_rowtile_kernelI(f|6__half|13__nv_bfloat16)Li2ELi4ELi1ELb1E")  # realigned, R 4, U 1, issue first
    regs, current = {}, None
    for line in out.stderr.splitlines():
        if "Compiling entry function" in line:
            m = kernel.search(line)
            current = TYPES[m.group(1)] if m else None
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            regs[current], current = int(m.group(1)), None
    assert sorted(regs) == sorted(TYPES.values()), regs
    blocks = {t: 65536 // (-(-r // 8) * 8 * 128) for t, r in regs.items()}
    assert blocks == {"float32": 6, "float16": 8, "bfloat16": 8}, (regs, blocks)
