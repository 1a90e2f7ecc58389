"""PPO's rollouts in shards, in this process or on Ray workers (train/algos/rollout_shards.py): the same
run, checkpoint for checkpoint, whoever plays the shards; and the learned best response of
``truc exploitability --approx`` likewise. The Ray tests start a local cluster on the loopback address."""

from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_ppo import die_at_third_checkpoint, tiny_config  # noqa: E402

from train.algos import ppo  # noqa: E402
from train.commands.cli import main as cli  # noqa: E402
from train.eval import approx_br  # noqa: E402
from truc_env import TrucError, make_rules  # noqa: E402

TIMES = {"elapsed_s", "sps", "rollout_sps", "elapsed"}  # wall-clock figures, the only ones allowed to differ


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # another module's cluster: this one is started on the loopback address
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    yield ray
    ray.shutdown()


def checkpoint(root):
    return torch.load(root / "t" / "checkpoint.pt", weights_only=False)


def same(a, b, path="") -> None:
    """``a`` and ``b`` equal to the bit (tensors, arrays, floats), wall-clock figures and the config aside."""
    if isinstance(a, dict):
        keys = set(a) - TIMES - {"config"}
        assert keys == set(b) - TIMES - {"config"}, path
        for k in keys:
            same(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), path
    elif isinstance(a, np.ndarray):
        assert np.array_equal(a, b), path
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), path
    else:
        assert a == b, path


def run(root, **kw) -> dict:
    """A tiny run (4 updates of 256 steps on engine tables against the league, a heuristic and itself)."""
    ppo.train(tiny_config(root, **{"rollout": "engine", **kw}))
    return checkpoint(root)


def test_ray_workers_give_the_local_run_checkpoint_for_checkpoint(tmp_path, ray_cluster):
    """The fast test of the file, about 14 CPU-s of every process (Ray's start and three workers' included)."""
    one = run(tmp_path / "local1")
    same(run(tmp_path / "ray1", backend="ray"), one)  # one shard: the run of every release before Ray
    two = run(tmp_path / "local2", rollout_shards=2)
    assert "shards" in two["rng"] and not torch.equal(two["model"]["actor.0.weight"], one["model"]["actor.0.weight"])
    same(run(tmp_path / "ray2", rollout_shards=2, backend="ray", workers=2), two)
    assert len(two["history"]) == 4 and two["global_step"] >= 4 * 256 and two["league"]


@pytest.mark.slow  # 4 more runs, on the batched engine, and 4 workers' processes (about 15 CPU-s)
def test_ray_on_the_batched_engine_and_a_resume_on_other_workers(tmp_path, ray_cluster, monkeypatch):
    kw = dict(rollout="auto", rollout_shards=4, total_steps=6 * 256, deterministic=True)
    full = run(tmp_path / "local", **kw)
    same(run(tmp_path / "ray1", backend="ray", workers=1, **kw), full)
    # killed after two updates on 2 workers, continued on 1: the uninterrupted local run
    revive = die_at_third_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        ppo.train(tiny_config(tmp_path / "cut", checkpoint_every=1, backend="ray", workers=2, **kw))
    revive()
    assert checkpoint(tmp_path / "cut")["update"] == 2
    ppo.train(tiny_config(tmp_path / "cut", checkpoint_every=1, backend="ray", workers=1, **kw), resume=True)
    same(checkpoint(tmp_path / "cut"), full)


@pytest.mark.slow  # two workers' processes start (about 6 CPU-s)
def test_a_worker_that_dies_ends_the_run_in_one_line(tmp_path, ray_cluster, monkeypatch):
    from train.algos import rollout_shards

    real, calls = rollout_shards.RayRollouts.rollout, []

    def dying(self, run):
        calls.append(1)
        if len(calls) == 2:
            ray_cluster.kill(self.actors[0])
        return real(self, run)

    monkeypatch.setattr(rollout_shards.RayRollouts, "rollout", dying)
    with pytest.raises(TrucError, match="a Ray rollout worker died .* --resume continues") as e:
        run(tmp_path, backend="ray", workers=2, rollout_shards=2)
    assert "\n" not in str(e.value) and checkpoint(tmp_path)["update"] == 1


SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}
QUICK = {"steps_per_update": 512, "hidden": [32, 32], "learning_rate": 1e-3, "num_envs": 16, "rollout": "engine",
         "rollout_shards": 2}


@pytest.mark.slow  # 9 CPU-s more: two learner workers and the measuring tasks' processes start
def test_learned_best_response_on_ray_is_the_local_figure(ray_cluster):
    rules = make_rules("le_truc", **SMALL)
    local = approx_br.approx_exploitability("random", rules, 2 * 512, seed=1, eval_deals=24, overrides=QUICK,
                                            log=lambda m: None)
    ray = approx_br.approx_exploitability("random", rules, 2 * 512, seed=1, eval_deals=24,
                                          overrides={**QUICK, "backend": "ray", "workers": 2}, log=lambda m: None)
    for k in ("exploitability_lower_bound", "ci95", "br_side0", "br_side1", "br_steps", "eval_seed"):
        assert ray[k] == local[k], k
    assert ray["train_worker_cpu_seconds"] > 0 and ray["measure_task_cpu_seconds"] > 0


# ------------------------------------------------------------------------------------------- bad input
def test_ray_backend_without_ray_is_one_line_naming_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where it is not installed
    with pytest.raises(TrucError, match=r"pip install 'truc-env\[distributed\]'"):
        tiny_config(tmp_path, backend="ray").validate()
    for argv in (["train", "ppo", "--config", "ppo/small", "--backend", "ray", "--set", f"out_dir={tmp_path}"],
                 ["exploitability", "--agent", "random", "--approx", "--backend", "ray", "--br-steps", "100"]):
        assert cli(argv, run=False) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install 'truc-env[distributed]'" in err, err


@pytest.mark.parametrize("kw, message", [
    (dict(backend="spark"), "expected one of local, ray"),
    (dict(backend="ray", workers=0), "workers.*expected an integer in 1..4096"),
    (dict(rollout_shards=3), "rollout_shards 3 must divide num_envs 16"),
    (dict(rollout_shards=0), "rollout_shards.*1..1048576"),
    (dict(workers=2), "workers 2 counts Ray actors: set backend: ray"),
    (dict(backend="ray", workers=4, rollout_shards=2), "workers 4 is more than rollout_shards 2"),
])
def test_bad_rollout_settings_are_refused_naming_what_is_allowed(tmp_path, kw, message):
    with pytest.raises(TrucError, match=message) as e:
        tiny_config(tmp_path, **kw).validate()
    assert "\n" not in str(e.value)


def test_cli_ray_flags_are_checked_before_any_work(tmp_path, capsys):
    assert cli(["exploitability", "--agent", "random", "--workers", "2"], run=False) == 2
    assert "go with --approx" in capsys.readouterr().err
    assert cli(["exploitability", "--agent", "random", "--approx", "--rollout-shards", "3"], run=False) == 2
    assert "rollout_shards 3 must divide num_envs 64" in capsys.readouterr().err


def test_resume_with_another_shard_count_is_refused(tmp_path):
    ppo.train(tiny_config(tmp_path, rollout="engine", total_steps=256))
    with pytest.raises(TrucError, match="made with rollout_shards 1, the config asks for 2"):
        ppo.train(tiny_config(tmp_path, rollout="engine", total_steps=512, rollout_shards=2), resume=True)
