"""The package as a user gets it: installed (not editable), run from outside the checkout.

The fast test installs the sources into a bare folder (``pip install --no-deps --target``) and runs
the installed ``truc`` with only that folder on the path; the slow one builds the wheel and installs
it with its dependencies into a fresh virtual environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = ("pyproject.toml", "setup.py", "README.md", "truc_env", "agents", "train", "configs", "models", "examples")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")

# Every subcommand's --help in one process (the parser is built whole for each), walking the parser
# so that a subcommand added later is covered too; then the leaves' names for the caller to check.
HELP_ALL = textwrap.dedent("""
    import argparse, contextlib, io, train, train.commands.cli as cli
    assert "{root}" not in train.__file__, train.__file__

    def leaves(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path
        for action in subs:
            for name, child in action.choices.items():
                yield from leaves(child, path + [name])

    done = []
    for path in leaves(cli.build_parser(), []):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                cli.main(path + ["--help"])
            except SystemExit as e:
                assert e.code == 0, (path, e.code)
        assert out.getvalue().startswith("usage: truc " + " ".join(path)), out.getvalue()[:200]
        done.append(" ".join(path))
    print("\\n".join(done))
""")


def copy_sources(dest: Path) -> Path:
    """The files the package is built from, copied out so that building leaves the checkout untouched."""
    dest.mkdir()
    for name in PACKAGED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=SKIP)
        else:
            shutil.copy2(src, dest / name)
    return dest


def outside_env(path_entries: list[str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    if path_entries:
        env["PYTHONPATH"] = os.pathsep.join(path_entries)
    env["MPLBACKEND"] = "Agg"
    return env


def run(cmd: list[str], cwd: Path, env: dict, timeout: float = 300) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def check_installed_truc(python: str, truc: str | None, cwd: Path, env: dict) -> None:
    """Every subcommand's help, then short real runs, from ``cwd`` (outside the checkout)."""
    helped = run([python, "-c", HELP_ALL.format(root=str(ROOT))], cwd, env).split()
    for sub in ("rules", "replay", "demo", "arena", "play", "train", "exploitability", "analyze", "bench"):
        assert sub in helped, helped
    assert "Le Truc" in run([python, "-m", "train.commands.cli", "rules", "le_truc"], cwd, env)
    if truc:  # the console script, as `pip install` writes it
        assert "Truco Paulista" in run([truc, "rules", "truco_paulista"], cwd, env)
    assert "Game over" in run([python, "-m", "train.commands.cli", "demo", "--seed", "1"], cwd, env)
    # a tiny bench on the engine-loop backend (interception as a chance event), so no numba kernel compiles in
    # the new copy (put_n, on the loop until it had its own kernel, would compile that kernel)
    out = run([python, "-m", "train.commands.cli", "bench", "--seconds", "0.02", "--variants", "truco_paulista+intercept",
               "--sizes", "2", "--out", str(cwd / "bench")], cwd, env)
    assert "batched B=2" in out and "loop" in out and (cwd / "bench" / "bench.json").exists()
    assert not (cwd / "benchmarks").exists()
    check_readme_commands(python, cwd, env)


def check_readme_commands(python: str, cwd: Path, env: dict) -> None:
    """The README's commands that name shipped files (examples/, configs/, models/), run where there are none:
    the checkout paths as written, and the short names."""
    assert not (cwd / "configs").exists() and not (cwd / "examples").exists() and not (cwd / "models").exists()
    truc = [python, "-m", "train.commands.cli"]
    assert "hand_points" in run(truc + ["replay", "examples/worked_example.json"], cwd, env)
    # the rest in one process (each start imports the package again): the arena configs by their checkout path
    # and by their short name, a config read by its short name, and the shipped networks by name and by their
    # checkout path (torch where the interpreter has it)
    script = textwrap.dedent("""
        import contextlib, importlib.util as u, io, os
        from train import config
        from train.commands.cli import main
        for cfg in ("configs/arena/le_truc.yaml", "arena/le_truc"):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(["arena", "--config", cfg, "--set", "deals=2", "--workers", "1", "--out", {arena!r}])
            assert code == 0 and "heuristic:honest" in out.getvalue(), (cfg, code, out.getvalue())
            assert os.path.exists(os.path.join({arena!r}, "summary.json")), cfg
        assert config.read_mapping("arena/paulista")["variant"] == "truco_paulista"
        if u.find_spec("torch"):
            from agents import make_agent; from truc_env.game.rules import make_rules
            r = make_rules("le_truc")
            a, b = make_agent("net:le_truc", r), make_agent("net:models/distilled_mmd_le_truc.pt", r)
            assert "_shipped" in a.name and a.name == b.name, (a.name, b.name)
        print("ok")
    """).format(arena=str(cwd / "arena"))
    assert run([python, "-c", script], cwd, env).splitlines()[-1] == "ok"


def test_installed_copy_runs_every_subcommand_outside_the_checkout(tmp_path):
    src = copy_sources(tmp_path / "src")
    site = tmp_path / "site"
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site),
         str(src)], tmp_path, outside_env([]))
    installed = sorted(p.name for p in site.iterdir() if not p.name.endswith((".dist-info", "__pycache__")))
    assert installed == ["agents", "bin", "train", "truc_env"], installed  # no top-level benchmarks/ or tests/
    shipped = sorted(p.name for p in (site / "train" / "web" / "static").iterdir())
    assert shipped == ["app.js", "index.html", "style.css"], shipped  # the web table's page is package data
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check_installed_truc(sys.executable, str(site / "bin" / "truc"), elsewhere, outside_env([str(site)]))


@pytest.mark.slow
def test_wheel_installs_with_its_dependencies_in_a_fresh_venv(tmp_path):
    src = copy_sources(tmp_path / "src")
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(src)],
        tmp_path, outside_env([]), timeout=600)
    (wheel,) = (tmp_path / "dist").glob("truc_env-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path, outside_env([]))
    python, pip = str(venv / "bin" / "python"), str(venv / "bin" / "pip")
    # torch first: the pin finds the local CPU wheel here (the Makefile's TORCH), so pip never fetches a CUDA build
    run([pip, "install", "-q", "torch==2.13.0"], tmp_path, outside_env([]), timeout=1200)
    run([pip, "install", "-q", f"{wheel}[ppo,openspiel]"], tmp_path, outside_env([]), timeout=1200)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = outside_env([])
    check_installed_truc(python, str(venv / "bin" / "truc"), elsewhere, env)
    run([python, "-c", "import torch, pyspiel, truc_env.envs.openspiel_game, agents.network"], elsewhere, env)
