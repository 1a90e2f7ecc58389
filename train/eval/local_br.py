"""Local best response (Lisý & Bowling, "Equilibrium approximation quality of current no-limit poker bots",
2017): a lower bound on the exploitability of a heads-up policy that needs no public tree and no training.

At each of its decisions the local best responder (LBR) keeps a belief over the opponent's hidden cards
given everything it has seen (its own cards, the vira, every public action and played card) and the
policy under test: ``samples`` deals of the opponent's unseen cards, drawn uniformly from the cards the
responder has not seen (the deal's own odds), each replayed through the hand's history in the engine and
weighted by the policy's probability of every action the opponent took with them. It then values each
legal action by ``rollouts`` playouts from the belief (the same drawn deals for every action), both seats
played by the policy after that one action, and takes the best. Lisý and Bowling's LBR assumes that the
game is checked or called down after its action; Truc has no such neutral line (a hand is won by tricks),
so the continuation is the policy's own play, which the literature's rollout variants of LBR use too.
With ``continuation`` (``--lbr-continuation SPEC``) the responder's own later decisions in the playouts are
played greedily by that policy instead, typically a best response learned by ``--approx`` (kept with
``--br-dir``): the responder is then that learned response improved by one decision of search, valued
against the policy's belief, and still reads only its own information.

The responder is a real policy (it reads only its own information: the opponent's unseen cards are
never looked at, they are re-drawn), so its value against the policy, measured on fresh duplicate deals
as :mod:`train.eval.approx_br` measures a learned response (each deal played once with the responder on
each side, one hand from 0-0 with seat 0 dealing), is a lower bound on the exploitability up to its interval.

Applies to heads-up rules without envido or flor (their announcements reveal the hands' points, which the
belief does not follow), to any agent that gives its probabilities (``net:``, ``table:``, ``random``).
"""

from __future__ import annotations

import time

import numpy as np

from train.eval import stats
from train.eval.exploitability import ask_probabilities
from truc_env.errors import TrucError
from truc_env.game.engine import CHANCE, DEAL_DRAW, State, sample_chance
from truc_env.game.episode import Dealer
from truc_env.game.rules import Rules

LBR_STREAM = 0x4C42525F  # "LBR_": the deals' and the responder's seed streams, apart from every other


def check_applies(rules: Rules) -> None:
    """Refuse, in one line, rules the local best response does not follow."""
    if rules.players != 2 or rules.partnership:
        raise TrucError(f"{rules.variant}: local best response is for heads-up games (2 players); "
                        "use --approx for team games")
    if rules.envido or rules.flor:
        raise TrucError(f"{rules.variant}: local best response does not follow envido or flor announcements; "
                        "use --approx")


def check_sizes(samples: int, rollouts: int) -> None:
    if samples < 1 or rollouts < 1:
        raise TrucError(f"local best response needs samples >= 1 and rollouts >= 1 (got {samples}, {rollouts})")


def draw(p: np.ndarray, rng) -> int:
    """An action id drawn from probabilities over every action id."""
    return int(rng.choice(len(p), p=p / p.sum()))


def check_request(spec: str, rules: Rules, deals: int, samples: int, rollouts: int,
                  continuation: str | None = None) -> None:
    """Everything a measurement could be refused for, before any deal is played."""
    from agents import make_agent
    from train.eval.exploitability import probability_function

    check_applies(rules)
    if deals < 2:
        raise TrucError(f"local best response deals {deals}: at least 2 (an interval needs two)")
    check_sizes(samples, rollouts)
    for s in (spec, continuation):
        if s is not None and s.partition(":")[0] == "human":
            raise TrucError("a local best response plays agents that play by themselves, not 'human'")
    probability_function(make_agent(spec, rules, seed=0), rules)  # other rules, or an agent that only samples: refused
    if continuation is not None:  # played greedily: a network or a table
        probability_function(make_agent(f"greedy:{continuation}", rules, seed=0), rules)


