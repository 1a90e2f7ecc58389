"""The episode driver (truc_env.game.episode): one dealer, one win reward, one hand loop.

The pins below were taken before the driver replaced the arena's, the signals kit's, the demo's and
PPO's own loops and dealers: the same seeds must keep giving the same records, tables and losses.
(The arena pins were re-taken from main's code without the driver when main's arena summary
changed; both gave the same hashes as this branch. They hash the summary with its floats rounded to 9
digits, re-taken from that code: the Bradley-Terry fit's last bits differ between CPUs.)
"""

import hashlib
import io
import json

import numpy as np
import pytest
import torch

from train.algos import ppo
from train.analysis.signals import play_hands
from train.commands.demo import play_demo
from train.eval.arena import ArenaConfig, run_arena
from truc_env.game.rules import make_rules

torch.set_num_threads(1)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


PAULISTA_4P = {"players": 4, "signals": {"mode": "free", "vocab": 2, "intercept": 0.5}}


@pytest.mark.parametrize("name,kw,pinned", [
    ("le_truc", {"variant": "le_truc", "episode": "game"}, "8bd536f7597fe300"),
    ("paulista_4p", {"variant": "truco_paulista", "options": PAULISTA_4P, "episode": "hand"}, "2325ed18f4dd5171"),
    # pinned from the code before the driver too: won/lost of a put_n hand is now the side ahead
    ("put_n", {"variant": "put_n", "options": {"players": 3}, "episode": "hand"}, "8c38922cd5ab61c9"),
])
def test_arena_records_and_tables_are_those_of_before(tmp_path, name, kw, pinned):
    out = tmp_path / name
    cfg = ArenaConfig.from_dict({"agents": ["random", "heuristic:honest"], "deals": 4, "workers": 1,
                                 "out": str(out), **kw})
    run_arena(cfg, progress=False)
    # the fits' floats are rounded: BLAS gives other last bits on other CPUs, the tables are the same
    summary = json.dumps(_rounded(json.loads((out / "summary.json").read_text())), sort_keys=True)
    assert _digest((out / "games.jsonl").read_bytes() + summary.encode()) == pinned


def _rounded(x):
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


def test_signals_kit_output_is_that_of_before():
    rules = make_rules("truco_paulista", signals={"mode": "free", "vocab": 2, "intercept": 0.5})
    res = play_hands(rules, "heuristic:honest", "heuristic:cautious", 6, 1)
    data = json.dumps([res.points.tolist(), res.events, res.tokens], sort_keys=True, default=str)
    assert _digest(data.encode()) == "f8466dcc3c618f25"


def test_demo_game_is_that_of_before():
    buf = io.StringIO()
    play_demo(seed=5, out=lambda s: buf.write(s + "\n"))
    assert _digest(buf.getvalue().encode()) == "db14d8ef9ebb4e47"


def _first_update(tmp_path, rollout: str, reward: str) -> dict:
    cfg = ppo.PPOConfig.from_dict(dict(
        name="t", out_dir=str(tmp_path), variant="le_truc", options={"ranks": 4, "hand_size": 2}, seed=3,
        device="cpu", deterministic=False, total_steps=256, steps_per_update=256, num_envs=16, hidden=[32, 32],
        snapshot_every=1, self_play_prob=0.4, fixed_opponents=["heuristic:honest"], fixed_prob=0.2, eval_every=2,
        eval_episodes=20, eval_opponent="random", progress=False, tensorboard=False, plot=False, rollout=rollout,
        reward=reward))
    ppo.train(cfg)
    return torch.load(tmp_path / "t" / "checkpoint.pt", weights_only=False)["history"][0]


PPO_PINS = {  # first update: policy loss, value loss, entropy, episodes, mean episode length
    ("engine", "points"): (-0.009455922991037369, 16.7120304107666, 1.422501564025879, 108, 2.490740740740741),
    ("engine", "win"): (-0.017036952078342438, 0.4779708981513977, 1.4223535060882568, 108, 2.490740740740741),
    # re-pinned: since e9ed836 a heads-up heuristic:* opponent plays on the batched engine (the batched heuristic,
    # seeded from the rollout's generator), so the first update's fixed-opponent games are others (105 -> 111
    # episodes); with that path turned off the old values come back exactly (bisected, 2026-12-04)
    ("vector", "win"): (-0.02084563486278057, 0.4874190092086792, 1.3484890460968018, 111, 2.7117117117117115),
}


