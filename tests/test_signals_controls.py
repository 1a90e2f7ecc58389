"""The controls of the signal analysis (issue 33): shuffled (the partner misreads the team's own tokens),
the no-channel twin, pooling over runs, and their bad input. docs/signals.md "Controls"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import make_agent
from train.algos.signals_runs import find_twins, load_experiment, pair_with_twin, results_file
from train.analysis.signals import analyze_team, play_hands, signal_agent, summary_text
from train.analysis.signals_checks import controls
from train.analysis.signals_controls import check_twin, over_runs, silent_rules
from train.commands.cli import main
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import make_rules

LE_TRUC = make_rules("le_truc_4p")
TEAM = "net:models/signals_conv_le_truc_4p_s3.pt"
TWIN = "net:models/signals_conv_le_truc_4p_none_s3.pt"


def test_positive_and_negative_controls_of_channel_minus_shuffled():
    # measured (seed 0, 1000 duplicate deals): +0.307 [+0.139, +0.475]; the deaf team exactly 0
    res = controls("le_truc_4p", deals=1000, seed=0)
    pos, neg = res["positive"], res["negative"]
    assert pos["passed"] and pos["channel_minus_shuffled"]["lo"] > 0.1
    assert 0.2 < pos["channel_minus_shuffled"]["mean"] < 0.45
    assert pos["hands_changed"] > 200  # the misread tokens change about a third of the deals
    assert neg["passed"] and neg["hands_changed"] == 0
    assert neg["channel_minus_shuffled"]["mean"] == neg["channel_minus_shuffled"]["lo"] == 0.0


class Spy:
    """heuristic:honest that records the tokens it sees: its own and its partner's (relative sender 2)."""

    def __init__(self, rules, seat):
        self.inner, self.seat, self.deal = make_agent("heuristic:honest", rules, seat), seat, None
        self.own, self.read = {}, {}

    def reset(self, seed):
        self.deal = (seed - self.seat) // 31  # play_hands resets with seed * 7919 + deal * 31 + seat (seed 0)
        self.inner.reset(seed)

    def act(self, observation, mask):
        for s in observation["view"]["signals"]:
            book = self.own if s["sender"] == 0 else self.read if s["sender"] == 2 else None
            if book is not None:
                book[self.deal] = s["token"]
        return self.inner.act(observation, mask)


def _spied(condition, bank=None):
    """Play the spies as a team against ``random``; returns the hands and, per signal read, (deal, the
    token the partner read, the token the sender saw itself send)."""
    spies = []

    def factory(spec, rules, seed=None):
        if spec == "spy":
            spies.append(Spy(rules, seed))
            return spies[-1]
        return signal_agent(spec, rules, seed)

    res = play_hands(LE_TRUC, "spy", "random", 60, 0, condition, bank=bank, factory=factory)
    by_seat = {sp.seat: sp for sp in spies}  # one per seat: the team's seats differ between the seatings
    pairs = [(by_seat[s], by_seat[(s + 2) % 4]) for s in by_seat]
    return res, [(d, tok, p.own[d]) for r, p in pairs for d, tok in r.read.items() if d in p.own]


def test_shuffled_keeps_the_senders_choice_and_its_partner_reads_a_drawn_token():
    ch, read = _spied("channel")
    assert read and all(tok == sent for _, tok, sent in read)  # with the channel, what is read is what was sent
    sh, read = _spied("shuffled", bank=ch.tokens)
    first = [{}, {}]  # each sender's first signal of each deal: its choice, before any misreading (redeals follow)
    for book, res in zip(first, (ch, sh)):
        for ev in res.events:
            book.setdefault((ev["deal"], ev["seating"], ev["sender"]), ev["token"])
    assert first[0] == first[1]
    changed = sum(tok != own for _, tok, own in read)
    assert 0.3 * len(read) < changed < len(read)  # often a rank the sender did not show (or does not hold)
    assert {tok for _, tok, _ in read} <= set(layout_of(LE_TRUC).signal_tokens)