class LocalBestResponse:
    """The responder for ``seat`` against ``fn`` (:func:`train.eval.exploitability.probability_function`)."""

    def __init__(self, rules: Rules, fn, samples: int = 64, rollouts: int = 16, seed: int = 0,
                 dealer: int = 0, score=(0, 0), continuation=None):
        check_sizes(samples, rollouts)
        self.rules, self.fn = rules, fn
        self.continuation = continuation  # a deterministic policy's one-hot probabilities (None: fn samples them)
        self.samples, self.rollouts = int(samples), int(rollouts)
        self.rng = np.random.default_rng([seed, LBR_STREAM])
        self.dealer, self.score = dealer, list(score)

    # ------------------------------------------------------------------ belief
    def _draws(self, st: State, seat: int) -> list[dict]:
        """``samples`` substitutions {deal draw index: card} of the opponent's cards the responder has not seen."""
        L = st.L
        opp_played = {L.deck[x - L.play] for a, x, _ in st.history if a == 1 - seat and L.play <= x < L.play + len(L.deck)}
        seen = {c for c, t in zip(st.dealt, st.deal_order) if t != 1 - seat} | opp_played
        pool = [c for c in self.rules.deck if c not in seen]
        slots = [i for i, (c, t) in enumerate(zip(st.dealt, st.deal_order)) if t == 1 - seat and c not in opp_played]
        return [dict(zip(slots, (pool[k] for k in self.rng.choice(len(pool), len(slots), replace=False))))
                for _ in range(self.samples)]

    def _replay(self, st: State, seat: int, sub: dict) -> tuple[State, float]:
        """The hand so far with the opponent's unseen cards replaced, and the policy's probability of the
        opponent's actions in it."""
        s = State(self.rules, episode="hand", dealer=self.dealer, score=list(self.score))
        draw, weight = 0, 1.0
        for actor, x, kind in st.history:
            if actor == CHANCE and kind == DEAL_DRAW:
                x = sub.get(draw, x)
                draw += 1
            elif actor == 1 - seat and weight > 0.0:
                weight *= float(ask_probabilities(self.fn, s, actor)[x])
            s.apply_action(x)
        return s, weight

    # ------------------------------------------------------------------ choice
    def _playout(self, s: State, seat: int) -> float:
        cont = self.continuation
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, self.rng))
                continue
            actor = s.current_player()
            if actor == seat and cont is not None:
                s.apply_action(int(np.argmax(ask_probabilities(cont, s, actor))))  # one-hot: a greedy: agent
            else:
                s.apply_action(draw(ask_probabilities(self.fn, s, actor), self.rng))
        return float(s.returns()[seat])

    def choose(self, st: State, seat: int) -> int:
        """The responder's action at ``st`` (``seat`` to act): the legal action of best playout value."""
        legal = st.legal_tuple()
        if len(legal) == 1:
            return legal[0]
        replays = [self._replay(st, seat, sub) for sub in self._draws(st, seat)]
        w = np.array([x[1] for x in replays])
        if w.sum() <= 0.0:  # no drawn deal explains the opponent's play: the deal's own odds
            w = np.ones(len(replays))
        picks = self.rng.choice(len(replays), self.rollouts, p=w / w.sum())
        values = []
        for a in legal:
            total = 0.0
            for k in picks:
                s = replays[k][0].clone()
                s.apply_action(a)
                total += self._playout(s, seat)
            values.append(total / self.rollouts)
        return legal[int(np.argmax(values))]


def play_deal(lbr: LocalBestResponse, fn, rules: Rules, deal_seed: int, seat: int, rng) -> float:
    """The responder's points in one hand from 0-0 (seat 0 dealing) on the seeded deal, playing ``seat``."""
    st = State(rules, episode="hand", dealer=0)
    dealer = Dealer.seeded(rules, deal_seed)
    while not st.is_terminal():
        if st.is_chance_node():
            st.apply_action(dealer.outcome(st))
        elif st.current_player() == seat:
            st.apply_action(lbr.choose(st, seat))
        else:
            st.apply_action(draw(ask_probabilities(fn, st, st.current_player()), rng))
    return float(st.returns()[seat])