@pytest.mark.parametrize("rollout,reward", [
    ("engine", "points"), ("engine", "win"), pytest.param("vector", "win", marks=pytest.mark.slow)])
def test_ppo_first_update_losses_are_those_of_before(tmp_path, rollout, reward):
    row = _first_update(tmp_path, rollout, reward)
    got = (row["policy_loss"], row["value_loss"], row["entropy"], row["episodes"], row["episode_length"])
    # float32 losses: another CPU's kernels move the last digits (3e-6 seen), a real change moves more
    assert np.allclose(got, PPO_PINS[rollout, reward], rtol=1e-4, atol=1e-7), got


# ------------------------------------------------------------------------------------------- the driver
from truc_env.envs.pettingzoo_env import raw_env  # noqa: E402
from truc_env.errors import IllegalActionError, TrucError  # noqa: E402
from truc_env.game.engine import State, sample_chance  # noqa: E402
from truc_env.game.episode import Dealer, Episode, side_rewards, win_rewards  # noqa: E402


def _random_episode(rules, dealer, seed, episode="game", reward="points", start_dealer=0):
    """A random game through the driver; per-seat reward totals, the hands' dealt cards, the state."""
    rng = np.random.default_rng(seed)
    state = State(rules, episode=episode, dealer=start_dealer)
    game = Episode(state, dealer, reward)
    totals = np.zeros(rules.players)
    deals = []
    for _ in game.decisions():
        if len(deals) < len(state.hand_log):
            deals.append([sorted(h) for h in state.dealt_hands])
        legal = state.legal_actions()
        game.play(legal[int(rng.integers(len(legal)))])
        totals += game.rewards()
    return totals, deals, state


def test_seeded_dealer_deals_the_same_cards_whatever_is_played():
    rules = make_rules("le_truc")
    games = [_random_episode(rules, Dealer.seeded(rules, 11), seed=s)[1] for s in range(1, 7)]
    assert sorted(len(g) for g in games)[-2] >= 2  # two games of several hands, at least
    for a in games:
        for b in games:
            k = min(len(a), len(b))
            assert a[:k] == b[:k]  # hand by hand the same cards, though the games differ
    _, other, _ = _random_episode(rules, Dealer.seeded(rules, 12), seed=1)
    assert other[0] != games[0][0]


def test_shuffled_dealer_deals_one_deck_order_per_hand_from_its_generator():
    rules = make_rules("le_truc")
    state = State(rules, episode="hand", dealer=1)
    Dealer.shuffled(rules, np.random.default_rng(5)).resolve(state)
    deck = [rules.deck[i] for i in np.random.default_rng(5).permutation(len(rules.deck))]
    assert len(state.dealt) == 6 and state.dealt == deck[:6]  # dealt down the deck, in order


@pytest.mark.parametrize("variant,options", [("le_truc", {}), ("truco_paulista", {}), ("put", {}),
                                             ("truco_mineiro", {"deck": "clean"})])
def test_shuffled_dealer_orders_are_the_generators_permutations(variant, options):
    """Dealer.shuffled shuffles the cards themselves; each hand's order, its ``perm`` and the generator's state
    after it are what ``rng.permutation(len(deck))`` gives (the documented deal of a seed)."""
    rules = make_rules(variant, **options)
    for seed in range(200):
        dealer, rng = Dealer.shuffled(rules, np.random.default_rng(seed)), np.random.default_rng(seed)
        for hand in range(3):
            state = State(rules, episode="hand", dealer=0)
            state.hand_log = [{}] * hand  # the dealer's hand counter: a new order per hand
            dealer._deck_for(state)
            perm = rng.permutation(len(rules.deck))
            assert dealer.order == [rules.deck[i] for i in perm] and np.array_equal(dealer.perm, perm)
        assert dealer.rng.integers(1 << 30) == rng.integers(1 << 30)


