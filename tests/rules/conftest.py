"""Shared helpers for the rules tests: record builders, deck lists and outcome checks.

Every expected value in tests/rules is derived by hand from docs/rules.md (the rules contract).
"""

import pytest

from truc_env.errors import IllegalActionError
from truc_env.game.records import replay

FRENCH32 = [r + s for r in "789TJQKA" for s in "cdhs"]  # Le Truc
FRENCH52 = [r + s for r in "23456789TJQKA" for s in "cdhs"]  # Put
PAULISTA40 = [r + s for r in "A234567JQK" for s in "cdhs"]  # Brazilian dirty deck
PAULISTA24 = [r + s for r in "A23JQK" for s in "cdhs"]  # Paulista clean deck
MINEIRO27 = [
    c for c in PAULISTA40 if c not in {"7c", "7s", "4h", "4s", "4d"} and c[0] not in "56"
]
SPANISH40 = [f"{n}{s}" for n in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12) for s in "oceb"]

# Le Truc 4p with the signal channel and governor instructions switched off.
QUIET = {"signals": {"mode": "none"}, "instructions": False}


def outcome(hand_points, score, game_over=False, hand_over=True):
    return {
        "hand_points": list(hand_points),
        "score": list(score),
        "game_over": game_over,
        "hand_over": hand_over,
    }


def result(record):
    """replay() reduced to the four reported fields, as plain lists and bools."""
    r = replay(record)
    return {
        "hand_points": [int(x) for x in r["hand_points"]],
        "score": [int(x) for x in r["score"]],
        "game_over": bool(r["game_over"]),
        "hand_over": bool(r["hand_over"]),
    }


def rec(variant, hands, actions, *, dealer=0, score=None, options=None, vira=None):
    """A one-hand record dealt from explicit hands (hands[i] = seat i's cards as dealt)."""
    record = {"variant": variant, "dealer": dealer, "deal": {"hands": hands}, "actions": list(actions)}
    if vira is not None:
        record["deal"]["vira"] = vira
    if score is not None:
        record["score"] = list(score)
    if options is not None:
        record["options"] = options
    return record


def stack_deck(full, deals, dealer, turned=None):
    """A whole deck, top first, that deals `deals` in turn (first deal, then redeals).

    deals: list of per-seat hands (hands[i] = seat i's cards in the order dealt). The deal gives
    one card at a time starting with seat dealer+1; after each deal the card in `turned` (a list,
    one per deal, e.g. the vira) is the next card. The unused cards follow in `full` order.
    """
    top = []
    for k, hands in enumerate(deals):
        n = len(hands)
        for j in range(len(hands[0])):
            for i in range(n):
                top.append(hands[(dealer + 1 + i) % n][j])
        if turned is not None:
            top.append(turned[k])
    assert len(set(top)) == len(top), "test bug: duplicated card in stacked deck"
    assert all(c in full for c in top), "test bug: card outside the deck"
    return top + [c for c in full if c not in top]


def deck_rec(variant, full, deals, actions, *, dealer=0, score=None, options=None, turned=None):
    record = {
        "variant": variant,
        "dealer": dealer,
        "deal": {"deck": stack_deck(full, deals, dealer, turned)},
        "actions": list(actions),
    }
    if score is not None:
        record["score"] = list(score)
    if options is not None:
        record["options"] = options
    return record


def assert_last_illegal(record):
    """The record minus its last action replays; the last action raises IllegalActionError."""
    head = dict(record)
    head["actions"] = record["actions"][:-1]
    replay(head)
    with pytest.raises(IllegalActionError):
        replay(record)


def assert_legal(record):
    replay(record)
