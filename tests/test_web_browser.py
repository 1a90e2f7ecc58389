"""The web table in a real browser: headless Chromium (Debian's) driven by Playwright.

The server runs on a free loopback port; the tests play a whole hand of Truco Paulista 2 vs 2 by
clicking, make a stale click from a second tab, watch a game of agents, and replay a record forward
and back, saving screenshots (under pytest's tmp folder). Skipped, saying why, where Playwright or
Chromium is missing (`make test` installs both where it can).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")

from agents import make_agent  # noqa: E402
from train.eval.match import play_game  # noqa: E402
from train.web.app import create_app  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("TRUC_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TRUC_CHROMIUM)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(str(ROOT / "models")), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started:
        assert time.time() < deadline and thread.is_alive(), "the web table did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        except sync_api.Error as e:  # a Chromium that cannot start here (missing libraries, a sandbox)
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {str(e).splitlines()[0]}")
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server + "/")
    pg.wait_for_selector("#seat-1")  # the opponents' choices come from the API
    yield pg
    context.close()
    assert errors == [], errors  # no script error on the page


def version(pg) -> int:
    return int(pg.evaluate("document.body.dataset.version"))


def click_and_wait(pg, selector: str) -> None:
    before = version(pg)
    pg.click(selector)
    pg.wait_for_function(f"Number(document.body.dataset.version) > {before}")


def test_play_a_whole_hand_of_paulista_2v2_by_clicking(page, tmp_path):
    page.select_option("#variant", "truco_paulista")
    page.select_option("#seat-2", "cautious")  # the partner
    page.fill("#seed", "11")
    assert page.is_visible("#you-seat") and page.is_hidden("#speed") and page.is_hidden("#cursor")
    page.click("#start")
    page.wait_for_selector("#actions button")
    assert page.inner_text('[data-seat="2"] .who').startswith("seat 2 (partner)")
    assert page.locator('[data-seat="1"] .card.back').count() >= 1  # opponents' cards face down
    own = page.locator('[data-seat="0"] .card:not(.back)')
    assert own.count() == 3 and any(s in own.first.inner_text() for s in "♣♦♥♠")
    for k in range(3):  # hearts and diamonds red, clubs and spades black
        card = own.nth(k)
        assert ("red" in card.get_attribute("class")) == any(s in card.inner_text() for s in "♦♥")
    page.screenshot(path=str(tmp_path / "play-start.png"))
    clicks = 0
    while "== hand 1 over" not in page.inner_text("#log") and clicks < 30:
        cards = page.locator("#felt .card.playable")
        if cards.count() and clicks % 2 == 0:  # a card from the hand, or a button
            click_and_wait(page, "#felt .card.playable >> nth=0")
        else:
            click_and_wait(page, "#actions button >> nth=0")
        clicks += 1
    log = page.inner_text("#log")
    assert "== hand 1 over" in log and "seat 0 (you) " in log and "seat 2 (partner) " in log
    assert page.is_hidden("#error")
    page.screenshot(path=str(tmp_path / "play-hand-over.png"))


def test_a_stale_click_from_another_tab_is_refused_and_changes_nothing(page, browser, server, tmp_path):
    page.click("#start")
    page.wait_for_selector("#actions button")
    url = page.url
    assert "#game=" in url
    other = browser.new_page(viewport={"width": 1280, "height": 860})
    other.goto(url)  # the same game in a second tab
    other.wait_for_selector("#actions button")
    v = version(other)
    click_and_wait(page, "#actions button >> nth=0")  # the first tab moves on
    now = version(page)
    other.click("#actions button >> nth=0")  # the second tab still shows the old state
    other.wait_for_selector("#error:not([hidden])")
    assert "nothing was played" in other.inner_text("#error")
    other.wait_for_function(f"Number(document.body.dataset.version) === {now}")  # redrawn as it is now
    gid = url.split("#game=")[1]
    with urllib.request.urlopen(f"{server}/api/games/{gid}") as r:
        assert json.load(r)["version"] == now > v
    other.screenshot(path=str(tmp_path / "stale-click.png"))
    other.close()


def test_watch_agents_play_at_a_chosen_speed(page, tmp_path):
    page.click('.tab[data-mode="watch"]')
    page.wait_for_selector("#seat-0")
    page.select_option("#variant", "le_truc")
    page.wait_for_selector("#seat-0")
    page.evaluate("document.getElementById('speed').value = 100")
    assert page.is_hidden("#you-seat") and page.is_hidden("#advisor") and page.is_visible("#speed")
    page.click("#start")
    page.wait_for_function("Number(document.body.dataset.version) >= 6", timeout=20_000)
    assert page.locator("#felt .card.back").count() == 0  # a spectator sees every hand
    page.click("#pause")
    page.select_option("#viewer", "1")
    page.wait_for_function("document.querySelectorAll('[data-seat=\"0\"] .card.back').length > 0 || "
                           "document.querySelectorAll('[data-seat=\"0\"] .card').length === 0")
    page.screenshot(path=str(tmp_path / "watch.png"))


def test_replay_a_record_forward_and_back(page, tmp_path):
    rules = make_rules("truco_paulista", players=2)
    result = play_game(rules, [make_agent("heuristic:honest", rules, seed=1),
                               make_agent("heuristic:bluffer", rules, seed=2)], deal_seed=3)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(result.record))
    page.click('.tab[data-mode="replay"]')
    page.set_input_files("#record-file", str(path))
    page.click("#load")
    page.wait_for_function("document.body.dataset.at === '0'")
    n = int(page.get_attribute("#cursor", "max"))
    assert n > 5 and page.inner_text("#position") == f"decision 0 of {n}"
    for k in range(1, 6):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.dataset.at === '{k}'")
    page.click("#back")
    page.wait_for_function("document.body.dataset.at === '4'")
    assert page.inner_text("#position") == f"decision 4 of {n}"
    assert len(page.locator("#log li").all()) >= 4
    page.select_option("#viewer", "1")
    page.wait_for_function("document.querySelectorAll('[data-seat=\"0\"] .card.back').length > 0")
    page.screenshot(path=str(tmp_path / "replay.png"))
    page.set_input_files("#record-file", {"name": "bad.json", "mimeType": "application/json", "buffer": b"{nope"})
    page.click("#load")
    page.wait_for_selector("#error:not([hidden])")
    assert "not a JSON record" in page.inner_text("#error")