def test_uniform_dealer_draws_as_sample_chance():
    rules = make_rules("truco_paulista", players=4, signals={"mode": "free", "intercept": 0.5})
    state, twin = State(rules, episode="hand"), State(rules, episode="hand")
    dealer, rng = Dealer(rules, np.random.default_rng(3)), np.random.default_rng(3)
    play = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            a, b = dealer.outcome(state), sample_chance(twin, rng)
        else:
            legal = state.legal_actions()
            a = b = legal[int(play.integers(len(legal)))]
        assert a == b
        state.apply_action(a)
        twin.apply_action(b)


def _one_draw_at_a_time(dealer, state):
    while state.is_chance_node():
        state.apply_action(dealer.outcome(state))


DEALER_FORMS = {"uniform": lambda rules, seed: Dealer(rules, np.random.default_rng(seed)),
                "shuffled": lambda rules, seed: Dealer.shuffled(rules, np.random.default_rng(seed)),
                "seeded": lambda rules, seed: Dealer.seeded(rules, seed)}


@pytest.mark.parametrize("form", list(DEALER_FORMS))
@pytest.mark.parametrize("variant,options", [("le_truc", {}), ("truco_paulista", {"players": 4}),
                                             ("truco_mineiro", {}), ("put_4p", {}),
                                             ("truco_paulista", {"signals": {"mode": "free", "intercept": 0.5}})])
def test_a_deal_dealt_in_one_step_is_the_deal_drawn_card_by_card(form, variant, options):
    """Dealer.resolve deals a hand in one State.deal call; a redeal, the vira and the later chance
    (interceptions) included, it gives every state that drawing one card per chance node gives."""
    rules = make_rules(variant, **options)
    for seed in range(4):
        whole, single = DEALER_FORMS[form](rules, seed), DEALER_FORMS[form](rules, seed)
        a, b = State(rules, dealer="random" if seed == 3 else 0), State(rules, dealer="random" if seed == 3 else 0)
        play = np.random.default_rng(seed)
        while True:
            whole.resolve(a)
            _one_draw_at_a_time(single, b)
            assert a.history == b.history and a.hands == b.hands and a.phase == b.phase
            if a.is_terminal():
                break
            legal = a.legal_actions()
            assert legal == b.legal_actions()
            action = legal[int(play.integers(len(legal)))]
            a.apply_action(action)
            b.apply_action(action)
        assert [a.hand_facts(h) for h in range(len(a.hand_log))] == [b.hand_facts(h) for h in range(len(b.hand_log))]
        if form != "seeded":  # the generator is left where it would have been: what follows stays the same
            assert whole.rng.integers(1 << 30) == single.rng.integers(1 << 30)


def test_state_deal_checks_every_card_before_dealing_any():
    rules = make_rules("le_truc")
    state = State(rules, episode="hand", dealer=0)
    ace, king = rules.family.parse("Ac"), rules.family.parse("Kc")
    for bad, message in (([ace, ace], "not a card left"), ([ace, 2.0], "integer index"), ([ace, True], "integer index"),
                         ([ace, rules.family.parse("2c")], "not a card left"), ([ace] * 7, "draws left")):
        with pytest.raises(IllegalActionError, match=message):
            state.deal(bad)
        assert state.dealt == [] and state.draws_left == 6  # nothing dealt
    state.deal([ace, np.int64(king)])
    assert state.dealt == [ace, king] and state.draws_left == 4 and state.hands[1] == [ace]
    state.apply_action(state.legal_actions()[0] if state.legal_actions() else rules.deck[0])
    assert state.draws_left == 3


@pytest.mark.parametrize("variant,options", [("le_truc", {}), ("truco_argentino", {"flor": True}),
                                             ("put_n", {"players": 3}), ("truco_paulista", {"players": 4})])
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_rewards_add_up_to_the_result(variant, options, episode):
    rules = make_rules(variant, **options)
    for seed in range(3):
        points, _, state = _random_episode(rules, Dealer(rules, np.random.default_rng(seed)), seed, episode)
        assert np.allclose(points, state.returns())  # envido and flor points included, when scored
        win, _, state = _random_episode(rules, Dealer(rules, np.random.default_rng(seed)), seed, episode, "win")
        assert np.allclose(win, win_rewards(state)) and abs(win.sum()) < 1e-9
        if state.game_over:
            assert all(win[s] == 1.0 for s in range(rules.players) if rules.side(s) == state.winner)


