"""Markdown table of a pygemv-bench JSON (for BENCHMARKS.md).

    python benchmarks/report.py benchmarks/results/h100-2026-11-21.json
"""
import json
import math
import sys

from results_file import open_results

from pygemv.bench import at_size


def pct(fraction: float) -> str:
    return "-" if math.isnan(fraction) else f"{100 * fraction:.1f}"  # older JSON has no ceiling at size


def main(path: str) -> None:
    d = json.load(open_results(path))
    ceil = d["ceiling"]["gbps"]
    print(f"Device: {d['device']['name']} ({d['device']['sm_count']} SMs, L2 {d['device']['l2_bytes'] >> 20} MiB); "
          f"cuBLAS {d['cublas']['version']}; torch {d['torch']}; read ceiling measured in the same run: "
          f"{ceil:.0f} GB/s.\n")
    print("| dtype | M x K | pygemv us | GB/s | % ceiling | % ceiling at size | cuBLAS us (entry) | torch.mv us "
          "| F.linear us | vs cuBLAS | vs torch.mv | dispatched config |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in d["cases"]:
        c = r["config"]
        cfg = (f"{c['variant']} p={c['threads_per_row']} rows={c['rows_per_block']} unroll={c['unroll']}"
               + (" x-smem" if c["x_in_smem"] else "") + (f" split={c['split_k']}" if c["split_k"] > 1 else ""))
        print(f"| {r['dtype']} | {r['m']} x {r['k']} | {r['pygemv']['median_us']:.2f} | {r['pygemv']['gbps']:.0f} "
              f"| {100 * r['pygemv']['gbps'] / ceil:.1f} | {pct(at_size(r))} "
              f"| {r['cublas']['median_us']:.2f} ({r['cublas']['entry']}) "
              f"| {r['torch.mv']['median_us']:.2f} | {r['F.linear']['median_us']:.2f} "
              f"| {r['speedup_vs_cublas']:.2f}x | {r['speedup_vs_torch.mv']:.2f}x | {cfg} |")


if __name__ == "__main__":
    main(sys.argv[1])
