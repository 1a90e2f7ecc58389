"""Every flag of every ``truc`` subcommand, fuzzed from the argparse parsers themselves.

The suite walks ``train.commands.cli.build_parser()``: each leaf subcommand (``truc train cfr``, ``truc
bench``, and any added later) and each of its flags gets values chosen from the flag's kind (its
``type``, its ``choices``, a path, a switch), good and bad. The rule: ``main(argv, run=False)`` (argparse
and the command's check, no work) returns 0, or returns 2 with exactly one ``truc: error:`` line on
stderr; no traceback, no other exception, no hang (a per-case alarm). ``truc rules``, which is cheap,
also runs. The default suite runs a few examples per flag; ``-m slow`` many more.
"""

from __future__ import annotations

import argparse
import signal
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from train.commands import cli, flags

ROOT = Path(__file__).resolve().parents[1]
FAST = dict(max_examples=6, deadline=timedelta(seconds=20), derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SLOW = dict(FAST, max_examples=150)
CASE_SECONDS = 20  # a check that runs longer hangs: checks are file reads and rules, milliseconds


def leaves(parser: argparse.ArgumentParser, path=()):
    """(command words, parser) of every subcommand that takes no further subcommand."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from leaves(sub, (*path, name))


def flags_of(parser):
    """The parser's arguments a user gives, positional or optional (not --help)."""
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


COMMANDS = dict(leaves(cli.build_parser()))
CASES = [(path, action.dest) for path, parser in COMMANDS.items() for action in flags_of(parser)]


def test_the_walk_finds_every_subcommand():
    names = {" ".join(p) for p in COMMANDS}
    assert {"rules", "replay", "demo", "arena", "play", "train ppo", "train cfr", "train psro", "train distill",
            "exploitability", "analyze signals", "analyze bound", "analyze style", "bench"} <= names
    assert len(CASES) > 80


NUMERIC = (int, float)
PATH_DESTS = {"config", "out", "cache_dir", "record", "gif", "img_prefix"}


@pytest.mark.parametrize("path, dest", CASES, ids=[f"{' '.join(p)}:{d}" for p, d in CASES])
def test_every_flag_has_a_checked_kind(path, dest):
    """A number is never a bare int/float (no range), a path never a bare string (no file/folder rule)."""
    action = next(a for a in flags_of(COMMANDS[path]) if a.dest == dest)
    assert action.type not in NUMERIC, f"{' '.join(path)} {action.option_strings}: give it a train.commands.flags range"
    if dest in PATH_DESTS:
        assert action.type in (flags.input_file, flags.output_file, flags.output_folder, flags.output_prefix) \
            or action.type.__qualname__.startswith("shipped_file."), \
            f"{' '.join(path)} {action.option_strings}: give it a train.commands.flags path kind"


# ---------------------------------------------------------------------- values by kind
@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Paths of every kind: a folder, a file, a file's child, a missing deep path, special files, a record."""
    from truc_env.game.engine import new_game
    from truc_env.game.records import record_of, save
    from truc_env.game.rules import make_rules

    base = tmp_path_factory.mktemp("places")
    (base / "folder").mkdir()
    (base / "file.txt").write_text("hello\n")
    (base / "empty.yaml").write_text("")
    (base / "dup.json").write_text('{"a": 1, "a": 2}')
    (base / "binary.yaml").write_bytes(b"\x89PNG\xff\xfe\x00")
    record = base / "record.json"
    save(record_of(new_game(make_rules("le_truc"))), record)
    return {"folder": str(base / "folder"), "file": str(base / "file.txt"),
            "child_of_file": str(base / "file.txt" / "x.json"), "missing": str(base / "no" / "such" / "x"),
            "empty": str(base / "empty.yaml"), "dup": str(base / "dup.json"), "binary": str(base / "binary.yaml"),
            "record": str(record), "base": str(base)}


SPECIAL = ["/dev/zero", "/dev/urandom", "/dev/null", "/proc/self/mem", "/", ""]
WORDS = ["", "-", "x", "le_truc", "random", "heuristic:honest", "ppo:/nonexistent.pt", "cfr:", "\u0663", "../x",
         "{}", "[]", '{"players": 4}', '{"players": -1}', "null", "nan", "1e999", "x" * 300, "a=b", "=", "k="]
INTS = ["-1", "0", "1", "2", "-5", "3.5", "nan", "abc", "", "1e3", str(2**64), "9" * 5000, "+3", " 7", "0x10"]
FLOATS = ["nan", "inf", "-inf", "0", "-1", "1e400", "abc", "1e-320", "0.5", "3601", ""]
GOOD = {"variant": "le_truc", "agent": "random", "team": "random"}


def value_strategy(action, places):
    """Candidate values for one flag, from its kind."""
    if action.choices:
        return st.sampled_from([*map(str, action.choices), "", "nope", str(list(action.choices)[0]).upper()])
    t = action.type
    path_values = [places[k] for k in ("folder", "file", "child_of_file", "missing", "empty", "dup", "binary",
                                       "record")] + SPECIAL
    if t in (flags.input_file, flags.output_file, flags.output_folder, flags.output_prefix):
        return st.sampled_from(path_values)
    if t is flags.seed or getattr(t, "__name__", "") == "integer" or t is int:
        return st.one_of(st.sampled_from(INTS), st.integers(-10**20, 10**20).map(str))
    if getattr(t, "__name__", "") == "number" or t is float:
        return st.one_of(st.sampled_from(FLOATS), st.floats(allow_nan=True).map(repr))
    return st.one_of(st.sampled_from(WORDS + path_values), st.text(max_size=8).filter(lambda s: "\x00" not in s))


def shipped_config(path) -> str | None:
    """A shipped settings file for a config-taking command (``train cfr`` -> configs/cfr/*.yaml)."""
    name = path[-1]
    found = sorted((ROOT / "configs" / name).glob("*.yaml")) or sorted((ROOT / "configs").glob(f"{name}.yaml"))
    return str(found[0]) if found else None


def argv_for(path, places, given=None) -> list[str]:
    """The command with the flags ``given`` ({action: values}) and its required arguments given plausible
    good values."""
    given = given or {}
    argv = list(path)
    for action in flags_of(COMMANDS[path]):
        if action.dest in given:
            values = given[action.dest]
        elif action.required or not action.option_strings:
            if action.dest == "config":
                values = [shipped_config(path) or places["file"]]
            elif action.dest == "record":
                values = [places["record"]]
            else:
                values = [GOOD.get(action.dest, "x")]
        else:
            continue
        if not action.option_strings:
            argv += values
        elif action.nargs == 0:  # a switch
            argv.append(action.option_strings[0])
        else:
            argv += [action.option_strings[0], *values]
    return argv


@contextmanager
def alarm(seconds: int):
    def hang(signum, frame):
        raise TimeoutError(f"no answer within {seconds}s: a hang")
    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def assert_clear(argv, capsys) -> int:
    """The rule: 0, or 2 with one ``truc: error:`` line and nothing else on stderr."""
    capsys.readouterr()
    with alarm(CASE_SECONDS):
        rc = cli.main(argv, run=argv[0] == "rules")  # truc rules is cheap: it also runs
    err = capsys.readouterr().err
    if rc == 2:
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("truc: error: "), (argv, err)
    else:
        assert rc == 0 and "Traceback" not in err, (argv, rc, err)
    return rc


def _fuzz_flag(path, dest, places, capsys, monkeypatch, data):
    monkeypatch.chdir(places["base"])  # relative outputs of shipped configs (runs/...) land in a scratch folder
    parser = COMMANDS[path]
    action = next(a for a in flags_of(parser) if a.dest == dest)
    n = 1 if action.nargs in (None, "?") or not action.option_strings else data.draw(st.integers(1, 3))
    values = [data.draw(value_strategy(action, places)) for _ in range(n)]
    assert_clear(argv_for(path, places, {dest: values}), capsys)


@pytest.mark.parametrize("path, dest", CASES, ids=[f"{' '.join(p)}:{d}" for p, d in CASES])
@settings(**FAST)
@given(data=st.data())
def test_fuzz_every_flag(path, dest, places, capsys, monkeypatch, data):
    _fuzz_flag(path, dest, places, capsys, monkeypatch, data)


@pytest.mark.slow
@pytest.mark.parametrize("path, dest", CASES, ids=[f"{' '.join(p)}:{d}" for p, d in CASES])
@settings(**SLOW)
@given(data=st.data())
def test_fuzz_every_flag_many(path, dest, places, capsys, monkeypatch, data):
    _fuzz_flag(path, dest, places, capsys, monkeypatch, data)


@pytest.mark.parametrize("path", list(COMMANDS), ids=[" ".join(p) for p in COMMANDS])
@settings(**FAST)
@given(data=st.data())
def test_fuzz_flag_combinations(path, places, capsys, monkeypatch, data):
    """Several flags of one command at once, in any order."""
    monkeypatch.chdir(places["base"])
    actions = [a for a in flags_of(COMMANDS[path]) if a.option_strings]
    given = {a.dest: [data.draw(value_strategy(a, places))]
             for a in (data.draw(st.lists(st.sampled_from(actions), max_size=4)) if actions else [])}
    assert_clear(argv_for(path, places, given), capsys)


def test_the_base_commands_pass_their_checks(places, capsys, monkeypatch):
    """The fuzz starts from commands that are valid, so that each bad value is what gets refused."""
    monkeypatch.chdir(places["base"])
    for path in COMMANDS:
        argv = argv_for(path, places)
        if path == ("analyze", "signals"):
            argv += ["--variant", "le_truc_4p", "--team", "random"]
        assert assert_clear(argv, capsys) == 0, argv


# ---------------------------------------------------------------------- the cases of issue 31, by name
def _issue_cases(tmp, make: bool = True):
    if make:
        (tmp / "a_file").write_text("x")
        (tmp / "a_folder").mkdir(exist_ok=True)
    ex = ["exploitability", "--agent", "random"]
    sig = ["analyze", "signals", "--variant", "le_truc_4p", "--team", "random"]
    return {
        "exploitability --suits 0": ([*ex, "--suits", "0"], "--suits"),
        "exploitability --suits -3": ([*ex, "--suits", "-3"], "--suits"),
        "exploitability --first-hands 0": ([*ex, "--first-hands", "0"], "--first-hands"),
        "exploitability --check-hands -5": ([*ex, "--check-hands", "-5"], "--check-hands"),
        "exploitability --seed -1": ([*ex, "--seed", "-1"], "not a seed"),
        "exploitability --cache-dir a file": ([*ex, "--cache-dir", str(tmp / "a_file")], "is a file, not a folder"),
        "exploitability --out a folder": ([*ex, "--out", str(tmp / "a_folder")], "is a folder"),
        "exploitability --out under a file": ([*ex, "--out", str(tmp / "a_file" / "x.json")], "is a file, not a folder"),
        "exploitability --options 4 players": ([*ex, "--options", '{"players": 4}'], "le_truc"),
        "analyze signals --deals 0": ([*sig, "--deals", "0"], "--deals"),
        "analyze signals --deals -1": ([*sig, "--deals", "-1"], "--deals"),
        "analyze signals --samples 0": ([*sig, "--samples", "0"], "--samples"),
        "analyze signals --influence -1": ([*sig, "--influence", "-1"], "--influence"),
        "analyze signals --out a file": ([*sig, "--out", str(tmp / "a_file")], "is a file, not a folder"),
        "analyze style --seed -1": (["analyze", "style", "--agent", "random", "--seed", "-1"], "not a seed"),
        "analyze bound --deals 0": (["analyze", "bound", "--deals", "0"], "--deals"),
        "play --seed -1": (["play", "--seed", "-1"], "not a seed"),
        "bench --threads 0": (["bench", "--threads", "0"], "--threads"),
        "bench --seconds nan": (["bench", "--seconds", "nan"], "--seconds"),
        "bench --sizes too big": (["bench", "--sizes", str(10**12)], "give smaller --sizes"),
        "replay --fps 0": (["replay", str(tmp / "a_file"), "--fps", "0"], "--fps"),
        "train cfr --config /dev/zero": (["train", "cfr", "--config", "/dev/zero"], "not a regular file"),
        "arena --out a file": (["arena", "--out", str(tmp / "a_file")], "is a file, not a folder"),
    }


ISSUE_NAMES = list(_issue_cases(Path("/nonexistent"), make=False))


@pytest.mark.parametrize("name", ISSUE_NAMES)
def test_each_bad_flag_of_the_issue_ends_in_one_line_before_any_work(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv, match = _issue_cases(tmp_path)[name]
    capsys.readouterr()
    with alarm(CASE_SECONDS):
        rc = cli.main(argv)  # run=True: refused before the work, or this would run (and time out)
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("truc: error: "), err
    assert match in err, err


def test_a_missing_parent_of_out_is_made_not_refused(tmp_path):
    out = tmp_path / "new" / "deeper" / "x.json"
    assert cli.main(["exploitability", "--agent", "random", "--out", str(out)], run=False) == 0
    assert cli.main(["arena", "--out", str(tmp_path / "new" / "arena")], run=False) == 0
    assert not (tmp_path / "new").exists()  # a check writes nothing
