"""The one validation layer of settings files: schemas, YAML reading, --set overrides, the CLI's errors."""

import dataclasses
import os
from pathlib import Path

import pytest

from train import config
from train.algos.cfr import CFRConfig
from train.algos.distill import DistillConfig
from train.algos.ppo import PPOConfig
from train.algos.psro import PSROConfig
from train.algos.signals_runs import Experiment, ExperimentAnalysis, ExperimentRun, load_experiment
from train.commands.cli import main
from train.config import DemoConfig
from train.eval.arena import ArenaConfig
from truc_env.errors import TrucError

ROOT = Path(__file__).resolve().parents[1]
KINDS = [ArenaConfig, CFRConfig, PPOConfig, PSROConfig, DistillConfig, DemoConfig, Experiment, ExperimentRun,
         ExperimentAnalysis]


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.__name__)
def test_every_setting_has_exactly_one_rule(cls):
    assert set(cls.SCHEMA) == {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.__name__)
def test_defaults_follow_their_own_rules(cls):
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        config.check(cls.SCHEMA[f.name], default, f.name)


def test_cfr_algorithms_are_the_solvers():
    from agents.cfr.mccfr import ALGORITHMS as MCCFR
    from agents.cfr.solver import ALGORITHMS as EXACT

    assert CFRConfig.SCHEMA["algorithm"].choices == EXACT + MCCFR


from train.eval.leaderboard import LeaderboardConfig  # noqa: E402

FOLDER_KINDS = {"arena": ArenaConfig, "cfr": CFRConfig, "ppo": PPOConfig, "psro": PSROConfig, "distill": DistillConfig,
                "leaderboard": LeaderboardConfig}
SHIPPED = sorted(str(p.relative_to(ROOT / "configs")) for p in (ROOT / "configs").rglob("*.yaml"))


