"""The ``truc`` command line: ``truc play`` a person can follow, ``truc bench`` inputs, clear errors."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.players.human import HumanAgent, InputEndedError, card_name, raise_word, words
from train.commands.cli import main
from train.commands.play import play_human
from truc_env.errors import TrucError
from truc_env.game.engine import State, sample_chance
from truc_env.game.observe import SeatObservation
from truc_env.game.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]


def first_decision(variant: str, seed: int = 0, **options):
    state = State(make_rules(variant, **options))
    rng = np.random.default_rng(seed)
    while state.is_chance_node():
        state.apply_action(sample_chance(state, rng))
    seat = state.current_player()
    mask = np.zeros(state.L.size, np.int8)
    mask[state.legal_actions()] = 1
    return state, seat, mask


def play(variant: str, options: dict, opponent: str, seed: int = 0, answers: str = "1\n" * 3000) -> str:
    out = io.StringIO()
    returns = play_human(variant, options, [opponent], seed=seed, stdin=io.StringIO(answers), stdout=out)
    assert sum(returns) == pytest.approx(0)  # zero-sum
    return out.getvalue()


def test_the_menu_is_numbered_in_the_order_shown_and_bad_input_asks_again():
    state, seat, mask = first_decision("le_truc")
    out = io.StringIO()
    human = HumanAgent(io.StringIO("0\nfly away\n\n99\n3\n"), out)
    action = human.act(SeatObservation(state, seat, mask), mask)
    menu = re.findall(r"^  \[(\d+)\] (.*)$", out.getvalue(), re.M)
    legal = state.legal_actions()
    assert [int(k) for k, _ in menu] == list(range(1, len(legal) + 1))
    assert [label for _, label in menu] == [words(state, seat, a)[0] for a in legal]
    assert action == legal[2]  # "3" is the third line shown
    assert out.getvalue().count("is not one of the legal actions above") == 4
    assert f"type its number (1-{len(legal)})" in out.getvalue()


def test_an_action_can_be_typed_by_its_name_or_its_card():
    state, seat, mask = first_decision("le_truc")
    card = next(a for a in state.legal_actions() if state.action_to_string(a).startswith("play "))
    shown = card_name(state.rules, state.L.deck[card - state.L.play])
    for typed in (state.action_to_string(card), shown, "PLAY " + shown):
        human = HumanAgent(io.StringIO(typed + "\n"), io.StringIO())
        assert human.act(SeatObservation(state, seat, mask), mask) == card
    human = HumanAgent(io.StringIO("raise\n"), io.StringIO())
    assert state.action_to_string(human.act(SeatObservation(state, seat, mask), mask)) == "raise"


def test_cards_and_calls_are_named_in_the_games_words():
    le_truc, paulista, argentino = make_rules("le_truc"), make_rules("truco_paulista"), make_rules("truco_argentino")
    assert card_name(le_truc, le_truc.family.parse("7d")) == "7♦"
    assert card_name(le_truc, le_truc.family.parse("Ts")) == "10♠"
    assert card_name(argentino, argentino.family.parse("1e")) == "1 de espadas"
    assert [raise_word(le_truc, k) for k in (1, 2, 3)] == ["truc!", "two more?", "two more?"]
    assert [raise_word(paulista, k) for k in (1, 2, 3, 4)] == ["truco!", "seis!", "nove!", "doze!"]
    assert [raise_word(argentino, k) for k in (1, 2, 3)] == ["truco!", "retruco!", "vale cuatro!"]


def test_play_narrates_every_move_the_hands_and_the_score():
    text = play("le_truc", {}, "heuristic:bluffer")
    assert re.search(r"^  seat 1 plays (7|8|9|10|J|Q|K|A)[♣♦♥♠]$", text, re.M)
    assert re.search(r"^  seat 0 \(you\) plays ", text, re.M)
    assert re.search(r"^  seat 1 calls truc! \(for 2\)$", text, re.M)
    assert re.search(r"^  trick 1: (won by seat [01]|tied)", text, re.M)
    assert re.search(r"^--- hand 1: seat 0 \(you\) deals; score: you 0, them 0 \(target 12\) ---$", text, re.M)
    assert re.search(r"^== hand 1 over, points: .*; score: you \d+, them \d+ \(target 12\)$", text, re.M)
    assert re.search(r"^== game over: you (win!|lose; them reached 12\.)$", text, re.M)
    assert text.rstrip().splitlines()[-1].startswith("Game over after")


def test_play_argentine_speaks_spanish_calls_and_shows_the_envido():
    text = play("truco_argentino", {"players": 2}, "heuristic:bluffer")
    assert "calls truco! (for 2)" in text and "calls envido!" in text
    assert re.search(r'accepts \("quiero"\)|says "quiero"', text)
    assert re.search(r"^  envido: seat [01]( \(you\))? has \d+ points$", text, re.M)
    assert " de " in text  # Spanish cards: "12 de bastos"


def test_play_tells_only_what_the_seat_may_see():
    text = play("put_4p", {}, "heuristic:honest")
    # seat 0 sees its own pass and its partner's (seat 2), not the opponents' cards
    for line in re.findall(r"^  seat (\d)( \(you\))? gives (.*) to the partner$", text, re.M):
        assert line[0] in ("0", "2"), line
    assert re.search(r"^  seat [13] passes a card to the partner$", text, re.M)
    assert re.search(r"^  seat [0-3]( \(you\))? discards ", text, re.M)
    text = play("le_truc_4p", {}, "heuristic:honest")
    assert re.search(r"^  seat [13] signals to the partner \(you did not see it\)$", text, re.M)


@pytest.mark.parametrize("variant, options", [
    ("le_truc_4p", {}), ("put", {}), ("put_n", {"players": 3}), ("truco_mineiro", {"players": 2}),
    ("truco_paulista", {"players": 4, "signals": {"mode": "card"}}), ("truco_argentino", {"flor": True}),
])
def test_play_runs_every_kind_of_table_to_the_end(variant, options):
    text = play(variant, options, "heuristic:honest", seed=1)
    assert "== game over: you" in text and "Game over after" in text


def test_play_input_ending_is_a_clear_error():
    with pytest.raises(InputEndedError, match="input ended"):
        play_human("le_truc", {}, ["random"], stdin=io.StringIO(""), stdout=io.StringIO())
    assert issubclass(InputEndedError, TrucError)


def test_truc_play_from_the_shell_ends_cleanly_when_input_ends():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "train.commands.cli", "play", "--seed", "2"], cwd=ROOT, env=env,
                          input="2\nnonsense\n", capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "truc: error: input ended before an action was chosen" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "[1] " in proc.stdout and "is not one of the legal actions above" in proc.stdout


@pytest.mark.parametrize("argv, message", [
    (["bench", "--variants", "chess"], "unknown bench variant 'chess'"),
    (["bench", "--seconds", "0"], "--seconds: 0 is invalid; expected a finite number > 0"),
    (["bench", "--sizes", "0"], "--sizes: 0 is out of range"),
    (["play", "--seat", "5"], "--seat must be in 0..1"),
])
def test_bad_command_line_input_is_a_clear_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("truc: error: ") and message in err


def test_a_missing_optional_package_names_its_extra(monkeypatch, capsys):
    import train.commands.cli as cli

    def needs_torch(args):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(cli, "cmd_rules", needs_torch)
    assert cli.main(["rules", "le_truc"]) == 2
    assert "pip install 'truc-env[ppo]'" in capsys.readouterr().err


def test_bench_peers_compares_within_a_group_only():
    from train.bench.peers import ratios

    rows = [{"group": "python loop", "what": "openspiel leduc_poker", "peer": True, "steps_per_cpu_s": 100.0},
            {"group": "python loop", "what": "truc le_truc", "peer": False, "steps_per_cpu_s": 50.0},
            {"group": "batched B=8", "what": "pgx leduc_holdem (JAX)", "peer": True, "missing": "not installed"},
            {"group": "batched B=8", "what": "truc le_truc", "peer": False, "steps_per_cpu_s": 1e6}]
    assert ratios(rows) == [{"group": "python loop", "truc": "truc le_truc", "peer": "openspiel leduc_poker",
                             "ratio": 0.5}]


@pytest.mark.slow
def test_bench_peers_runs_and_lists_what_is_missing(tmp_path):
    out = subprocess.run([sys.executable, "-m", "train.commands.cli", "bench", "--peers", "--seconds", "0.05", "--variants",
                          "truco_argentino", "--sizes", "8", "--out", str(tmp_path)], cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    for what in ("openspiel leduc_poker", "pettingzoo texas_holdem_v4", "pgx leduc_holdem", "truc truco_argentino"):
        assert what in out.stdout
    assert (tmp_path / "peers.json").exists()


def test_play_labels_the_partner_and_quit_leaves_the_game():
    out = io.StringIO()
    returns = play_human("truco_paulista", {}, ["heuristic:honest"], seed=0, stdin=io.StringIO("1\nquit\n"),
                         stdout=out)
    text = out.getvalue()
    assert returns == [0.0] * 4
    assert "seat 2 (partner) is heuristic:honest" in text.splitlines()[0]
    assert re.search(r"^  seat 2 \(partner\) side 0 +\?\?", text, re.M)  # the table
    assert re.search(r"^  seat 2 \(partner\) (plays|calls)", text, re.M)  # the narration
    assert text.rstrip().endswith("You left the game; no result is counted.")


def test_table_narration_and_menu_share_one_notation():
    out = io.StringIO()
    play_human("le_truc", {}, ["heuristic:bluffer"], seed=0, stdin=io.StringIO("1\n" * 3000), stdout=out)
    text = out.getvalue()
    tables = [line for line in text.splitlines() if line.startswith("  seat 0 (you) side 0")]
    assert tables and all(re.search(r"[♣♦♥♠]", line) for line in tables)
    assert not re.search(r"\b(7|8|9|T|J|Q|K|A)[cdhs]\b", text)  # never the record notation 7d
    assert "pending: seat 1 calls raise" not in text and not re.search(r"^  legal: ", text, re.M)
    assert re.search(r"^  pending: seat [01]( \(you\))? calls (truc!|two more\?) \(for \d+\)$", text, re.M)


def test_a_reader_that_leaves_early_ends_the_command_quietly():
    # `truc rules truco_paulista | head -3`: the pipe closes before the command writes, which is no error of ours
    p = subprocess.Popen([sys.executable, "-m", "train.commands.cli", "rules", "truco_paulista"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parents[1])
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
