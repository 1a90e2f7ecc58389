"""The web table's JSON API and its page, on Starlette (``pip install 'truc-env[web]'``).

    GET  /api/variants                    the variants, their options and seats
    GET  /api/levels?variant=&options=    the opponents for those rules, weakest first
    POST /api/games                       {variant, options, seats, seed, advisor} -> a new game's view
    GET  /api/games/{id}?viewer=          the table as a seat sees it (viewer=all: every hand)
    POST /api/games/{id}/action           {action, version}: the person's move (then the agents')
    POST /api/games/{id}/step             {version}: one agent decision in a game of agents
    GET  /api/games/{id}/record           the game as a JSON record
    POST /api/replays?game=k              a JSON record or an arena games.jsonl -> a replay (?at= steps)

Every error is ``{"error": one line}`` with a 4xx status (a 500 says only that something failed;
the traceback goes to the server's log). Games are kept in memory under unguessable ids.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from train.web.hosting import check_serve_settings
from train.web.levels import find_models, ladder, resolve
from train.web.table import YOU, NotYourTurn, Replay, StaleAction, Table, UnknownGame, parse_records
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules, option_specs
from truc_env.game.variants import VARIANTS

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 64 * 1024  # a game's settings or an action
MAX_UPLOAD = 8 * 1024 * 1024  # a record or an arena's games.jsonl
MAX_GAMES = 200  # kept in memory; the least recently used goes first
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
log = logging.getLogger("truc.web")


class TooLarge(TrucError):
    """A request body over its size limit (413): refused before it is all read."""


class Games:
    """The games of this server by id; ids are random (an id is the key to a game)."""

    def __init__(self, limit: int = MAX_GAMES):
        self.limit = limit
        self._games: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, game) -> str:
        key = secrets.token_urlsafe(18)
        with self._lock:
            self._games[key] = game
            while len(self._games) > self.limit:
                self._games.popitem(last=False)
        return key

    def get(self, key: str):
        with self._lock:
            game = self._games.get(key)
            if game is None:
                raise UnknownGame("no such game on this server (it belongs to another browser, or the server "
                                  "was restarted): start a new one")
            self._games.move_to_end(key)
            return game


STATUS = ((UnknownGame, 404), (StaleAction, 409), (NotYourTurn, 409), (TooLarge, 413), (TrucError, 400))


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused past ``limit`` bytes before it is all read."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the upload is {int(declared):,} bytes; the limit is {limit:,}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"the upload is over the limit of {limit:,} bytes")
    return bytes(body)


async def read_json(request: Request) -> dict:
    # a JSON content type makes a cross-site page's request need CORS, which this server never grants
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise HTTPException(415, "send the request as application/json")
    body = await read_body(request, MAX_BODY)
    try:
        data = json.loads(body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise TrucError(f"the request body is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise TrucError("the request body must be a JSON object")
    return data


def _viewer(request: Request, game) -> int | None:
    """Who the page shows the table to: the person's seat in a game they play; any seat or all otherwise."""
    text = request.query_params.get("viewer")
    if game.human is not None:
        if text not in (None, "", str(game.human)):
            raise NotYourTurn(f"you play seat {game.human}: the table is shown from your seat only")
        return game.human
    if text in (None, "", "all"):
        return None
    n = game.rules.players
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) < n:
        raise TrucError(f"viewer must be a seat in 0..{n - 1} or 'all', got {text!r:.20}")
    return int(text)


def _json_option(value):
    """An option's allowed values as JSON can carry them."""
    if isinstance(value, tuple) and value and value[0] == "int":
        return {"min": value[1], "max": value[2]}
    return list(value) if isinstance(value, tuple) else value