def test_the_no_channel_twin_is_checked_against_the_teams_rules():
    assert check_twin(LE_TRUC, TWIN) == silent_rules(LE_TRUC)
    assert silent_rules(LE_TRUC).signals.mode == "none" and not silent_rules(LE_TRUC).options["instructions"]
    with pytest.raises(TrucError, match=r"trained with a channel \(signals mode 'card'\); a twin of this team is "
                                        r"trained for le_truc_4p .* signals mode 'none' and instructions off"):
        check_twin(LE_TRUC, TEAM)
    with pytest.raises(TrucError, match="trained for truco_mineiro, not le_truc_4p"):
        check_twin(LE_TRUC, "net:models/signals_truco_mineiro_4p.pt")
    with pytest.raises(TrucError, match="other rules"):
        check_twin(make_rules("le_truc_4p", target=6), TWIN)
    with pytest.raises(TrucError, match="no signal channel"):
        check_twin(silent_rules(LE_TRUC), TWIN)


def test_channel_minus_twin_is_played_on_the_same_deals_and_reported():
    t = analyze_team(LE_TRUC, TEAM, "random", 20, 0, sweep=(0.0, 1.0), influence=0, n_boot=10, twin=TWIN)
    twin = play_hands(silent_rules(LE_TRUC), TWIN, "random", 20, 0).points
    assert t["_points"]["twin"] == twin.tolist()
    d = np.array(t["_points"]["channel"]) - twin
    assert t["gap"]["channel_minus_twin"]["mean"] == pytest.approx(d.mean())
    text = summary_text({"variant": "le_truc_4p", "options": {}, "signal_mode": "card", "against": "random",
                         "deals": 20, "teams": [t]})
    assert "channel-twin" in text and "no-channel twin" in text and "channel-shuffled" in text


def test_the_sweep_says_when_nobody_reads_the_channel():
    # the heuristics never read intercepted signals: every hand at every intercept is as with private signals
    t = analyze_team(LE_TRUC, "heuristic:cautious", "heuristic:honest", 8, 0, sweep=(0.0, 0.5, 1.0), influence=0,
                     n_boot=10)
    assert all(r["unchanged"] for r in t["sweep"])
    text = summary_text({"variant": "le_truc_4p", "options": {}, "signal_mode": "card", "against": "h",
                         "deals": 8, "teams": [t]})
    assert "no eavesdropper reads the channel here" in text and "+0.000 [+0.000, +0.000]" not in text
    # a team of networks sees the opponents' signals at intercept 1, which it never saw: the hands change
    t = analyze_team(LE_TRUC, TEAM, "heuristic:honest", 8, 0, sweep=(0.0, 1.0), influence=0, n_boot=10)
    assert not t["sweep"][1]["unchanged"]
    text = summary_text({"variant": "le_truc_4p", "options": {}, "signal_mode": "card", "against": "h",
                         "deals": 8, "teams": [t]})
    assert "intercept 1.00:" in text and "minus private signals" in text


def test_pooling_over_runs_counts_runs_not_their_pairs():
    a, b = [1.0, 1.2, 1.4, 1.6, 1.8], [1.1, 1.5, 1.3, 1.9, 1.7]
    w = over_runs(a, b)
    assert w["mean"] == pytest.approx(-0.1)
    va = vb = 0.1 / 5  # both groups have variance 0.1 over 5 runs
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 4)
    assert df == pytest.approx(8.0)
    assert w["hi"] - w["mean"] == pytest.approx(2.306 * np.sqrt(va + vb))  # t(8), not t(24) of 25 "pairs"
    p = over_runs(a, b, paired=True)
    d = np.subtract(a, b)
    assert p["mean"] == pytest.approx(-0.1) and p["n"] == 5
    assert p["hi"] - p["mean"] == pytest.approx(2.776 * d.std(ddof=1) / np.sqrt(5))
    with pytest.raises(TrucError, match="at least 2 seeds"):
        over_runs([0.3])
    with pytest.raises(TrucError, match="at least 2 seeds per group; twin runs: 1"):
        over_runs(a, [0.2])


