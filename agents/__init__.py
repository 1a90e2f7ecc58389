"""Agents: ``act(observation, action_mask) -> int``, built from spec strings by :func:`make_agent`.

Specs: ``random``, ``heuristic:<honest|bluffer|cautious>``, ``cfr:<path>``, ``ppo:<path>``, ``human``.
"""

from __future__ import annotations

from truc_env.errors import TrucError

SPEC_FORMS = "random, heuristic:<honest|bluffer|cautious>, cfr:<path>, ppo:<path>, human"


class AgentSpecError(TrucError):
    """An agent spec that does not name an agent, or whose file cannot be loaded."""


def make_agent(spec: str, rules=None, seed: int | None = None):
    """Build an agent from its spec string; a bad spec raises AgentSpecError saying why."""
    if not isinstance(spec, str) or not spec:
        raise AgentSpecError(f"an agent spec must be a non-empty string; forms: {SPEC_FORMS}")
    kind, _, arg = spec.partition(":")
    if kind == "random" and not arg:
        from .random import RandomAgent

        return RandomAgent(seed)
    if kind == "heuristic":
        from .heuristic import STYLES, HeuristicAgent

        style = arg or "honest"
        if style not in STYLES:
            raise AgentSpecError(f"unknown heuristic style {style!r} in {spec!r}; styles: {', '.join(STYLES)}")
        return HeuristicAgent(style, seed)
    if kind == "human" and not arg:
        from .human import HumanAgent

        return HumanAgent()
    if kind in ("cfr", "ppo"):
        if not arg:
            raise AgentSpecError(f"{kind} agents need a file: '{kind}:path/to/file'")
        import os

        if not os.path.exists(arg):
            raise AgentSpecError(f"{spec!r}: no such file {arg!r}")
        try:
            if kind == "cfr":
                from .cfr import load_agent
            else:
                from .ppo import load_agent
        except ImportError as e:
            raise AgentSpecError(f"{spec!r}: the {kind} agent is not available ({e})") from None
        agent = load_agent(arg, rules)
        if seed is not None and hasattr(agent, "reset"):
            agent.reset(seed)
        return agent
    if kind == "oracle":
        raise AgentSpecError(f"{spec!r}: an oracle sees its partner's hand, a research bound and not a fair agent; "
                             "only `truc analyze bound` builds it (agents.partner_info.make_oracle)")
    raise AgentSpecError(f"unknown agent spec {spec!r}; forms: {SPEC_FORMS}")
