"""Strategy files of the exact solver and the ``table:PATH`` agent.

A strategy file is a compressed ``.npz``: a JSON header (format, Rules key, options, package version,
how it was solved and its measured exploitability) and, per part, the public tree's lookup arrays
and the average strategy of every information set. Part ``main`` is the hand; part ``cont``
(present when the rules allow a redeal) is the redeal-free hand that follows an accepted redeal.
Heads-up Paulista has one part per vira subgame instead (``vira0``, ``vira1``, ...; the header's
``viras`` maps each vira card to its part), and a seat's key is read with the abstraction of the
vira it sees.
Files are written atomically (a temporary file, then a rename). Loading into other Rules, or a file
that is not a strategy file, raises :class:`truc_env.TrucError` saying so.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np

import truc_env
from agents.cfr.abstraction import CardAbstraction, make_abstraction
from agents.cfr.keys import InfoKey, parse_info_state
from agents.cfr.tree import CHILD, REDEAL, PublicTree
from truc_env.errors import TrucError
from truc_env.game.rules import Rules, make_rules
from truc_env.io.atomic import atomic_open
from truc_env.io.checks import foreign_file

FORMAT = "truc-cfr-strategy"
FORMAT_VERSION = 1
_ARRAYS = ("actor", "hs", "act_start", "label", "kind", "child", "hs_off", "hs_hands", "iset_off", "iset_start",
           "slot_k", "policy")


class StrategyTable:
    """One part's lookup arrays: walk the public actions, then read the hand's action distribution."""

    def __init__(self, arrays: dict, dealer: int):
        for name in _ARRAYS:
            setattr(self, name, arrays[name])
        self.dealer = dealer

    @staticmethod
    def tree_arrays(tree: PublicTree, solver) -> dict:
        """The lookup arrays of a public tree and its solver's slots (every one of ``_ARRAYS`` but the policy)."""
        return {"actor": tree.actor, "hs": tree.hs, "act_start": tree.act_start, "label": tree.label,
                "kind": tree.kind, "child": tree.child, "hs_off": tree.hs_off, "hs_hands": tree.hs_hands,
                "iset_off": solver.iset_off, "iset_start": solver.iset_start, "slot_k": solver.slot_k}

    @classmethod
    def from_solver(cls, tree: PublicTree, solver, policy: np.ndarray) -> StrategyTable:
        return cls({**cls.tree_arrays(tree, solver), "policy": policy.astype(np.float32)}, tree.dealer)

    def matches(self, tree: PublicTree, solver) -> bool:
        """Whether this part was written from this very public tree and slots (its policy is a table for them)."""
        return self.dealer == tree.dealer and all(
            np.array_equal(getattr(self, name), ref) for name, ref in self.tree_arrays(tree, solver).items())

    def walk(self, labels) -> tuple[int, bool]:
        """Node reached by these public actions, and whether an accepted redeal was crossed."""
        node = 0
        for lab in labels:
            a, b = self.act_start[node], self.act_start[node + 1]
            hit = np.nonzero(self.label[a:b] == lab)[0]
            if len(hit) == 0:
                raise KeyError(lab)
            e = a + int(hit[0])
            if self.kind[e] == REDEAL:
                return -1, True
            if self.kind[e] != CHILD:
                raise KeyError(lab)
            node = int(self.child[e])
        return node, False

    def distribution(self, node: int, tree_seat: int, hand_index: int) -> tuple[np.ndarray, np.ndarray]:
        """(labels, probabilities) of the information set (node, hand)."""
        if int(self.actor[node]) != tree_seat:
            raise KeyError("not this seat's decision")
        s = int(self.hs[node, tree_seat])
        hands = self.hs_hands[self.hs_off[s]:self.hs_off[s + 1]]
        pos = np.nonzero(hands == hand_index)[0]
        if len(pos) == 0:
            raise KeyError("hand not consistent with the public actions")
        iset = int(self.iset_off[node]) + int(pos[0])
        a, b = int(self.iset_start[iset]), int(self.iset_start[iset + 1])
        labels = self.label[self.act_start[node] + self.slot_k[a:b].astype(np.int64)]
        return labels, self.policy[a:b].astype(np.float64)


