"""The web table's JSON API (train/web/app.py), driven through Starlette's test client.

A person plays a whole game of Truco Paulista 2 vs 2 with a bot partner against two bots; stale,
out-of-turn and illegal actions change nothing; the seat sees only what it may; games of agents
step one decision at a time; records replay forward and back; bad input is a one-line 4xx.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from train.commands.cli import main  # noqa: E402
from train.web.app import MAX_UPLOAD, STATIC, create_app  # noqa: E402
from train.web.hosting import is_loopback  # noqa: E402
from train.web.levels import find_models, ladder  # noqa: E402
from truc_env.game.records import replay_state  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(str(MODELS)), base_url="http://127.0.0.1") as c:
        yield c


def new_game(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def assert_error(response, status: int, *fragments: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"}
    message = body["error"]
    assert "\n" not in message and "Traceback" not in message and len(message) < 600
    for f in fragments:
        assert f in message, message
    return message


def play_out(client, game: dict, rng, check=None) -> dict:
    """Play the person's seat with random legal actions until the game ends."""
    while not game["over"]:
        if check:
            check(game)
        assert game["to_act"] == game["human"] and game["legal"], game["to_act"]
        action = game["legal"][int(rng.integers(len(game["legal"])))]["id"]
        r = client.post(f"/api/games/{game['id']}/action", json={"action": action, "version": game["version"]})
        assert r.status_code == 200, r.text
        assert r.json()["version"] > game["version"]
        game = r.json()
    return game


