"""The order of global loads and FFMAs in each column kernel's SASS: for every basic block of
at least 4 global loads, L (a load) and F (an FFMA) in issue order, and how many loads come
after the first FFMA ('late': each a second round trip for that step, since the FFMA waits on
an earlier load). The batched one-tile step of element loads at unroll 4 read LLLLLLFLLFFF
(late 2) where the single-product one read LLLLLLLLFFFF (NOTES 66). On the device (cuobjdump
and cu++filt come with the toolkit there):

    nvcc -O3 -std=c++17 -arch=sm_90 -DGEMV_BUILDING_LIBRARY -I libgemv/include -I libgemv/src \\
        -cubin -o c.cubin libgemv/src/columns.cu
    cuobjdump -sass c.cubin > c.sass
    python benchmarks/experiments/sass_load_order.py c.sass [NAME_PART]
"""
import re
import subprocess
import sys


def blocks(function: str) -> list[list[str]]:
    """The function's instructions cut into basic blocks (at branch targets and after branches)."""
    ins = re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", function)
    targets = {int(t, 16) for _, i in ins for t in re.findall(r"BRA\s+(?:`\()?(?:0x)?([0-9a-f]+)", i)}
    out, cur = [], []
    for addr, i in ins:
        if int(addr, 16) in targets and cur:
            out.append(cur)
            cur = []
        cur.append(i)
        if "BRA" in i or "EXIT" in i:
            out.append(cur)
            cur = []
    return out


def main(argv) -> int:
    text = open(argv[0]).read()
    match = argv[1] if len(argv) > 1 else "gemv_columns_kernel"
    parts = re.split(r"\n\s*Function : ", text)[1:]
    names = [p.split("\n", 1)[0].strip() for p in parts]
    demangled = subprocess.run(["cu++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    for part, name in zip(parts, demangled):
        if match not in name:
            continue
        shown = []
        for b in blocks(part):
            order = "".join("L" if "LDG" in i else "F" if re.search(r"\bFFMA\b", i) else "" for i in b)
            if order.count("L") >= 4:
                late = order[order.find("F"):].count("L") if "F" in order else 0
                shown.append(f"{order}(late {late})")
        short = re.sub(r"\((int|bool)\)", "", name.replace("void libgemv::<unnamed>::gemv_columns_kernel", "K"))
        print(short, " | ".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
