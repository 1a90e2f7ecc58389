"""Property tests over random play (issue 2): invariants every variant must keep in every state.

Checked at every step of seeded random play (``numpy.random.Generator`` + ``sample_chance``):

- the deck is conserved: cards held + played + discarded + set aside by a redeal + the vira are
  exactly the cards drawn this hand, with no duplicate, and drawn + undrawn == the deck;
- every hand ends within a step bound;
- scores only grow, one side per step, by an amount the rules allow (from ``Rules``: ladder values,
  mon reste / put = what the winner still needs, the value at 11, envido values incl. falta, flor,
  put_n's one point per opponent still in) and, tighter, by the value the hand is worth right now;
- exactly the acting seat has legal actions: a seat acts at decisions with a non-empty, sorted,
  unique list of in-range actions; chance and terminal nodes have none;
- legal actions depend only on the acting seat's information: the same hand replayed from a deal
  where the cards that seat cannot see are shuffled among themselves (and with the undrawn cards)
  gives the same actor and the same legal actions;
- returns are zero-sum, partners share them, and a hand's points equal its score change;
- a random game's record (``record_of``) replays (``replay_state``) to the same score and history;
- the same seed plays the same game.

The default suite plays 5,000 random games spread over every variant and a representative set of
option combinations; the slow suite (``-m slow``) plays 100,000 random hands over every variant
and option combination, from random scores and dealers (scores at 11 included, so that mão de onze
and mão de ferro hands occur).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest

from truc_env.errors import IllegalActionError, RulesError
from truc_env.game.engine import CHANCE, DEAL_DRAW, TERMINAL, State, sample_chance
from truc_env.game.records import record_of, replay_state
from truc_env.game.rules import VARIANTS, make_rules

DEFAULT_GAMES = 5_000
SLOW_HANDS = 100_000
HAND_STEP_BOUND = 2_000  # far above any real hand (put_n: 7 tricks of 6 players plus calls)
ALT_TRIES = 2  # alternative deals tried per information-set check

ENVIDO_CHAIN_VALUES = {1, 2, 3, 4, 5, 7}  # every accepted / refused envido sum (docs/rules.md §6)

# --------------------------------------------------------------------------- option combinations

SIGNALS_4P = [
    {"mode": "none"},
    {"mode": "free", "vocab": 3, "intercept": 0.5, "timing": "every_trick"},
    {"mode": "card", "truthful": True, "intercept": 0.0},
    {"mode": "card", "truthful": False, "intercept": 1.0, "timing": "every_trick"},
    {"mode": "senas", "truthful": True, "intercept": 0.3},
]


def _product(**choices):
    names = list(choices)
    for values in itertools.product(*(choices[n] for n in names)):
        yield dict(zip(names, values))


def all_configs() -> list[tuple[str, dict]]:
    """Every variant with every combination of its rule options (targets and research options
    sampled on top), as (variant, options) pairs that make_rules accepts."""
    out: list[tuple[str, dict]] = []

    def add(variant, options):
        try:
            make_rules(variant, **options)
        except RulesError:
            return
        out.append((variant, options))

    for o in _product(ranking=["standard", "seven_ace"], redeal=[True, False], ladder=["standard", "doubling"],
                      all_tied=["none", "leader"], fold=[True, False]):
        add("le_truc", o)
    for o in _product(ranking=["standard", "seven_ace"], redeal=[True, False], ladder=["standard", "doubling"],
                      all_tied=["leader", "none"], fold=[False, True], instructions=[True, False],
                      signals=[{"mode": "card", "truthful": True}, {"mode": "none"},
                               {"mode": "card", "truthful": True, "intercept": 0.5, "timing": "every_trick"},
                               {"mode": "free", "vocab": 4, "intercept": 1.0}]):
        add("le_truc_4p", o)
    for v in ("put", "put_4p"):
        for o in _product(all_tied=["none", "leader"], fold=[True, False]):
            add(v, o)
    for p in (3, 4, 5, 6):
        for hs in (None, 1, 2, 3):
            add("put_n", {"players": p} if hs is None else {"players": p, "hand_size": hs})
    for v, extra in (("truco_paulista", {}), ("truco_mineiro", {"ladder": ["standard", "mineiro"]})):
        for o in _product(players=[4, 2], deck=["dirty", "clean"], all_tied=["dealer", "none", "leader"],
                          blind=[True, False], fold=[False, True], **extra):
            for sig in SIGNALS_4P if o["players"] == 4 else [None]:
                add(v, o if sig is None else {**o, "signals": sig})
    for o in _product(players=[4, 2], envido=[True, False], flor=[False, True], all_tied=["leader", "none", "dealer"],
                      fold=[True, False], target=[30, 15]):
        for sig in SIGNALS_4P if o["players"] == 4 else [None]:
            add("truco_argentino", o if sig is None else {**o, "signals": sig})
    # research options over every variant
    for v in VARIANTS:
        for ranks, hs, mr in itertools.product((None, 2, 4), (None, 1, 2), (None, 0, 1, 2)):
            o = {k: x for k, x in (("ranks", ranks), ("hand_size", hs), ("max_raises", mr)) if x is not None}
            if o:
                add(v, o)
        add(v, {"first_dealer": "random"})
    return out


# A representative set for the default suite: each variant's defaults plus combinations that
# together take every option value at least once.
DEFAULT_CONFIGS: list[tuple[str, dict]] = [
    ("le_truc", {}),
    ("le_truc", {"ranking": "seven_ace", "ladder": "doubling", "all_tied": "leader"}),
    ("le_truc", {"redeal": False, "fold": False, "target": 5}),
    ("le_truc", {"ranks": 3, "hand_size": 2, "max_raises": 2, "first_dealer": "random"}),
    ("le_truc_4p", {}),
    ("le_truc_4p", {"signals": {"mode": "none"}, "instructions": False, "fold": True, "all_tied": "none"}),
    ("le_truc_4p", {"signals": {"mode": "card", "intercept": 0.5, "timing": "every_trick"},
                    "ranking": "seven_ace", "redeal": False, "ladder": "doubling"}),
    ("le_truc_4p", {"signals": {"mode": "free", "vocab": 3, "intercept": 1.0}, "first_dealer": "random"}),
    ("put", {}),
    ("put", {"all_tied": "leader", "fold": False, "ranks": 5, "max_raises": 0, "first_dealer": "random"}),
    ("put_4p", {}),
    ("put_4p", {"all_tied": "leader", "fold": False, "first_dealer": "random"}),
    ("put_n", {"players": 3}),
    ("put_n", {}),
    ("put_n", {"players": 5, "hand_size": 3}),
    ("put_n", {"players": 6, "hand_size": 2, "first_dealer": "random"}),
    ("truco_paulista", {}),
    ("truco_paulista", {"players": 2}),
    ("truco_paulista", {"deck": "clean", "all_tied": "none", "blind": False, "fold": True}),
    ("truco_paulista", {"players": 2, "deck": "clean", "all_tied": "leader", "target": 6, "first_dealer": "random"}),
    ("truco_paulista", {"signals": {"mode": "senas", "intercept": 0.3}}),
    ("truco_paulista", {"signals": {"mode": "card", "truthful": False, "timing": "every_trick", "intercept": 1.0}}),
    ("truco_mineiro", {}),
    ("truco_mineiro", {"players": 2, "ladder": "mineiro"}),
    ("truco_mineiro", {"deck": "clean", "ladder": "mineiro", "all_tied": "dealer", "blind": False, "fold": True}),
    ("truco_mineiro", {"players": 2, "deck": "clean", "all_tied": "leader", "ranks": 6, "max_raises": 1,
                       "first_dealer": "random"}),
    ("truco_mineiro", {"signals": {"mode": "senas"}, "target": 6}),
    ("truco_argentino", {}),
    ("truco_argentino", {"players": 2, "target": 15}),
    ("truco_argentino", {"flor": True, "all_tied": "none", "fold": False, "target": 15}),
    ("truco_argentino", {"players": 2, "flor": True, "all_tied": "dealer", "first_dealer": "random"}),
    ("truco_argentino", {"envido": False, "signals": {"mode": "senas", "intercept": 0.5}, "target": 15}),
    ("truco_argentino", {"signals": {"mode": "free", "vocab": 5, "timing": "every_trick"}, "target": 15}),
]


def config_id(config) -> str:
    variant, options = config
    parts = []
    for k, v in options.items():
        if isinstance(v, dict):
            v = "/".join(f"{x}" for x in v.values())
        parts.append(f"{k}={v}")
    return variant + ("[" + ",".join(parts) + "]" if parts else "")


# --------------------------------------------------------------------------- invariant checks

class Stats(Counter):
    """What the checks saw, so that a test can assert that its properties were exercised."""


class Before:
    """The few public fields of the state before a step that the scoring check needs."""

    __slots__ = ("rules", "L", "phase", "special", "level", "all_in_accepted", "call_kind", "score")

    def __init__(self, state: State):
        self.rules, self.L, self.phase, self.special = state.rules, state.L, state.phase, state.special
        self.level, self.all_in_accepted, self.call_kind = state.level, state.all_in_accepted, state.call_kind
        self.score = list(state.score)


def allowed_points(rules, score) -> set[int]:
    """Every amount one scoring event may add to a side's score, derived from the Rules alone."""
    allowed = set(rules.ladder)
    if rules.put_n:
        allowed |= set(range(1, rules.players))  # one point per opponent still in
    elif rules.all_in:
        allowed |= {rules.target - s for s in score}  # mon reste / put: what the winner still needs
    if rules.eleven:
        allowed |= {rules.eleven_value, rules.ladder[0]}
    if rules.envido:
        allowed |= ENVIDO_CHAIN_VALUES | {rules.target - max(score)}  # falta envido
    if rules.flor:
        allowed |= {3, 4}  # a flor; 4 when a flor against flor is accepted
    return allowed


