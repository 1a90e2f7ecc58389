"""One game at the web table, and what a seat (or a spectator) sees of it, as plain JSON-able dicts.

A :class:`Table` is a game being played: a person at one seat and agents at the others (``play``),
or agents at every seat (``watch``); every decision is kept as a :class:`Move` (the state before it,
the seat, the action). A :class:`Replay` is the
moves of a game record, to step through forward and back. :func:`seat_view_json` turns a state and
its moves into what the page draws, as a seat sees it (``viewer=None``: every hand shown): hidden
cards, unseen signals and passes stay hidden, as everywhere else (``truc_env.game.view``).

``version`` is the number of decisions made; an action sent for another version is stale and
changes nothing (:class:`StaleAction`), as is an action out of turn (:class:`NotYourTurn`).
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

import numpy as np

from agents import make_agent
from agents.players.human import Narrator
from truc_env.display.render import render
from truc_env.display.talk import card_name, pending_calls, seat_label, words
from truc_env.errors import IllegalActionError, RecordError, TrucError
from truc_env.game.engine import CHANCE, State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.observe import SeatObservation
from truc_env.game.records import record_of, replay_state
from truc_env.game.view import sees_signal, visible_hand

YOU = "you"  # the seat spec of the person at the table


class UnknownGame(TrucError):
    """No game with this id on this server (another browser's game, or one that has ended)."""


class StaleAction(TrucError):
    """An action sent for a state that has moved on (another tab, a double click): nothing changed."""


class NotYourTurn(TrucError):
    """An action from a seat that is not to act (or in a game the person does not play)."""


@dataclass
class Move:
    before: State  # the state at the decision (after chance), not changed afterwards
    seat: int
    action: int


def agent_policy(agent, observation, mask) -> dict[int, float] | None:
    """The probabilities ``agent`` gives each legal action here, or None for agents that only sample."""
    if hasattr(agent, "probabilities"):  # net: networks
        p = np.asarray(agent.probabilities(observation, mask), dtype=float)
        return {int(a): float(p[a]) for a in np.flatnonzero(mask)}
    if hasattr(agent, "policy"):  # table: strategy tables
        return {int(a): float(p) for a, p in agent.policy(observation, mask).items()}
    if getattr(agent, "name", "") == "random":
        legal = np.flatnonzero(mask)
        return {int(a): 1.0 / len(legal) for a in legal}
    return None


class Table:
    """A game in progress: ``specs[s]`` is seat ``s``'s agent spec, or :data:`YOU` for the person."""

    def __init__(self, rules, specs: list[str], names: list[str], seed: int = 0, advisor: str | None = None,
                 advisor_name: str | None = None):
        n = rules.players
        if len(specs) != n:
            raise TrucError(f"{rules.variant} has {n} seats: give one spec per seat ('you' for yours), "
                            f"got {len(specs)}")
        humans = [s for s, spec in enumerate(specs) if spec == YOU]
        if len(humans) > 1:
            raise TrucError("only one seat can be 'you'")
        self.rules, self.specs, self.names, self.seed = rules, list(specs), list(names), seed
        self.human = humans[0] if humans else None
        self.mode = "play" if humans else "watch"
        self.agents = [None if spec == YOU else make_agent(spec, rules, seed=seed * 100 + s)
                       for s, spec in enumerate(specs)]
        self.advisor = make_agent(advisor, rules, seed=seed) if advisor and self.human is not None else None
        self.advisor_name = (advisor_name or advisor) if self.advisor is not None else None
        self.state = State(rules, episode="game")
        deal_seed = int(np.random.SeedSequence([seed]).generate_state(1)[0])  # as `truc play`
        self.episode = Episode(self.state, Dealer.seeded(rules, deal_seed))
        self.moves: list[Move] = []
        self.lock = threading.Lock()
        self.episode.to_decision()
        self.run_agents()

    @property
    def version(self) -> int:
        return len(self.moves)

    def to_act(self) -> int:
        st = self.state
        return -1 if st.is_terminal() or st.current_player() == CHANCE else st.current_player()

    def _decide(self, seat: int) -> None:
        st = self.state
        mask = self.episode.mask()
        action = int(self.agents[seat].act(SeatObservation(st, seat, mask.copy()), mask.copy()))
        self._apply(seat, action)

    def _apply(self, seat: int, action: int) -> None:
        before = self.state.clone()
        self.episode.play(action)  # the engine refuses an illegal action before changing anything
        self.moves.append(Move(before, seat, action))
        self.episode.to_decision()

    def run_agents(self) -> None:
        """Let the agents play until it is the person's turn (or the game ends); none in watch mode."""
        if self.human is None:
            return
        while (seat := self.to_act()) >= 0 and seat != self.human:
            self._decide(seat)

    def check_version(self, version) -> None:
        if isinstance(version, bool) or not isinstance(version, int):
            raise TrucError(f"'version' must be the integer version of the state acted on, got {version!r:.40}")
        if version != self.version:
            raise StaleAction(f"this action was chosen at version {version}, but the game is at version "
                              f"{self.version}: nothing was played; the table is shown as it is now")

    def play(self, action, version) -> None:
        """The person's action at ``version``; then the agents play until the person's next turn."""
        self.check_version(version)
        if self.human is None:
            raise NotYourTurn("nobody plays for you in a game of agents: step it instead")
        seat = self.to_act()
        if seat != self.human:
            raise NotYourTurn("the game is over" if seat < 0 else f"it is seat {seat}'s turn, not yours")
        if isinstance(action, bool) or not isinstance(action, int):
            raise IllegalActionError(f"'action' must be an action id (an integer), got {action!r:.40}")
        if action not in self.state.legal_actions():
            legal = ", ".join(words(self.state, seat, a)[0] for a in self.state.legal_actions())
            raise IllegalActionError(f"action {action} is not legal now; legal: {legal}")
        self._apply(seat, action)
        self.run_agents()

    def step(self, version) -> None:
        """One decision of the agent to act (a game of agents only)."""
        self.check_version(version)
        if self.human is not None:
            raise NotYourTurn("the agents move by themselves in a game you play: choose your action")
        seat = self.to_act()
        if seat < 0:
            raise NotYourTurn("the game is over")
        self._decide(seat)

    def record(self) -> dict:
        """The game so far as a JSON record (``truc replay`` and the replay page read it)."""
        return record_of(self.state)

    def view(self, viewer: int | None) -> dict:
        out = seat_view_json(self.state, self.moves, viewer, self.names)
        seat = self.to_act()
        out.update(mode=self.mode, version=self.version, human=self.human)
        out["legal"] = legal_json(self.state, seat) if seat >= 0 and seat == self.human == viewer else []
        agent = self.advisor if seat >= 0 and seat == self.human else (self.agents[seat] if seat >= 0 else None)
        policy, by = None, None
        if agent is not None and (viewer is None or viewer == seat):  # a seat's policy tells its cards
            mask = self.episode.mask()
            policy = agent_policy(agent, SeatObservation(self.state, seat, mask.copy()), mask.copy())
            by = self.advisor_name if seat == self.human else self.names[seat]
        out["policy"] = policy_json(self.state, seat, policy, by)
        return out


def replay_moves(record) -> tuple[State, list[Move]]:
    """The final state of a record and its decisions in order (each with the state before it)."""
    final = replay_state(record)
    st = State(final.rules, episode="game", dealer=final.hand_log[0]["dealer"], score=list(final.start_score))
    moves = []
    for actor, action, _ in final.history:
        if actor >= 0:
            moves.append(Move(st.clone(), actor, action))
        st.apply_action(action)  # chance outcomes are kept in the history as they were drawn
    return final, moves


class Replay:
    """A game record to step through: ``view(viewer, at)`` is the table before decision ``at``."""

    mode = "replay"

    def __init__(self, record: dict, names: list[str] | None = None):
        self.final, self.moves = replay_moves(record)
        self.rules = self.final.rules
        self.names = names or [""] * self.rules.players  # a record does not say who played
        self.human = None
        self.lock = threading.Lock()

    @property
    def version(self) -> int:
        return len(self.moves)

    def view(self, viewer: int | None, at: int | None = None) -> dict:
        n = len(self.moves)
        at = n if at is None else at
        if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= n:
            raise TrucError(f"'at' must be a decision number in 0..{n}, got {at!r:.40}")
        state = self.moves[at].before if at < n else self.final
        out = seat_view_json(state, self.moves[:at], viewer, self.names)
        out.update(mode="replay", version=n, human=None, at=at, length=n, legal=[], policy=None)
        return out

    def record(self) -> dict:
        return record_of(self.final)


def parse_records(text: str) -> list[dict]:
    """The records in an uploaded file: one JSON record, or an arena's ``games.jsonl`` (a record per line)."""
    import json

    text = text.strip()
    if not text:
        raise RecordError("the file is empty: give a JSON game record or an arena games.jsonl")
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = []
        for i, line in enumerate(text.splitlines()):
            if line.strip():
                try:
                    docs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise RecordError(f"not a JSON record, nor a games.jsonl: line {i + 1}: {e.msg} "
                                      f"(column {e.colno})") from None
    except RecursionError:
        raise RecordError("the JSON nests too deeply to be a record") from None
    records = []
    for i, doc in enumerate(docs):
        if isinstance(doc, dict) and "record" in doc and "variant" not in doc:  # an arena line
            doc = doc["record"]
        if not isinstance(doc, dict):
            raise RecordError(f"game {i}: a record must be a JSON object, got {type(doc).__name__}")
        records.append(doc)
    return records


# ---------------------------------------------------------------------- what the page is given
def card_json(rules, card: int) -> dict:
    fam = rules.family
    return {"code": fam.format(card), "name": card_name(rules, card), "rank": fam.rank_of(card),
            "suit": fam.suit_of(card)}


def legal_json(state: State, seat: int) -> list[dict]:
    """The seat's legal actions: id, the record notation and the words of the game."""
    return [{"id": a, "code": state.action_to_string(a), "label": words(state, seat, a)[0]}
            for a in state.legal_actions()]


def policy_json(state: State, seat: int, policy: dict | None, by: str | None) -> dict | None:
    if policy is None:
        return None
    rows = [{"id": a, "label": words(state, seat, a)[0], "p": round(p, 4)} for a, p in policy.items()]
    return {"seat": seat, "by": by, "actions": sorted(rows, key=lambda r: -r["p"])}


class _Lines(io.StringIO):
    """Collects what a Narrator says, one entry per line."""

    def lines(self) -> list[str]:
        return [line for line in self.getvalue().splitlines() if line.strip()]


class _Omniscient(Narrator):
    """The narration for a spectator who sees every hand: every decision told in full."""

    def __init__(self, out):
        super().__init__(-1, out)

    def who(self, seat: int, rules=None) -> str:
        return f"seat {seat}"

    def visible_words(self, before, after, seat: int, action: int) -> str:
        return words(before, seat, action)[1]

    def side_name(self, rules, side: int) -> str:
        return f"side {side}"

    def score_line(self, state) -> str:
        return "score: " + ", ".join(f"side {s} {p}" for s, p in enumerate(state.score)) + \
            f" (target {state.rules.target})"

    def game_over_line(self, state) -> str:
        return f"== game over: side {state.winner} wins, reaching {state.rules.target}."


def narration(moves: list[Move], viewer: int | None) -> list[str]:
    """What happened, as ``viewer`` was told it (the terminal game's narration)."""
    out = _Lines()
    teller = _Omniscient(out) if viewer is None else Narrator(viewer, out)
    for move in moves:
        teller.on_decision(move.before, move.seat, move.action)
    return out.lines()


def last_trick(state: State) -> list[dict]:
    """The cards of the last finished trick (of this hand, else of the hand before): all played face up."""
    facts = state.hand_facts()
    done = len(facts["trick_winners"])
    if done == 0 and len(state.hand_log) > 1:
        facts = state.hand_facts(len(state.hand_log) - 2)
        done = len(facts["trick_winners"])
    if done == 0:
        return []
    winner = facts["trick_winners"][done - 1]
    return [{"seat": s, "card": card_json(state.rules, c), "won": s == winner}
            for t, s, c in facts["played"] if t == done - 1]


def seat_view_json(state: State, moves: list[Move], viewer: int | None, names: list[str]) -> dict:
    """The table as ``viewer`` sees it (None: every hand), with the narration of ``moves``."""
    r = state.rules
    seats = []
    for s in range(r.players):
        hand = visible_hand(state, viewer, s)
        left = [c for c in state.hands[s] if c >= 0]
        seats.append({
            "seat": s, "label": seat_label(r, s, viewer), "name": names[s], "side": r.side(s),
            "dealer": s == state.dealer, "active": s in state.active or not state.dealt,
            "hand": None if hand is None else [card_json(r, c) for c in hand if c >= 0],
            "cards": len(left),
        })
    signals = []
    for entry in state.signals:
        seen = True if viewer is None else sees_signal(state, viewer, entry)
        if seen is not None:
            signals.append({"seat": entry[0], "trick": entry[2],
                            "token": state.L.signal_tokens[entry[1]] if seen else None})
    actor = state.current_player()
    over = state.is_terminal()
    return {
        "variant": r.variant, "summary": r.spec.summary, "players": r.players, "partnership": r.partnership,
        "n_sides": r.n_sides, "target": r.target, "viewer": viewer, "seats": seats,
        "score": list(state.score), "stake": r.ladder[state.level], "trick": state.trick_no + 1,
        "hand_size": r.hand_size, "hand": len(state.hand_log),
        "vira": card_json(r, state.vira) if state.vira >= 0 else None,
        "table": [{"seat": s, "card": card_json(r, c)} for s, c in state.trick],
        "tricks": [w for w in state.trick_winners], "last_trick": last_trick(state),
        "pending": [{"seat": s, "call": call} for s, call in pending_calls(state)],
        "signals": signals,
        "instruction": state.L.instruct_tokens[state.instruction] if state.instruction >= 0 else None,
        "special": state.special or None,
        "to_act": -1 if over or actor == CHANCE else actor,
        "over": over, "winner": state.winner if over else None,
        "log": narration(moves, viewer),
        "text": render(state, viewer, spoken=True),
    }