def create_app(models_dir: str | None = "models", allowed_hosts: list[str] | None = None) -> Starlette:
    """The web table; ``allowed_hosts`` (default: loopback names) guards against DNS rebinding."""
    games = Games()
    models = find_models(models_dir)

    def rules_of(variant, options):
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise TrucError(f"'options' must be an object of option values, got {options!r:.60}")
        return make_rules(variant, **options)

    async def index(request):
        return FileResponse(STATIC / "index.html")

    async def variants(request):
        out = []
        for name, v in VARIANTS.items():
            specs = option_specs(name)
            out.append({"name": name, "summary": v.summary, "players": make_rules(name).players,
                        "options": {k: {"default": s.default, "allowed": _json_option(s.allowed), "doc": s.doc}
                                    for k, s in specs.items()}})
        return JSONResponse({"variants": out, "models": [m.name for m in models]})

    async def levels(request):
        text = request.query_params.get("options") or "{}"
        try:
            options = json.loads(text)
        except json.JSONDecodeError as e:
            raise TrucError(f"options must be a JSON object ({e})") from None
        rules = rules_of(request.query_params.get("variant", "le_truc"), options)
        return JSONResponse({"players": rules.players, "partnership": rules.partnership,
                             "levels": ladder(rules, models)})

    async def new_game(request):
        data = await read_json(request)
        unknown = set(data) - {"variant", "options", "seats", "seed", "advisor"}
        if unknown:
            raise TrucError(f"unknown setting(s) {sorted(unknown)}; allowed: variant, options, seats, seed, advisor")
        rules = rules_of(data.get("variant", "le_truc"), data.get("options"))
        seats = data.get("seats")
        if not isinstance(seats, list):
            raise TrucError(f"'seats' must list one entry per seat ({rules.players}): 'you' or an opponent")
        seed = data.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 31:
            raise TrucError(f"'seed' must be an integer in 0..{2 ** 31 - 1}, got {seed!r:.40}")
        specs = [YOU if s == YOU else resolve(s, rules, models) for s in seats]
        advisor_name = data.get("advisor") or None
        if advisor_name and YOU not in seats:
            raise TrucError("an advisor shows its probabilities at your decisions: a game of agents has none "
                            "(their own probabilities are shown)")
        advisor = resolve(advisor_name, rules, models) if advisor_name else None
        names = [str(s) for s in seats]
        table = await run_in_threadpool(Table, rules, specs, names, seed, advisor, advisor_name)
        key = games.add(table)
        return JSONResponse({"id": key, **table.view(table.human)})

    async def show(request):
        game = games.get(request.path_params["id"])
        at = request.query_params.get("at")
        viewer = _viewer(request, game)
        if isinstance(game, Replay):
            if at is not None and not (at.isascii() and at.isdigit()):
                raise TrucError(f"'at' must be a decision number in 0..{game.version}, got {at!r:.20}")
            view = await run_in_threadpool(game.view, viewer, None if at is None else int(at))
        else:
            view = await run_in_threadpool(_locked, game, game.view, viewer)
        return JSONResponse({"id": request.path_params["id"], **view})

    async def act(request):
        game = games.get(request.path_params["id"])
        data = await read_json(request)
        if isinstance(game, Replay):
            raise NotYourTurn("a replay is stepped through, not played")
        view = await run_in_threadpool(_locked, game, _then_view, game.play, game.human,
                                       data.get("action"), data.get("version"))
        return JSONResponse({"id": request.path_params["id"], **view})

    async def step(request):
        game = games.get(request.path_params["id"])
        data = await read_json(request)
        if isinstance(game, Replay):
            raise NotYourTurn("a replay is stepped with ?at=, not played")
        viewer = _viewer(request, game)
        view = await run_in_threadpool(_locked, game, _then_view, game.step, viewer, data.get("version"))
        return JSONResponse({"id": request.path_params["id"], **view})

    async def record(request):
        game = games.get(request.path_params["id"])
        rec = await run_in_threadpool(_locked, game, game.record)
        return JSONResponse(rec, headers={"content-disposition": 'attachment; filename="truc-game.json"'})

    async def new_replay(request):
        body = await read_body(request, MAX_UPLOAD)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise TrucError("the file is not UTF-8 text: give a JSON game record or an arena games.jsonl") from None
        records = parse_records(text)
        k = request.query_params.get("game", "0")
        if not (k.isascii() and k.isdigit()) or int(k) >= len(records):
            raise TrucError(f"game must be a number in 0..{len(records) - 1}, got {k!r:.20}")
        replay = await run_in_threadpool(Replay, records[int(k)])
        key = games.add(replay)
        return JSONResponse({"id": key, "games": len(records), "game": int(k), **replay.view(None, 0)})

    async def on_truc_error(request, exc):
        for kind, status in STATUS:
            if isinstance(exc, kind):
                return error(status, exc)
        return error(400, exc)

    async def on_http_error(request, exc):
        return error(exc.status_code, exc.detail)

    async def on_crash(request, exc):
        log.exception("the web table failed on %s %s", request.method, request.url.path)
        return error(500, f"the server failed on this request ({type(exc).__name__}); see the server's log")

    routes = [
        Route("/", index),
        Route("/api/variants", variants),
        Route("/api/levels", levels),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id}", show),
        Route("/api/games/{id}/action", act, methods=["POST"]),
        Route("/api/games/{id}/step", step, methods=["POST"]),
        Route("/api/games/{id}/record", record),
        Route("/api/replays", new_replay, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    hosts = LOOPBACK_HOSTS if allowed_hosts is None else allowed_hosts
    app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
                    exception_handlers={TrucError: on_truc_error, HTTPException: on_http_error,
                                        Exception: on_crash})
    app.state.games = games
    return app


def _locked(game, fn, *args):
    with game.lock:  # one request at a time changes or reads a game
        return fn(*args)


def _then_view(game_fn, viewer, *args) -> dict:
    game_fn(*args)
    return game_fn.__self__.view(viewer)


def serve(host: str = "127.0.0.1", port: int = 8000, open_browser: bool = False, allow_remote: bool = False,
          models_dir: str | None = None) -> None:
    """Run the web table until interrupted (``truc serve``)."""
    import uvicorn

    models_dir = check_serve_settings(host, port, allow_remote, models_dir)
    app = create_app(models_dir, allowed_hosts=["*"] if allow_remote else None)
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    print(f"truc web table on {url} (Ctrl-C to stop); models from {models_dir or 'nowhere (no models/ here)'}")
    if open_browser:
        import webbrowser

        threading.Timer(1.0, webbrowser.open, (url,)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