def hand_value_now(pre: Before, side: int) -> int | None:
    """The value a hand's end scores from the state before the step (None: not a hand-value event)."""
    r = pre.rules
    if pre.special == "eleven":
        return r.eleven_value
    if pre.special == "iron":
        return r.ladder[0]
    if pre.all_in_accepted:
        if r.put_n:
            return None  # checked against the put_n range
        return max(r.ladder[pre.level], r.target - pre.score[side])
    return r.ladder[pre.level]


def hand_history(state: State):
    return state.history[state.hand_log[-1]["start"]:] if state.hand_log else []


def played_cards(state: State) -> list[int]:
    """Cards played to tricks this hand (withdrawn put_n cards included), from the history."""
    L, deck = state.L, state.rules.deck
    out = []
    for actor, a, _aux in hand_history(state):
        if actor < 0:
            continue
        if L.play <= a < L.play + len(deck):
            out.append(deck[a - L.play])
        elif 0 <= L.slot <= a < L.slot + state.rules.hand_size:  # a blind play by position
            out.append(state.dealt_hands[actor][a - L.slot])
    return out


def check_deck(state: State) -> None:
    r = state.rules
    if not state.hand_log:  # before the first dealer is drawn
        assert state.phase == "dealer"
        return
    cards = [c for h in state.hands for c in h if c >= 0]
    for old in state.old_hands:
        cards += [c for h in old for c in h if c >= 0]
    cards += played_cards(state)
    cards += [c for c in state.discards if c >= 0]
    if state.vira >= 0:
        cards.append(state.vira)
    drawn_log = [a for actor, a, aux in hand_history(state) if actor == CHANCE and aux == DEAL_DRAW]
    deck = set(r.deck)
    assert len(drawn_log) == len(set(drawn_log)) == len(state.drawn), "a card was drawn twice"
    assert set(drawn_log) == state.drawn
    assert state.drawn <= deck, f"drawn cards outside the deck: {state.drawn - deck}"
    assert len(cards) == len(set(cards)), f"duplicated card: {Counter(cards).most_common(1)}"
    assert set(cards) == state.drawn, (
        f"cards in play {sorted(set(cards) ^ state.drawn)} differ from the cards drawn this hand")
    assert len(cards) + len(deck - state.drawn) == len(r.deck)


