"""Long exact measurements keep what they finished: a cache the disk has no room for is skipped from memory, and the
subgames of a heads-up Paulista measurement already measured are read back when the same command runs again."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest

from agents.players.random import RandomAgent
from train.eval import exploitability as ex
from train.eval import tree_cache
from truc_env import TrucError, make_rules

PAULISTA_TWO = {"players": 2, "ranks": 3, "hand_size": 1, "max_raises": 1}  # 12 cards: 2 subgames
RULES = make_rules("le_truc", ranks=4, hand_size=2, max_raises=1, redeal=False)


def _quiet(*a, **k):
    pass


def test_a_tree_the_disk_has_no_room_for_is_measured_from_memory(tmp_path, monkeypatch, capsys):
    fresh = ex.policy_exploitability(RandomAgent(), RULES, log=_quiet)
    import shutil

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=tree_cache.KEEP_FREE + 10))
    got = ex.policy_exploitability(RandomAgent(), RULES, log=_quiet, cache_dir=str(tmp_path / "c"))
    assert got["exploitability"] == pytest.approx(fresh["exploitability"], abs=1e-12)
    assert not [f for f in os.listdir(tmp_path / "c") if f.endswith(".npz")]  # nothing kept, nothing half-written
    err = capsys.readouterr().err
    assert "no room to keep the public tree" in err and "going on from memory" in err and "truc cache" in err


def test_a_write_that_fills_the_disk_leaves_no_file_and_goes_on(tmp_path, monkeypatch, capsys):
    import shutil

    usage = shutil.disk_usage(tmp_path)  # room by the count beforehand: the write itself finds the disk full
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=1 << 40))

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(np, "savez", full)
    path = str(tmp_path / "tree-x.npz")
    assert tree_cache.cache_write(path, {"key": 1}, {"a": np.zeros(4)}, "public tree") is False
    assert os.listdir(tmp_path) == [] and "no space left on device" in capsys.readouterr().err

    def denied(*a, **k):
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(np, "savez", denied)  # any other failure is not a cache's business to hide
    with pytest.raises(PermissionError):
        tree_cache.cache_write(path, {"key": 1}, {"a": np.zeros(4)})


def test_paulista_subgames_measured_before_are_read_back(tmp_path, monkeypatch):
    rules = make_rules("truco_paulista", **PAULISTA_TWO)
    whole = ex.policy_exploitability(RandomAgent(), rules, viras="subgames", log=_quiet)
    path, key = str(tmp_path / "r.json.subgames.json"), {"agent": "random", "n": 1}
    calls = []
    real = ex.best_response_values

    def dies_at_the_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process killed during the second subgame
        return real(*a, **k)

    monkeypatch.setattr(ex, "best_response_values", dies_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        ex.policy_exploitability(RandomAgent(), rules, viras="subgames", log=_quiet, resume=(path, key))
    assert list(json.load(open(path))["done"]) == ["0"]
    monkeypatch.setattr(ex, "best_response_values", real)
    again = ex.policy_exploitability(RandomAgent(), rules, viras="subgames", log=_quiet, resume=(path, key))
    assert again["resumed_subgames"] == [0] and len(again["viras"]) == len(whole["viras"]) == 2
    for a, b in zip(again["viras"], whole["viras"]):
        assert a["vira"] == b["vira"] and a["exploitability"] == pytest.approx(b["exploitability"], abs=1e-12)
    for k in ("exploitability", "br0", "br1", "value_seat0"):
        assert again[k] == pytest.approx(whole[k], abs=1e-12)
    with pytest.raises(TrucError, match="finished subgames of another measurement.*delete it"):
        ex.policy_exploitability(RandomAgent(), rules, viras="subgames", log=_quiet, resume=(path, {"agent": "x"}))
    with open(path, "w") as f:
        f.write("{not json")
    with pytest.raises(TrucError, match="not a readable file of finished subgames"):
        ex.policy_exploitability(RandomAgent(), rules, viras="subgames", log=_quiet, resume=(path, key))


def test_the_cli_keeps_finished_subgames_until_the_result_is_written(tmp_path, monkeypatch):
    from train.commands.cli import main

    out = tmp_path / "p.json"
    args = ["exploitability", "--agent", "random", "--variant", "truco_paulista", "--options", json.dumps(PAULISTA_TWO),
            "--quiet", "--no-cache", "--viras", "subgames", "--out", str(out)]
    real, calls = ex.best_response_values, []

    def dies_at_the_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ex, "best_response_values", dies_at_the_second)
    assert main(args) != 0  # "truc: interrupted"
    assert (tmp_path / "p.json.subgames.json").exists() and not out.exists()
    monkeypatch.setattr(ex, "best_response_values", real)
    assert main(args) == 0
    data = json.loads(out.read_text())
    assert data["resumed_subgames"] == [0] and not (tmp_path / "p.json.subgames.json").exists()


def _kb_limit(monkeypatch, kib: float) -> None:
    monkeypatch.setenv("TRUC_CACHE_MAX_GB", repr(kib / 2**20))


def test_the_cache_keeps_within_its_limit_dropping_the_least_recently_used(tmp_path, monkeypatch, capsys):
    _kb_limit(monkeypatch, 3.5)  # room for two of these files (1 KiB of array, about 1.4 KiB on disk), not three
    d, arrays = tmp_path / "c", {"a": np.zeros(128)}
    d.mkdir()
    (d / "notes.npz").write_bytes(b"0" * 4096)  # the user's own file is never the cache's to delete
    paths = {}
    for name in "abc":
        key = {"name": name}
        paths[name], none = tree_cache.cache_read(str(d), "tree", key, "tree")
        assert none is None and tree_cache.cache_write(paths[name], {"key": key}, arrays)
        os.utime(paths[name], (ord(name), ord(name)))  # written in turn: a, then b
        if name == "b":  # a is the older, but read since: cache_read touches what it reads
            assert tree_cache.cache_read(str(d), "tree", {"name": "a"}, "tree")[1] is not None
    assert sorted(os.listdir(d)) == sorted(["notes.npz", os.path.basename(paths["a"]), os.path.basename(paths["c"])])
    assert "1 least recently used file" in capsys.readouterr().err


def test_a_cache_hit_counts_as_use(tmp_path):
    from train.eval import exploitability as ex_

    rules = make_rules("le_truc", ranks=3, hand_size=1, max_raises=1, redeal=False)
    ex_.cached_tree(rules, cache_dir=str(tmp_path))
    (path,) = [p for p in tmp_path.iterdir() if p.name.startswith("tree-")]
    os.utime(path, (1, 1))
    ex_.cached_tree(rules, cache_dir=str(tmp_path))
    assert path.stat().st_mtime > 1


def test_a_file_over_the_limit_is_not_kept_and_a_bad_limit_is_refused(tmp_path, monkeypatch, capsys):
    from train.commands.cli import main

    _kb_limit(monkeypatch, 0.5)
    path = str(tmp_path / "tree-x.npz")
    assert tree_cache.cache_write(path, {"key": 1}, {"a": np.zeros(128)}, "public tree") is False
    assert os.listdir(tmp_path) == [] and "the cache's limit is 0.0 GiB, $TRUC_CACHE_MAX_GB" in capsys.readouterr().err
    monkeypatch.setenv("TRUC_CACHE_MAX_GB", "0")
    assert tree_cache.cache_limit() is None and tree_cache.cache_write(path, {"key": 1}, {"a": np.zeros(128)})
    assert main(["cache", "--cache-dir", str(tmp_path)]) == 0  # a file whose header holds no key mapping: unreadable
    assert "unreadable  (stale)" in capsys.readouterr().out
    for bad in ("lots", "-1", "nan", "inf"):
        monkeypatch.setenv("TRUC_CACHE_MAX_GB", bad)
        assert main(["cache", "--cache-dir", str(tmp_path)]) == 2
        assert f"TRUC_CACHE_MAX_GB={bad!r}: the cache's limit in GiB" in capsys.readouterr().err
        assert main(["exploitability", "--agent", "random", "--options", '{"ranks": 3, "hand_size": 1, "redeal": false}',
                     "--cache-dir", str(tmp_path)]) == 2  # refused before any work
        assert "TRUC_CACHE_MAX_GB" in capsys.readouterr().err
