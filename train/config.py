"""One validation layer for every settings file (arena, cfr, ppo, signals, demo).

A config kind is a dataclass (its fields and defaults, written once) plus ``SCHEMA``: one
:class:`Setting` per field saying its type, range, choices or path rule. :func:`build` checks a
mapping against both and returns the dataclass; :func:`load` reads a YAML file first and applies
``--set key=value`` overrides (values parsed as YAML, ``a.b=...`` reaching into a mapping). Every
problem is a :class:`TrucError` naming the setting, what it got and what is allowed; cross-field
rules (an agent spec, the variant's options) stay with each config's own ``validate``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass
from typing import Any

import yaml

from truc_env.errors import TrucError
from truc_env.io.assets import shipped_path
from truc_env.io.atomic import parse_json, read_text
from truc_env.io.checks import MAX_SEED


def cpu_cores() -> int:
    """The cores available here."""
    return os.cpu_count() or 1


def require_ray():
    """The ray module, or a one-line error naming the extra that installs it (``backend: ray``)."""
    try:
        import ray
    except ImportError:
        raise TrucError("backend 'ray' needs Ray: pip install 'truc-env[distributed]' (or backend: local)") from None
    return ray


def worker_count(workers: int) -> int:
    """Processes to start for a ``workers`` setting: capped at the cores here, so a config written for a
    big machine runs on a small one, and no setting forks more processes than there are cores."""
    return max(1, min(workers, cpu_cores()))


@dataclass(frozen=True)
class Setting:
    """The rule one setting must follow."""

    kind: str  # int, float, bool, str, list, dict, name (a relative path kept inside the output folder)
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    items: Setting | None = None  # lists: the rule of every item
    min_len: int = 0
    unique: bool = False
    none: bool = False  # None (YAML null) allowed

    def describe(self) -> str:
        """What is allowed, in words."""
        if self.choices:
            text = "one of " + ", ".join(map(str, self.choices))
        elif self.kind in ("int", "float"):
            word = "an integer" if self.kind == "int" else "a number"
            lo, hi = self.lo, self.hi
            text = (f"{word} in {lo}..{hi}" if lo is not None and hi is not None else
                    f"{word} >= {lo}" if lo is not None else word)
        elif self.kind == "list":
            text = "a list"
            if self.min_len:
                text += f" of at least {self.min_len}{' distinct' if self.unique else ''} items"
            if self.items:
                text += f", each {self.items.describe()}"
        elif self.kind == "name":
            text = "a relative name inside the output folder (no '..', not absolute)"
        else:
            text = {"bool": "true or false", "str": "a string", "dict": "a mapping"}[self.kind]
        return text + (" or null" if self.none else "")


def Int(lo=None, hi=None, none=False) -> Setting:
    return Setting("int", lo, hi, none=none)


def Float(lo=None, hi=None, none=False) -> Setting:
    return Setting("float", lo, hi, none=none)


def Choice(*choices, none=False) -> Setting:
    return Setting("str", choices=choices, none=none)


def List(items: Setting, min_len: int = 0, unique: bool = False) -> Setting:
    return Setting("list", items=items, min_len=min_len, unique=unique)


BOOL, STR, DICT, NAME = Setting("bool"), Setting("str"), Setting("dict"), Setting("name")
SEED = Int(0, MAX_SEED)
WORKERS = Int(1, 4096)  # a sane bound; what runs is worker_count(workers)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_EXPONENT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def check(setting: Setting, value, where: str):
    """The value, normalised (an int for a float setting becomes a float); TrucError if it breaks the rule."""
    def bad(extra: str = ""):
        return TrucError(f"{where}={_short(value)} is invalid{extra}; expected {setting.describe()}")

    if value is None:
        if setting.none:
            return None
        raise bad()
    k = setting.kind
    if k == "float" and isinstance(value, str) and _EXPONENT.match(value):
        value = float(value)  # YAML 1.1 (PyYAML) reads 1e-5, without a dot, as a string; YAML 1.2 as a number
    if k in ("int", "float"):
        # bool is an int to Python, never a count to a config
        if isinstance(value, bool) or not isinstance(value, (int, float) if k == "float" else int):
            raise bad()
        if k == "float":
            value = float(value)
            if not math.isfinite(value):
                raise bad()
        hi = setting.hi
        if (setting.lo is not None and value < setting.lo) or (hi is not None and value > hi):
            raise bad(" (out of range)")
        return value
    if k == "bool":
        if not isinstance(value, bool):
            raise bad()
        return value
    if k in ("str", "name"):
        if not isinstance(value, str) or (setting.choices and value not in setting.choices):
            raise bad()
        if k == "name":
            parts = value.replace("\\", "/").split("/")
            if not value or os.path.isabs(value) or value.startswith(("/", "\\")) or ".." in parts \
                    or "\x00" in value:
                raise bad()
        return value
    if k == "dict":
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise bad()
        return value
    if k == "list":
        if not isinstance(value, list):
            raise bad()
        out = [check(setting.items, v, f"{where}[{i}]") for i, v in enumerate(value)] if setting.items else value
        if len(out) < setting.min_len:
            raise bad(f" (fewer than {setting.min_len} items)")
        if setting.unique and len({repr(v) for v in out}) != len(out):
            raise bad(" (an item is repeated)")
        return out
    raise AssertionError(f"unknown setting kind {k}")


def build(cls, raw, source: str = "config"):
    """``cls(**raw)`` once every key is a field of ``cls`` and every value follows ``cls.SCHEMA``."""
    what = getattr(cls, "KIND", cls.__name__)
    if not isinstance(raw, dict):
        raise TrucError(f"{source}: {what} settings must be a mapping of name: value, got {type(raw).__name__}")
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = [k for k in raw if k not in fields]
    if unknown:
        raise TrucError(f"{source}: unknown setting(s) {', '.join(map(_short, unknown))} for a {what} config; "
                        f"allowed: {', '.join(sorted(fields))}")
    values = {k: check(cls.SCHEMA[k], v, f"{source}: setting {k}") for k, v in raw.items()}
    cfg = cls(**values)
    if hasattr(cfg, "validate"):
        cfg.validate()
    return cfg


def read_mapping(path, what: str = "config") -> dict:
    """The settings of a YAML file as a dict (an empty file is no settings); TrucError if unreadable.

    ``path`` may also name a shipped config (``arena/paulista``, :mod:`truc_env.io.assets`)."""
    path = shipped_path("configs", path)
    text = read_text(path, what)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise TrucError(f"{what} {path} is not valid YAML: {e}") from None
    except RecursionError:
        raise TrucError(f"{what} {path} nests too deeply to be a {what}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
        raise TrucError(f"{what} {path} must be a mapping of settings (name: value)")
    return raw


def output_folder(path, setting: str = "out") -> str:
    """Create the output folder (and its parents) and check it takes files; TrucError if it cannot."""
    import tempfile

    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise TrucError(f"output folder {path} is not writable ({e.strerror}); choose another '{setting}'") from None
    return str(path)


def parse_options(text: str | None, flag: str = "--options") -> dict:
    """A variant's options given as JSON on the command line (none: the defaults)."""
    if not text:
        return {}
    try:
        options = parse_json(text, flag)  # strict: a key given twice is refused, not the last one kept
    except TrucError as e:
        raise TrucError(f"{e}; expected an object like '{{\"players\": 4}}'") from None
    if not isinstance(options, dict):
        raise TrucError(f"{flag} must be a JSON object of option: value, got {_short(options)}")
    return options


