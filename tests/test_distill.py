"""Full-width MMD on the public tree, and a PPO network distilled from a public-tree strategy table.

A shrunk heads-up Le Truc with its redeal (4 ranks, 2-card hands, at most 2 raises): MMD's last iterate
gets close to equilibrium, a huge magnet keeps it at the uniform policy (the negative control), the
student's training rows are the rows the exploitability measurement asks the network about, a short
fit lowers the student's exact exploitability, resuming equals not stopping, and bad settings are
refused saying what is allowed.
"""

from __future__ import annotations

import numpy as np
import pytest

from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

torch = pytest.importorskip("torch")

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2}  # the redeal on


def solve(tmp_path, name, **settings):
    from train.algos.cfr import CFRConfig, run

    cfg = CFRConfig(**{**dict(variant="le_truc", options=SMALL, algorithm="dcfr", iterations=60, eval_every=60,
                              checkpoint_every=60, dtype="float64", out=str(tmp_path / name)), **settings})
    summary = run(cfg, log=lambda m: None)
    return summary, str(tmp_path / name / "strategy.npz")


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    """A DCFR strategy of the shrunk game (both parts)."""
    _, path = solve(tmp_path_factory.mktemp("teacher"), "cfr")
    return path


def distill_config(tmp_path, teacher, **settings):
    from train.algos.distill import DistillConfig

    return DistillConfig(**{**dict(options=SMALL, teacher=f"cfr:{teacher}", steps=400, batch=512, log_every=100,
                                   checkpoint_every=200, cache_dir=str(tmp_path / "cache"), out=str(tmp_path / "d")),
                            **settings})


def test_full_width_mmd_last_iterate_approaches_equilibrium(tmp_path):
    summary, _ = solve(tmp_path, "mmd", algorithm="mmd", iterations=400, eval_every=400, mmd_step=0.3,
                       mmd_magnet=0.3, mmd_magnet_end=0.01)
    assert summary["cont"]["exploitability"] < 0.01 and summary["main"]["exploitability"] < 0.01  # uniform: > 1


def test_full_width_mmd_with_a_huge_magnet_stays_uniform(tmp_path):
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    tree = build_tree(make_rules("le_truc", **{**SMALL, "redeal": False}))
    solver = PublicTreeSolver(tree, "mmd", mmd_step=0.3, mmd_magnet=1e6, mmd_magnet_end=1e6, mmd_iterations=20)
    solver.iterate(20)
    uniform = PublicTreeSolver(tree, "mmd").sigma  # the magnet: uniform over each set's actions
    assert np.abs(solver.average_strategy() - uniform).max() < 1e-4
    assert solver.exploitability() == pytest.approx(solver.exploitability(uniform), abs=1e-3)


def test_full_width_mmd_resumes_to_the_same_iterate():
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    tree = build_tree(make_rules("le_truc", **{**SMALL, "redeal": False}))
    settings = dict(mmd_step=0.3, mmd_magnet=0.3, mmd_magnet_end=0.01, mmd_iterations=30)
    whole = PublicTreeSolver(tree, "mmd", **settings)
    whole.iterate(30)
    cut = PublicTreeSolver(tree, "mmd", **settings)
    cut.iterate(10)
    again = PublicTreeSolver(tree, "mmd", **settings)
    again.load_state_dict(cut.state_dict())
    again.iterate(20)
    assert np.array_equal(whole.average_strategy(), again.average_strategy())


def test_distill_rows_are_the_exploitability_tables_rows(tmp_path, teacher):
    """What the student is trained on is what the measurement asks the network (both parts, a first hand)."""
    from agents.cfr.labels import PLAY, STUCK
    from agents.cfr.policy_tree import CardClasses
    from agents.network.network import PolicyNet, feature_size
    from train.algos.distill_parts import class_matrix, load_parts
    from train.eval.exploitability import tabulate_ppo
    from truc_env.game.actions import layout_of

    cfg = distill_config(tmp_path, teacher)
    rules = make_rules("le_truc", **SMALL)
    parts = load_parts(cfg, rules, log=lambda m: None)
    torch.manual_seed(3)
    L = layout_of(rules)
    net = PolicyNet(feature_size(rules, cfg.features), L.size, [32, 32])
    for layer in net.actor:  # large weights: distributions far from uniform
        if isinstance(layer, torch.nn.Linear):
            layer.weight.data *= 8
    for part in parts:
        M = class_matrix(rules, part.tree.abstraction)
        first = None
        if part.name == "cont":
            part.first_bits = part.first_bits[:1]
            cc = CardClasses.of(part.tree.abstraction, rules)
            bits = part.first_bits[0]
            first = [tuple(tuple(sorted(int(cc.card_class[d]) for d in np.flatnonzero(bits[q]))) for q in range(2))]
        X, legal, T = part.rows(np.arange(part.n_isets), np.random.default_rng(0), net.actor[0].in_features,
                                L.size, M.shape[1])
        assert np.allclose(T.sum(1), 1.0, atol=1e-5)
        with torch.no_grad():
            logp = torch.log_softmax(net.actor(torch.from_numpy(X)).masked_fill(~torch.from_numpy(legal),
                                                                                float("-inf")), -1)
        p = logp.exp().numpy()
        ext = np.concatenate([p, p[:, L.play:L.play + M.shape[0]] @ M.numpy()], 1)
        sigma = tabulate_ppo(part.tree, part.solver, net, cfg.features, rules, first, None, cache_dir=cfg.cache_dir)
        s, t = part.solver, part.tree
        slot_iset = np.repeat(np.arange(part.n_isets), np.diff(s.iset_start))
        lab = t.label[t.act_start[part.node_of[slot_iset]] + s.slot_k]
        col = np.where(lab >= PLAY, L.size + lab - PLAY, lab)
        keep = lab != STUCK
        assert np.abs(ext[slot_iset[keep], col[keep]] - sigma[keep]).max() < 1e-5


