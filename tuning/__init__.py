"""The autotuner (installed as ``pygemv.tuning``): one Optuna study per (M, K, dtype)
searches the registry's variants and their parameters, and ``pygemv-tune`` writes the
GPU's dispatch table that libgemv reads.

Modules: ``space`` (the search space), ``tuner`` (a study, its seeds, resume and
confirmation), ``measure`` (the GPU instrument), ``grid`` (the shapes), ``cli``
(``pygemv-tune``), ``merge`` (tables tuned in parts into one), ``oracle`` (exhaustive search)
and ``heldout`` (the held-out check).
"""
