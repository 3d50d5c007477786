"""The one timing module (the benchmark and the tuner both use it).

Kernel time comes from CUDA-graph replay timed with CUDA events, with a cold L2: the
graph holds one call per rotating input set, and enough sets that one pass over them
moves at least ``L2_FACTOR`` times the L2 size, so no call finds its inputs in cache.
The result is the median over repeats of (replay time / calls in the graph). Host time
per eager call is the best of several wall-clock loops, synchronised at both ends.
"""
from __future__ import annotations

import ctypes
import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from . import _lib

L2_FACTOR = 4
MAX_SETS = 2048


@dataclass(frozen=True)
class Timing:
    """Per-call kernel time in microseconds."""

    median_us: float
    min_us: float
    max_us: float
    repeats: int
    sets: int


def rotation_sets(bytes_per_set: int, l2_bytes: int, factor: int = L2_FACTOR, max_sets: int = MAX_SETS) -> int:
    """How many input sets make one pass over them move at least ``factor`` x L2."""
    return max(1, min(max_sets, math.ceil(factor * l2_bytes / max(1, bytes_per_set))))


def summarize(samples_us: list[float], sets: int) -> Timing:
    return Timing(statistics.median(samples_us), min(samples_us), max(samples_us), len(samples_us), sets)


def _sample(replay: Callable[[int], float], sets: int, repeats: int, target_ms: float) -> Timing:
    """Warm up, size the replays per sample to about target_ms, then time ``repeats``
    samples; ``replay(n)`` replays n times and returns the elapsed milliseconds."""
    replay(1)
    per_replay = max(replay(2) / 2, 1e-4)
    n = max(1, min(1000, round(target_ms / per_replay)))
    return summarize([replay(n) * 1000.0 / (n * sets) for _ in range(repeats)], sets)


def time_graph(enqueue: Callable[[int, int], None], sets: int, stream: int, *, repeats: int = 15,
               target_ms: float = 2.0) -> Timing:
    """Capture ``enqueue(i, stream)`` for every set i into one graph (libgemv's capture),
    replay it, and time the replays with events.

    Each timed sample replays the graph enough times to last about ``target_ms``; the
    first replays (warm-up, which also sizes that count) are not counted.
    """
    lib = _lib.load()
    _lib.check(lib.gemv_capture_begin(stream), "capture")
    graph = ctypes.c_void_p()
    try:
        for i in range(sets):
            enqueue(i, stream)
    finally:  # always leave capture, even when a call failed inside it
        st = lib.gemv_capture_end(stream, ctypes.byref(graph))
    _lib.check(st, "capture")
    try:
        ms = ctypes.c_float()

        def replay(n: int) -> float:
            _lib.check(lib.gemv_graph_replay_ms(graph, stream, n, ctypes.byref(ms)), "replay")
            return ms.value

        return _sample(replay, sets, repeats, target_ms)
    finally:
        lib.gemv_graph_destroy(graph)


def time_torch_graph(enqueue: Callable[[int], None], sets: int, *, repeats: int = 15,
                     target_ms: float = 2.0) -> Timing:
    """The same measurement for torch operations, captured with torch's own graph API
    (its allocator needs that), timed with torch's events."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture, as torch asks
        enqueue(0)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(sets):
            enqueue(i)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def replay(n: int) -> float:
        start.record()
        for _ in range(n):
            g.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    return _sample(replay, sets, repeats, target_ms)


def host_call_us(fn: Callable[[], object], sync: Callable[[], object], *, calls: int = 2000, repeats: int = 5,
                 warmup: int = 200) -> float:
    """Host cost of one eager call: best over ``repeats`` loops of ``calls`` calls."""
    for _ in range(warmup):
        fn()
    sync()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
        sync()
    return best * 1e6