def check_hand_sizes(state: State) -> None:
    """During trick play every active seat holds hand_size minus the tricks it has played."""
    r = state.rules
    if state.phase not in ("turn", "instruct") or r.put_pass and state.pass_queue:
        return
    in_trick = {s for s, _ in state.trick}
    for s in state.active:
        expect = r.hand_size - state.trick_no - (1 if s in in_trick else 0)
        assert len(state.held(s)) == expect, (s, state.held(s), expect, state.trick_no)


def check_actor(state: State) -> None:
    actor = state.current_player()
    legal = state.legal_actions()
    if state.is_terminal():
        assert actor == TERMINAL and legal == []
        return
    if state.is_chance_node():
        assert actor == CHANCE and legal == []
        outcomes = state.chance_outcomes()
        assert outcomes and abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
        return
    assert 0 <= actor < state.n, actor
    assert legal, f"seat {actor} must act but has no legal action (phase {state.phase})"
    assert legal == sorted(set(legal)), legal
    assert 0 <= legal[0] and legal[-1] < state.L.size
    if state.phase == "turn":
        assert actor in state.active, f"seat {actor} acts but is out of the hand"
        assert state.held(actor), f"seat {actor} is to play with no card"


def check_returns(state: State) -> None:
    r = state.rules
    ret = state.returns()
    assert len(ret) == r.players
    assert abs(sum(ret[s] for s in _one_seat_per_side(r))) < 1e-9, ret
    for s in range(r.players):
        assert ret[s] == ret[_one_seat_per_side(r)[r.side(s)]], "partners must share their side's return"


