"""JSON game records (docs/rules.md §9): record a state, save and load, replay exactly.

One hand::

    {"variant": "le_truc", "options": {}, "dealer": 1, "score": [0, 0],
     "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]},
     "actions": ["0 raise", "1 accept", "0 play 7c", "1 play 7d"]}

Several hands of one game: ``"hands": [{"deal": {...}, "actions": [...]}, ...]`` in place of
``deal``/``actions``; the dealer rotates and the score carries, as in play.
"""

from __future__ import annotations

import json

import numpy as np

from truc_env.errors import IllegalActionError, RecordError, TrucError
from truc_env.game.engine import CHANCE, DEAL_DRAW, FIRST_DEALER, State
from truc_env.game.rules import make_rules
from truc_env.io.assets import shipped_path
from truc_env.io.atomic import atomic_write_text, parse_json, read_text
from truc_env.io.checks import check_seed

MAX_DEPTH = 32  # a record nests 4 levels deep; anything far deeper is not a record
RESULT_KEYS = ("hand_points", "score", "game_over", "hand_over")
RECORD_KEYS = {"variant", "options", "dealer", "score", "deal", "seed", "actions", "hands", "result", "version"}
HAND_KEYS = {"deal", "actions", "seed", "dealer", "score", "result"}


def _rules_of(record: dict):
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    unknown = set(record) - RECORD_KEYS
    if unknown:
        raise RecordError(f"unknown record key(s) {sorted(unknown)}; allowed: {sorted(RECORD_KEYS)}")
    if "variant" not in record:
        raise RecordError("a record needs a 'variant'")
    if not isinstance(record["variant"], str):
        raise RecordError(f"'variant' must be a string naming the variant, got {_short(record['variant'])}")
    _check_depth(record)
    options = record.get("options") or {}
    if not isinstance(options, dict):
        raise RecordError(f"'options' must be an object, got {_short(options)}")
    return make_rules(record["variant"], **options)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_depth(value, depth: int = 0) -> None:
    """Refuse absurd nesting before anything recurses into it."""
    if depth > MAX_DEPTH:
        raise RecordError(f"the record nests deeper than {MAX_DEPTH} levels; a record is at most a few deep")
    if isinstance(value, dict):
        for v in value.values():
            _check_depth(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_depth(v, depth + 1)


def _seed_of(value, where: str):
    try:
        return check_seed(value, where)
    except TrucError as e:
        raise RecordError(str(e)) from None


def _hand_entries(record: dict) -> list[dict]:
    if "hands" in record:
        if "deal" in record or "actions" in record:
            raise RecordError("a record has either 'hands' (several hands) or 'deal'/'actions' (one hand), not both")
        hands = record["hands"]
        if not isinstance(hands, list) or not hands:
            raise RecordError("'hands' must be a non-empty list of {deal, actions} objects")
        for i, h in enumerate(hands):
            if not isinstance(h, dict) or set(h) - HAND_KEYS:
                raise RecordError(f"hand {i} must be an object with keys among {sorted(HAND_KEYS)}")
        return hands
    return [{"deal": record.get("deal"), "actions": record.get("actions", []), "seed": record.get("seed")}]


def _parse_cards(rules, cards, where: str) -> list[int]:
    if not isinstance(cards, list):
        raise RecordError(f"{where} must be a list of cards, got {cards!r}")
    out = []
    deck = set(rules.deck)
    for text in cards:
        card = rules.family.parse(text)
        if card not in deck:
            raise RecordError(f"{where}: card {text!r} is not in the {rules.variant} deck "
                              f"({len(rules.deck)} cards with these options)")
        if card in out:
            raise RecordError(f"{where}: card {text!r} appears twice")
        out.append(card)
    return out


def _draw_order(rules, deal, dealer: int, seed) -> list[int]:
    """The order in which cards leave the deck for this hand (deal, vira, redeals)."""
    rng = np.random.default_rng(0 if seed is None else _seed_of(seed, "'seed'"))
    if deal is None:
        deal = {}
    if not isinstance(deal, dict) or set(deal) - {"hands", "vira", "deck"}:
        raise RecordError(f"'deal' must be an object with 'hands' (and 'vira') or 'deck', got {deal!r}")
    n, hs = rules.players, rules.hand_size
    if "deck" in deal:
        order = _parse_cards(rules, deal["deck"], "deal.deck")
        if len(order) != len(rules.deck):
            missing = [rules.family.format(c) for c in rules.deck if c not in set(order)]
            raise RecordError(f"deal.deck must give the whole {len(rules.deck)}-card deck, top first; "
                              f"it has {len(order)} cards (missing {', '.join(missing[:6])}"
                              f"{' …' if len(missing) > 6 else ''})")
        if "hands" in deal:
            dealt = [[order[k * n + (s - dealer - 1) % n] for k in range(hs)] for s in range(n)]
            given = [_parse_cards(rules, h, f"deal.hands[{s}]") for s, h in enumerate(deal["hands"])]
            if given != dealt:
                raise RecordError("deal.hands does not match the hands that deal.deck deals")
        return order
    if "hands" not in deal:
        return [int(c) for c in rng.permutation(np.array(rules.deck))]
    hands = deal["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        raise RecordError(f"deal.hands must list {n} hands (one per seat), got {hands!r}")
    parsed = [_parse_cards(rules, h, f"deal.hands[{s}]") for s, h in enumerate(hands)]
    for s, h in enumerate(parsed):
        if len(h) != hs:
            raise RecordError(f"deal.hands[{s}] has {len(h)} cards; {rules.variant} deals {hs}")
    order = [parsed[(dealer + 1 + i) % n][i // n] for i in range(hs * n)]
    if len(set(order)) != len(order):
        dup = next(c for c in order if order.count(c) > 1)
        raise RecordError(f"deal.hands: card {rules.family.format(dup)!r} is dealt twice")
    if "vira" in deal:
        if not rules.vira:
            raise RecordError(f"{rules.variant} has no vira, but the deal gives one")
        (vira,) = _parse_cards(rules, [deal["vira"]], "deal.vira")
        if vira in order:
            raise RecordError(f"deal.vira {deal['vira']!r} is also in a hand")
        order.append(vira)
    rest = [c for c in rules.deck if c not in set(order)]
    order += [rest[i] for i in rng.permutation(len(rest))]
    return order


class _Dealer:
    """Feeds the state's deal chance nodes from a draw order."""

    def __init__(self, order: list[int]):
        self.order = order
        self.pos = 0

    def feed(self, state: State) -> None:
        while state.phase == "deal":
            if self.pos >= len(self.order):
                raise RecordError("the record's deck runs out of cards for the deal")
            state.apply_action(self.order[self.pos])
            self.pos += 1


def _apply_text(state: State, text: str, index: int) -> None:
    if not isinstance(text, str) or not text.strip():
        raise RecordError(f"action {index} must be a string like '0 play 7c', got {_short(text)}")
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        # int() reads "٣" as 3: a record is written with ASCII digits only
        raise RecordError(f"action {index} {text!r}: seats and numbers are written with the digits 0-9")
    who, _, rest = text.strip().partition(" ")
    if who == "c":
        kind, _, seat = rest.partition(" ")
        if state.phase != "intercept":
            raise IllegalActionError(f"action {index} {text!r}: no signal interception is pending here")
        expected = state.intercept_queue[0]
        if kind not in ("seen", "unseen") or seat != str(expected):
            raise IllegalActionError(
                f"action {index} {text!r}: the pending chance event is the interception by seat {expected}: "
                f"'c seen {expected}' or 'c unseen {expected}'")
        state.apply_action(1 if kind == "seen" else 0)
        return
    if not (who.isascii() and who.isdigit()):
        raise RecordError(f"action {index} {text!r} must start with a seat number (0-9) or 'c'")
    seat = int(who)
    actor = state.current_player()
    if state.is_terminal():
        raise IllegalActionError(f"action {index} {text!r}: the game is over, no action is legal")
    if actor == CHANCE:
        raise IllegalActionError(f"action {index} {text!r}: the hand is over (a new deal is due)")
    legal = ", ".join(state.action_to_string(a) for a in state.legal_actions())
    if seat != actor:
        raise IllegalActionError(
            f"action {index} {text!r}: seat {seat} may not act now; it is seat {actor}'s decision "
            f"(legal: {legal})")
    try:
        action = state.string_to_action(rest)
    except IllegalActionError:
        raise IllegalActionError(f"action {index} {text!r}: seat {seat} cannot {rest!r}; legal: {legal}") from None
    if action not in state.legal_actions():
        raise IllegalActionError(f"action {index} {text!r}: seat {seat} cannot {rest!r} now; legal: {legal}")
    state.apply_action(action)


def replay_state(record: dict) -> State:
    """Replay a record and return the state after its last action."""
    rules = _rules_of(record)
    dealer = record.get("dealer", 0)
    if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < rules.players:
        raise RecordError(f"'dealer' must be a seat in 0..{rules.players - 1}, got {_short(dealer)}")
    score = record.get("score")
    if score is not None and (not isinstance(score, list) or any(isinstance(x, bool) for x in score)):
        raise RecordError(f"'score' must be a list of {rules.n_sides} non-negative integers (one per side), "
                          f"got {_short(score)}")
    try:
        state = State(rules, episode="game", dealer=dealer, score=score)
    except TrucError as e:
        raise RecordError(str(e)) from None
    entries = _hand_entries(record)
    for h, entry in enumerate(entries):
        if h > 0 and not state.hand_over:
            raise RecordError(f"hand {h} starts before hand {h - 1} has ended")
        if state.is_terminal():
            raise RecordError(f"hand {h}: the game was already over")
        if "dealer" in entry and (isinstance(entry["dealer"], bool) or entry["dealer"] != state.dealer):
            raise RecordError(f"hand {h}: dealer {_short(entry['dealer'])} but the deal has passed to seat "
                              f"{state.dealer}")
        if "score" in entry and entry["score"] != list(state.score):
            raise RecordError(f"hand {h}: score {_short(entry['score'])} but the score is {list(state.score)} "
                              "when it starts")
        dealer_feed = _Dealer(_draw_order(rules, entry.get("deal"), state.dealer, entry.get("seed", record.get("seed"))))
        dealer_feed.feed(state)
        done = state.hands_completed
        actions = entry.get("actions") or []
        if not isinstance(actions, list):
            raise RecordError(f"'actions' must be a list of strings, got {actions!r}")
        for i, text in enumerate(actions):
            if state.hands_completed > done:
                raise IllegalActionError(f"action {i} {text!r}: the hand is already over")
            _apply_text(state, text, i)
            if state.phase == "deal" and state.hands_completed == done:
                dealer_feed.feed(state)  # an accepted redeal
        if "result" in entry:
            log = state.hand_log[h] if h < len(state.hand_log) else {}
            over = "hand_points" in log
            _check_result(entry["result"], {"hand_points": log.get("hand_points", list(state.hand_points)),
                                            "hand_over": over}, f"hand {h}")
    if "result" in record:
        _check_result(record["result"], outcome(state), "the record")
    return state


def _check_result(claimed, actual: dict, where: str) -> None:
    """A written result must be what the replay gives: a record that contradicts itself is refused."""
    allowed = [k for k in RESULT_KEYS if k in actual]
    if not isinstance(claimed, dict) or set(claimed) - set(allowed):
        raise RecordError(f"{where}: 'result' must be an object with keys among {allowed}, got {_short(claimed)}")
    for key, value in claimed.items():
        want = actual[key]
        if isinstance(want, bool) != isinstance(value, bool) or \
                (list(value) if isinstance(value, list) else value) != (list(want) if isinstance(want, list) else want):
            raise RecordError(f"{where}: 'result' says {key} {_short(value)} but the replay gives {want!r}")


def outcome(state: State) -> dict:
    """The docs/rules.md §9 outcome of the last hand begun in a state."""
    log = state.hand_log[-1]
    if state.hand_over and "hand_points" not in log:  # the next hand has begun: report the last one
        log = state.hand_log[-2]
    over = "hand_points" in log
    return {
        "hand_points": list(log["hand_points"] if over else state.hand_points),
        "score": list(state.score),
        "game_over": state.game_over,
        "hand_over": over,
    }


def replay(record: dict) -> dict:
    """Replay a record: ``{"hand_points", "score", "game_over", "hand_over"}`` of its last hand."""
    return outcome(replay_state(record))


def record_of(state: State) -> dict:
    """The record of every hand played in a state (replays to the same state)."""
    r = state.rules
    fam = r.family
    hands = []
    first_dealer = None
    for log in state.hand_log:
        start, end = log["start"], log.get("end", len(state.history))
        drawn, actions = [], []
        for actor, action, aux in state.history[start:end]:
            if actor == CHANCE:
                if aux == DEAL_DRAW:
                    drawn.append(action)
                elif aux != FIRST_DEALER:
                    actions.append(f"c {'seen' if action else 'unseen'} {aux}")
            else:
                actions.append(f"{actor} {state.action_to_string(action)}")
        deck = drawn + [c for c in r.deck if c not in set(drawn)]
        entry = {"deal": {"deck": [fam.format(c) for c in deck]}, "actions": actions}
        if "hand_points" in log:
            entry["result"] = {"hand_points": log["hand_points"]}
        hands.append(entry)
        if first_dealer is None:
            first_dealer = log["dealer"]
    out = {"variant": r.variant, "options": _explicit_options(r), "dealer": first_dealer or 0,
           "score": list(state.start_score)}
    if len(hands) == 1:
        out.update(hands[0])
        out.pop("result", None)
    else:
        out["hands"] = hands
    return out


def _explicit_options(rules) -> dict:
    from truc_env.game.rules import option_specs

    specs = option_specs(rules.variant)
    return {k: v for k, v in rules.options.items() if k in specs and v != specs[k].default
            and not (k == "signals" and v == make_rules(rules.variant).options.get("signals"))}


def save(record: dict, path) -> None:
    """Write a record as JSON, atomically (temp file + rename)."""
    atomic_write_text(path, json.dumps(record, indent=1) + "\n")


def load(path) -> dict:
    """Read a record written by :func:`save`; a malformed file raises RecordError."""
    record = parse_json(read_text(shipped_path("examples", path), "record", RecordError), f"record {path}", RecordError)
    _check_depth(record)
    return record
