"""Learning algorithms side by side on a tiny heads-up Le Truc: each lowers the exact exploitability
from the uniform policy's within a budget of learner steps (PPO, MMD) or oracle calls (PSRO)."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest
from cfr_helpers import openspiel_policy

from agents.players.random import RandomAgent
from train.eval.exploitability import policy_exploitability
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

torch = pytest.importorskip("torch")

TINY = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}
UNIFORM = 3.0398  # exploitability of the uniform policy on TINY (points per hand, seat 0 deals)


def ppo_run(tmp_path, algorithm: str, steps: int = 3072, resume: bool = False, **extra) -> tuple[list[dict], list[dict]]:
    """(exploitability rows, history) of a tiny pure self-play run (``resume``: continue the one there)."""
    from train.algos.ppo import PPOConfig, train

    cfg = PPOConfig.from_dict({**dict(
        name=algorithm, out_dir=str(tmp_path), seed=0, device="cpu", variant="le_truc", options=TINY,
        total_steps=steps, num_envs=32, steps_per_update=512, hidden=[32, 32], learning_rate=3e-3,
        self_play_prob=1.0, eval_opponent="random", eval_every=10**6, eval_episodes=20,
        exploitability_every=steps // 512, checkpoint_every=10**6, plot=False, progress=False, tensorboard=False,
        algorithm=algorithm), **extra})
    train(cfg, resume=resume)
    with open(os.path.join(str(tmp_path), algorithm, "exploitability.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    ck = torch.load(os.path.join(str(tmp_path), algorithm, "checkpoint.pt"), weights_only=False)
    return rows, ck["history"]


def test_uniform_reference():
    got = policy_exploitability(RandomAgent(), make_rules("le_truc", **TINY), log=lambda m: None)
    assert got["exploitability"] == pytest.approx(UNIFORM, abs=1e-3)


def test_unknown_algorithm_refused():
    from train.algos.ppo import PPOConfig

    with pytest.raises(TrucError, match=r"algorithm.*one of ppo, mmd"):
        PPOConfig.from_dict({"algorithm": "nfsp"})
    with pytest.raises(TrucError, match=r"magnet.*one of uniform, moving"):
        PPOConfig.from_dict({"algorithm": "mmd", "magnet": "past"})
    with pytest.raises(TrucError, match="magnet_coef"):
        PPOConfig.from_dict({"algorithm": "mmd", "magnet_coef": -1.0})


def test_unknown_algorithm_refused_by_the_cli(tmp_path, capsys):
    from train.commands.cli import main

    path = tmp_path / "c.yaml"
    path.write_text("algorithm: a2c\n")
    assert main(["train", "ppo", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "algorithm" in err and "ppo, mmd" in err
    assert main(["train", "psro", "--config", str(path)]) == 2  # PSRO has no such setting
    assert "unknown setting" in capsys.readouterr().err


def test_ppo_lowers_exploitability(tmp_path):
    rows, history = ppo_run(tmp_path, "ppo")
    assert rows[-1]["global_step"] >= 3072
    assert rows[-1]["exploitability"] < 2.6 < UNIFORM  # measured 2.33 at 3.3k steps
    assert "magnet_kl" not in history[-1]


def test_mmd_uniform_magnet_lowers_exploitability(tmp_path):
    rows, history = ppo_run(tmp_path, "mmd", magnet="uniform", magnet_coef=0.5, magnet_coef_end=0.1)
    assert rows[-1]["exploitability"] < 2.1 < UNIFORM  # measured 1.78 at 3.3k steps
    kl = [h["magnet_kl"] for h in history]
    assert all(k >= 0.0 for k in kl) and max(kl) > 0.0
    coefs = [h["magnet_coef"] for h in history]
    assert coefs[0] == pytest.approx(0.5) and coefs[-1] == pytest.approx(0.1)  # annealed linearly


def test_mmd_moving_magnet_lowers_exploitability(tmp_path):
    rows, history = ppo_run(tmp_path, "mmd", magnet="moving", magnet_coef=0.5, magnet_coef_end=0.1,
                            magnet_update_every=2)
    assert rows[-1]["exploitability"] < 2.6 < UNIFORM
    # the magnet is a copy of the policy when it is refreshed: the KL is 0 in the first minibatch only
    assert max(h["magnet_kl"] for h in history) > 0.0


def test_mmd_moving_magnet_resumes(tmp_path, monkeypatch):
    """A run killed before its third checkpoint (after the magnet moved at update 2) resumes to the very
    network, magnet and history of the run that was never stopped."""
    from test_ppo import die_at_third_checkpoint

    from train.algos.ppo import PPOConfig, train

    def run(out, resume=False):
        return train(PPOConfig.from_dict(dict(
            name="m", out_dir=str(out), device="cpu", options=TINY, total_steps=2048, num_envs=16,
            steps_per_update=512, hidden=[16], self_play_prob=1.0, eval_opponent="random", eval_every=10**6,
            eval_episodes=10, plot=False, progress=False, tensorboard=False, algorithm="mmd", magnet="moving",
            magnet_update_every=2, checkpoint_every=1, deterministic=True)), resume=resume)

    full = run(tmp_path / "a")
    revive = die_at_third_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "b")
    revive()
    assert torch.load(tmp_path / "b" / "m" / "checkpoint.pt", weights_only=False)["update"] == 2
    resumed = run(tmp_path / "b", resume=True)
    a, b = full["net"].state_dict(), resumed["net"].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    cka, ckb = (torch.load(tmp_path / d / "m" / "checkpoint.pt", weights_only=False) for d in ("a", "b"))
    assert all(torch.equal(cka["magnet"][k], ckb["magnet"][k]) for k in cka["magnet"])
    # the same history but for the clock readings (steps/s, elapsed); NaN returns compare equal as text
    clock = ("sps", "rollout_sps", "elapsed_s")
    history = [[json.dumps({k: v for k, v in h.items() if k not in clock}, sort_keys=True) for h in ck["history"]]
               for ck in (cka, ckb)]
    assert len(history[0]) == 4 and history[0] == history[1]


# ---------------------------------------------------------------------------------- PSRO
def test_meta_solver_finds_rock_paper_scissors():
    from train.algos.psro import solve_matrix_game

    M = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    p, q, v = solve_matrix_game(M, 5000)
    assert np.allclose(p, 1 / 3, atol=0.01) and np.allclose(q, 1 / 3, atol=0.01) and abs(v) < 0.01


def test_best_response_table_is_exact():
    from train.algos.psro import TableGame
    from train.eval.exploitability import cached_tree

    game = TableGame(cached_tree(make_rules("le_truc", **TINY)))
    sigma = game.uniform()
    br, (v0, v1) = game.best_response(sigma)
    ev = game.exploitability(sigma)
    assert (v0, v1) == pytest.approx((ev["br0"], ev["br1"]))
    assert set(np.unique(br)) <= {0.0, 1.0}  # pure
    # the table reaches the best-response values it claims
    assert game.value(game.combine(br, sigma)) == pytest.approx(ev["br0"], abs=1e-9)
    assert -game.value(game.combine(sigma, br)) == pytest.approx(ev["br1"], abs=1e-9)


def test_psro_lowers_exploitability(tmp_path):
    from agents import make_agent
    from train import config
    from train.algos.psro import PSROConfig, run

    cfg = config.build(PSROConfig, {"options": TINY, "iterations": 5, "meta_iterations": 2000, "out": str(tmp_path)})
    summary = run(cfg, log=lambda m: None)
    assert summary["uniform_exploitability"] == pytest.approx(UNIFORM, abs=1e-3)
    assert summary["exploitability"] < 0.5  # measured 0.385 after 5 oracle calls
    assert summary["policies"] == 6
    # the strategy file plays the meta-Nash mixture: measured again through the cfr: agent
    rules = make_rules("le_truc", **TINY)
    agent = make_agent(f"cfr:{tmp_path / 'strategy.npz'}", rules)
    again = policy_exploitability(agent, rules, log=lambda m: None)
    assert again["exploitability"] == pytest.approx(summary["exploitability"], abs=1e-6)
    assert (tmp_path / "curve.csv").exists() and (tmp_path / "curve.png").exists()


def test_truc_train_psro_command(tmp_path, capsys):
    import json

    from train.commands.cli import main

    path = tmp_path / "psro.yaml"
    path.write_text(f"options: {json.dumps(TINY)}\niterations: 2\nmeta_iterations: 500\nout: {tmp_path / 'run'}\n")
    assert main(["train", "psro", "--config", str(path), "--set", "iterations=1"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["iterations"] == 1 and summary["policies"] == 2
    assert summary["exploitability"] < summary["uniform_exploitability"]
    assert "exploitability" in capsys.readouterr().out


def test_psro_refuses_a_redeal_and_bad_settings(tmp_path):
    from train import config
    from train.algos.psro import PSROConfig

    with pytest.raises(TrucError, match="redeal: false"):
        config.build(PSROConfig, {"options": {**TINY, "redeal": True}})
    with pytest.raises(TrucError, match="iterations"):
        config.build(PSROConfig, {"options": TINY, "iterations": 0})
    with pytest.raises(TrucError, match="public tree"):
        config.build(PSROConfig, {"variant": "le_truc_4p"})


# ---------------------------------------------------------------------------------- OpenSpiel's NFSP
@pytest.mark.slow
def test_openspiel_nfsp_measured_as_openspiel_measures_it(tmp_path):
    """Our exact figure for NFSP's average policy equals OpenSpiel's own ``exploitability`` of it."""
    pyspiel = pytest.importorskip("pyspiel")
    pytest.importorskip("tree")  # dm-tree, which open_spiel.python.pytorch.nfsp imports
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401
    from train.algos import openspiel_nfsp

    def keep(msg):
        pass

    out = openspiel_nfsp.run(TINY, steps=3000, seed=0, eval_every=3000, out=str(tmp_path), min_buffer=64, log=keep)
    avg = out["policy"]
    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0, **TINY})

    def probs_of(state, p):
        x = np.asarray(state.information_state_tensor(p), dtype=np.float32)
        mask = np.zeros(game.num_distinct_actions(), dtype=bool)
        mask[state.legal_actions()] = True
        with torch.no_grad():
            logits = avg.agents[p]._avg_network(torch.from_numpy(x)[None])[0].double().numpy()
        logits[~mask] = -np.inf
        probs = np.exp(logits - logits[mask].max())
        return probs / probs.sum()

    pol = openspiel_policy(game, probs_of)
    theirs = exploitability.exploitability(game, pol)
    ours = policy_exploitability(avg, make_rules("le_truc", **TINY), abstraction="none", log=keep)["exploitability"]
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert theirs > 0.5  # far from an equilibrium: a real comparison


# ---------------------------------------------------------------------------------- the average policy
def test_reach_average_is_the_mixture_of_its_tables():
    """Averaging a uniform table and a pure best response with weights 1 and 3 gives, per information set,
    sum_t w_t reach_t pi_t / sum_t w_t reach_t: it plays like drawing one table once per hand (Kuhn)."""
    from train.algos.psro import ReachAverage, TableGame
    from train.eval.exploitability import cached_tree

    game = TableGame(cached_tree(make_rules("le_truc", **TINY)))
    s = game.solver
    uniform = game.uniform()
    br, _ = game.best_response(uniform)
    avg = ReachAverage(game)
    avg.add(uniform, 1.0)
    avg.add(br, 3.0)
    table = avg.table()
    # by hand: each slot's own reach under each table, from the solver's forward pass
    expect = np.zeros(s.n_slots)
    for seat in (0, 1):
        s.forward(seat, uniform)
        r_u = s.reach[game.reach_index].copy()
        s.forward(seat, br)
        r_b = s.reach[game.reach_index].copy()
        mine = game.seat_of_slot == seat
        den = 1.0 * r_u + 3.0 * r_b
        mixed = np.where(den > 0, (1.0 * r_u * uniform + 3.0 * r_b * br) / np.where(den > 0, den, 1.0),
                         (uniform + 3.0 * br) / 4.0)
        expect[mine] = mixed[mine]
        assert (r_b[mine] == 0).any() and ((r_b[mine] > 0) & (r_b[mine] < 1)).sum() == 0  # pure: reach 0 or 1
    assert np.allclose(table, expect, atol=1e-12)
    plain = (uniform + 3.0 * br) / 4.0
    assert np.abs(table - plain).max() > 0.1  # reach weighting changes the table: a real check
    # Kuhn: against any fixed opponent the average is worth the weighted mean of its members' values
    opp = game.uniform()
    for seat, sign in ((0, 1.0), (1, -1.0)):
        def v(t, seat=seat, sign=sign):
            return sign * game.value(game.combine(t, opp) if seat == 0 else game.combine(opp, t))
        assert v(table) == pytest.approx((v(uniform) + 3.0 * v(br)) / 4.0, abs=1e-9)
        assert abs(v(plain) - (v(uniform) + 3.0 * v(br)) / 4.0) > 1e-3  # the plain mean is not the mixture
    ev = game.exploitability(table)
    assert 0.0 < ev["exploitability"] < game.exploitability(uniform)["exploitability"]


def test_reach_average_refuses_a_table_of_another_tree():
    from train.algos.psro import ReachAverage, TableGame
    from train.eval.exploitability import cached_tree

    avg = ReachAverage(TableGame(cached_tree(make_rules("le_truc", **TINY))))
    with pytest.raises(TrucError, match="slots"):
        avg.add(np.ones(3))


def test_mmd_average_policy_is_logged_and_saved(tmp_path):
    from agents import make_agent

    rows, history = ppo_run(tmp_path, "mmd", steps=2048, magnet="uniform", magnet_coef=0.5, magnet_coef_end=0.1,
                            average="uniform", exploitability_every=1)
    assert len(rows) == 4
    # one iterate averaged is itself; later the average differs from the last iterate
    assert rows[0]["avg_exploitability"] == pytest.approx(rows[0]["exploitability"], abs=1e-5)
    assert any(abs(r["avg_exploitability"] - r["exploitability"]) > 1e-4 for r in rows[1:])
    # the saved average is what cfr:PATH plays, at the exploitability logged last
    rules = make_rules("le_truc", **TINY)
    agent = make_agent(f"cfr:{tmp_path / 'mmd' / 'average.npz'}", rules)
    again = policy_exploitability(agent, rules, log=lambda m: None)["exploitability"]
    assert again == pytest.approx(rows[-1]["avg_exploitability"], abs=1e-5)


def test_mmd_average_policy_with_a_redeal_keeps_the_hand_after_it(tmp_path, monkeypatch):
    """With the redeal on, the average has a second part (the hand after an accepted redeal): one iterate
    averaged is that iterate, the saved file carries both parts and replays at the figure logged last."""
    from agents import make_agent
    from agents.cfr.strategy import load_strategy

    redeal = {**TINY, "redeal": True}
    rows, _ = ppo_run(tmp_path, "mmd", steps=2048, options=redeal, magnet="uniform", magnet_coef=0.5,
                      magnet_coef_end=0.1, average="linear", exploitability_every=1)
    assert len(rows) == 4
    assert rows[0]["avg_exploitability"] == pytest.approx(rows[0]["exploitability"], abs=1e-5)
    assert any(abs(r["avg_exploitability"] - r["exploitability"]) > 1e-4 for r in rows[1:])
    rules = make_rules("le_truc", **redeal)
    path = tmp_path / "mmd" / "average.npz"
    strategy = load_strategy(str(path), rules)
    assert set(strategy.parts) == {"main", "cont"} and strategy.header["redeal_value"] is not None
    again = policy_exploitability(make_agent(f"cfr:{path}", rules), rules, log=lambda m: None)["exploitability"]
    assert again == pytest.approx(rows[-1]["avg_exploitability"], abs=1e-5)
    # the real game's figure reads the file's two tables directly, and equals asking it state by state
    import train.eval.exploitability as ex

    def refuse(*a, **k):
        raise AssertionError("asked at engine states although the file has the tables")

    monkeypatch.setattr(ex, "tabulate_agent", refuse)
    real = ex.real_redeal_exploitability(make_agent(f"cfr:{path}", rules), rules)["exploitability"]
    monkeypatch.undo()
    monkeypatch.setattr(ex, "stored_table", lambda *a, **k: None)
    asked = ex.real_redeal_exploitability(make_agent(f"cfr:{path}", rules), rules)["exploitability"]
    assert real == pytest.approx(asked, abs=1e-6) and real > 0.0  # (the file keeps float32 probabilities)
    assert abs(real - again) > 1e-6  # the real game differs from the abstraction's figure: a real check


def test_average_refused_without_measurements():
    from train.algos.ppo import PPOConfig

    with pytest.raises(TrucError, match="average needs exploitability_every"):
        PPOConfig.from_dict({"options": TINY, "average": "uniform"})
    with pytest.raises(TrucError, match="average.*one of none, uniform, linear"):
        PPOConfig.from_dict({"average": "ema"})


def test_average_policy_with_a_redeal_resumes_to_the_uninterrupted_run(tmp_path, monkeypatch):
    """A run killed before its third checkpoint resumes with its average's sums (both parts) intact."""
    from test_ppo import die_at_third_checkpoint

    extra = dict(options={**TINY, "redeal": True}, magnet="uniform", magnet_coef=0.5, magnet_coef_end=0.1,
                 average="linear", exploitability_every=1, checkpoint_every=1)
    full, _ = ppo_run(tmp_path / "a", "mmd", steps=2048, **extra)
    revive = die_at_third_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        ppo_run(tmp_path / "b", "mmd", steps=2048, **extra)
    revive()
    resumed, _ = ppo_run(tmp_path / "b", "mmd", steps=2048, resume=True, **extra)
    assert [r["avg_exploitability"] for r in resumed] == pytest.approx([r["avg_exploitability"] for r in full],
                                                                       abs=1e-9)
    # an average restored from the checkpoint writes the same strategy file as the run did
    from agents.cfr.strategy import load_strategy
    from train.algos.ppo import IterateAverage, PPOConfig

    ck = torch.load(tmp_path / "b" / "mmd" / "checkpoint.pt", weights_only=True)
    cfg = PPOConfig.from_dict({"options": extra["options"], "algorithm": "mmd", "average": "linear",
                               "exploitability_every": 1})
    avg = IterateAverage(cfg, make_rules("le_truc", **extra["options"]))
    avg.load_state_dict(ck["average"])
    avg.save(str(tmp_path / "again.npz"))
    rules = make_rules("le_truc", **extra["options"])
    a, b = load_strategy(str(tmp_path / "again.npz"), rules), load_strategy(str(tmp_path / "b" / "mmd" / "average.npz"), rules)
    assert all(np.array_equal(a.parts[p].policy, b.parts[p].policy) for p in ("main", "cont"))
