"""One Optuna study per problem (op, batch, M, K, dtype): the search, its seeds, resuming,
and the final check of the winner against the runner-up.

The study sees a *measure*: any object with

- ``legal(config) -> (ok, reason)``: the registry's can_implement for this problem;
- ``check(config) -> (ok, reason)``: run once on poisoned output, compare with a float64
  reference;
- ``time_us(config) -> float``: kernel time, median of repeats (cold L2);
- ``heuristic() -> Config``: what the built-in heuristic picks.

On the GPU that is :class:`tuning.measure.GpuMeasure`; the CPU tests pass a fake one.
Illegal configs are pruned before anything runs and wrong ones after the check: neither
ever has a time, so neither can be chosen.
"""
from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass, field
from typing import Iterable, Protocol

import optuna

import pygemv

from .space import Space


class Measure(Protocol):
    def legal(self, config: pygemv.Config) -> tuple[bool, str]: ...
    def check(self, config: pygemv.Config) -> tuple[bool, str]: ...
    def time_us(self, config: pygemv.Config) -> float: ...
    def heuristic(self) -> pygemv.Config: ...


@dataclass
class ShapeResult:
    """What one study found, after the confirmation runs."""

    dtype: str
    m: int
    k: int
    config: pygemv.Config
    us: float
    heuristic: pygemv.Config
    heuristic_us: float
    runner_up: pygemv.Config | None
    runner_up_us: float
    trials: int
    timed: int
    illegal: int
    wrong: list[dict] = field(default_factory=list)
    op: str = "N"
    batch: int = 1
    weights: tuple | None = None  # quantized: (bits, group_size, zero_point)

    def as_dict(self) -> dict:
        return {"op": self.op, "batch": self.batch, "weights": list(self.weights) if self.weights else None,
                "dtype": self.dtype, "m": self.m, "k": self.k,
                "config": self.config.as_dict(), "us": self.us,
                "heuristic": self.heuristic.as_dict(), "heuristic_us": self.heuristic_us,
                "runner_up": self.runner_up.as_dict() if self.runner_up else None, "runner_up_us": self.runner_up_us,
                "trials": self.trials, "timed": self.timed, "illegal": self.illegal, "wrong": self.wrong}

    @classmethod
    def from_dict(cls, d: dict) -> "ShapeResult":
        ru = d.get("runner_up")  # results stored before op and batch existed are op N singles
        return cls(d["dtype"], d["m"], d["k"], pygemv.Config(**d["config"]), d["us"],
                   pygemv.Config(**d["heuristic"]), d["heuristic_us"], pygemv.Config(**ru) if ru else None,
                   d["runner_up_us"], d["trials"], d["timed"], d["illegal"], d.get("wrong", []), d.get("op", "N"),
                   d.get("batch", 1), tuple(d["weights"]) if d.get("weights") else None)


def config_key(c: pygemv.Config) -> tuple:
    v = c.variant if isinstance(c.variant, str) else pygemv.variant(c.variant).name
    return (v, c.threads_per_row, c.rows_per_block, int(c.vector_loads), c.unroll, bool(c.x_in_smem), c.split_k)


