"""Render modes (ansi, rgb_array, human) of both environments, the drawn table and `truc replay --gif`."""

import json

import numpy as np
import pytest

from train.commands.cli import main as cli_main
from truc_env.display.draw import card_text, draw_table, hand_tricks
from truc_env.envs.gym_env import SingleAgentEnv
from truc_env.envs.pettingzoo_env import raw_env
from truc_env.errors import TrucError
from truc_env.game.records import replay_state
from truc_env.game.rules import VARIANTS, make_rules

# the worked example of docs/rules.md §9: dealer 1, seat 0 leads
WORKED = {"variant": "le_truc", "dealer": 1,
          "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]},
          "actions": ["0 raise", "1 accept", "0 play 7c", "1 play 7d", "0 play Ks", "1 raise", "0 refuse"]}


def _record(hand1, actions):
    return {"variant": "le_truc", "dealer": 1, "deal": {"hands": [["7c", "9d", "Ks"], hand1]}, "actions": actions}


def test_rgb_array_of_both_environments_is_an_rgb_picture():
    env = raw_env(variant="truco_paulista", render_mode="rgb_array", signals={"mode": "free", "vocab": 4})
    env.reset(seed=0)
    picture = env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert picture.shape[0] > 300 and picture.shape[1] > 300
    assert picture.std() > 10  # not a blank canvas
    env.render_viewer = 1  # seat 1's eyes: the other hands turn face down
    assert not np.array_equal(env.render(), picture)
    gym = SingleAgentEnv("le_truc", render_mode="rgb_array")
    gym.reset(seed=0)
    assert gym.render().shape == picture.shape
    assert "rgb_array" in raw_env.metadata["render_modes"] and "rgb_array" in SingleAgentEnv.metadata["render_modes"]


def test_a_play_changes_the_picture():
    before = replay_state(_record(["8h", "7d", "As"], ["0 raise", "1 accept"]))
    after = replay_state(_record(["8h", "7d", "As"], ["0 raise", "1 accept", "0 play 7c"]))
    assert not np.array_equal(draw_table(before, 0), draw_table(after, 0))


def test_the_viewer_does_not_see_the_opponents_cards():
    # the same table for seat 0 whatever seat 1 holds; the omniscient picture tells them apart
    a = replay_state(_record(["8h", "7d", "As"], ["0 play 9d"]))
    b = replay_state(_record(["Qh", "Jd", "Ts"], ["0 play 9d"]))
    assert np.array_equal(draw_table(a, 0), draw_table(b, 0))
    assert not np.array_equal(draw_table(a, 1), draw_table(b, 1))
    assert not np.array_equal(draw_table(a, None), draw_table(b, None))


def test_tricks_of_the_worked_example():
    state = replay_state(WORKED)
    fam = state.rules.family
    tricks = hand_tricks(state)[0]
    shown = [([(s, fam.format(c)) for s, c in plays], winner) for plays, winner in tricks]
    # trick 1 tied (7 against 7), trick 2 still open when seat 0 refused the raise
    assert shown == [([(0, "7c"), (1, "7d")], -1), ([(0, "Ks")], None)]


def test_a_trick_that_ends_the_hand_keeps_its_winner():
    state = replay_state(_record(["8h", "7d", "As"], ["0 play 7c", "1 play 8h", "0 play 9d", "1 play As",
                                                               "1 play 7d", "0 play Ks"]))
    fam = state.rules.family
    tricks = [([(s, fam.format(c)) for s, c in plays], w) for plays, w in hand_tricks(state)[0]]
    assert tricks == [([(0, "7c"), (1, "8h")], 0), ([(0, "9d"), (1, "As")], 1), ([(1, "7d"), (0, "Ks")], 1)]


def test_card_names_carry_suit_symbols():
    french, spanish = make_rules("le_truc").family, make_rules("truco_argentino").family
    assert card_text(french, french.parse("7c")) == "7\u2663"
    assert card_text(french, french.parse("Th")) == "10\u2665"
    assert card_text(spanish, spanish.parse("1e")) == "1 espadas"


def test_bad_render_mode_and_viewer_are_clear_errors():
    with pytest.raises(TrucError, match="rgb_array"):
        raw_env(render_mode="video")
    with pytest.raises(TrucError, match="rgb_array"):
        SingleAgentEnv("le_truc", render_mode="video")
    with pytest.raises(TrucError, match="viewer must be"):
        draw_table(replay_state(WORKED), viewer=2)


def test_human_mode_without_a_display_prints_the_table(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = raw_env(render_mode="human")
    env.reset(seed=1)
    env.render()
    assert "le_truc" in capsys.readouterr().out
    env.close()


def test_replay_gif_has_one_frame_per_decision(tmp_path, capsys):
    from PIL import Image

    record = tmp_path / "game.json"
    record.write_text(json.dumps(WORKED))
    out = tmp_path / "anim" / "game.gif"
    assert cli_main(["replay", str(record), "--gif", str(out), "--viewer", "0"]) == 0
    with Image.open(out) as gif:
        assert gif.n_frames == 1 + len(WORKED["actions"])  # the deal, then one per decision
    assert [p.name for p in out.parent.iterdir()] == ["game.gif"]  # no temporary file left
    assert "frames written" in capsys.readouterr().out
    assert cli_main(["replay", str(record), "--gif", str(out), "--viewer", "5"]) == 2
    assert "--viewer must be a seat in 0..1" in capsys.readouterr().err


def test_human_mode_falls_back_to_text_when_no_window_can_open(monkeypatch, capsys):
    import matplotlib.pyplot as plt

    from truc_env.display import draw

    monkeypatch.setattr(draw, "display_available", lambda: True)
    monkeypatch.setattr(plt, "get_backend", lambda: "agg")  # a display, but no GUI backend
    env = SingleAgentEnv("put", render_mode="human")
    env.reset(seed=2)
    captured = capsys.readouterr()
    assert "cannot open a window" in captured.err and "put" in captured.out
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "no window" not in capsys.readouterr().err  # said once, then text only
    env.close()


def test_a_blind_iron_hand_hides_the_viewers_own_cards():
    # docs/rules.md §4: at 11-11 nobody sees his own cards, so seat 0's picture ignores them
    def iron(hand0):
        return replay_state({"variant": "truco_paulista", "options": {"players": 2}, "dealer": 0,
                             "score": [11, 11], "deal": {"hands": [hand0, ["4c", "7h", "Qs"]], "vira": "5d"},
                             "actions": []})

    a, b = iron(["3c", "2h", "Kd"]), iron(["Ad", "Jc", "6s"])
    assert a.special == "iron"
    assert np.array_equal(draw_table(a, 0), draw_table(b, 0))
    assert not np.array_equal(draw_table(a, None), draw_table(b, None))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_recovered_tricks_agree_with_the_engine(variant):
    # random games: the tricks the picture shows are the engine's (winners, open trick, no card twice)
    from truc_env import new_game
    from truc_env.game.engine import sample_chance

    for seed in range(3):
        state, rng = new_game(make_rules(variant)), np.random.default_rng(seed)
        for _ in range(60):
            if state.is_terminal():
                break
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            if not state.dealt:
                continue
            tricks = hand_tricks(state)[-1]
            assert [w for _, w in tricks if w is not None] == state.trick_winners
            if not state.hand_over:
                open_trick = [plays for plays, w in tricks if w is None]
                assert (open_trick[0] if open_trick else []) == state.trick
            cards = [c for plays, _ in tricks for _, c in plays]
            assert len(cards) == len(set(cards))
