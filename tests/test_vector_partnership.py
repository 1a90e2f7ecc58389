"""The batched engine on the partnership variants against engine.py (issue 17 item 3): Le Truc 2 vs 2
with governors, instructions, governor-partner signals and the redeal; Put 2 vs 2 with its card pass;
Argentine Truco heads-up and 2 vs 2 with envido, falta envido, flor and señas.
Same differential test as
tests/test_vector.py: the kernel's deals replayed through ``engine.State``, masks, observations,
rewards and episode ends compared at every step of random legal play."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector import Reference, run_differential
from test_vector import _id as case_id

from truc_env.batch.vector import VectorEnv, kernel_supports
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

pytest.importorskip("numba")


class PartnershipReference(Reference):
    """The reference, also noting the partnership mechanisms the random games went through."""

    def __init__(self, venv: VectorEnv):
        super().__init__(venv)
        self.envido_asked = [False] * venv.num_envs

    def new_episode(self, b: int) -> None:
        old = self.states[b]
        if old is not None and self.envido_asked[b] and old.is_terminal() and old.game_over:
            self.events.add("envido ends the game")
        super().new_episode(b)

    def check(self, b: int, obs, mask, seat, where: str) -> None:
        super().check(b, obs, mask, seat, where)
        st, ev = self.states[b], self.events
        self.envido_asked[b] = st.phase == "envido"
        if st.phase == "envido":
            ev.add("envido on truco" if st.call_kind else "envido")
        if st.env_result is not None:
            ev.add("envido accepted")
        if "falta_envido" in st.env_calls:
            ev.add("falta envido")
        if st.flor_seats:
            ev.add("flor")
        if st.phase == "flor":
            ev.add("flor against flor")
        if st.flor_result is not None:
            ev.add("con flor quiero")
        if st.phase == "instruct":
            ev.add("instruct")
        if st.phase == "turn" and st.instruction > 0:
            L = st.L
            plays = [a for a in st.legal_actions() if L.play <= a < L.play + len(L.deck)]
            if len(plays) < len(st.held(st.turn)):
                ev.add("narrowed")  # an instruction took plays away
        if st.phase == "answer" and st.call_kind != "redeal":
            ev.add("call answered")
        if st.phase in ("give", "discard"):
            ev.add(st.phase)
        if any(card == st.given[s] for _, s, card in st.played):
            ev.add("passed card played")


# (variant, options, events the random games must reach)
CASES = [
    ("le_truc_4p", dict(dealer="random", random_start_score=0.5),
     {"redeal", "all_in", "signals", "instruct", "narrowed", "call answered"}),
    ("le_truc_4p", dict(episode="game", reward="win"), {"redeal", "signals", "narrowed"}),
    ("le_truc_4p", dict(episode="game"), {"redeal", "all_in", "narrowed"}),
    ("le_truc_4p", dict(ranking="seven_ace", ladder="doubling", all_tied="none", fold=True, max_raises=2,
                        signals={"mode": "free", "vocab": 3, "timing": "every_trick"}, reward="win"),
     {"signals", "narrowed"}),
    ("le_truc_4p", dict(signals={"mode": "card", "truthful": False, "intercept": 1.0, "timing": "every_trick"},
                        random_start_score=0.3), {"signals", "narrowed", "redeal"}),
    ("le_truc_4p", dict(instructions=False, signals={"mode": "none"}, redeal=False, episode="game"), {"all_in"}),
    ("le_truc_4p", dict(ranks=4, hand_size=2, target=5, episode="game", reward="win"), {"narrowed"}),
    ("put_4p", dict(dealer="random", random_start_score=0.5), {"give", "discard", "passed card played", "all_in"}),
    ("put_4p", dict(episode="game", reward="win"), {"passed card played", "all_in"}),
    ("put_4p", dict(all_tied="leader", fold=False, episode="game"), {"passed card played", "all_in"}),
    ("put_4p", dict(ranks=5, hand_size=2, target=3, random_start_score=0.5, reward="win"), {"passed card played"}),
    ("truco_argentino", dict(players=2, dealer="random", random_start_score=0.5),
     {"envido", "envido on truco", "envido accepted", "falta envido", "envido ends the game", "raised twice"}),
    ("truco_argentino", dict(players=2, episode="game", target=15), {"envido accepted", "envido ends the game"}),
    ("truco_argentino", dict(players=2, episode="game", reward="win", all_tied="none", fold=False, target=9),
     {"envido accepted", "envido ends the game"}),
    ("truco_argentino", dict(random_start_score=0.5),
     {"envido", "envido on truco", "envido accepted", "falta envido", "envido ends the game"}),
    ("truco_argentino", dict(episode="game", reward="win", target=12, signals={"mode": "senas"}),
     {"envido accepted", "signals"}),
    ("truco_argentino", dict(signals={"mode": "senas", "truthful": False, "intercept": 1.0, "timing": "every_trick"},
                             all_tied="dealer", max_raises=2, random_start_score=0.3), {"envido accepted", "signals"}),
    ("truco_argentino", dict(players=2, envido=False, episode="game", target=6), {"raised twice"}),
    ("truco_argentino", dict(players=2, flor=True, random_start_score=0.5), {"flor", "envido accepted"}),
    ("truco_argentino", dict(flor=True, episode="game", target=15), {"flor", "flor against flor", "envido accepted"}),
    ("truco_argentino", dict(flor=True, envido=False, fold=False, reward="win", random_start_score=0.5), {"flor"}),
    # the oracle bound: partners see each other's hands (a partner_hand section Le Truc has only with it)
    ("le_truc_4p", dict(signals={"mode": "none", "open_hands": True}, instructions=False), {"redeal"}),
    ("truco_argentino", dict(signals={"mode": "senas", "open_hands": True}), {"envido accepted", "signals"}),
]


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_kernel_matches_engine(case):
    variant, options, must_reach = case
    out = run_differential(variant, episodes=100, num_envs=24, seed=7, reference=PartnershipReference, **options)
    assert out["episodes"] >= 100
    assert must_reach <= out["events"], f"random games never reached {must_reach - out['events']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_kernel_matches_engine_thousands(case):
    variant, options, _ = case
    for seed in (1, 2, 3):
        out = run_differential(variant, episodes=1500, num_envs=64, seed=seed, reference=PartnershipReference, **options)
        assert out["episodes"] >= 1500


def test_partnership_variants_run_on_the_kernel():
    for variant in ("le_truc_4p", "put_4p", "truco_argentino"):
        assert VectorEnv(variant, 2).backend == "numba"
        assert kernel_supports(make_rules(variant)) is None
    why = kernel_supports(make_rules("le_truc_4p", signals={"mode": "card", "intercept": 0.5}))
    assert "intercept" in why
    with pytest.raises(TrucError, match="cannot run"):
        VectorEnv("le_truc_4p", 2, backend="numba", signals={"mode": "free", "intercept": 0.25})


def test_instruction_narrows_the_partners_plays():
    """A governor's ``instruct high`` leaves his partner only his strongest cards (docs/rules.md §2)."""
    v = VectorEnv("le_truc_4p", 64, seed=4, dealer=0)
    obs, mask, seat = v.reset()
    L, enc = v.layout, v.encoder
    high = L.instruct + L.instruct_tokens.index("high")
    seen = 0
    for _ in range(200):
        acts = v.random_actions().copy()
        instructing = mask[:, high] == 1
        acts[instructing] = high
        prev_seat = seat.copy()
        obs, mask, _, done, seat = v.step(acts)
        for b in np.flatnonzero(instructing & ~done):
            # the instructed partner (not the governor) plays next; he sees the instruction in force
            assert seat[b] != prev_seat[b]
            assert obs[b, enc.offset["instruction"] + L.instruct_tokens.index("high") + 1] == 1
            plays = np.flatnonzero(mask[b, L.play:L.play + len(L.deck)])
            strength = [v.rules.base_strength[L.deck[i]] for i in plays]
            assert len(set(strength)) == 1
            seen += 1
    assert seen > 50
