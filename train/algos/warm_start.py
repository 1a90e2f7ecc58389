"""Warm start: a PPO network for one Rules initialised from a policy trained for other Rules of its variant.

PPO's ``init_from: PATH`` (``{seed}`` in it is replaced by the run's seed). The use it was built for
(docs/signals.md "Talking from the silent twin"): a Le Truc 2 vs 2 team that starts talking from its
no-channel twin's trained weights, so that the channel's larger observation and action set do not make it
start behind the team it is compared with.

The new network computes what the old one did (a function-preserving widening, as Net2Net's, Chen et
al. 2016): the observation is a list of named sections (:class:`truc_env.game.observe.Encoder`) and the
actions a list of named blocks (:class:`truc_env.game.actions.ActionLayout`); every section and block
of the source exists in the target with the same size, and their weights are copied there. The target's
own sections (e.g. ``signals``, ``instruction``) get zero input weights, so the hidden layers ignore them
until training says otherwise; its own action blocks (``signal``, ``instruct``) get zero output weights.
Their biases are zero too, except the ``none`` of ``instruct``: an instruction narrows the partner's legal
plays, so a uniformly random one would change the game the copied policy plays; its bias gives ``instruct
none`` the probability ``init_instruct_none`` at the start (the silent team never instructs). A random
signal changes nothing at the start (the governor's weights for it are zero), so signals start uniform:
the listener has something to learn from.
"""

from __future__ import annotations

import math

import torch

from agents.network import PolicyNet, feature_size, read_checkpoint, rules_of_checkpoint
from agents.network.network import strength_size
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.observe import encoder_of


def init_path(template: str, seed: int) -> str:
    """``init_from`` for the run of ``seed``: ``{seed}`` replaced; other braces are refused."""
    path = template.replace("{seed}", str(seed))
    if "{" in path or "}" in path:
        raise TrucError(f"PPO setting init_from {template!r}: the only placeholder it takes is {{seed}}")
    return path


def input_map(src_rules, dst_rules, features: str) -> list[tuple[int, int, int]]:
    """(source column, target column, width) of every observation section of ``src_rules``."""
    es, ed = encoder_of(src_rules), encoder_of(dst_rules)
    out = []
    for name, size, _ in es.sections:
        src = es.piece(name)
        dst = ed.piece(name) if ed.has(name) else None
        if dst is None or dst.shape != src.shape:
            raise TrucError(f"init_from: the observation section {name!r} of {src_rules.variant} "
                            f"{dict(src_rules.options)} has no counterpart of the same size in the run's Rules")
        out.append((src.offset, dst.offset, size))
    if features == "observation+strength":
        out.append((es.size, ed.size, strength_size(src_rules)))
    elif features != "observation":
        raise TrucError(f"init_from: features {features!r} are not widened (observation and observation+strength are)")
    return out


def action_map(src_rules, dst_rules) -> list[tuple[int, int, int]]:
    """(source id, target id, length) of every action block of ``src_rules``."""
    ls, ld = layout_of(src_rules), layout_of(dst_rules)
    blocks = {name: (start, length) for name, start, length in ld.sections}
    out = []
    for name, start, length in ls.sections:
        if blocks.get(name, (0, -1))[1] != length or ls.names()[start:start + length] != \
                ld.names()[blocks[name][0]:blocks[name][0] + length]:
            raise TrucError(f"init_from: the action block {name!r} of {src_rules.variant} {dict(src_rules.options)} "
                            "has no identical counterpart in the run's Rules")
        out.append((start, blocks[name][0], length))
    return out


def widen(src: PolicyNet, src_rules, dst_rules, features: str, instruct_none: float) -> PolicyNet:
    """A :class:`PolicyNet` for ``dst_rules`` computing ``src``'s function on the shared inputs and actions."""
    hidden = [m.out_features for m in src.actor if isinstance(m, torch.nn.Linear)][:-1]
    dst = PolicyNet(feature_size(dst_rules, features), layout_of(dst_rules).size, hidden, init=False)
    cols, acts = input_map(src_rules, dst_rules, features), action_map(src_rules, dst_rules)
    with torch.no_grad():
        for part in ("actor", "critic"):
            s_layers = [m for m in getattr(src, part) if isinstance(m, torch.nn.Linear)]
            d_layers = [m for m in getattr(dst, part) if isinstance(m, torch.nn.Linear)]
            for i, (s, d) in enumerate(zip(s_layers, d_layers)):
                d.weight.zero_()
                d.bias.zero_()
                if i == 0:  # the input layer: the source's columns where its sections sit now
                    d.bias.copy_(s.bias)
                    for a, b, w in cols:
                        d.weight[:, b:b + w] = s.weight[:, a:a + w]
                elif i == len(s_layers) - 1 and part == "actor":  # the logits: the source's rows where its actions sit now
                    for a, b, n in acts:
                        d.weight[b:b + n] = s.weight[a:a + n]
                        d.bias[b:b + n] = s.bias[a:a + n]
                else:
                    d.weight.copy_(s.weight)
                    d.bias.copy_(s.bias)
        L = layout_of(dst_rules)
        if L.instruct >= 0 and layout_of(src_rules).instruct < 0:
            k = len(L.instruct_tokens)
            # zero weights: P(none) = e^b / (e^b + k - 1) among the instruct tokens, whatever the input
            dst.actor[-1].bias[L.instruct] = math.log(instruct_none / (1.0 - instruct_none) * (k - 1))
    return dst


def initial_state(cfg, rules) -> tuple[str, dict]:
    """The path of ``cfg.init_from`` (the run's seed in it) and its network widened to ``rules``, as a
    state dict for the run's :class:`PolicyNet` (read before the run folder is made: a bad file is
    refused before anything is written)."""
    path = init_path(cfg.init_from, cfg.seed)
    ck = read_checkpoint(path)
    src_rules = rules_of_checkpoint(ck)
    if src_rules.variant != rules.variant:
        raise TrucError(f"init_from {path}: trained for {src_rules.variant}, the run plays {rules.variant}")
    meta = ck["net"]
    if meta["features"] != cfg.features or list(meta["hidden"]) != list(cfg.hidden):
        raise TrucError(f"init_from {path}: network features {meta['features']!r}, hidden {meta['hidden']}; "
                        f"the run asks for {cfg.features!r}, {list(cfg.hidden)}: they must be the same")
    src = PolicyNet(meta["obs_size"], meta["n_actions"], meta["hidden"], init=False)
    src.load_state_dict(ck["model"])
    return path, widen(src, src_rules, rules, cfg.features, cfg.init_instruct_none).state_dict()