def _one_seat_per_side(rules) -> list[int]:
    return list(range(rules.n_sides))  # seats 0..sides-1 are on sides 0..sides-1


def check_scoring(pre_score, pre: Before, action: int, post: State, stats: Stats) -> None:
    r = post.rules
    gains = [b - a for a, b in zip(pre_score, post.score)]
    assert all(g >= 0 for g in gains), f"a score went down: {pre_score} -> {post.score}"
    scorers = [i for i, g in enumerate(gains) if g > 0]
    assert len(scorers) <= 1, f"two sides scored in one step: {pre_score} -> {post.score}"
    if not scorers:
        return
    (side,) = scorers
    points = gains[side]
    allowed = allowed_points(r, pre_score)
    assert points in allowed, f"side {side} scored {points}; the rules allow {sorted(allowed)}"
    stats["scoring events"] += 1
    # tighter: the value this event is worth from the state before it
    if pre.phase in ("envido", "flor") or (pre.phase == "turn" and action == pre.L.FLOR) or (
            pre.phase == "answer" and action == pre.L.FLOR):
        env = ENVIDO_CHAIN_VALUES | {r.target - max(pre_score)} | ({3, 4} if r.flor else set())
        assert points in env, f"envido/flor scored {points}; allowed {sorted(env)}"
        stats["envido/flor points"] += 1
    elif pre.phase == "eleven":
        assert points == r.ladder[0], f"declining at {r.eleven_score} gave {points}, not {r.ladder[0]}"
        stats["declined at eleven"] += 1
    elif r.put_n and (pre.all_in_accepted or pre.call_kind == "put"):
        assert 1 <= points <= r.players - 1
        stats["put_n put points"] += 1
    else:
        value = hand_value_now(pre, side)
        if value is not None:
            assert points == value, (
                f"hand scored {points}, but it was worth {value} (level {pre.level}, special {pre.special!r}, "
                f"all-in {pre.all_in_accepted}, score {pre_score})")
        stats[f"hand points ({pre.special or ('all-in' if pre.all_in_accepted else 'ladder')})"] += 1


# --------------------------------------------------------------------------- information sets