def make_sampler(seed: int, trials: int) -> optuna.samplers.BaseSampler:
    """TPE over the joint (multivariate) distribution, grouped by which conditional
    parameters a trial has. A quarter of the budget (at least 4, after the seeds) is
    random start-up."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(multivariate=True, group=True, seed=seed,
                                          n_startup_trials=max(4, trials // 4))


def _finished(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL)
    return [t for t in study.get_trials(deepcopy=False) if t.state in done]


# An entry replaces the heuristic's choice only where it is clearly faster: the heuristic
# generalises to the shapes around a grid point, a near-tie winner need not. A q_rows entry
# 1.3% faster than q_mma at int4 g128 1024 x 4096 ran 1000 x 4100 16% slower (benchmarks/
# NOTES.md section 30).
MIN_GAIN = 0.02


def tune_shape(measure: Measure, space: Space, *, storage, study_name: str, trials: int,
               timeout: float | None = None, seeds: Iterable[pygemv.Config] = (), seed: int = 0,
               confirm_rounds: int = 2, min_gain: float = MIN_GAIN) -> ShapeResult:
    """Run (or resume) the study of one shape and confirm its winner.

    Parameters
    ----------
    measure : Measure
        Legality, correctness and timing of configs on this shape.
    space : Space
        The shape's search space.
    storage : str or optuna.storages.BaseStorage
        Where the study lives (``sqlite:///file.db`` to resume after an interruption).
    study_name : str
        Unique per (GPU, libgemv, op, batch, dtype, M, K).
    trials : int
        Trials the study should have in all; a resumed study runs only the rest.
    timeout : float, optional
        Seconds this call may spend searching.
    seeds : iterable of Config
        Known-good configs tried first, after the heuristic's choice.
    seed : int
        Sampler seed.
    confirm_rounds : int
        Interleaved re-timings of the winner, the runner-up and the heuristic's config.
    min_gain : float
        The heuristic's config is kept unless the winner beats it by more than this fraction.
    """
    study = optuna.create_study(study_name=study_name, storage=storage, load_if_exists=True, direction="minimize",
                                sampler=make_sampler(seed, trials))
    heuristic = measure.heuristic()
    if not measure.legal(heuristic)[0]:  # the dispatcher's choice always runs; anything else is a bug
        raise RuntimeError(f"the heuristic's config {heuristic} cannot run op {space.op} {space.dtype} batch "
                           f"{space.batch} {space.m}x{space.k}")
    if not study.get_trials(deepcopy=False):  # a new study: seeds first, so a short budget never loses to them
        queued = set()
        for c in [heuristic, *seeds]:
            params = space.params(c)
            if params is not None and config_key(c) not in queued and measure.legal(c)[0]:
                queued.add(config_key(c))
                study.enqueue_trial(params, user_attrs={"seed": True})

    timed: dict[tuple, float] = {}
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        timed[config_key(pygemv.Config(**t.user_attrs["config"]))] = t.value

    def objective(trial: optuna.Trial) -> float:
        c = space.suggest(trial)
        trial.set_user_attr("config", c.as_dict())
        ok, why = measure.legal(c)
        if not ok:
            trial.set_user_attr("illegal", why)
            raise optuna.TrialPruned()
        key = config_key(c)
        if key in timed:  # TPE may propose a config again: its time is known
            return timed[key]
        try:
            ok, why = measure.check(c)
            if ok:
                timed[key] = measure.time_us(c)
                return timed[key]
        except pygemv.GemvError as e:  # a legal config that fails to run is a library bug: report it
            why = f"error: {e}"
        trial.set_user_attr("wrong", why)
        raise optuna.TrialPruned()

    remaining = trials - len(_finished(study))
    if remaining <= 0 and "result" in study.user_attrs:  # done before: resume skips it
        return ShapeResult.from_dict(study.user_attrs["result"])
    if remaining > 0:
        study.optimize(objective, n_trials=remaining, timeout=timeout, gc_after_trial=False)

    finished = _finished(study)
    wrong = [{"config": t.user_attrs["config"], "why": t.user_attrs["wrong"]} for t in finished
             if "wrong" in t.user_attrs]
    illegal = sum(1 for t in finished if "illegal" in t.user_attrs)
    ranked: dict[tuple, tuple[float, pygemv.Config]] = {}
    for t in finished:
        if t.state == optuna.trial.TrialState.COMPLETE:
            c = pygemv.Config(**t.user_attrs["config"])
            ranked.setdefault(config_key(c), (t.value, c))
    order = sorted(ranked.values(), key=lambda vc: vc[0])
    if not order:  # nothing legal and right was timed: the heuristic stands
        us = measure.time_us(heuristic)
        result = ShapeResult(space.dtype, space.m, space.k, heuristic, us, heuristic, us, None, math.nan,
                             len(finished), 0, illegal, wrong, space.op, space.batch,
                             space.weights)
    else:
        result = _confirm(measure, space, order, heuristic, confirm_rounds, len(finished), illegal, wrong, min_gain)
    study.set_user_attr("result", result.as_dict())
    return result


def retime(measure: Measure, contenders: dict, rounds: int) -> dict:
    """Median time of each config over ``rounds`` interleaved timings (so that drift or a
    lucky sample favours none of them), keyed like ``contenders``."""
    samples = {key: [] for key in contenders}
    for _ in range(rounds):
        for key, c in contenders.items():
            samples[key].append(measure.time_us(c))
    return {key: statistics.median(v) for key, v in samples.items()}


def _confirm(measure, space, order, heuristic, rounds, n_trials, illegal, wrong, min_gain=MIN_GAIN) -> ShapeResult:
    """Re-time the two best configs and the heuristic's, interleaved, and keep the fastest
    by median: a winner that was lucky once does not get written. The heuristic's config
    stays unless the fastest beats it by more than ``min_gain``."""
    contenders = {}
    for _, c in order[:2]:
        contenders[config_key(c)] = c
    contenders.setdefault(config_key(heuristic), heuristic)
    med = retime(measure, contenders, rounds)
    best = min(med, key=med.get)
    if med[config_key(heuristic)] <= med[best] * (1 + min_gain):
        best = config_key(heuristic)
    others = sorted((key for key in med if key != best), key=med.get)
    runner = others[0] if others else None
    return ShapeResult(space.dtype, space.m, space.k, contenders[best], med[best], heuristic,
                       med[config_key(heuristic)], contenders[runner] if runner else None,
                       med[runner] if runner else math.nan, n_trials, len(order), illegal, wrong, space.op, space.batch,
                       space.weights)