def test_side_rewards_table():
    rules = make_rules("put_n", players=3)
    assert side_rewards(rules, 1) == [-0.5, 1.0, -0.5]
    assert side_rewards(rules, -1) == [0.0, 0.0, 0.0]
    four = make_rules("le_truc_4p")
    assert side_rewards(four, 0) == [1.0, -1.0, 1.0, -1.0]


def test_win_reward_comes_once_at_the_end():
    rules = make_rules("le_truc")
    state = State(rules, episode="game", dealer=0)
    game = Episode(state, Dealer(rules, np.random.default_rng(0)), "win")
    rng = np.random.default_rng(0)
    for _ in game.decisions():
        assert game.rewards() == [0.0, 0.0]
        legal = state.legal_actions()
        game.play(legal[int(rng.integers(len(legal)))])
    assert game.rewards() == win_rewards(state) and game.rewards() == [0.0, 0.0]


def test_unknown_reward_is_a_clear_error():
    rules = make_rules("le_truc")
    with pytest.raises(TrucError, match="reward='wins' is invalid; allowed: 'points', 'win'"):
        Episode(State(rules), Dealer(rules, np.random.default_rng(0)), "wins")


def test_pettingzoo_seeded_reset_replays_the_same_game():
    def game(seed):
        e = raw_env(variant="le_truc", episode="hand")
        e.reset(seed=seed)
        return [sorted(h) for h in e.game_state.dealt_hands], e.game_state.dealer

    assert game(4) == game(4)
    assert game(4) != game(5)


def _old_pettingzoo_chance(state, rng):
    """The PettingZoo env's sampler before the driver: a permutation of the cards left per deal."""
    while state.is_chance_node():
        if state.phase == "deal":
            left = [c for c, _ in state.chance_outcomes()]
            for i in rng.permutation(len(left)):
                state.apply_action(left[i])
                if state.phase != "deal":
                    break
        else:
            outcomes, u, acc = state.chance_outcomes(), rng.random(), 0.0
            choice = outcomes[-1][0]
            for o, p in outcomes:
                acc += p
                if u < acc:
                    choice = o
                    break
            state.apply_action(choice)


@pytest.mark.parametrize("variant,options", [("truco_argentino", {}), ("truco_paulista", PAULISTA_4P),
                                             ("le_truc", {})])
def test_pettingzoo_seeded_games_are_those_of_before_unless_a_redeal_is_accepted(variant, options):
    rules = make_rules(variant, **options)
    for seed in range(8):
        e = raw_env(variant=variant, episode="game", **options)
        e.reset(seed=seed)
        ref, ref_rng = State(rules, episode="game"), np.random.default_rng(seed)
        _old_pettingzoo_chance(ref, ref_rng)
        pick, redeal = np.random.default_rng(seed + 99), False
        while not e.game_state.is_terminal():
            legal = e.game_state.legal_actions()
            a = legal[int(pick.integers(len(legal)))]
            e.step(a)
            ref.apply_action(a)
            _old_pettingzoo_chance(ref, ref_rng)
            redeal = redeal or bool(e.game_state.redeal_used)
            if redeal:
                break  # from here on the new cards continue down the hand's deck
            assert e.game_state.history == ref.history


def test_points_rewards_step_by_step_are_the_change_of_returns():
    """Episode.rewards skips returns() while the score stands still: every step still pays exactly the
    zero-sum change of State.returns() since the last step (zero when nothing was scored)."""
    rules = make_rules("truco_argentino", flor=True)  # envido and flor points come in the middle of a hand
    paid_nonzero = paid_zero = 0
    for seed in range(6):
        state = State(rules, episode="game", dealer=0)
        game = Episode(state, Dealer.shuffled(rules, np.random.default_rng(seed)), "points")
        rng, before = np.random.default_rng(seed), state.returns()
        for _ in game.decisions():
            legal = state.legal_actions()
            game.play(legal[int(rng.integers(len(legal)))])
            now = state.returns()
            got = game.rewards()
            assert got == [x - p for x, p in zip(now, before)]
            paid_nonzero += any(got)
            paid_zero += not any(got)
            before = now
        assert game.rewards() == [0.0] * rules.players  # the end paid once
    assert paid_nonzero > 10 and paid_zero > 10