def test_an_experiments_channel_config_is_paired_with_its_twin_by_seed():
    exp = load_experiment("configs/signals/conv_le_truc_4p.yaml")
    assert {r.twin for r in exp["runs"] if r.channel} == {"configs/signals/conv_ppo_le_truc_4p_none.yaml"}
    rng = np.random.default_rng(3)
    ch, tw = rng.normal(1.5, 1, (5, 40)), rng.normal(1.8, 1, (5, 40))
    c = {"seeds": [1, 2, 3, 4, 5], "runs": [f"x_s{s}" for s in range(1, 6)], "per_seed": {f"x_s{s}": {} for s in range(1, 6)},
         "_per_deal": {"channel": ch}}
    tc = {"seeds": [5, 4, 3, 2, 1], "_per_deal": {"channel": tw[::-1]}}  # another order: paired by seed, not by row
    pair_with_twin(c, tc, "twin")
    v = c["channel_minus_twin"]
    assert v["paired_by_seed"]["mean"] == pytest.approx((ch - tw).mean())
    assert v["paired_by_seed"]["n"] == 5 and v["welch_over_runs"]["runs"] == [5, 5]
    assert v["per_seed"]["3"]["mean"] == pytest.approx((ch[2] - tw[2]).mean())
    assert c["per_seed"]["x_s1"]["channel_minus_twin"]["n"] == 40


def test_experiment_twins_are_checked():
    rules = make_rules("le_truc_4p")
    none = make_rules("le_truc_4p", signals={"mode": "none"}, instructions=False)

    class E:
        def __init__(self, config, twin=None):
            self.config, self.twin = config, twin

    with pytest.raises(TrucError, match="not one of the no-channel configs of runs"):
        find_twins("x.yaml", [(E("a.yaml", "b.yaml"), rules)])
    with pytest.raises(TrucError, match="trained for other rules"):
        find_twins("x.yaml", [(E("a.yaml", "b.yaml"), rules),
                              (E("b.yaml"), make_rules("le_truc_4p", signals={"mode": "none"}, target=6))])
    assert find_twins("x.yaml", [(E("a.yaml"), rules), (E("b.yaml"), none)]) == {"a.yaml": "b.yaml"}
    # a team that sees its partner's hand (the oracle bound) is paired with the silent team, never is one
    oracle = make_rules("le_truc_4p", signals={"mode": "none", "open_hands": True}, instructions=False)
    assert find_twins("x.yaml", [(E("o.yaml", "b.yaml"), oracle), (E("b.yaml"), none)]) == {"o.yaml": "b.yaml"}
    assert find_twins("x.yaml", [(E("a.yaml"), rules), (E("o.yaml"), oracle)]) == {}


def test_the_oracle_study_pairs_the_open_hands_team_with_the_silent_twin():
    exp = load_experiment("configs/signals/oracle_long_truco_paulista_4p.yaml")
    oracle = [r for r in exp["runs"] if "oracle" in r.name]
    assert len(oracle) == 5 and {r.twin for r in oracle} == {"configs/signals/warm_ppo_truco_paulista_4p_long_silent.yaml"}
    assert make_rules(oracle[0].variant, **oracle[0].options).signals.open_hands
    rng = np.random.default_rng(4)
    o, tw = rng.normal(2.0, 1, (5, 30)), rng.normal(1.8, 1, (5, 30))
    c = {"oracle": True, "seeds": [1, 2, 3, 4, 5], "runs": [f"o_s{s}" for s in range(1, 6)],
         "per_seed": {f"o_s{s}": {} for s in range(1, 6)}, "_per_deal": {"channel": o}}
    pair_with_twin(c, {"seeds": [1, 2, 3, 4, 5], "_per_deal": {"channel": tw}}, "twin")
    assert "channel_minus_twin" not in c
    assert c["oracle_minus_twin"]["paired_by_seed"]["mean"] == pytest.approx((o - tw).mean())
    assert c["per_seed"]["o_s2"]["oracle_minus_twin"]["mean"] == pytest.approx((o[1] - tw[1]).mean())