def local_best_response(spec: str, rules: Rules, deals: int = 500, seed: int = 0, samples: int = 64,
                        rollouts: int = 16, progress: bool = False, continuation: str | None = None) -> dict:
    """A lower bound on the exploitability of agent ``spec`` (points per hand): the local best responder's
    mean over ``deals`` fresh duplicate deals of its points on either side, with a 95% t interval.
    ``continuation``: an agent spec playing the responder's later decisions in the playouts (greedily)."""
    from tqdm import tqdm

    from agents import make_agent
    from train.eval.exploitability import probability_function

    check_request(spec, rules, deals, samples, rollouts, continuation)
    fn = probability_function(make_agent(spec, rules, seed=seed), rules)
    cont = None if continuation is None else probability_function(make_agent(f"greedy:{continuation}", rules, seed=seed),
                                                                  rules)
    lbr = LocalBestResponse(rules, fn, samples, rollouts, seed, continuation=cont)
    rng = np.random.default_rng([seed, LBR_STREAM, 1])  # the policy's own draws
    deal_seeds = np.random.SeedSequence([seed, LBR_STREAM, 2]).generate_state(deals)
    cpu0, t0 = time.process_time(), time.time()
    per_deal, sides = [], [[], []]
    for d in tqdm(range(deals), desc="local best response", unit="deal", disable=not progress, mininterval=5):
        v = [play_deal(lbr, fn, rules, int(deal_seeds[d]), seat, rng) for seat in (0, 1)]
        sides[0].append(v[0])
        sides[1].append(v[1])
        per_deal.append((v[0] + v[1]) / 2)
    ci = stats.mean_ci(per_deal)
    return {"agent": spec, "variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key,
            "dealer": 0, "score": [0, 0], "kind": "lower bound (local best response)",
            "exploitability_lower_bound": ci["mean"], "ci95": [ci["lo"], ci["hi"]], "sd_per_deal": ci["sd"],
            "lbr_dealer": float(np.mean(sides[0])), "lbr_first_player": float(np.mean(sides[1])),
            "deals": deals, "samples": samples, "rollouts": rollouts, "seed": seed,
            "continuation": continuation or "the policy",
            "cpu_seconds": time.process_time() - cpu0, "seconds": time.time() - t0}


def cmd_lbr(args) -> None:
    """``truc exploitability --lbr``: print the lower bound and its interval (and write it as JSON)."""
    import json
    import os

    from train.config import parse_options
    from truc_env.game.rules import make_rules
    from truc_env.io.atomic import atomic_write_text

    rules = make_rules(args.variant, **parse_options(args.options))
    r = local_best_response(args.agent, rules, args.eval_deals, args.seed, args.lbr_samples, args.lbr_rollouts,
                            progress=not args.quiet, continuation=args.lbr_continuation)
    lo, hi = r["ci95"]
    print(f"{args.agent} on {rules.variant} (one hand from 0-0, seat 0 deals), local best response:")
    print(f"  exploitability >= {r['exploitability_lower_bound']:.4f} points per hand (95% interval {lo:.4f} .. "
          f"{hi:.4f}; a lower bound: the response looks one decision ahead)")
    print(f"  local best response as the dealer {r['lbr_dealer']:+.4f}; as the first player {r['lbr_first_player']:+.4f}")
    print(f"  {r['deals']} fresh duplicate deals, {r['samples']} drawn deals and {r['rollouts']} playouts per action "
          f"and decision; the responder's later decisions played by {r['continuation']}; {r['cpu_seconds']:.0f}s CPU")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        atomic_write_text(args.out, json.dumps(r, indent=2))
        print(f"  written to {args.out}")