def test_the_page_and_its_files_are_served_and_shipped_as_package_data(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text and "/static/style.css" in page.text
    for name, kind in (("app.js", "javascript"), ("style.css", "css"), ("index.html", "html")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"], name
    assert "https://" not in (STATIC / "index.html").read_text()  # no CDN: the page works offline
    setup = (ROOT / "setup.py").read_text()  # the package data is declared there (with the shipped folders)
    assert '"train.web": ["static/*"]' in setup


def test_a_person_plays_a_whole_paulista_game_2v2_with_a_bot_partner(client):
    game = new_game(client, variant="truco_paulista", options={"players": 4},
                    seats=["you", "honest", "cautious", "bluffer"], seed=5)
    assert game["mode"] == "play" and game["human"] == 0 and game["viewer"] == 0
    assert [s["label"] for s in game["seats"]] == ["seat 0 (you)", "seat 1", "seat 2 (partner)", "seat 3"]

    def check(view):
        for seat in view["seats"]:  # own cards; the partner's only in a mão de onze of our side
            partner_shown = view["special"] == "eleven" and seat["side"] == 0
            if seat["seat"] != 0 and not partner_shown:
                assert seat["hand"] is None, seat
            if seat["seat"] == 0 and view["special"] != "iron":
                assert seat["hand"] is not None and len(seat["hand"]) == seat["cards"]
        for a in view["legal"]:
            assert a["label"] and a["code"] and isinstance(a["id"], int)
        assert view["stake"] in (1, 3, 6, 9, 12) or view["special"]

    game = play_out(client, game, np.random.default_rng(0), check)
    assert game["over"] and max(game["score"]) >= 12 and game["winner"] in (0, 1)
    text = "\n".join(game["log"])
    assert "seat 2 (partner) " in text and "== game over: you " in text
    assert any(line.startswith("  seat 0 (you) ") for line in game["log"])
    # the saved record replays to the same end
    record = client.get(f"/api/games/{game['id']}/record")
    assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
    final = replay_state(record.json())
    assert final.game_over and list(final.score) == game["score"]


def test_the_calls_are_named_in_the_games_words(client):
    game = new_game(client, variant="truco_paulista", options={"players": 2}, seats=["you", "random"], seed=1)
    labels = [a["label"] for a in game["legal"]]
    assert any(label.startswith("raise: truco! (for 3)") for label in labels), labels
    assert all("♣" in label or "♦" in label or "♥" in label or "♠" in label
               for label, a in zip(labels, game["legal"]) if a["code"].startswith("play "))
    argentino = new_game(client, variant="truco_argentino", options={"players": 2}, seats=["you", "honest"], seed=0)
    assert argentino["log"][-1] == "  seat 1 calls truco! (for 2)"
    assert argentino["pending"] == [{"seat": 1, "call": "truco! (for 2)"}]
    labels = [a["label"] for a in argentino["legal"]]
    assert labels[:2] == ["raise: retruco! (for 3)", 'accept ("quiero"): the hand is worth 2'] and "call envido!" in labels
    assert argentino["seats"][0]["hand"][0]["name"].count(" de ") == 1  # "2 de oros"


def test_stale_out_of_turn_and_illegal_actions_change_nothing(client):
    game = new_game(client, variant="truco_paulista", seats=["you", "honest", "honest", "honest"], seed=3)
    gid, version = game["id"], game["version"]
    legal = [a["id"] for a in game["legal"]]
    illegal = next(a for a in range(200) if a not in legal)
    assert_error(client.post(f"/api/games/{gid}/action", json={"action": legal[0], "version": version - 1}),
                 409, "nothing was played")
    assert_error(client.post(f"/api/games/{gid}/action", json={"action": legal[0]}), 400, "version")
    assert_error(client.post(f"/api/games/{gid}/action", json={"action": illegal, "version": version}),
                 400, "not legal now; legal:")
    assert_error(client.post(f"/api/games/{gid}/action", json={"action": "1", "version": version}), 400, "integer")
    assert_error(client.post(f"/api/games/{gid}/step", json={"version": version}), 409, "choose your action")
    assert_error(client.get(f"/api/games/{gid}", params={"viewer": 1}), 409, "you play seat 0")
    after = client.get(f"/api/games/{gid}").json()
    assert after["version"] == version and after["log"] == game["log"] and after["legal"] == game["legal"]
    # the same action at the right version is played, once
    r = client.post(f"/api/games/{gid}/action", json={"action": legal[0], "version": version})
    assert r.status_code == 200
    assert_error(client.post(f"/api/games/{gid}/action", json={"action": legal[0], "version": version}), 409)


def test_games_are_separate_and_their_ids_unguessable(client):
    a = new_game(client, variant="le_truc", seats=["you", "honest"], seed=0)
    b = new_game(client, variant="le_truc", seats=["you", "honest"], seed=0)
    assert a["id"] != b["id"] and len(a["id"]) >= 20
    assert a["log"] == b["log"] and a["seats"] == b["seats"]  # the same seed deals and plays the same
    client.post(f"/api/games/{a['id']}/action", json={"action": a["legal"][0]["id"], "version": a["version"]})
    assert client.get(f"/api/games/{b['id']}").json()["version"] == b["version"]
    assert_error(client.get("/api/games/not-a-game"), 404, "no such game")
    assert_error(client.post("/api/games/not-a-game/action", json={"action": 0, "version": 0}), 404)


def test_a_game_of_agents_steps_one_decision_at_a_time_and_each_view_hides_what_it_must(client):
    game = new_game(client, variant="le_truc_4p", seats=["random", "honest", "random", "honest"], seed=4)
    assert game["mode"] == "watch" and game["legal"] == [] and game["version"] == 0
    gid = game["id"]
    while not game["over"] and game["version"] < 60:
        r = client.post(f"/api/games/{gid}/step", params={"viewer": "all"}, json={"version": game["version"]})
        assert r.status_code == 200, r.text
        nxt = r.json()
        assert nxt["version"] == game["version"] + 1
        game = nxt
        if game["to_act"] in (0, 2) and not game["over"]:  # a random agent gives its probabilities
            assert game["policy"] and abs(sum(a["p"] for a in game["policy"]["actions"]) - 1) < 1e-3
        for viewer in (1, 2):
            view = client.get(f"/api/games/{gid}", params={"viewer": viewer}).json()
            for seat in view["seats"]:
                if seat["seat"] != viewer and view["special"] != "eleven":
                    assert seat["hand"] is None
            for s in view["signals"]:  # an opponent's signal is never read out (intercept 0 in le_truc_4p)
                if s["seat"] % 2 != viewer % 2:
                    assert s["token"] is None
            if view["to_act"] != viewer:
                assert view["policy"] is None  # a seat's probabilities would tell its cards
        assert all(seat["hand"] is not None for seat in game["seats"])  # every hand, to a spectator
    assert_error(client.get(f"/api/games/{gid}", params={"viewer": 9}), 400, "viewer must be a seat")


def test_network_probabilities_at_the_current_decision(client):
    pytest.importorskip("torch")
    if not (MODELS / "ppo_paulista.pt").exists():
        pytest.skip("models/ppo_paulista.pt is not in this checkout")
    game = new_game(client, variant="truco_paulista", seats=["ppo_paulista", "honest", "ppo:ppo_paulista", "honest"],
                    seed=0)
    seen = 0
    while not game["over"] and seen < 3:
        if game["to_act"] in (0, 2):
            policy = game["policy"]
            assert policy["by"].endswith("ppo_paulista") and policy["seat"] == game["to_act"]
            assert abs(sum(a["p"] for a in policy["actions"]) - 1) < 1e-3
            seen += 1
        game = client.post(f"/api/games/{game['id']}/step", json={"version": game["version"]}).json()
    assert seen == 3
    advised = new_game(client, variant="truco_paulista", seats=["you", "honest", "honest", "honest"],
                       advisor="ppo_paulista", seed=1)
    assert advised["policy"]["by"] == "ppo_paulista" and advised["policy"]["seat"] == 0 and {a["id"] for a in advised["policy"]["actions"]} == \
        {a["id"] for a in advised["legal"]}


def test_the_ladder_names_levels_and_the_models_of_the_rules(client):
    models = find_models(str(MODELS))
    names = [level["name"] for level in ladder(make_rules("le_truc"), models)]
    assert names[:4] == ["random", "bluffer", "cautious", "honest"]
    if any(m.rules_key for m in models):  # torch reads the networks' rules
        assert "distilled_mmd_le_truc" in names and "ppo_paulista" not in names
    r = client.get("/api/levels", params={"variant": "truco_paulista", "options": json.dumps({"players": 2})})
    assert r.status_code == 200 and r.json()["players"] == 2
    if any(m.rules_key for m in models):
        assert_error(client.post("/api/games", json={"variant": "truco_paulista", "options": {"players": 2},
                                                    "seats": ["you", "ppo_paulista"]}), 400, "other rules")


def test_a_record_replays_forward_and_back(client):
    game = new_game(client, variant="le_truc", seats=["you", "honest"], seed=7)
    game = play_out(client, game, np.random.default_rng(1))
    record = client.get(f"/api/games/{game['id']}/record").json()
    r = client.post("/api/replays", content=json.dumps(record))
    assert r.status_code == 200, r.text
    replay = r.json()
    assert replay["mode"] == "replay" and replay["at"] == 0 and replay["length"] == game["version"]
    rid, n = replay["id"], replay["length"]
    views = [client.get(f"/api/games/{rid}", params={"at": k}).json() for k in (0, 1, n // 2, n)]
    assert [len(v["log"]) for v in views] == sorted(len(v["log"]) for v in views)
    assert views[-1]["over"] and views[-1]["score"] == game["score"]
    again = client.get(f"/api/games/{rid}", params={"at": n // 2}).json()
    assert again == views[2]  # back to the same point: the same table
    one_seat = client.get(f"/api/games/{rid}", params={"at": 1, "viewer": 1}).json()
    assert one_seat["seats"][0]["hand"] is None and one_seat["seats"][1]["hand"] is not None
    assert_error(client.get(f"/api/games/{rid}", params={"at": n + 1}), 400, f"0..{n}")
    assert_error(client.post(f"/api/games/{rid}/action", json={"action": 0, "version": 0}), 409, "replay")
    # an arena's games.jsonl: one record per line
    lines = "\n".join(json.dumps({"unit": 0, "seating": s, "record": record}) for s in (0, 1))
    r = client.post("/api/replays", params={"game": 1}, content=lines)
    assert r.status_code == 200 and r.json()["games"] == 2 and r.json()["game"] == 1
    assert_error(client.post("/api/replays", params={"game": 5}, content=lines), 400, "0..1")


def test_bad_input_is_a_one_line_4xx(client):
    post = lambda body: client.post("/api/games", json=body)  # noqa: E731
    assert_error(post({"variant": "chess", "seats": ["you", "random"]}), 400, "unknown variant 'chess'")
    assert_error(post({"variant": "le_truc", "options": {"colour": 1}, "seats": ["you", "random"]}), 400, "colour")
    assert_error(post({"variant": "le_truc", "options": [1], "seats": ["you", "random"]}), 400, "'options'")
    assert_error(post({"variant": "le_truc", "seats": ["you", "grandmaster"]}), 400, "unknown opponent",
                 "honest")
    assert_error(post({"variant": "le_truc", "seats": ["you", "ppo:/etc/passwd"]}), 400, "by name")
    assert_error(post({"variant": "le_truc", "seats": ["you", "human"]}), 400, "unknown opponent")  # no stdin here
    assert_error(post({"variant": "le_truc", "seats": ["you", 7]}), 400, "string")
    assert_error(post({"variant": 7, "seats": ["you", "random"]}), 400, "variant")
    assert_error(post({"variant": "le_truc", "seats": ["random", "random"], "advisor": "random"}), 400, "advisor")
    assert_error(post({"variant": "le_truc", "seats": ["you"]}), 400, "2 seats")
    assert_error(post({"variant": "le_truc", "seats": ["you", "you"]}), 400, "only one seat")
    assert_error(post({"variant": "le_truc", "seats": ["you", "random"], "seed": -1}), 400, "seed")
    assert_error(post({"variant": "le_truc", "seats": ["you", "random"], "speed": 1}), 400, "speed")
    assert_error(client.post("/api/games", content="{not json", headers={"content-type": "application/json"}),
                 400, "not valid JSON")
    assert_error(client.post("/api/games", content="{}", headers={"content-type": "text/plain"}), 415)
    assert_error(client.post("/api/games", content=b"x" * 70_000, headers={"content-type": "application/json"}),
                 413, "limit")
    assert_error(client.post("/api/replays", content=b" " * (MAX_UPLOAD + 1)), 413, "limit")
    assert_error(client.post("/api/replays", content="not a record"), 400, "not a JSON record")
    assert_error(client.post("/api/replays", content=json.dumps({"variant": "le_truc", "actions": ["0 fly"]})),
                 400, "fly")
    assert_error(client.post("/api/replays", content="[1, 2]"), 400, "JSON object")
    assert_error(client.post("/api/replays", content=""), 400, "empty")
    assert_error(client.get("/api/levels", params={"variant": "le_truc", "options": "{"}), 400, "options")
    assert_error(client.get("/api/nothing"), 404)


def test_no_traceback_reaches_the_client(monkeypatch):
    from train.web import table

    def broken(self, viewer):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(table.Table, "view", broken)
    with TestClient(create_app(None), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        r = c.post("/api/games", json={"variant": "le_truc", "seats": ["you", "random"]})
    message = assert_error(r, 500, "RuntimeError", "server's log")
    assert "secret internals" not in message


def test_only_loopback_host_names_are_served_by_default(client):
    # a page of another site that resolves its name to 127.0.0.1 (DNS rebinding) is refused
    assert client.get("/api/variants", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/variants", headers={"host": "localhost:8000"}).status_code == 200


def test_serve_refuses_to_bind_beyond_loopback_unless_asked(capsys):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.com")
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("truc: error: --host 0.0.0.0 is not a loopback address") and "--allow-remote" in err
    assert "\n" not in err


def test_a_strategy_tables_probabilities_are_shown_at_its_decision(tmp_path):
    """A table: model in the models folder is a level by its name; its policy is shown when it decides."""
    from cfr_helpers import save_solved

    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    options = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}
    tree = build_tree(make_rules("le_truc", **options), abstraction="strength")
    solver = PublicTreeSolver(tree, "cfr+")
    solver.iterate(20)
    save_solved(tmp_path, tree, solver, "tiny_cfr.npz")
    with TestClient(create_app(str(tmp_path)), base_url="http://127.0.0.1") as c:
        levels = c.get("/api/levels", params={"variant": "le_truc", "options": json.dumps(options)}).json()["levels"]
        assert {"name": "tiny_cfr", "spec": "table:tiny_cfr", "kind": "table"}.items() <= levels[-1].items()
        assert "tiny_cfr" not in [level["name"] for level in ladder(make_rules("le_truc"), find_models(str(tmp_path)))]
        game = new_game(c, variant="le_truc", options=options, seats=["tiny_cfr", "random"], seed=0)
        shown = 0
        while not game["over"] and shown < 2:
            if game["to_act"] == 0:
                policy = game["policy"]
                assert policy["by"] == "tiny_cfr" and abs(sum(a["p"] for a in policy["actions"]) - 1) < 1e-3
                shown += 1
            game = c.post(f"/api/games/{game['id']}/step", json={"version": game["version"]}).json()
        assert shown == 2
