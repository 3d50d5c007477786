"""The dispatcher's picks over a grid of problems, on the host (tests/hostcheck's stand-in: a
fake H100, 132 SMs, no table), as one digest or as lines to diff. Run it before and after a
host change that should change no choice (a refactor of a rule); a change of rule shows here
which problems moved. Dense op N and op T (fp32, fp16, bf16; rows of K or K + 1 elements,
batches of 1 and 8) and quantized int4 and int8 in nine formats (also on rows of 100 to 896
columns); about 74,000 problems, a few seconds once the stand-in is built (it is built first
if needed).
    python3 scripts/dispatch_same.py            # a digest line
    python3 scripts/dispatch_same.py --list     # every problem and its config
    python3 scripts/dispatch_same.py --x-offset 6 [--list]   # dense x 6 bytes past 16-byte alignment
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hostcheck_lib import run  # noqa: E402

CODE = '''
import ctypes, hashlib, sys
lib = _lib.load()
LIST, XOFF = %r, %r
ws = _lib.WORKSPACE_RECOMMENDED_BYTES
def config(a):
    c = _lib.Config()
    st = lib.gemv_select_config_ex(ctypes.byref(a), ctypes.byref(c), None)
    return (st,) if st else (c.variant, c.threads_per_row, c.rows_per_block, c.vector_loads, c.unroll, c.x_in_smem, c.split_k)
h, n = hashlib.sha256(), 0
def note(key, got):
    global n
    h.update(repr((key, got)).encode())
    n += 1
    if LIST:
        print(key, got)
ms = sorted({1, 2, 3, 16, 100, 255, 512, 1000, 2047, 2048, 4096, 4097, 6336, 8192, 8449, 12672, 16384, 65536, 1048576}
            | set(range(600, 14000, 211)))
ks = [1, 7, 16, 64, 255, 256, 1000, 1023, 1024, 1025, 1280, 2048, 2049, 2176, 2177, 3072, 3073, 4096, 4097, 6144,
      8192, 8704, 14336, 16384, 16400, 28672, 65536]
short_rows = [100, 112, 384, 640, 896]  # quantized only: int4 rows of under 1024 columns (s36)
for m in ms:
    for k in sorted(ks + short_rows):
        if m * k > 1 << 31:
            continue
        for dtype in (0, 1, 2) if k in ks else ():
            for op in (0, 1):
                for lda in (k, k + 1):
                    for batch in (1, 8):
                        a = _lib.Args(op, dtype, m, k, 1.0, 0.0, 256, lda, 512 + XOFF, 1, 1024, 1, None, ws, None, 0, batch,
                                      m * lda, k if op == 0 else m, m if op == 0 else k, None)
                        note(("dense", op, dtype, m, k, lda, batch), config(a))
        if k < 8 or m * k < 1 << 16:
            continue
        for bits, dtype, mode, group in ((4, 1, 1, 128), (4, 2, 2, 128), (4, 2, 2, 64), (4, 2, 2, 32), (4, 1, 0, 128),
                                         (4, 1, 1, 32), (4, 2, 1, 0), (8, 1, 0, 0), (8, 2, 2, 64)):
            q = _lib.QMatrix()
            if lib.gemv_qmatrix_init(ctypes.byref(q), bits, group, mode, dtype, m, k):
                continue
            a = _lib.Args(0, dtype, m, k, 1.0, 0.0, None, k, 256, 1, 512, 1, None, ws, None, 0, 1, 0, 0, 0,
                          ctypes.addressof(q))
            note(("quantized", bits, dtype, mode, group, m, k), config(a))
print(f"{n} problems, digest {h.hexdigest()}")
'''


def main(argv) -> int:
    xoff = int(argv[argv.index("--x-offset") + 1]) if "--x-offset" in argv else 0
    r = run(CODE % ("--list" in argv, xoff), timeout=1800)
    sys.stdout.write(r.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
