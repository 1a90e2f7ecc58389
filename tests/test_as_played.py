"""The figure of a policy as it plays (train/eval/as_played.py): every suit relabelling and the projection error.

Controls: a policy that sees only ranks has every relabelling's figure equal and every projection error 0;
a policy that reads suits (a hand-written one, and an untrained network on the batched table) has neither.
"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.cfr.abstraction import make_abstraction  # noqa: E402
from agents.network import PolicyNet, PPOAgent, feature_size  # noqa: E402
from train.eval import as_played as ap  # noqa: E402
from train.eval import exploitability as ex  # noqa: E402
from truc_env import TrucError, make_rules  # noqa: E402
from truc_env.game.actions import layout_of  # noqa: E402

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}


class _CardPicker:
    """Half its mass on card plays, half on the other legal actions; among cards, ``by`` ranks them."""

    def __init__(self, rules, by):
        L = layout_of(rules)
        # each action's card key, worked out once (the measurements ask the policy at every information set)
        self.key = {L.play + i: by(card) for i, card in enumerate(L.deck)}

    def policy(self, observation, mask):
        legal = np.flatnonzero(mask).tolist()
        plays = [a for a in legal if a in self.key]
        other = [a for a in legal if a not in self.key]
        out = {}
        if plays:
            top = max(self.key[a] for a in plays)
            best = [a for a in plays if self.key[a] == top]
            for a in best:
                out[a] = (0.5 if other else 1.0) / len(best)
        for a in other:
            out[a] = (0.5 if plays else 1.0) / len(other)
        return out


def rank_reader(rules):
    return _CardPicker(rules, lambda card: card // 4)  # the highest rank, its cards in equal parts


def suit_reader(rules):
    return _CardPicker(rules, lambda card: -(card % 4))  # clubs first, whatever the rank


def _run(agent, rules, **kw):
    return ap.as_played_exploitability(agent, rules, hands=200, seed=1, log=lambda m: None, **kw)


def test_le_truc_has_24_suit_relabellings_and_the_identity_first():
    rules = make_rules("le_truc")
    perms = ap.suit_relabellings(make_abstraction(rules), rules)
    assert len(perms) == 24
    assert np.array_equal(perms[0], np.arange(len(perms[0])))
    assert len({p.tobytes() for p in perms}) == 24
    assert ap.describe(perms[0], rules) == "c>c d>d h>h s>s"


def test_a_rank_reading_policy_has_no_projection_error():
    rules = make_rules("le_truc", **SMALL)
    out = _run(rank_reader(rules), rules)
    figures = [r["exploitability"] for r in out["relabellings"]]
    assert len(figures) == 24
    assert max(figures) - min(figures) < 1e-9
    assert abs(out["exploitability"] - out["canonical"]) < 1e-9
    for kind in ("raw_vs_canonical", "raw_vs_averaged", "relabellings_vs_averaged"):
        s = out["projection"]["main"][kind]
        assert s["decisions"] > 200 and s["max"] < 1e-12, (kind, s)
    # and the plain measurement agrees with the canonical assignment
    plain = ex.policy_exploitability(rank_reader(rules), rules, log=lambda m: None)
    assert abs(plain["exploitability"] - out["canonical"]) < 1e-9


@pytest.mark.parametrize("group", ["suits", pytest.param(24, marks=pytest.mark.slow)])
def test_a_suit_reading_policy_has_a_projection_error(group):
    rules = make_rules("le_truc", **SMALL)
    out = _run(suit_reader(rules), rules, group=group)
    figures = np.array([r["exploitability"] for r in out["relabellings"]])
    proj = out["projection"]["main"]
    assert len(figures) == 24 and out["canonical"] == pytest.approx(PINNED["suit_reader_canonical"], abs=1e-9)
    # clubs first: the raw agent plays the clubs of the real deal, the canonical table the first card dealt
    # of each rank, where the unplayed cards of distinct ranks are all clubs (a tie, split)
    assert proj["raw_vs_canonical"]["mean"] == pytest.approx(0.108367, abs=1e-5)
    # every relabelling and their mean, pinned; the global relabellings keep that one-suit hand (a spread of 0.02),
    # the relabellings within every rank give real deals' suits (a spread of 1.3)
    pins = PINNED["suit_reader"][group]
    assert (out["exploitability"], figures.min(), figures.max(),
            proj["relabellings_vs_averaged"]["mean"]) == pytest.approx(pins, abs=1e-6)
    assert figures.max() - figures.min() > (0.01 if group == "suits" else 1.0)


def test_an_untrained_network_on_the_batched_table_reads_suits():
    rules = make_rules("le_truc", **SMALL)
    torch.manual_seed(0)
    net = PolicyNet(feature_size(rules, "observation+strength"), layout_of(rules).size, hidden=(32,), init=False)
    net.eval()
    agent = PPOAgent(net, rules, "observation+strength")
    out = _run(agent, rules)
    figures = np.array([r["exploitability"] for r in out["relabellings"]])
    # the identity's figure is the plain measurement's
    plain = ex.policy_exploitability(agent, rules, log=lambda m: None)
    assert out["canonical"] == pytest.approx(plain["exploitability"], abs=1e-9)
    # the mean of the 24 tables is what --suits averages: the same passes, enumerated
    assert figures.max() - figures.min() > 0.01
    assert out["projection"]["main"]["relabellings_vs_averaged"]["mean"] > 0.005
    assert out["exploitability"] == pytest.approx(PINNED["network"], abs=1e-6)


def test_the_same_seed_gives_the_same_figures_and_another_seed_other_held_out_hands():
    rules = make_rules("le_truc", **SMALL)
    two = ap.suit_relabellings(make_abstraction(rules), rules)[:2]
    a, b = (_run(suit_reader(rules), rules, relabellings=two) for _ in range(2))
    c = ap.as_played_exploitability(suit_reader(rules), rules, hands=200, seed=2, log=lambda m: None, relabellings=two)
    assert a["relabellings"] == b["relabellings"] and a["projection"] == b["projection"]
    assert a["relabellings"] == c["relabellings"]  # no redeal: the seed draws only the held-out hands
    assert a["projection"] != c["projection"]


def test_vira_rules_are_refused():
    from agents.players.random import RandomAgent

    with pytest.raises(TrucError, match="without a vira"):
        ap.as_played_exploitability(RandomAgent(), make_rules("truco_paulista", players=2, deck="clean", ranks=4,
                                                               hand_size=2), hands=1)


def test_cli_as_played_prints_and_writes(tmp_path, capsys):
    from train.commands.cli import main

    out = tmp_path / "a.json"
    assert main(["exploitability", "--agent", "random", "--options", json.dumps(SMALL), "--quiet", "--no-cache",
                 "--as-played", "--check-hands", "50", "--out", str(out)]) in (0, None)
    text = capsys.readouterr().out
    assert "24 suit relabellings" in text
    res = json.loads(out.read_text())
    assert res["per_relabelling"]["max"] == pytest.approx(res["per_relabelling"]["min"])


# measured once (seed 1, 200 held-out hands); the controls' meaning is in the bounds asserted beside them
PINNED = {"suit_reader_canonical": 4.404426129426129,
          "suit_reader": {"suits": (4.394536019536016, 4.38464590964591, 4.404426129426129, 0.022177419),
                          24: (4.43086589336589, 3.740934065934066, 5.020757020757021, 0.103942652)},
          "network": 4.1197585917978845}


def test_an_exact_measurement_that_does_not_fit_is_refused_naming_the_memory_and_approx(monkeypatch, capsys, tmp_path):
    import truc_env.batch.vector
    from agents.players.random import RandomAgent
    from train.commands.cli import main

    rules = make_rules("le_truc", **SMALL)
    tree = ex.cached_tree(rules, cache_dir=str(tmp_path))
    ex.cached_tree(make_rules("le_truc", **{**SMALL, "redeal": False}), cache_dir=str(tmp_path))  # the redeal's hand
    need = ex.table_bytes(tree, 1, measure_only=True)["bytes"]  # a measuring solver: no regrets, sums, strategy
    slots = ex.table_bytes(tree, 1)["slots"]
    assert ex.table_bytes(tree, 1)["bytes"] - need == 3 * 4 * slots
    assert 2**16 < need < 2**20  # the shrunk game's measuring solver and table: about 110 KiB
    monkeypatch.setattr(truc_env.batch.vector, "available_memory", lambda: 2**16)
    # the trees kept: the measurement itself is refused; a tree to build is refused before it is built
    with pytest.raises(TrucError, match=r"needs about [\d,]+ bytes .* and 65,536 bytes of memory is available.*--approx"):
        ex.policy_exploitability(RandomAgent(), rules, log=lambda m: None, cache_dir=str(tmp_path))
    with pytest.raises(TrucError, match=r"public tree of this hand .* needs about [\d,]+ bytes to build, and 65,536 bytes"):
        ex.policy_exploitability(RandomAgent(), rules, log=lambda m: None)
    with pytest.raises(TrucError, match="--approx"):
        ap.as_played_exploitability(RandomAgent(), rules, hands=1, log=lambda m: None)
    assert main(["exploitability", "--agent", "random", "--options", json.dumps(SMALL), "--quiet",
                 "--no-cache"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("truc: error")]
    assert len(err) == 1 and "does not fit" in err[0] and "--approx" in err[0]


@pytest.mark.parametrize("argv, match", [
    (["--as-played", "--suits", "4"], "drop --suits"),
    (["--relabellings", "4"], "goes with --as-played"),
    (["--as-played", "--relabellings", "0"], "--relabellings"),
    (["--as-played", "--approx"], "one or the other"),
    (["--approx", "--suits", "4", "--check-hands", "10"], "--suits, --check-hands: settings of the exact"),
    (["--approx", "--br-steps", str(10**9 + 1)], "--br-steps"),
    (["--approx", "--variant", "put"], "trained for le_truc"),
    (["--as-played", "--variant", "truco_paulista", "--options", '{"players": 2}'], "without a vira"),
])
def test_bad_requests_are_refused_before_any_work_in_one_line(argv, match, capsys):
    from train.commands.cli import main

    agent = "net:le_truc" if "put" in argv else "random"
    assert main(["exploitability", "--agent", agent, *argv], run=False) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err
