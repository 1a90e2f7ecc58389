"""The batched engine's compiled-kernel cache and first compile (issue 30): where the cache lives (a user
cache dir, not the package: read-only installs keep it), the one-line announcement of a compile, an unreadable
cache entry rebuilt with a message, and batch sizes refused up front with the memory they would need."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from truc_env.batch.vector import VectorEnv, batch_bytes
from truc_env.errors import TrucError

ROOT = Path(__file__).resolve().parent.parent

# a numba function of its own in a read-only folder, cached through the kernels' locator and made ready by
# _kernel_cache.ready(), as VectorEnv makes its kernels ready
TINY = textwrap.dedent("""
    import sys
    from truc_env import _kernel_cache
    _kernel_cache.UserCacheLocator.roots.append(sys.argv[1])
    sys.path.insert(0, sys.argv[1])
    import tiny
    _kernel_cache.ready([(tiny.twice, (21,))], what="a test")
    assert tiny.twice(21) == 42
""")


def _run(code: str, *args: str, cache: Path, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    environ.update(TRUC_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", code, *args], env=environ, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def tiny_package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "tiny.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    pkg.chmod(0o555)
    yield pkg
    pkg.chmod(0o755)


def _index_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.nbi"))


def test_the_cache_lives_in_the_user_cache_dir_and_the_first_compile_says_so(tmp_path, tiny_package):
    cache = tmp_path / "cache"
    first = _run(TINY, str(tiny_package), cache=cache)
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stderr.splitlines() if line.startswith("truc-env:")]
    assert len(lines) == 2 and "compiling" in lines[0] and "once" in lines[0] and str(cache) in lines[0]
    assert _index_files(cache / "numba"), "the index went to $TRUC_CACHE_DIR/numba"
    assert not _index_files(tiny_package), "nothing is written beside the (read-only) source"
    again = _run(TINY, str(tiny_package), cache=cache)
    assert again.returncode == 0 and "truc-env:" not in again.stderr, again.stderr  # loaded, silently


@pytest.mark.parametrize("part", ["nbi", "nbc"])
def test_an_unreadable_cache_entry_is_rebuilt_with_a_message(tmp_path, tiny_package, part):
    cache = tmp_path / "cache"
    assert _run(TINY, str(tiny_package), cache=cache).returncode == 0
    files = sorted((cache / "numba").rglob(f"*.{part}"))
    assert files
    for f in files:
        f.write_bytes(f.read_bytes()[:40] + b"\x00garbage")  # truncated and garbled
    broken = _run(TINY, str(tiny_package), cache=cache)
    assert broken.returncode == 0, broken.stderr
    assert "cannot be read" in broken.stderr and "rebuilding" in broken.stderr
    assert "Traceback" not in broken.stderr
    healed = _run(TINY, str(tiny_package), cache=cache)
    assert healed.returncode == 0 and "truc-env:" not in healed.stderr, healed.stderr


def test_numba_cache_dir_still_wins(tmp_path):
    code = "from truc_env.batch import _vector_kernels as K; print(K.step_serial._cache._cache_path)"
    ours = _run(code, cache=tmp_path / "cache")
    assert ours.stdout.strip().startswith(str(tmp_path / "cache" / "numba")), ours.stderr
    theirs = _run(code, cache=tmp_path / "cache", NUMBA_CACHE_DIR=str(tmp_path / "numba_dir"))
    assert theirs.stdout.strip().startswith(str(tmp_path / "numba_dir")), theirs.stderr


@pytest.mark.slow
def test_a_read_only_install_compiles_once(tmp_path):
    """The real kernel from a read-only copy of the package: compiled (announced) once, then loaded."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "truc_env", site / "truc_env", ignore=shutil.ignore_patterns("__pycache__"))
    for p in [site, *site.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    code = ("from truc_env.batch.vector import VectorEnv\nv = VectorEnv('le_truc', 8, seed=0)\nv.reset()\n"
            "v.step(v.random_actions())\nimport truc_env; print(truc_env.__file__)")
    env = {"PYTHONPATH": str(site), "TRUC_CACHE_DIR": str(tmp_path / "c")}
    base = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # the cache under test is ours
    try:
        cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, cwd=tmp_path,
                              env={**base, **env})
        warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env={**base, **env})
    finally:
        for p in [site, *site.rglob("*")]:
            p.chmod(0o755)
    assert cold.returncode == 0 and cold.stdout.startswith(str(site)), cold.stderr
    assert "compiling the batched engine" in cold.stderr
    assert warm.returncode == 0 and "truc-env:" not in warm.stderr, warm.stderr
    assert not _index_files(site)


# ---------------------------------------------------------------------------- batch sizes
@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_a_batch_that_is_not_a_positive_int_is_refused(bad):
    with pytest.raises(TrucError, match="num_envs"):
        VectorEnv("le_truc", bad)


@pytest.mark.parametrize("backend", ["numba", "loop"])
def test_a_batch_too_large_for_memory_is_refused_with_what_it_needs(backend):
    with pytest.raises(TrucError, match=r"num_envs=1,000,000,000,000 needs about [\d,.]+ GiB") as err:
        VectorEnv("le_truc", 10**12, backend=backend)
    assert "available" in str(err.value)


@pytest.mark.parametrize("variant", ["le_truc", "truco_argentino", "le_truc_4p", "put_n"])
def test_the_memory_estimate_is_the_arrays_a_batch_allocates(variant):
    """batch_bytes counts every per-game array the numba backend allocates (nothing compiles before reset)."""
    B = 37
    venv = VectorEnv(variant, B, backend="numba")
    arrays = [x for x in (*vars(venv).values(), *vars(venv._impl).values())
              if isinstance(x, np.ndarray) and x.ndim and x.shape[0] == B]
    assert batch_bytes(venv.rules, B, "numba") == sum(x.nbytes for x in arrays)


# ---------------------------------------------------------------------------- python -m train.bench.compile
def test_the_compile_bench_refuses_what_has_no_kernel():
    from train.bench import compile as bench

    with pytest.raises(TrucError, match="not a kernel variant"):
        bench.main(["--families", "no_such_variant"])
    with pytest.raises(TrucError, match="--batch"):
        bench.main(["--families", "le_truc", "--batch", "0"])
    with pytest.raises(TrucError, match="--warm-runs"):
        bench.main(["--families", "le_truc", "--warm-runs", "0"])
    assert "put_n" in bench.kernel_families() and "le_truc" in bench.kernel_families()


def test_the_compile_bench_children_cache_their_bytecode_as_an_installed_user_does(tmp_path, monkeypatch):
    """A container's PYTHONDONTWRITEBYTECODE would make every warm child compile the package's source again."""
    from train.bench import compile as bench

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    bench.first_use("import sys; sys.exit(sys.flags.dont_write_bytecode)", ["x"], str(tmp_path))  # raises if set


@pytest.mark.slow
def test_the_compile_bench_measures_cold_and_warm_in_fresh_processes(capsys):
    from train.bench import compile as bench

    assert bench.main(["--families", "put_n", "--no-pgx"]) == 0  # 1 if the compile was not announced once
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("truc-env VectorEnv put_n"))
    cold_s, cold_gb, warm_s, warm_gb = map(float, row.split()[-4:])
    assert cold_s > warm_s > 0 and cold_gb > 0 and warm_gb > 0
