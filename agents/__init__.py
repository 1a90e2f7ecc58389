"""Agents: ``act(observation, action_mask) -> int``, built from spec strings by :func:`make_agent`.

Specs: ``random``, ``heuristic:<honest|bluffer|cautious>``, ``table:<path>`` (a tabular strategy, whatever
solved it: CFR, MCCFR, MMD, PSRO), ``net:<path>`` (a network, whatever trained it: PPO, MMD, distillation),
``human``, and ``greedy:<spec>`` (the most probable action of a ``net:`` or ``table:`` policy, always).
``cfr:`` and ``ppo:``, the names of 0.1, are kept as aliases of ``table:`` and ``net:`` for one
release. A path that does not exist is looked up among the shipped models (``net:le_truc``, see
:mod:`truc_env.io.assets`).
"""

from __future__ import annotations

from truc_env.errors import TrucError
from truc_env.io.assets import resolve
from truc_env.moved import keep_old_paths

# the 0.1 module paths (agents.heuristic, agents.ppo.network, ...) import their 0.2 homes for one release
keep_old_paths({**{f"agents.{m}": f"agents.players.{m}"
                   for m in ("random", "heuristic", "heuristic_batch", "human", "partner_info")},
                "agents.ppo": "agents.network"})

SPEC_FORMS = "random, heuristic:<honest|bluffer|cautious>, table:<path>, net:<path|name>, human, greedy:<net or table spec>"
# the file-backed kinds; the aliases are the 0.1 names, kept for one release
FILE_KINDS = ("table", "net")
ALIASES = {"cfr": "table", "ppo": "net"}


class AgentSpecError(TrucError):
    """An agent spec that does not name an agent, or whose file cannot be loaded."""


def spec_kind(spec: str) -> str:
    """The kind of an agent spec, aliases resolved: ``ppo:x.pt`` -> ``net``, ``heuristic:honest`` -> ``heuristic``."""
    kind = spec.partition(":")[0]
    return ALIASES.get(kind, kind)


def _wraps(spec: str, kind: str) -> bool:
    """Whether ``spec``, or the spec a wrapper (``deaf:``, ``mirror:``) holds, is of ``kind``."""
    return any(ALIASES.get(k, k) == kind for k in spec.split(":")[:-1])


def is_network(spec: str) -> bool:
    """Whether ``spec`` plays a network (``net:`` or its alias ``ppo:``, wrapped or not): the agents that need torch."""
    return _wraps(spec, "net")


def is_table(spec: str) -> bool:
    """Whether ``spec`` is a tabular strategy file (``table:`` or its alias ``cfr:``)."""
    return spec_kind(spec) == "table"


def spec_file(spec: str) -> str:
    """The file a ``net:`` / ``table:`` spec (or an alias) names, shipped names resolved; AgentSpecError if none."""
    kind, _, arg = spec.partition(":")
    if not arg:
        raise AgentSpecError(f"{kind} agents need a file: '{kind}:path/to/file'")
    try:
        return resolve("models", arg)
    except TrucError as e:
        raise AgentSpecError(f"{spec!r}: {e}") from None


def spec_path(spec: str) -> str | None:
    """The file a file-backed spec names, shipped names resolved, or None when there is none."""
    try:
        return spec_file(spec)
    except AgentSpecError:
        return None


def make_agent(spec: str, rules=None, seed: int | None = None):
    """Build an agent from its spec string; a bad spec raises AgentSpecError saying why."""
    if not isinstance(spec, str) or not spec:
        raise AgentSpecError(f"an agent spec must be a non-empty string; forms: {SPEC_FORMS}")
    kind, _, arg = spec.partition(":")
    if kind == "random" and not arg:
        from agents.players.random import RandomAgent

        return RandomAgent(seed)
    if kind == "heuristic":
        from agents.players.heuristic import STYLES, HeuristicAgent

        style = arg or "honest"
        if style not in STYLES:
            raise AgentSpecError(f"unknown heuristic style {style!r} in {spec!r}; styles: {', '.join(STYLES)}")
        return HeuristicAgent(style, seed)
    if kind == "human" and not arg:
        from agents.players.human import HumanAgent

        return HumanAgent()
    if ALIASES.get(kind, kind) in FILE_KINDS:
        path = spec_file(spec)
        try:
            if is_table(spec):
                from agents.cfr import load_agent
            else:
                from agents.network import load_agent
        except ImportError as e:
            raise AgentSpecError(f"{spec!r}: the {kind} agent is not available ({e})") from None
        agent = load_agent(path, rules)
        if seed is not None and hasattr(agent, "reset"):
            agent.reset(seed)
        return agent
    if kind == "greedy":
        if not arg:
            raise AgentSpecError("greedy: wraps a policy that gives its probabilities: greedy:net:PATH or greedy:table:PATH")
        from agents.players.greedy import GreedyAgent

        return GreedyAgent(make_agent(arg, rules, seed), spec)
    if kind == "oracle":
        raise AgentSpecError(f"{spec!r}: an oracle sees its partner's hand, a research bound and not a fair agent; "
                             "only `truc analyze bound` builds it (agents.players.partner_info.make_oracle)")
    raise AgentSpecError(f"unknown agent spec {spec!r}; forms: {SPEC_FORMS}")