def parse_overrides(pairs) -> list[tuple[list[str], Any]]:
    """``["deals=10", "options.redeal=false"]`` as (key path, YAML value) pairs."""
    out = []
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        path = key.strip().split(".")
        if not sep or not all(path):
            raise TrucError(f"--set {pair!r} must be key=value (a YAML value; a.b=value sets a key of mapping a)")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise TrucError(f"--set {pair!r}: the value is not valid YAML ({e})") from None
        out.append((path, value))
    return out


def apply_overrides(raw: dict, pairs) -> dict:
    """A copy of ``raw`` with ``--set`` overrides applied."""
    raw = dict(raw)
    for path, value in parse_overrides(pairs):
        node = raw
        for i, key in enumerate(path[:-1]):
            child = node.get(key)
            if child is None:
                child = {}
            elif not isinstance(child, dict):
                raise TrucError(f"--set {'.'.join(path)}: {'.'.join(path[:i + 1])} is not a mapping")
            node[key] = child = dict(child)
            node = child
        node[path[-1]] = value
    return raw


def load(cls, path, overrides=(), what: str = "config"):
    """Read, override and build a config of kind ``cls`` from a YAML file."""
    return build(cls, apply_overrides(read_mapping(path, what), overrides), str(path))


@dataclass
class RunConfig:
    """What every run config holds: the game it is for. Each kind adds its own fields (arena, cfr, ppo,
    psro, distill, demo) and its ``SCHEMA`` takes these two from :data:`RUN_SCHEMA`."""

    variant: str = "le_truc"
    """the variant (``truc rules`` lists them)"""
    options: dict = dataclasses.field(default_factory=dict)
    """the variant's options, as for ``make_rules``"""

    def rules(self):
        """The run's Rules, built once per variant and options and passed down (not kept on the config:
        ``cfg.__dict__`` stays the settings alone, as workers and checkpoints receive them)."""
        key = (self.variant, repr(sorted((self.options or {}).items())))
        if key not in _RULES:
            from truc_env.game.rules import make_rules

            _RULES[key] = make_rules(self.variant, **(self.options or {}))
        return _RULES[key]


_RULES: dict = {}  # (variant, options) -> Rules: a Rules is frozen, so one per game serves every run


RUN_SCHEMA = {"variant": STR, "options": DICT}


@dataclass
class DemoConfig(RunConfig):
    """``truc demo``: one game between random players, its first hands rendered."""

    KIND = "demo"
    seed: int = 0
    show_hands: int = 3

    def validate(self) -> None:
        self.rules()


DemoConfig.SCHEMA = {**RUN_SCHEMA, "seed": SEED, "show_hands": Int(0, 10_000)}
