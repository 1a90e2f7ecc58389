"""Nothing silent, nothing lost: special and damaged files, full disks, concurrent runs, failing workers,
resources past the machine's memory. Each case of issue 31 has a test named after it."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import pytest

from train import config
from train.commands import cli
from train.eval import arena
from train.eval.arena import ArenaConfig, run_arena
from truc_env.errors import RecordError, TrucError
from truc_env.game.records import load
from truc_env.io.atomic import LOCK_NAME, MAX_TEXT_BYTES, run_lock

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _arena_cfg(tmp_path, **kw):
    base = {"variant": "le_truc", "agents": ["random", "heuristic:honest"], "deals": 8, "episode": "hand",
            "workers": 1, "out": str(tmp_path / "out")}
    return ArenaConfig.from_dict({**base, **kw})


def _truc(argv, limit_bytes=None, timeout=300):
    """``truc argv`` in a subprocess, with a file-size limit when given."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "train.commands.cli", *argv], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit if limit_bytes else None)


def _one_error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith(("arena:", "\r"))]
    errors = [x for x in lines if x.startswith("truc: error: ")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


# ---------------------------------------------------------------------- special and oversized files
@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom"])
def test_dev_zero_or_urandom_as_a_config_or_record_is_refused_fast(special):
    if not os.path.exists(special):
        pytest.skip(f"{special} does not exist here")
    t0 = time.time()
    with pytest.raises(TrucError, match="not a regular file"):
        config.read_mapping(special)
    with pytest.raises(RecordError, match="not a regular file"):
        load(special)
    assert time.time() - t0 < 2


def test_a_pipe_as_a_config_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(TrucError, match="not a regular file"):
        config.read_mapping(fifo)


def test_a_config_past_the_size_cap_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(MAX_TEXT_BYTES + 10)  # sparse: no disk spent
    with pytest.raises(TrucError, match="larger than 16 MiB"):
        config.read_mapping(big)
    assert cli.main(["train", "cfr", "--config", str(big)], run=False) == 2


def test_duplicate_keys_in_a_json_record_are_refused(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"variant": "le_truc", "variant": "put", "actions": []}')
    with pytest.raises(RecordError, match="the key 'variant' is given twice"):
        load(p)


def test_a_5000_digit_integer_in_a_record_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "r.json"
    p.write_text('{"variant": "le_truc", "seed": ' + "9" * 5000 + "}")
    with pytest.raises(RecordError, match="an integer of 5000 digits"):
        load(p)
    assert cli.main(["replay", str(p)]) == 2
    assert "5000 digits" in capsys.readouterr().err


def test_an_empty_config_file_does_not_start_a_training_run(tmp_path, capsys):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    for trainer in ("cfr", "ppo", "psro", "distill"):
        assert cli.main(["train", trainer, "--config", str(empty)]) == 2
        assert "holds no settings" in capsys.readouterr().err


# ---------------------------------------------------------------------- the run folder's lock
def _hold(folder: Path):
    """A process holding ``folder``'s lock until killed."""
    code = ("import sys, time\nfrom truc_env.io.atomic import run_lock\n"
            f"with run_lock({str(folder)!r}):\n    print('held', flush=True)\n    time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_two_runs_on_the_same_out_folder_the_second_refuses_clearly(tmp_path, capsys):
    out = tmp_path / "out"
    holder = _hold(out)
    try:
        argv = ["arena", "--set", "agents=[random, heuristic:honest]", "--set", "episode=hand", "--deals", "2",
                "--workers", "1", "--out", str(out)]
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert "another run is using" in err and f'"pid": {holder.pid}' in err and "--force" in err
        assert not (out / "units.jsonl").exists()  # the first run's progress is untouched
        assert cli.main([*argv, "--force"]) == 0  # taking the folder over
        assert (out / "summary.json").exists() and not (out / LOCK_NAME).exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_file_left_by_a_killed_run_does_not_block(tmp_path):
    out = tmp_path / "out"
    holder = _hold(out)
    holder.kill()  # kill -9: the lock file stays, its flock dies with the process
    holder.wait()
    assert (out / LOCK_NAME).exists()
    with run_lock(out):
        pass
    assert not (out / LOCK_NAME).exists()


def test_a_refused_run_leaves_no_empty_folder_behind(tmp_path):
    out = tmp_path / "new"
    with pytest.raises(TrucError, match="refused"):
        with run_lock(out):
            raise TrucError("refused")
    assert not out.exists()


def test_the_lock_holds_within_one_process_too(tmp_path):
    with run_lock(tmp_path / "out"):
        with pytest.raises(TrucError, match="another run is using"):
            with run_lock(tmp_path / "out"):
                pass


# ---------------------------------------------------------------------- full disks
def test_arena_on_a_full_disk_ends_in_one_line_and_resumes(tmp_path):
    out = tmp_path / "out"
    argv = ["arena", "--set", "agents=[random, heuristic:honest]", "--set", "episode=hand", "--deals", "40",
            "--workers", "1", "--out", str(out)]
    proc = _truc(argv, limit_bytes=20_000)  # RLIMIT_FSIZE: each write past 20 kB fails with EFBIG
    assert proc.returncode == 2, proc.stderr
    line = _one_error_line(proc.stderr)
    assert "file-size limit was reached" in line and "kept whole" in line and "--resume" in line
    done = proc = _truc([*argv, "--resume"])
    assert done.returncode == 0, done.stderr
    fresh = tmp_path / "fresh"  # the uninterrupted reference: in this process (a subprocess costs a start)
    assert cli.main([*argv[:-1], str(fresh)]) == 0
    assert (out / "summary.json").read_text() == (fresh / "summary.json").read_text()


def test_train_cfr_on_a_full_disk_ends_in_one_line_and_resumes(tmp_path):
    cfg = _cfr_config(tmp_path, "cut")
    proc = _truc(["train", "cfr", "--config", str(cfg)], limit_bytes=1500)
    assert proc.returncode == 2, proc.stderr
    assert "file-size limit was reached" in _one_error_line(proc.stderr)
    assert not list((tmp_path / "cut").glob("*.tmp")) and not list((tmp_path / "cut").glob(".*.tmp"))
    assert _truc(["train", "cfr", "--config", str(cfg), "--resume"]).returncode == 0
    # the uninterrupted reference: in this process (a subprocess costs a start; only the cut one needs the limit)
    assert cli.main(["train", "cfr", "--config", str(_cfr_config(tmp_path, "whole"))]) == 0
    assert _curve(tmp_path / "cut/curve.csv") == _curve(tmp_path / "whole/curve.csv")


def test_train_ppo_on_a_full_disk_ends_in_one_line(tmp_path):
    pytest.importorskip("torch")
    sets = [f"out_dir={tmp_path}", "total_steps=512", "steps_per_update=256", "num_envs=8", "eval_every=100",
            "eval_episodes=10", "checkpoint_every=1", "plot=false", "progress=false", "time_limit_minutes=2"]
    argv = ["train", "ppo", "--config", str(ROOT / "configs/ppo/le_truc.yaml")]
    for kv in sets:
        argv += ["--set", kv]
    proc = _truc(argv, limit_bytes=20_000)  # the first checkpoint is larger: torch's zip writer fails
    assert proc.returncode == 2, proc.stderr
    line = _one_error_line(proc.stderr)
    assert "file-size limit" in line and "--resume" in line
    assert not list((tmp_path / "ppo_le_truc").glob("*.pt*"))  # no half-written checkpoint is left


def test_a_torch_checkpoint_on_a_full_disk_is_one_line(tmp_path):
    pytest.importorskip("torch")
    code = ("import resource, torch\nresource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
            f"torch.save(torch.zeros(100000), {str(tmp_path / 'ck.pt')!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    error = proc.stderr.strip().splitlines()[-1]
    kind, _, message = error.partition(": ")
    e = RuntimeError(message) if kind == "RuntimeError" else OSError(27, message)
    line = cli.disk_full(e, Namespace(resume=False))
    assert line is not None and "kept whole" in line, error
    assert cli.disk_full(ValueError("x"), None) is None


def test_an_oserror_that_is_not_a_full_disk_is_not_hidden():
    assert cli.disk_full(OSError(13, "Permission denied"), None) is None


# ---------------------------------------------------------------------- workers
def _broken_play_unit(kind: str):
    real = arena.play_unit

    def play(cfg_dict, unit):
        if unit["deal"] == 3:
            if kind == "exit":
                os._exit(3)  # the worker dies as a killed one does
            raise ValueError("this worker broke on purpose")
        return real(cfg_dict, unit)
    return play


@pytest.mark.parametrize("kind", ["raise", "exit"])
def test_a_broken_worker_ends_the_arena_with_its_message_never_a_hang(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(arena, "play_unit", _broken_play_unit(kind))  # forked workers inherit it
    monkeypatch.setattr(config, "cpu_cores", lambda: 2)
    expected = "broke on purpose" if kind == "raise" else "worker process died"
    for attempt in range(4):  # the hang seen once in a dozen tries: try repeatedly
        t0 = time.time()
        with pytest.raises(TrucError, match=expected):
            run_arena(_arena_cfg(tmp_path / str(attempt), deals=12, workers=2), progress=False)
        assert time.time() - t0 < 120


def test_arena_agent_files_are_loaded_in_the_parent_before_any_worker(tmp_path, monkeypatch):
    import concurrent.futures

    def no_pool(*a, **k):
        raise AssertionError("a worker pool was started for a tournament whose agent cannot load")
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    monkeypatch.setattr(config, "cpu_cores", lambda: 2)
    with pytest.raises(TrucError, match="nowhere"):
        run_arena(_arena_cfg(tmp_path, agents=["random", f"cfr:{tmp_path}/nowhere.npz"], workers=2), progress=False)


def test_a_non_utf8_line_in_units_jsonl_is_tolerated_on_resume(tmp_path):
    full = _arena_cfg(tmp_path / "full", deals=6)
    run_arena(full, progress=False)
    part = _arena_cfg(tmp_path / "part", deals=6)
    assert run_arena(part, progress=False, max_units=3)["complete"] is False
    with open(tmp_path / "part/out/units.jsonl", "ab") as f:
        f.write(b'{"id": "\xff\xfe\x00 damaged\n[1, 2]\n')
    run_arena(part, resume=True, progress=False)
    assert (tmp_path / "full/out/summary.json").read_text() == (tmp_path / "part/out/summary.json").read_text()


# ---------------------------------------------------------------------- train cfr --resume
TINY = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}


def _cfr_config(tmp_path, name: str) -> Path:
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(f"variant: le_truc\noptions: {json.dumps(TINY)}\nalgorithm: cfr+\niterations: 40\n"
                   f"eval_every: 5\ncheckpoint_every: 10\ndtype: float64\nout: {tmp_path / name}\n")
    return cfg


def _curve(path: Path) -> list[tuple]:
    import csv

    with open(path) as f:
        return [(r["part"], int(r["iteration"]), r["exploitability"]) for r in csv.DictReader(f)]


def test_train_cfr_resume_after_a_kill_keeps_every_curve_row(tmp_path, monkeypatch):
    from agents.cfr.solver import PublicTreeSolver
    from train.algos.cfr import main

    main(str(_cfr_config(tmp_path, "whole")))
    evaluate = PublicTreeSolver.evaluate
    calls = []

    def killed_after_five(self):
        calls.append(1)
        if len(calls) > 5:  # iteration 30, past the checkpoint at 20 (rows 25 and 30 are not in it)
            raise KeyboardInterrupt
        return evaluate(self)
    monkeypatch.setattr(PublicTreeSolver, "evaluate", killed_after_five)
    cfg = _cfr_config(tmp_path, "cut")
    with pytest.raises(KeyboardInterrupt):
        main(str(cfg))
    kept = _curve(tmp_path / "cut/curve.csv")
    assert [it for _, it, _ in kept] == [5, 10, 15, 20]  # every row up to the last checkpoint
    with open(tmp_path / "cut/curve.csv", "ab") as f:
        f.write(b"main,2\xff\xfe")  # and a torn, damaged line after them
    monkeypatch.setattr(PublicTreeSolver, "evaluate", evaluate)
    main(str(cfg), resume=True)
    assert _curve(tmp_path / "cut/curve.csv") == _curve(tmp_path / "whole/curve.csv")


def test_train_cfr_refuses_continuation_or_exclude_that_do_not_apply(tmp_path):
    from train.algos.cfr import load_config

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"variant: le_truc\noptions: {json.dumps(TINY)}\ncontinuation: x.npz\n")
    with pytest.raises(TrucError, match="continuation .*no redeal"):
        load_config(str(cfg))
    cfg.write_text("variant: le_truc\nalgorithm: cfr+\nexclude: [allin]\n")
    with pytest.raises(TrucError, match="exclude is for the MCCFR agent"):
        load_config(str(cfg))
    cfg.write_text("variant: le_truc_4p\nalgorithm: es_mccfr\nexclude: [allin]\n")
    assert load_config(str(cfg)).exclude == ["allin"]


# ---------------------------------------------------------------------- resources
@pytest.mark.parametrize("setting, figure", [("hidden=[65536, 65536]", "hidden=[65536, 65536]"),
                                             ("num_envs=1048576", "num_envs=1048576")])
def test_ppo_hidden_65536_or_num_envs_1048576_is_refused_with_the_figure(setting, figure, monkeypatch):
    from train.algos.ppo import PPOConfig
    from truc_env.io import checks

    monkeypatch.setattr(checks, "machine_memory", lambda: 16 * 2**30)  # the same answer on any machine
    with pytest.raises(TrucError, match=rf"{re.escape(figure)}.*needs about [\d,.]+ GiB.*16.0 GiB; shrink hidden, num_envs"):
        PPOConfig.from_yaml(str(ROOT / "configs/ppo/le_truc.yaml"), [setting])
    assert PPOConfig.from_yaml(str(ROOT / "configs/ppo/le_truc.yaml")).hidden  # the shipped run fits


def test_bench_sizes_too_big_is_refused_before_measuring(capsys):
    assert cli.main(["bench", "--sizes", "64", "1000000000000"], run=False) == 2
    assert "give smaller --sizes" in capsys.readouterr().err


def test_analyze_bound_default_team_is_found_outside_a_checkout(tmp_path, monkeypatch):
    from train.analysis.signals_bound import LE_TRUC_TEAM, committed

    monkeypatch.chdir(tmp_path)
    spec = committed(LE_TRUC_TEAM)
    assert spec.startswith("ppo:/") and os.path.exists(spec[4:])
    assert committed("ppo:mine.pt") == "ppo:mine.pt"  # the user's own files stay as given


def test_exploitability_quiet_still_prints_the_final_figure(capsys):
    options = json.dumps(TINY)
    assert cli.main(["exploitability", "--agent", "random", "--options", options, "--quiet", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "exploitability 3.0398 points per hand" in captured.out
    assert "policy:" not in captured.err  # no progress bar


def test_duplicate_keys_in_options_json_are_refused(capsys):
    assert cli.main(["rules", "le_truc", "--options", '{"ranks": 3, "ranks": 4}']) == 2
    assert "the key 'ranks' is given twice" in capsys.readouterr().err


def test_an_exact_solve_past_the_machines_memory_is_refused_with_the_figure(tmp_path, monkeypatch):
    from agents.cfr.tree import build_tree
    from train.algos.cfr import main, solver_counts
    from truc_env.game.rules import make_rules
    from truc_env.io import checks

    tree = build_tree(make_rules("le_truc", ranks=4, hand_size=2, max_raises=2, redeal=False))
    # counted by the numba loop train/bench/tree_sizes.py had before this numpy form replaced it, less the seat-1
    # transitions a tree without announcements no longer keeps (8 bytes an edge)
    assert solver_counts(tree)["bytes"] == 135946 - 8 * tree.n_actions
    monkeypatch.setattr(checks, "machine_memory", lambda: 1000)  # a machine of 1000 bytes
    with pytest.raises(TrucError, match=r"solving the main tree .* needs about [\d.,]+ (bytes|MiB|GiB).*options ranks"):
        main(str(_cfr_config(tmp_path, "big")))
    assert not (tmp_path / "big" / "checkpoint_main.npz").exists()
