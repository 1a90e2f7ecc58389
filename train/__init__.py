"""Training, measuring and analysing agents, and the ``truc`` command line (see docs/architecture.md)."""

from truc_env.moved import keep_old_paths

# the 0.1 module paths (train.ppo, train.exploitability, ...) import their 0.2 homes for one release
keep_old_paths({f"train.{m}": f"train.{home}.{m}" for home, mods in {
    "algos": ("ppo", "cfr", "psro", "distill", "openspiel_nfsp", "signals_otherplay", "signals_runs"),
    "eval": ("exploitability", "node_inputs", "tree_cache", "aliasing", "arena", "match", "stats", "report",
             "approx_br"),
    "analysis": ("signals", "signals_bound", "info_theory", "style"),
    "commands": ("cli", "signals_cli", "demo", "play", "cache_cli", "flags")}.items() for m in mods})