class Strategy:
    """A solved strategy for one Rules: the average strategy at every information set."""

    def __init__(self, header: dict, parts: dict):
        self.header = header
        self.parts = parts
        self.rules = make_rules(header["variant"], **header["options"])
        self.abstraction = make_abstraction(self.rules, header.get("abstraction", "strength"))
        self.viras = {self.rules.family.parse(name): part for name, part in header.get("viras", {}).items()}
        self._by_vira: dict = {}

    def vira_of(self, info_state: str) -> int | None:
        """The vira turned in the last hand of an info-state string (None in a game without one)."""
        if not self.rules.vira:
            return None
        tokens = info_state.split()
        start = max((i for i, t in enumerate(tokens) if t.startswith("|h")), default=0)
        for i in range(start, len(tokens) - 1):
            if tokens[i] == "vira":
                return self.rules.family.parse(tokens[i + 1])
        raise KeyError("no vira turned yet")

    def abstraction_of(self, info_state: str) -> CardAbstraction:
        """The card abstraction this decision is keyed by (per vira in Paulista)."""
        vira = self.vira_of(info_state)
        return self.abstraction if vira is None else self._abstraction_of_vira(vira)

    def _abstraction_of_vira(self, vira) -> CardAbstraction:
        ab = self._by_vira.get(vira)
        if ab is None:
            ab = self._by_vira[vira] = make_abstraction(self.rules, self.abstraction.kind, vira)
        return ab

    def key_of(self, info_state: str) -> InfoKey:
        return parse_info_state(info_state, self.rules, self.abstraction_of(info_state))

    def distribution(self, info_state: str) -> tuple[np.ndarray, np.ndarray]:
        """(labels, probabilities) at the information set of this info-state string.

        Raises KeyError when the strategy has no entry for it.
        """
        vira = self.vira_of(info_state)
        return self.distribution_of_key(self.key_of(info_state), vira)

    def distribution_of_key(self, key: InfoKey, vira=None) -> tuple[np.ndarray, np.ndarray]:
        """(labels, probabilities) at the information set of a solver key (``vira``: the card turned,
        heads-up Paulista). Raises KeyError when the strategy has no entry for it."""
        if key.role < 0:
            raise KeyError("seat is neither dealer nor first player")
        table = self.parts["main"] if vira is None else self.parts[self.viras[vira]]
        tree_seat = table.dealer if key.role == 0 else 1 - table.dealer
        node, crossed = table.walk(key.actions)
        if crossed or key.redealt:
            if "cont" not in self.parts:
                raise KeyError("no strategy for the hand after a redeal")
            table = self.parts["cont"]
            node, _ = table.walk(key.after)
        ab = self.abstraction if vira is None else self._abstraction_of_vira(vira)
        hand = ab.hand_index.get(key.hand)
        if hand is None:
            raise KeyError("unknown hand")
        return table.distribution(node, tree_seat, hand)


def save_strategy(path: str, header: dict, parts: dict) -> None:
    """Write a strategy file atomically."""
    header = dict(header)
    header.update({"format": FORMAT, "format_version": FORMAT_VERSION, "truc_env_version": truc_env.__version__})
    arrays = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    for part, table in parts.items():
        for name in _ARRAYS:
            arrays[f"{part}.{name}"] = np.asarray(getattr(table, name))
        arrays[f"{part}.dealer"] = np.int64(table.dealer)
    with atomic_open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def save_table(path: str, tree: PublicTree, solver, table: np.ndarray | None = None) -> float:
    """Write ``table`` (one probability per solver slot; default: ``solver``'s average strategy) on ``tree`` as a
    one-part strategy file (``main``: a hand whose rules have no redeal), its header naming the rules, the tree and
    the solve; returns the table's exact exploitability (points per hand)."""
    table = solver.average_strategy() if table is None else table
    exact = float(solver.exploitability(table))
    rules = tree.rules
    header = {"variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key,
              "dealer": tree.dealer, "score": list(tree.score), "abstraction": tree.abstraction.kind,
              "algorithm": solver.algorithm, "iterations": solver.iteration, "exploitability": exact}
    save_strategy(path, header, {"main": StrategyTable.from_solver(tree, solver, table)})
    return exact


def load_strategy(path: str, rules: Rules | None = None) -> Strategy:
    """Read a strategy file; refuse a corrupt file or one made for other Rules."""
    try:
        what = foreign_file(path, (b"PK",), "a zip archive (.npz)")
        if what is not None:
            raise TrucError(f"{path}: not a CFR strategy file ({what})")
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise TrucError(f"no strategy file {path!r}") from None
    except IsADirectoryError:
        raise TrucError(f"{path}: a folder, not a CFR strategy file") from None
    except TrucError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise TrucError(f"{path}: not a readable CFR strategy file ({e})") from None
    except Exception as e:  # zlib.error and the like from a half-written file
        raise TrucError(f"{path}: not a readable CFR strategy file ({type(e).__name__}: {e})") from None
    try:
        header = json.loads(bytes(data["header"]).decode())
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError("wrong format tag")
        if not isinstance(header.get("rules_key"), str):
            raise ValueError("no rules_key in the header")
        parts = {}
        for part in sorted({k.rsplit(".", 1)[0] for k in data if k.endswith(".policy")}):
            parts[part] = StrategyTable({n: data[f"{part}.{n}"] for n in _ARRAYS}, int(data[f"{part}.dealer"]))
        missing = set(header.get("viras", {}).values()) if header.get("viras") else {"main"}
        if not parts or missing - set(parts):
            raise ValueError(f"strategy part(s) {sorted(missing - set(parts)) or ['main']} missing")
    except (KeyError, ValueError, TypeError, AttributeError, UnicodeDecodeError) as e:
        raise TrucError(f"{path}: not a CFR strategy file or corrupt ({e})") from None
    if header.get("format_version") != FORMAT_VERSION:
        raise TrucError(f"{path}: strategy format version {header.get('format_version')} is not supported "
                        f"(this code reads version {FORMAT_VERSION})")
    if rules is not None and rules.key != header["rules_key"]:
        raise TrucError(f"{path}: this strategy was solved for {header['rules_key']} and cannot play {rules.key}")
    try:
        return Strategy(header, parts)
    except TrucError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a header without its variant, options...
        raise TrucError(f"{path}: not a CFR strategy file or corrupt (header: {type(e).__name__} {e})") from None