def test_distill_lowers_exploitability_and_plays_as_a_ppo_agent(tmp_path, teacher):
    from agents import make_agent
    from train.algos.distill import run
    from train.eval.exploitability import policy_exploitability

    rules = make_rules("le_truc", **SMALL)
    summary = run(distill_config(tmp_path, teacher), log=lambda m: None)
    agent = make_agent(f"ppo:{summary['policy']}", rules)
    got = policy_exploitability(agent, rules, cache_dir=str(tmp_path / "cache"), log=lambda m: None)
    assert got["exploitability"] == pytest.approx(summary["exploitability"], abs=1e-9)
    untrained = summary["untrained_exploitability"]
    assert untrained > 1.0 and summary["exploitability"] < 0.5 * untrained


def test_distill_resumes_to_the_uninterrupted_fit(tmp_path, teacher, monkeypatch):
    import agents.network.checkpoint as checkpoint
    from train.algos.distill import run

    settings = dict(steps=300, checkpoint_every=100, measure_start=False)
    whole = run(distill_config(tmp_path, teacher, out=str(tmp_path / "whole"), **settings), log=lambda m: None)
    real = checkpoint.save_atomic

    def dies_after_two(obj, path):  # killed after the checkpoint of step 200
        real(obj, path)
        if obj.get("step") == 200:
            raise RuntimeError("killed")

    monkeypatch.setattr(checkpoint, "save_atomic", dies_after_two)
    with pytest.raises(RuntimeError, match="killed"):
        run(distill_config(tmp_path, teacher, out=str(tmp_path / "cut"), **settings), log=lambda m: None)
    monkeypatch.setattr(checkpoint, "save_atomic", real)
    again = run(distill_config(tmp_path, teacher, out=str(tmp_path / "cut"), **settings), resume=True,
                log=lambda m: None)
    assert again["exploitability"] == whole["exploitability"]
    a = torch.load(whole["policy"], weights_only=True)["model"]
    b = torch.load(again["policy"], weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # bit for bit: every output but the CPU seconds (the out folder aside), and the last checkpoint's state
    assert_same_outputs(tmp_path / "whole", tmp_path / "cut")
    b["actor.0.bias"][0] += 1e-7  # (the comparison sees one parameter moved by a float's last bits)
    assert not same(a, b)


def same(a, b) -> bool:
    """Equal bit for bit: nested dicts, lists and tensors (the same dtype and values)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def assert_same_outputs(whole, again, columns=None, skip=()) -> None:
    """Two distill out folders hold the same run: policy.pt, the last checkpoint and summary.json (but their
    keys ``skip``) and the curve (its ``columns``, all by default) equal bit for bit, the CPU seconds and the
    folder's name aside."""
    import csv
    import json

    def curve(folder):
        with open(folder / "curve.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        return [{k: v for k, v in r.items() if k != "cpu_seconds" and (columns is None or k in columns)} for r in rows]

    def summary(folder):
        d = json.loads((folder / "summary.json").read_text())
        d["config"].pop("out")
        return {k: v for k, v in d.items() if k not in ("cpu_seconds", "policy", *skip)}

    def checkpoint(folder):
        ck = torch.load(folder / "checkpoint.pt", weights_only=True)
        return {k: v for k, v in ck.items() if k not in ("cpu_seconds", "curve", *skip)}

    assert same(torch.load(whole / "policy.pt", weights_only=True), torch.load(again / "policy.pt", weights_only=True))
    assert same(checkpoint(whole), checkpoint(again))
    assert summary(whole) == summary(again)
    assert curve(whole) == curve(again) and len(curve(whole)) > 1


def test_distill_refuses_bad_settings(tmp_path, teacher):
    from train.algos.distill import DistillConfig, run

    with pytest.raises(TrucError, match="features 'cards'"):
        DistillConfig(features="cards", teacher=f"cfr:{teacher}").validate()
    with pytest.raises(TrucError, match="no such file"):
        run(distill_config(tmp_path, "/nowhere/strategy.npz"), log=lambda m: None)
    with pytest.raises(TrucError, match="init 'ppo:/nowhere/policy.pt': no such file"):
        run(distill_config(tmp_path, teacher, init="ppo:/nowhere/policy.pt"), log=lambda m: None)
    assert not (tmp_path / "d").exists()  # a refused run leaves no empty out folder behind
    with pytest.raises(TrucError, match="table:PATH"):
        DistillConfig(teacher="ppo:models/ppo_le_truc.pt").validate()
    with pytest.raises(TrucError, match="exploitability on the public tree does not apply"):
        DistillConfig(variant="le_truc_4p", teacher=f"cfr:{teacher}").validate()
    # a strategy of other Rules (the full game's trees differ)
    with pytest.raises(TrucError, match="cannot play"):
        run(distill_config(tmp_path, teacher, options={**SMALL, "max_raises": 1}), log=lambda m: None)


class _Asked:
    """A network's agent without its network in sight: the exploitability code asks it state by state."""

    def __init__(self, agent):
        self.inner = agent

    def probabilities(self, observation, mask):
        return self.inner.probabilities(observation, mask)


def test_distill_forget_first_hand_gives_the_real_games_exact_figure(tmp_path, teacher, capsys):
    """``forget_first_hand`` keeps the first-hand weights at zero through the fit, so the network plays the
    hand after a redeal whatever its first hand: the real game's figure is computed for it, in batches, and
    equals the one asked state by state; the same fit without it reads its first hand and is refused."""
    from agents import make_agent
    from train.algos.distill import run
    from train.eval.exploitability import first_hand_columns, policy_exploitability, real_redeal_exploitability

    rules = make_rules("le_truc", **SMALL)
    summary = run(distill_config(tmp_path, teacher, forget_first_hand=True),
                  log=lambda m: None)
    model = torch.load(summary["policy"], weights_only=True)["model"]
    cols = first_hand_columns(rules)
    assert not model["actor.0.weight"][:, cols].any() and not model["critic.0.weight"][:, cols].any()
    assert model["actor.0.weight"][:, :cols.start].abs().sum() > 0
    agent = make_agent(f"ppo:{summary['policy']}", rules)
    # its first hands after a redeal make one pass, not one each: the same figure as any one of them alone
    one, four = (policy_exploitability(agent, rules, first_hands=k, cache_dir=str(tmp_path / "cache"),
                                       log=lambda m: None) for k in (1, 4))
    assert one["exploitability"] == four["exploitability"] == pytest.approx(summary["exploitability"], abs=1e-12)
    batched = real_redeal_exploitability(agent, rules, cache_dir=str(tmp_path / "cache"))
    asked = real_redeal_exploitability(_Asked(agent), rules, cache_dir=str(tmp_path / "cache"))
    assert batched["exploitability"] == pytest.approx(asked["exploitability"], abs=1e-5)
    # the fit lowered it from the untrained network's, and the card removal between the deals that the
    # abstracted figure leaves out moves it little (measured: 0.573 against 0.565, untrained 4.32)
    assert batched["exploitability"] < 0.5 * summary["untrained_exploitability"]
    assert batched["exploitability"] == pytest.approx(summary["exploitability"], abs=0.05)
    reads = run(distill_config(tmp_path, teacher, steps=200, measure_start=False, out=str(tmp_path / "reads")),
                log=lambda m: None)
    with pytest.raises(TrucError, match="according to its first hand.*forget_first_hand"):
        real_redeal_exploitability(make_agent(f"ppo:{reads['policy']}", rules), rules,
                                   cache_dir=str(tmp_path / "cache"))
    # the command line refuses it before measuring anything
    import json

    from train.commands.cli import main

    assert main(["exploitability", "--agent", f"ppo:{reads['policy']}", "--options", json.dumps(SMALL), "--quiet",
                 "--real-redeal", "--cache-dir", str(tmp_path / "cache")]) == 2
    out, err = capsys.readouterr()
    assert "according to its first hand" in err and "exploitability" not in out


def test_forget_first_hand_needs_a_redeal_and_is_part_of_the_identity(tmp_path, teacher):
    from train.algos.distill import DistillConfig, _identity

    with pytest.raises(TrucError, match="forget_first_hand: le_truc with these options has no redeal"):
        distill_config(tmp_path, teacher, options={**SMALL, "redeal": False}, forget_first_hand=True).validate()
    plain, forget = _identity(DistillConfig()), _identity(DistillConfig(forget_first_hand=True))
    assert plain != forget and "forget_first_hand" in forget and "forget_first_hand" not in plain