def visible_cards(state: State, seat: int) -> set[int]:
    """Cards of the current hand whose identity `seat` knows (or that the action texts name)."""
    r, L = state.rules, state.L
    start = state.hand_log[-1]
    vis = set(played_cards(state))
    if state.vira >= 0:
        vis.add(state.vira)
    blind = state.special == "iron" and r.blind
    if not blind:
        vis |= {c for c in state.dealt_hands[seat] if c >= 0}
        vis |= {c for c in state.hands[seat] if c >= 0}
    for old in state.old_hands:
        vis |= set(old[seat])
    if state.discards[seat] >= 0:
        vis.add(state.discards[seat])
    # mão de onze: the side at 11 sees its partners' hands from the decision on
    at = [s >= r.eleven_score for s in start["score"]]
    if r.eleven and any(at) and not all(at) and at[r.side(seat)]:
        for s in range(r.players):
            if r.side(s) == r.side(seat):
                vis |= set(state.dealt_hands[s])
    # put_4p: cards named by give/discard actions stay fixed (the action ids name them)
    for actor, a, _aux in hand_history(state):
        if actor < 0:
            continue
        if L.give >= 0 and L.give <= a < L.give + len(r.deck):
            vis.add(r.deck[a - L.give])
        if L.discard >= 0 and L.discard <= a < L.discard + len(r.deck):
            vis.add(r.deck[a - L.discard])
    return vis


def alternative_state(state: State, seat: int, rng) -> State | None:
    """The current hand replayed from a deal that differs only in cards `seat` cannot see.

    Returns None when the permuted deal makes an earlier action illegal or changes a public result:
    that deal is not consistent with what the seat has seen (e.g. a truthful partner signal, a
    put_4p pass, an announced envido result).
    """
    r = state.rules
    log = state.hand_log[-1]
    events = hand_history(state)
    drawn = [a for actor, a, aux in events if actor == CHANCE and aux == DEAL_DRAW]
    vis = visible_cards(state, seat)
    hidden_pos = [i for i, c in enumerate(drawn) if c not in vis]
    pool = [drawn[i] for i in hidden_pos] + [c for c in r.deck if c not in state.drawn]
    if len(pool) < 2:
        return None
    perm = rng.permutation(len(pool))
    alt_drawn = list(drawn)
    for k, i in enumerate(hidden_pos):
        alt_drawn[i] = pool[perm[k]]
    if alt_drawn == drawn:
        return None
    alt = State(r, episode="hand", dealer=log["dealer"], score=log["score"])
    feed = iter(alt_drawn)
    try:
        for actor, a, aux in events:
            if actor == CHANCE and aux == DEAL_DRAW:
                alt.apply_action(next(feed))
            else:
                alt.apply_action(a)
    except IllegalActionError:
        return None
    # an envido result is announced (winning seat and points): a deal that changes it, or the score,
    # is not in the seat's information set either
    if alt.env_result != state.env_result or alt.score != state.score:
        return None
    return alt


def check_information(state: State, rng, stats: Stats) -> None:
    seat = state.current_player()
    for _ in range(ALT_TRIES):
        alt = alternative_state(state, seat, rng)
        if alt is None:
            stats["info checks skipped (inconsistent deal)"] += 1
            continue
        assert alt.current_player() == seat, (
            f"hidden cards changed who acts: seat {seat} vs {alt.current_player()} (phase {state.phase})")
        assert alt.legal_actions() == state.legal_actions(), (
            f"seat {seat}'s legal actions depend on cards it cannot see (phase {state.phase}):\n"
            f"  {[state.action_to_string(a) for a in state.legal_actions()]}\n"
            f"  {[alt.action_to_string(a) for a in alt.legal_actions()]}\n"
            f"  record: {json.dumps(record_of(state))}")
        stats["info checks"] += 1
        stats[f"info checks in phase {state.phase}"] += 1
        return


# --------------------------------------------------------------------------- random play