@pytest.mark.parametrize("argv, match", [
    (["--options", '{"signals": {"mode": "senas"}}'], "le_truc_4p allows: none, free, card"),
    (["--silent-twin", TEAM], "trained with a channel"),
    (["--silent-twin", "net:models/signals_truco_mineiro_4p.pt"], "trained for truco_mineiro, not le_truc_4p"),
    (["--pool"], "at least 2 seeds"),
    (["--silent-twin", TWIN, "--silent-twin", TWIN], "one no-channel twin per team"),
    (["--results-file", "x.json"], "--results-file and --note go with --config"),
])
def test_cli_refuses_bad_input_in_one_line(argv, match, capsys):
    assert main(["analyze", "signals", "--variant", "le_truc_4p", "--team", "heuristic:honest", "--deals", "2",
                 *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1


def test_cli_twin_pool_and_controls(tmp_path, capsys):
    assert main(["analyze", "signals", "--variant", "le_truc_4p", "--team", TEAM, "--team", TEAM,
                 "--silent-twin", TWIN, "--silent-twin", TWIN, "--against", "random", "--deals", "6",
                 "--sweep", "", "--influence", "0", "--pool", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "pooled over 2 runs" in out and "channel_minus_twin (paired by seed)" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["pooled"]["gaps"]["channel_minus_twin (two groups)"]["method"] == "Welch over runs"
    assert main(["analyze", "signals", "--controls", "--deals", "20", "--out", str(tmp_path)]) == 0
    assert "negative: deaf:heuristic:honest: +0.000 [+0.000, +0.000]" in capsys.readouterr().out
    assert json.loads((tmp_path / "controls.json").read_text())["negative"]["passed"]


def test_the_results_file_keeps_the_study_and_its_command_but_not_the_per_deal_points(tmp_path):
    study = {"experiment": "configs/signals/x.yaml", "against": "random", "deals": 3,
             "configs": {"x": {"channel_minus_twin": {"over_runs": {"mean": 0.2}}, "_per_deal": {"channel": [[1, 2, 3]]}}}}
    path = results_file(study, str(tmp_path / "data" / "signals_x.json"), "docs/signals.md 'X'. study: truc ...")
    with open(path) as f:
        saved = json.load(f)
    assert saved["note"] == "docs/signals.md 'X'. study: truc ..."
    assert saved["study"]["configs"]["x"] == {"channel_minus_twin": {"over_runs": {"mean": 0.2}}}
    assert "_per_deal" in study["configs"]["x"]  # the caller's results are left whole
    leak = results_file({"team": "net:T", "pooled": {"cost": 0.4}, "_points": {"twin@0": [1.0]}},
                        str(tmp_path / "leak.json"), "study: truc ...")
    with open(leak) as f:
        assert json.load(f)["study"] == {"team": "net:T", "pooled": {"cost": 0.4}}


def test_a_note_needs_a_results_file(capsys):
    assert main(["analyze", "signals", "--config", "configs/signals/warm_long4m_le_truc_4p.yaml", "--note", "x"]) == 2
    assert "--note goes with --results-file" in capsys.readouterr().err


def test_the_oracle_share_has_fiellers_interval_and_none_when_the_oracle_is_not_resolved():
    from train.analysis.signals_controls import oracle_share
    from train.eval.stats import mean_ci

    talk = [0.1, 0.2, 0.3, 0.25]
    r = oracle_share(talk, [0.5] * 4)  # a fixed denominator: the numerator's own t interval, scaled
    ci = mean_ci(np.array(talk))
    assert r["share"] == pytest.approx(0.425)
    assert (r["lo"], r["hi"]) == pytest.approx((ci["lo"] / 0.5, ci["hi"] / 0.5))
    rng = np.random.default_rng(0)
    b = 0.5 + rng.normal(0, 0.1, 5)
    wide = oracle_share(0.5 * b + rng.normal(0, 0.05, 5), b)
    assert wide["lo"] < 0.5 < wide["hi"]
    flat = oracle_share(talk, [0.4, -0.3, 0.2, -0.25])  # oracle - twin not resolved from 0
    assert flat["lo"] is None and flat["hi"] is None
    with pytest.raises(TrucError, match="same seeds"):
        oracle_share([0.1, 0.2], [0.1])
