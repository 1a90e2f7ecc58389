"""Speed measurements, installed with the package so that ``truc bench`` works from a wheel.

- :mod:`train.bench.table`: ``truc bench`` (our throughput) and ``truc bench --peers`` (like for like
  against OpenSpiel, PettingZoo classic and pgx, per CPU-second of one core);
- :mod:`train.bench.peers`: the peer loops and the single-thread pinning;
- :mod:`train.bench.engine`, :mod:`train.bench.envs`: the game loops, and per-variant engine and AEC
  tables (``python -m train.bench.engine``, ``python -m train.bench.envs``);
- :mod:`train.bench.cfr`: our CFR+ against OpenSpiel's (``python -m train.bench.cfr``);
- :mod:`train.bench.learners`: PPO learner steps per CPU-second, ours beside sb3-contrib's MaskablePPO
  (``python -m train.bench.learners``);
- :mod:`train.bench.tree_sizes`: public-tree sizes, build times and memory
  (``python -m train.bench.tree_sizes``).
"""