def play_checked(state: State, rng, stats: Stats, info_prob: float) -> State:
    """Play `state` to its end at random, checking every invariant at every step."""
    r = state.rules
    hand_steps = 0
    hands_seen = state.hands_completed
    check_deck(state)
    check_actor(state)
    while not state.is_terminal():
        pre_score = list(state.score)
        pre = Before(state)
        if state.is_chance_node():
            action = sample_chance(state, rng)
            stats[f"phase {state.phase}"] += 1
        else:
            legal = state.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
            # card plays are most decisions: check them at info_prob, the rarer decisions more often
            if rng.random() < (info_prob if state.phase == "turn" else 5 * info_prob):
                check_information(state, rng, stats)
            stats[f"phase {state.phase}"] += 1
            if state.special:
                stats[f"special {state.special}"] += 1
        state.apply_action(action)
        check_scoring(pre_score, pre, action, state, stats)
        check_actor(state)
        check_deck(state)
        check_hand_sizes(state)
        hand_steps += 1
        if state.hands_completed > hands_seen:
            log = state.hand_log[state.hands_completed - 1]
            end_score = state.score if state.hands_completed == len(state.hand_log) else \
                state.hand_log[state.hands_completed]["score"]
            assert [a + b for a, b in zip(log["score"], log["hand_points"])] == list(end_score), (
                "hand points must equal the score change of the hand")
            check_returns(state)
            hands_seen = state.hands_completed
            hand_steps = 0
            stats["hands"] += 1
        assert hand_steps < HAND_STEP_BOUND, f"a {r.variant} hand did not end in {HAND_STEP_BOUND} steps"
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError):
        state.apply_action(0)
    check_returns(state)
    if state.episode == "game":
        assert state.game_over and max(state.score) >= r.target
        assert sum(1 for s in state.score if s >= r.target) >= 1
        assert state.score[state.winner] >= r.target
    return state


def check_replay(state: State) -> None:
    record = json.loads(json.dumps(record_of(state)))
    again = replay_state(record)
    assert again.score == state.score
    assert again.history == _without_first_dealer(state.history)
    assert again.game_over == state.game_over
    points = [h.get("hand_points") for h in again.hand_log]
    if state.episode == "hand" and not state.game_over:  # a replay is a game: the next hand is due
        assert again.phase == "deal" and not again.dealt and points[-1] is None
        points.pop()
    assert points == [h.get("hand_points") for h in state.hand_log]


def _without_first_dealer(history):
    from truc_env.game.engine import FIRST_DEALER

    return [h for h in history if h[2] != FIRST_DEALER]


def random_game(config, seed: int, stats: Stats, info_prob: float = 0.02) -> State:
    variant, options = config
    rng = np.random.default_rng(seed)
    state = State(make_rules(variant, **options), episode="game")
    return play_checked(state, rng, stats, info_prob)


# --------------------------------------------------------------------------- the default suite

