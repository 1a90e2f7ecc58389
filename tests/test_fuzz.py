"""Bad input, fuzzed: configs, records, options, actions and files either work or raise a TrucError.

Each property runs twice: a modest number of examples in the default suite, and many more under
``-m slow``. A hang shows as a Hypothesis deadline failure; any exception other than TrucError (a
TypeError, a RecursionError, a ZeroDivisionError...) fails the test with the input that caused it.
"""

from __future__ import annotations

import json
import string
import zipfile
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from train import config
from train.algos.cfr import CFRConfig
from train.algos.ppo import PPOConfig
from train.config import DemoConfig
from train.eval.arena import ArenaConfig
from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.records import load, record_of, replay
from truc_env.game.rules import VARIANTS, make_rules, option_specs

FAST = dict(max_examples=60, deadline=timedelta(seconds=10), derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SLOW = dict(FAST, max_examples=1500)


def both_profiles(strategy_kwargs: dict):
    """Turn a property into two tests: ``test_x`` (FAST) and ``test_x_many`` (SLOW, marked slow)."""
    def wrap(fn):
        fast = settings(**FAST)(given(**strategy_kwargs)(fn))
        slow = pytest.mark.slow(settings(**SLOW)(given(**strategy_kwargs)(fn)))
        return fast, slow
    return wrap


# JSON/YAML-like values, with the kinds of junk the issue lists: huge and negative numbers, floats,
# bools, strings of other scripts' digits, nested lists and mappings
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**40, 10**40), st.integers(-3, 50),
                    st.floats(allow_nan=True), st.text(max_size=12),
                    st.sampled_from(["le_truc", "random", "heuristic:honest", "\u0663", "../x", "/abs", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def _expect_truc_error_or_ok(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except TrucError:
        return None


# ---------------------------------------------------------------------- configs
def _config_dicts(cls):
    names = sorted(cls.SCHEMA)
    return st.dictionaries(st.one_of(st.sampled_from(names), st.text(max_size=6)), values, max_size=5)


CHEAP = {ArenaConfig: {"agents": ["random", "heuristic:honest"], "out": "unused"}}


def _build_checked(cls, raw):
    cfg = _expect_truc_error_or_ok(config.build, cls, {**CHEAP.get(cls, {}), **raw})
    if cfg is None:
        return
    # what was accepted follows the schema: no negative seed, no zero period, no name outside out_dir
    for name, rule in cls.SCHEMA.items():
        config.check(rule, getattr(cfg, name), name)
    if cls is ArenaConfig:
        assert 1 <= config.worker_count(cfg.workers) <= config.cpu_cores()


def _arena(raw):
    _build_checked(ArenaConfig, raw)


def _cfr(raw):
    _build_checked(CFRConfig, raw)


def _ppo_config(raw):
    _build_checked(PPOConfig, raw)


def _demo(raw):
    _build_checked(DemoConfig, raw)


test_fuzz_arena_config, test_fuzz_arena_config_many = both_profiles({"raw": _config_dicts(ArenaConfig)})(_arena)
test_fuzz_cfr_config, test_fuzz_cfr_config_many = both_profiles({"raw": _config_dicts(CFRConfig)})(_cfr)
test_fuzz_ppo_config, test_fuzz_ppo_config_many = both_profiles({"raw": _config_dicts(PPOConfig)})(_ppo_config)
test_fuzz_demo_config, test_fuzz_demo_config_many = both_profiles({"raw": _config_dicts(DemoConfig)})(_demo)


def _yaml_file(tmp_path_factory, data: bytes, overrides):
    p = tmp_path_factory.mktemp("cfg") / "c.yaml"
    p.write_bytes(data)
    _expect_truc_error_or_ok(config.load, CFRConfig, p, overrides)


yaml_text = st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                      st.builds(lambda k, v: f"{k}: {v}\n".encode(), st.sampled_from(sorted(CFRConfig.SCHEMA)),
                                st.text(alphabet=string.printable, max_size=20)))
set_pairs = st.lists(st.text(alphabet=string.printable, max_size=20), max_size=3)
test_fuzz_yaml_files, test_fuzz_yaml_files_many = both_profiles(
    {"data": yaml_text, "overrides": set_pairs})(_yaml_file)


# ---------------------------------------------------------------------- options
def _options(variant, options):
    rules = _expect_truc_error_or_ok(make_rules, variant, **options)
    if rules is not None:  # accepted: every value is one the variant lists
        specs = option_specs(variant)
        assert set(options) <= set(specs)


option_names = st.sampled_from(sorted({n for v in VARIANTS for n in option_specs(v)}))
test_fuzz_options, test_fuzz_options_many = both_profiles(
    {"variant": st.one_of(st.sampled_from(list(VARIANTS)), values),
     "options": st.dictionaries(option_names, values, max_size=3)})(_options)


# ---------------------------------------------------------------------- records
BASE_RECORD = {"variant": "le_truc", "dealer": 1, "score": [0, 0],
               "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]},
               "actions": ["0 raise", "1 accept", "0 play 7c", "1 play 7d", "0 play Ks", "1 raise", "0 refuse"]}
PATHS = [("variant",), ("dealer",), ("score",), ("seed",), ("options",), ("deal",), ("deal", "hands"),
         ("deal", "hands", 0), ("deal", "hands", 0, 1), ("deal", "vira"), ("deal", "deck"), ("actions",),
         ("actions", 0), ("actions", 3), ("hands",), ("result",), ("result", "score"), ("version",)]


def _mutate(record, path, value):
    record = json.loads(json.dumps(record))
    node = record
    for key in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(key, {})
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return record
    last = path[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        node[last] = value
    return record


def _record(mutations):
    record = BASE_RECORD
    for path, value in mutations:
        record = _mutate(record, path, value)
    out = _expect_truc_error_or_ok(replay, record)
    if out is not None and "result" in record:
        assert {k: record["result"][k] for k in record["result"]} == {k: out[k] for k in record["result"]}


action_text = st.one_of(values, st.builds(lambda s, rest: f"{s} {rest}", st.sampled_from(["0", "1", "c", "\u0661",
                                                                                          "01", "-1", "9"]),
                                          st.sampled_from(["play 7c", "play Q\u0663", "raise", "accept", "seen 0",
                                                           "signal 3", "fold", "play slot 1"])))
mutation = st.tuples(st.sampled_from(PATHS), st.one_of(values, action_text))
test_fuzz_records, test_fuzz_records_many = both_profiles({"mutations": st.lists(mutation, max_size=3)})(_record)


def _record_file(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("rec") / "r.json"
    p.write_bytes(data)
    record = _expect_truc_error_or_ok(load, p)
    if record is not None:
        _expect_truc_error_or_ok(replay, record)


record_bytes = st.one_of(st.binary(max_size=300), st.builds(
    lambda n, tail: (b"[" * n + b"]" * n + tail), st.integers(0, 3000), st.binary(max_size=5)),
    st.builds(lambda cut: json.dumps(BASE_RECORD).encode()[:cut], st.integers(0, 300)))
test_fuzz_record_files, test_fuzz_record_files_many = both_profiles({"data": record_bytes})(_record_file)


# ---------------------------------------------------------------------- actions
def _pettingzoo_step(action):
    from truc_env.envs.pettingzoo_env import env as make_env

    e = make_env(variant="le_truc")
    e.reset(seed=0)
    before = record_of(e.unwrapped.state_)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    try:
        e.step(action)
    except IllegalActionError:
        assert record_of(e.unwrapped.state_) == before  # refused before anything changed
        return
    # accepted: a true integer (Python or numpy) that was legal
    assert not isinstance(action, (bool, float, str, np.floating))
    assert int(action) in legal.tolist()


step_values = st.one_of(values, st.integers(-5, 400), st.floats(-1, 100),
                        st.integers(0, 200).map(np.int64), st.integers(0, 200).map(np.int32),
                        st.floats(0, 50).map(np.float32), st.integers(0, 3).map(str))
test_fuzz_pettingzoo_step, test_fuzz_pettingzoo_step_many = both_profiles({"action": step_values})(_pettingzoo_step)


@pytest.mark.parametrize("action", [2.7, "1", True, 1.0, None, [1], np.float64(2.0), np.array([1])])
def test_pettingzoo_step_refuses_non_integers(action):
    from truc_env.envs.pettingzoo_env import env as make_env

    e = make_env(variant="le_truc")
    e.reset(seed=0)
    before = record_of(e.unwrapped.state_)
    with pytest.raises(IllegalActionError, match="an action is an integer index"):
        e.step(action)
    assert record_of(e.unwrapped.state_) == before


def test_pettingzoo_step_takes_numpy_integers():
    from truc_env.envs.pettingzoo_env import env as make_env

    e = make_env(variant="le_truc")
    e.reset(seed=0)
    legal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    e.step(np.int64(legal))
    e2 = make_env(variant="le_truc")
    e2.reset(seed=0)
    e2.step(np.array(legal))  # a 0-d array, as some policies return
    assert record_of(e.unwrapped.state_) == record_of(e2.unwrapped.state_)


# ---------------------------------------------------------------------- files: checkpoints and strategies
@pytest.fixture(scope="module")
def strategy_file(tmp_path_factory):
    """A well-formed strategy file (small made-up tables: solving would compile the kernels for a minute)."""
    from agents.cfr.strategy import _ARRAYS, StrategyTable, load_strategy, save_strategy

    rules = make_rules("le_truc", ranks=3, hand_size=1, max_raises=1, redeal=False)
    path = tmp_path_factory.mktemp("s") / "s.npz"
    rng = np.random.default_rng(0)
    table = StrategyTable({name: rng.integers(0, 9, 40) for name in _ARRAYS}, 0)
    header = {"variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key, "dealer": 0,
              "score": [0, 0]}
    save_strategy(str(path), header, {"main": table})
    assert load_strategy(str(path), rules).header["rules_key"] == rules.key
    return path, rules


@pytest.fixture(scope="module")
def ppo_file(tmp_path_factory):
    import torch

    from agents.network.checkpoint import FORMAT, VERSION, save_atomic

    rules = make_rules("le_truc")
    path = tmp_path_factory.mktemp("p") / "policy.pt"
    save_atomic({"format": FORMAT, "version": VERSION, "rules_key": rules.key,
                 "net": {"obs_size": 3, "n_actions": 2, "hidden": [4], "features": "observation"},
                 "model": {"w": torch.zeros(3)}}, str(path))
    return path, rules


def _damaged(data: bytes, cut: int, flip: int | None) -> bytes:
    data = bytearray(data[:cut])
    if flip is not None and data:
        data[flip % len(data)] ^= 0xFF
    return bytes(data)


def _strategy(strategy_file, tmp_path_factory, cut, flip):
    from agents.cfr.strategy import load_strategy

    path, rules = strategy_file
    p = tmp_path_factory.mktemp("d") / "s.npz"
    p.write_bytes(_damaged(path.read_bytes(), cut, flip))
    _expect_truc_error_or_ok(load_strategy, str(p), rules)


def _ppo(ppo_file, tmp_path_factory, cut, flip):
    from agents.network.checkpoint import read_checkpoint

    path, rules = ppo_file
    p = tmp_path_factory.mktemp("d") / "p.pt"
    p.write_bytes(_damaged(path.read_bytes(), cut, flip))
    _expect_truc_error_or_ok(read_checkpoint, str(p), rules)


damage = {"cut": st.integers(0, 4000), "flip": st.one_of(st.none(), st.integers(0, 4000))}
test_fuzz_strategy_files, test_fuzz_strategy_files_many = both_profiles(damage)(_strategy)
test_fuzz_ppo_checkpoints, test_fuzz_ppo_checkpoints_many = both_profiles(damage)(_ppo)


def test_foreign_and_half_written_files_are_clear_errors(strategy_file, ppo_file, tmp_path):
    import torch

    from agents.cfr.strategy import load_strategy
    from agents.network.checkpoint import FORMAT, VERSION, CheckpointError, read_checkpoint

    spath, srules = strategy_file
    half = tmp_path / "half.npz"
    half.write_bytes(spath.read_bytes()[: len(spath.read_bytes()) // 2])
    with pytest.raises(TrucError, match="not a readable CFR strategy"):
        load_strategy(str(half), srules)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, header=np.frombuffer(b"[1, 2]", dtype=np.uint8))
    with pytest.raises(TrucError, match="not a CFR strategy file"):
        load_strategy(str(foreign), srules)
    with zipfile.ZipFile(tmp_path / "zip.npz", "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(TrucError):
        load_strategy(str(tmp_path / "zip.npz"), srules)
    from agents.cfr.strategy import _ARRAYS, StrategyTable, save_strategy

    table = StrategyTable({name: np.zeros(2, np.int64) for name in _ARRAYS}, 0)
    save_strategy(str(tmp_path / "nohead.npz"), {"rules_key": srules.key}, {"main": table})
    with pytest.raises(TrucError, match="header: KeyError"):
        load_strategy(str(tmp_path / "nohead.npz"), srules)

    ppath, prules = ppo_file
    assert read_checkpoint(str(ppath), prules)["format"] == FORMAT
    for bad in ({"format": FORMAT, "version": VERSION},
                {"format": FORMAT, "version": VERSION, "rules_key": "{", "net": {}, "model": {}},
                {"format": FORMAT, "version": VERSION, "rules_key": prules.key, "net": [], "model": {}}):
        torch.save(bad, tmp_path / "bad.pt")
        with pytest.raises(CheckpointError, match="damaged PPO checkpoint"):
            read_checkpoint(str(tmp_path / "bad.pt"), prules)
    (tmp_path / "half.pt").write_bytes(ppath.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="not a readable PPO checkpoint") as half:
        read_checkpoint(str(tmp_path / "half.pt"), prules)
    torch.save({"format": FORMAT, "net": object()}, tmp_path / "pickled.pt")
    with pytest.raises(CheckpointError, match=r"pickled objects\)$") as pickled:
        read_checkpoint(str(tmp_path / "pickled.pt"), prules)
    (tmp_path / "config.pt").write_text("total_steps: 100\n")  # a config passed where a checkpoint belongs
    with pytest.raises(CheckpointError, match=r"not a torch file: it starts with b'total_st'") as text:
        read_checkpoint(str(tmp_path / "config.pt"), prules)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"\(an empty file\)$"):
        read_checkpoint(str(tmp_path / "empty.pt"), prules)
    with pytest.raises(CheckpointError, match="is a folder, not a PPO checkpoint"):
        read_checkpoint(str(tmp_path), prules)
    for e in (half.value, pickled.value, text.value):  # one line, and not torch's advice to load it unsafely
        assert "\n" not in str(e) and "weights_only" not in str(e)


def test_cfr_resume_wraps_a_damaged_checkpoint(tmp_path):
    from train.algos.cfr import _load_npz_state
    from train.algos.cfr_io import resume_from as _resume

    class Solver:  # takes what a solver's state dict holds, refuses anything else as the solver does
        def load_state_dict(self, d):
            self.iteration = int(d["iteration"])

    ck = tmp_path / "checkpoint_main.npz"
    np.savez(ck, iteration=np.int64(7), regrets=np.zeros(1000))
    solver = Solver()
    _resume(str(ck), lambda: _load_npz_state(solver, str(ck)))
    assert solver.iteration == 7
    ck.write_bytes(ck.read_bytes()[:3000])
    with pytest.raises(TrucError, match="not a readable checkpoint of this solve.*BadZipFile"):
        _resume(str(ck), lambda: _load_npz_state(solver, str(ck)))
    np.savez(ck, something_else=np.zeros(3))
    with pytest.raises(TrucError, match="not a readable checkpoint of this solve.*KeyError"):
        _resume(str(ck), lambda: _load_npz_state(solver, str(ck)))


@pytest.mark.slow  # compiles the solver's kernels (about half a minute)
def test_cfr_resume_from_a_half_written_checkpoint_is_a_clear_error(tmp_path):
    from train.algos.cfr import main

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("variant: le_truc\noptions: {ranks: 3, hand_size: 1, max_raises: 1, redeal: false}\n"
                   f"algorithm: cfr+\niterations: 4\neval_every: 2\ncheckpoint_every: 2\nout: {tmp_path / 'out'}\n")
    main(str(cfg))
    ck = tmp_path / "out" / "checkpoint_main.npz"
    ck.write_bytes(ck.read_bytes()[: ck.stat().st_size // 2])
    with pytest.raises(TrucError, match="not a readable checkpoint of this solve"):
        main(str(cfg), resume=True)
    np.savez(ck, something_else=np.zeros(3))  # complete, but not this solver's
    with pytest.raises(TrucError, match="not a readable checkpoint of this solve"):
        main(str(cfg), resume=True)