def _kind_of(name: str, raw: dict):
    """A config's kind from its folder (configs/README.md); signals/ holds experiments and their PPO bases."""
    folder = name.split("/")[0]
    if folder == "signals":
        return Experiment if "runs" in raw else PPOConfig
    return FOLDER_KINDS[folder] if folder in FOLDER_KINDS else {"demo.yaml": DemoConfig}[name]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_load(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    raw = config.read_mapping(f"configs/{name}")
    cls = _kind_of(name, raw)
    if cls is Experiment:
        assert load_experiment(f"configs/{name}")["runs"]
    else:
        assert cls is not ArenaConfig or name.startswith("arena/")  # a tournament lives in arena/
        config.build(cls, raw, name)


def test_configs_are_filed_by_job_and_listed_in_the_index():
    index = (ROOT / "configs" / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in (ROOT / "configs").glob("*.yaml")] == ["demo.yaml"]  # no flat dump
    for name in SHIPPED + sorted(str(p.relative_to(ROOT / "configs")) for p in (ROOT / "configs").rglob("*.sh")):
        assert f"`{name}`" in index, f"configs/README.md does not list {name}"


def test_configs_resolve_by_name_by_old_flat_path_and_by_checkout_path(tmp_path, monkeypatch):
    from truc_env.io.assets import resolve

    monkeypatch.chdir(tmp_path)  # not the checkout: only the shipped copy can answer
    by_name = resolve("configs", "arena/paulista")
    assert by_name.endswith("configs/arena/paulista.yaml")
    assert resolve("configs", "configs/arena/paulista.yaml") == by_name  # the README's checkout path
    assert resolve("configs", "configs/arena_paulista.yaml") == by_name  # the 0.1 flat name
    assert resolve("configs", "configs/learn_small_ppo.yaml").endswith("configs/ppo/small.yaml")
    assert config.read_mapping("cfr/small")["variant"] == "le_truc"
    with pytest.raises(TrucError, match="no shipped config"):
        resolve("configs", "arena/nowhere")
    with pytest.raises(TrucError, match="cannot read config"):
        config.read_mapping("arena/nowhere")


# ---------------------------------------------------------------------- the examples, one by one
ARENA = {"agents": ["random", "heuristic:honest"], "out": "x"}


@pytest.mark.parametrize("cls, base, key, value, match", [
    (ArenaConfig, ARENA, "workers", 10**30, r"workers=.*1\.\.4096"),
    (ArenaConfig, ARENA, "workers", 0, "workers"),
    (ArenaConfig, ARENA, "deals", 10**30, "deals"),
    (ArenaConfig, ARENA, "seed", -1, "seed=-1"),
    (ArenaConfig, ARENA, "seed", 1.5, "seed=1.5"),
    (ArenaConfig, ARENA, "seed", True, "seed=True"),
    (ArenaConfig, ARENA, "variant", 5, "variant=5.*a string"),
    (ArenaConfig, ARENA, "options", [1], "options=.*a mapping"),
    (ArenaConfig, ARENA, "options", {"max_raises": [1]}, "max_raises"),
    (ArenaConfig, ARENA, "agents", "random", "agents"),
    (ArenaConfig, ARENA, "duplicate", "yes", "duplicate"),
    (CFRConfig, {}, "eval_every", 0, "eval_every=0"),
    (CFRConfig, {}, "iterations", -5, "iterations=-5"),
    (CFRConfig, {}, "score", 3, "score=3.*a list"),
    (CFRConfig, {}, "score", [0, -1], r"score\[1\]=-1"),
    (CFRConfig, {}, "time_limit", float("nan"), "time_limit"),
    (CFRConfig, {}, "algorithm", "alphazero", "cfr\\+, dcfr"),
    (PPOConfig, {}, "eval_every", 0, "eval_every=0"),
    (PPOConfig, {}, "name", "../../x", "name='../../x'.*inside the output folder"),
    (PPOConfig, {}, "name", "/tmp/x", "inside the output folder"),
    (PPOConfig, {}, "name", "a/../../b", "inside the output folder"),
    (PPOConfig, {}, "hidden", [64, 0], r"hidden\[1\]=0"),
    (PPOConfig, {}, "target_kl", "big", "target_kl"),
    (DemoConfig, {}, "show_hands", -1, "show_hands"),
    (DemoConfig, {}, "variant", ["le_truc"], "variant"),
])
def test_bad_setting_is_a_clear_error(cls, base, key, value, match):
    with pytest.raises(TrucError, match=match):
        config.build(cls, {**base, key: value}, "cfg.yaml")


def test_workers_are_capped_at_the_cores(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert [config.worker_count(n) for n in (1, 2, 3, 4, 4096)] == [1, 2, 3, 3, 3]
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one
    assert config.worker_count(8) == 1


def test_good_settings_are_normalised():
    cfg = config.build(CFRConfig, {"time_limit": 10, "iterations": 5})
    assert cfg.time_limit == 10.0 and isinstance(cfg.time_limit, float)
    ppo = config.build(PPOConfig, {"name": "sub/run", "target_kl": None})
    assert ppo.name == "sub/run" and ppo.target_kl is None
    # PyYAML (YAML 1.1) reads 1e-5 without a dot as a string; a number setting takes it as the number
    ppo = config.build(PPOConfig, {"learning_rate": "1e-5", "target_kl": "2E-2"})
    assert ppo.learning_rate == 1e-5 and ppo.target_kl == 0.02
    with pytest.raises(TrucError, match="learning_rate='1e-5x'"):
        config.build(PPOConfig, {"learning_rate": "1e-5x"})
    assert config.build(PPOConfig, {"name": "1e5"}).name == "1e5"  # a string setting keeps its string


def test_unknown_and_non_string_keys(tmp_path):
    with pytest.raises(TrucError, match="unknown setting.*'colour'.*allowed: agents"):
        config.build(ArenaConfig, {"colour": 1})
    p = tmp_path / "c.yaml"
    p.write_text("1: 2\n")
    with pytest.raises(TrucError, match="mapping of settings"):
        config.read_mapping(p)


@pytest.mark.parametrize("content, match", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not a text file"),
    (b"variant: [le_truc\n", "not valid YAML"),
    (b"- a\n- b\n", "mapping of settings"),
    (b"[" * 1000 + b"]" * 1000, "nests too deeply|not valid YAML"),
    (b"a: !!python/object:os.system x\n", "not valid YAML"),
])
def test_unreadable_yaml_is_a_clear_error(tmp_path, content, match):
    p = tmp_path / "c.yaml"
    p.write_bytes(content)
    with pytest.raises(TrucError, match=match):
        config.read_mapping(p)
    with pytest.raises(TrucError, match="cannot read"):
        config.read_mapping(tmp_path)  # a folder


def test_empty_file_is_the_defaults(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("# nothing\n")
    assert config.load(DemoConfig, p) == DemoConfig()


def test_set_overrides_are_yaml_and_reach_into_mappings(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("variant: le_truc\noptions: {redeal: false}\n")
    cfg = config.load(CFRConfig, p, ["iterations=7", "options.max_raises=2", "score=[1, 2]", "exclude=[]"])
    assert cfg.iterations == 7 and cfg.options == {"redeal": False, "max_raises": 2} and cfg.score == [1, 2]
    assert config.load(CFRConfig, p, ["options.redeal=true"]).options == {"redeal": True}
    for bad, match in [("iterations", "key=value"), ("=3", "key=value"), ("a..b=1", "key=value"),
                       ("variant.x=1", "variant is not a mapping"), ("iterations=[1", "not valid YAML"),
                       ("iterations=seven", "iterations='seven'")]:
        with pytest.raises(TrucError, match=match):
            config.load(CFRConfig, p, [bad])


def test_read_mapping_is_the_only_yaml_reader():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "train").glob("*.py")
                 if "yaml.safe_load(" in p.read_text() and p.name != "config.py" and p.name != "cli.py"]
    assert offenders == []


# ---------------------------------------------------------------------- the command line
def _cli(capsys, *argv):
    rc = main(list(argv))
    err = capsys.readouterr().err
    return rc, err


@pytest.mark.parametrize("argv, match", [
    (["demo", "--set", "seed=-1"], "seed=-1"),
    (["demo", "--seed", "-3"], "--seed: -3 is not a seed"),
    (["demo", "--set", "nope=1"], "unknown setting"),
    (["arena", "--set", "workers=1000000000000000000000000000000"], "workers=.*1..4096"),
    (["arena", "--workers", "0"], "--workers: 0 is out of range"),
    (["train", "cfr", "--config", "configs/cfr/small.yaml", "--set", "eval_every=0"], "eval_every=0"),
    (["train", "cfr", "--config", "configs/cfr/small.yaml", "--set", "iterations=-5"], "iterations=-5"),
    (["train", "ppo", "--config", "configs/ppo/le_truc.yaml", "--set", "name=../../x"], "name='../../x'"),
    (["train", "ppo", "--config", "configs/ppo/le_truc.yaml", "--set", "eval_every=0"], "eval_every=0"),
    (["train", "cfr", "--config", "configs/cfr/mmd_small.yaml", "--set", "mmd_step=0"], "mmd_step=0"),
    (["train", "distill", "--config", "configs/distill/small_mmd.yaml", "--set", "features=cards"], "features 'cards'"),
    (["train", "distill", "--config", "configs/distill/small_mmd.yaml", "--set", "teacher=cfr:/nowhere.npz"],
     "no such file"),
    (["analyze", "signals", "--config", "configs/signals/experiments.yaml", "--no-train", "--set", "workers=0"],
     "workers=0"),
    (["rules", "le_truc", "--options", "[1]"], "JSON object"),
    (["rules", "le_truc", "--options", "{"], "not valid JSON"),
    (["demo", "--config", "configs/arena/le_truc.yaml"], "unknown setting"),
    (["demo", "--set", "variant=[le_truc"], "not valid YAML"),
])
def test_cli_turns_bad_input_into_one_line_and_exit_code_2(capsys, monkeypatch, argv, match):
    monkeypatch.chdir(ROOT)
    rc, err = _cli(capsys, *argv)
    assert rc == 2
    assert err.startswith("truc: error: ") and err.count("\n") == 1, err
    assert __import__("re").search(match, err), err
    assert "Traceback" not in err


def test_cli_binary_config_is_one_line(capsys, tmp_path):
    p = tmp_path / "bin.yaml"
    p.write_bytes(bytes(range(256)))
    rc, err = _cli(capsys, "demo", "--config", str(p))
    assert rc == 2 and "not a text file" in err and err.count("\n") == 1


def test_cli_yaml_error_spanning_lines_is_one_line(capsys, tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("variant: le_truc\noptions: {redeal: [\n")
    rc, err = _cli(capsys, "demo", "--config", str(p))
    assert rc == 2 and "not valid YAML" in err and err.count("\n") == 1


def test_cli_set_and_shortcut_flags_reach_the_config(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "arena"
    rc = main(["arena", "--set", "agents=[random, 'heuristic:honest']", "--deals", "2", "--set", "episode=hand",
               "--workers", "1", "--out", str(out)])
    assert rc == 0
    assert (out / "report.md").exists()
    import json

    assert json.loads((out / "config.json").read_text())["deals"] == 2


def test_unwritable_output_folders_are_clear_errors(tmp_path):
    from train.algos.cfr import run
    from train.algos.ppo import train

    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    with pytest.raises(TrucError, match="output folder .* is not writable.*'out'"):
        run(config.build(CFRConfig, {"options": {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False},
                                     "out": str(blocker / "cfr")}), log=lambda m: None)
    with pytest.raises(TrucError, match="output folder .* is not writable.*'out_dir'"):
        train(config.build(PPOConfig, {"out_dir": str(blocker), "progress": False, "tensorboard": False}))
    assert config.output_folder(tmp_path / "a" / "b") == str(tmp_path / "a" / "b")