GAMES_PER_CONFIG = -(-DEFAULT_GAMES // len(DEFAULT_CONFIGS))


@pytest.mark.parametrize("config", DEFAULT_CONFIGS, ids=config_id)
def test_random_games(config):
    stats = Stats()
    base = 1_000 * DEFAULT_CONFIGS.index(config)
    for g in range(GAMES_PER_CONFIG):
        state = random_game(config, base + g, stats)
        check_replay(state)
    assert stats["hands"] >= GAMES_PER_CONFIG
    assert stats["info checks"] > 0, stats


def test_default_suite_covers_every_variant_and_5000_games():
    assert {v for v, _ in DEFAULT_CONFIGS} == set(VARIANTS)
    assert GAMES_PER_CONFIG * len(DEFAULT_CONFIGS) >= DEFAULT_GAMES
    for variant, options in DEFAULT_CONFIGS:
        make_rules(variant, **options)


def test_default_suite_takes_every_option_value():
    """Every finite option value of every variant appears in some default configuration."""
    from truc_env.game.rules import option_specs

    for variant in VARIANTS:
        seen: dict[str, set] = {}
        for v, options in DEFAULT_CONFIGS:
            if v == variant:
                for k, x in make_rules(v, **options).options.items():
                    seen.setdefault(k, set()).add(json.dumps(x, sort_keys=True))
        for name, spec in option_specs(variant).items():
            if isinstance(spec.allowed, tuple) and spec.allowed and spec.allowed[0] != "int":
                values = set(spec.allowed)
                if name == "first_dealer":
                    values = {0, "random"}
                if name == "players" and variant == "put_n":
                    values = {3, 4, 5, 6}
                missing = {json.dumps(x) for x in values} - seen.get(name, set())
                assert not missing, f"{variant}: option {name} never takes {missing} in DEFAULT_CONFIGS"


@pytest.mark.parametrize("config", [("le_truc", {}), ("truco_paulista", {"signals": {"mode": "free", "intercept": 0.5}}),
                                    ("put_n", {"players": 5}), ("truco_argentino", {"flor": True})], ids=config_id)
def test_same_seed_same_game(config):
    a = random_game(config, 7, Stats(), info_prob=0.0)
    b = random_game(config, 7, Stats(), info_prob=0.0)
    c = random_game(config, 8, Stats(), info_prob=0.0)
    assert a.history == b.history and a.score == b.score and a.hand_log == b.hand_log
    assert c.history != a.history


def test_special_hands_and_calls_occur():
    """The random games reach the rare phases the invariants must hold in."""
    stats = Stats()
    for config in (("truco_paulista", {"players": 2, "target": 4}), ("truco_argentino", {"flor": True, "players": 2}),
                   ("le_truc", {}), ("put_4p", {}), ("put_n", {})):
        for g in range(40):
            random_game(config, 50_000 + g, stats)
    for key in ("phase eleven", "special eleven", "special iron", "phase envido", "phase give", "phase discard",
                "phase answer", "envido/flor points", "declined at eleven", "hand points (all-in)"):
        assert stats[key] > 0, f"{key!r} never happened: {stats}"


# --------------------------------------------------------------------------- the slow suite

def random_start(rules, rng) -> tuple[int, list[int]]:
    """A random dealer and score, biased to the end of the game (11-11, 11-x, 10-10 occur often)."""
    dealer = int(rng.integers(rules.players))
    t = rules.target
    score = []
    for _ in range(rules.n_sides):
        u = rng.random()
        if rules.eleven and u < 0.35:
            score.append(rules.eleven_score)
        elif u < 0.6:
            score.append(int(rng.integers(max(0, t - 4), t)))
        else:
            score.append(int(rng.integers(0, t)))
    return dealer, score


ALL_CONFIGS = all_configs()
HANDS_PER_CONFIG = -(-SLOW_HANDS // len(ALL_CONFIGS))
# phases and events each variant's share of the slow suite must reach
SLOW_COVERAGE = {
    "le_truc": ("phase answer", "hand points (all-in)", "phase deal"),
    "le_truc_4p": ("phase signal", "phase intercept", "phase instruct", "hand points (all-in)"),
    "put": ("hand points (all-in)",),
    "put_4p": ("phase give", "phase discard", "hand points (all-in)"),
    "put_n": ("put_n put points",),
    "truco_paulista": ("special eleven", "special iron", "declined at eleven", "phase signal", "phase intercept"),
    "truco_mineiro": ("special eleven", "special iron", "declined at eleven", "phase signal"),
    "truco_argentino": ("phase envido", "envido/flor points", "phase signal", "phase intercept"),
}


def test_slow_suite_plays_100000_hands_over_every_option_combination():
    assert HANDS_PER_CONFIG * len(ALL_CONFIGS) >= SLOW_HANDS
    assert {v for v, _ in ALL_CONFIGS} == set(VARIANTS) == set(SLOW_COVERAGE)
    assert len(ALL_CONFIGS) > 1000


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_hands_all_options(variant):
    """Random single hands from random scores and dealers, over every option combination."""
    configs = [(v, o) for v, o in ALL_CONFIGS if v == variant]
    rules = [make_rules(v, **o) for v, o in configs]
    rng = np.random.default_rng(list(VARIANTS).index(variant))
    stats = Stats()
    total = HANDS_PER_CONFIG * len(configs)
    for k in range(total):
        r = rules[k % len(rules)]
        dealer, score = random_start(r, rng)
        state = State(r, episode="hand", dealer=dealer, score=score)
        play_checked(state, rng, stats, info_prob=0.01)
        if k % 10 == 0:
            check_replay(state)
    assert stats["hands"] == total
    for key in SLOW_COVERAGE[variant]:
        assert stats[key] > 0, f"{key!r} never happened in {total} {variant} hands: {stats}"
    assert stats["info checks"] > total // 50, stats
