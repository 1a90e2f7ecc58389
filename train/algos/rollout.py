"""PPO's rollouts: engine tables and batched-engine games played to complete episodes (see :mod:`train.algos.ppo`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from agents import make_agent
from agents.cfr.table_batch import BatchTable
from agents.network import PolicyNet, encode_state
from agents.network.network import HISTORY_FEATURES, encode_batch, history_batch, stack_actors, stacked_actor_logits
from agents.players.heuristic import HeuristicAgent
from agents.players.heuristic_batch import BatchHeuristic, batch_supports
from train.algos import signals_otherplay
from train.algos.buffer import Buffer
from train.algos.league import League
from train.algos.ppo_config import PPOConfig
from truc_env.batch.vector import VectorEnv
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode, leading_side, side_rewards
from truc_env.game.observe import SeatObservation, encoder_of
from truc_env.game.rules import make_rules


@dataclass
class Table:
    """One game in progress: its state, who controls each seat, each learning seat's pending step."""

    state: State
    control: list  # per seat: "learner", ("pool", k) or an agent object
    learner_seats: list  # seats whose decisions are recorded
    opponent: str  # label for statistics: "self", "pool:<k>", or the fixed spec
    pending: list
    acc: list
    decisions: int = 0
    episode: Episode | None = None  # the driver, made when the table is first played
    relabel: signals_otherplay.Relabelling | None = None  # other_play: this episode's token frames



def fixed_rules(cfg: PPOConfig, rules):
    """The Rules the fixed and evaluation opponents are built for (``fixed_options``); they play the
    training ``rules`` (a policy trained for other options may be refused by ``make_agent`` otherwise)."""
    return rules if cfg.fixed_options is None else make_rules(cfg.variant, **cfg.fixed_options)


def vector_blocker(cfg: PPOConfig, rules) -> str | None:
    """Why the network-only episodes of ``cfg`` cannot run on the batched engine (None: they can)."""
    if cfg.features == "info_state":
        return "info_state features need the decision history, which only engine states keep"
    if cfg.features in HISTORY_FEATURES:
        # the rollout keeps each game's decisions itself: it sees every one, but a seat sees only the
        # public ones, and the hand's history restarts at each hand of an episode
        if cfg.episode != "hand":
            return f"{cfg.features} features on the batched engine need episode: hand"
        if rules.signals.mode != "none" or rules.put_pass:
            return f"{cfg.features} features on the batched engine need every decision public (no signals, no passes)"
    if abs(cfg.random_start_score * 1000 - round(cfg.random_start_score * 1000)) > 1e-9:
        return "the batched engine draws random start scores per mille: random_start_score must be a multiple of 0.001"
    return None


TABLE_HISTORY = 256  # decisions of one hand a table player can read (a heads-up hand takes a few dozen)


class VectorGames:
    """The batched engine's part of a rollout: game ``b`` plays slot ``b``'s network-only episodes
    and its heads-up episodes against ``heuristic:*`` players.

    Per game: who plays which side (the learner everywhere in self-play, else the learner on
    ``side`` and snapshot ``pool`` or batched fixed player ``fixed`` on the other), and per seat the same credit bookkeeping as a
    :class:`Table` (pending transition, reward accumulated since). A game whose slot plays a table
    episode, or whose rollout has enough episodes, waits (action -1); the episode the batched engine
    reset it to is used when the slot next draws a network-only episode.
    """

    def __init__(self, cfg: PPOConfig, rules, venv: VectorEnv):
        self.cfg, self.rules, self.venv = cfg, rules, venv
        B, n = venv.num_envs, rules.players
        self.side_of = np.array([rules.side(s) for s in range(n)])
        self.first_seat = np.array([self.side_of.tolist().index(sd) for sd in range(rules.n_sides)])
        # win rewards per winning side, the last row a draw (leading_side -1)
        self.win_table = np.array([side_rewards(rules, w) for w in [*range(rules.n_sides), -1]])
        self.live = np.zeros(B, bool)  # slot b plays on the batched engine now
        self.side = np.full(B, -1)  # learner side; -1: self-play, every seat learns
        self.pool = np.full(B, -1)  # snapshot playing the other side
        self.fixed = np.full(B, -1)  # batched fixed player (Collector.batched) playing the other side
        self.label = [""] * B
        self.pending = np.full((B, n), -1, np.int64)
        self.acc = np.zeros((B, n))
        self.ret = np.zeros((B, n))  # zero-sum points since the episode began (statistics, reward "win")
        self.decisions = np.zeros(B, np.int64)
        self.actions = np.full(B, -1, np.int32)
        # history features: each game's decisions of its hand so far (absolute seat, action id)
        self.history = cfg.features in HISTORY_FEATURES
        H = encoder_of(rules).piece("history").shape[0] if self.history else 0
        self.h_actor = np.zeros((B, H), np.int64)
        self.h_action = np.zeros((B, H), np.int64)
        self.t_actor = self.t_action = None  # the same, whole, for a table player (keep_table_history)
        self.seeded = False
        self.fixed_seeded: set[int] = set()  # batched fixed players seeded in this rollout
        # other_play: each game's token frames, drawn when its episode starts
        self.relabel = signals_otherplay.Relabellings(rules, B) if cfg.other_play else None

    def keep_table_history(self) -> None:
        """Keep each hand's decisions whole from the next episode on (a table player reads them)."""
        if self.t_actor is None:
            B = self.venv.num_envs
            self.t_actor = np.zeros((B, TABLE_HISTORY), np.int64)
            self.t_action = np.zeros((B, TABLE_HISTORY), np.int64)

    def begin(self) -> None:
        self.live[:] = False
        self.seeded = False
        self.fixed_seeded = set()

    def start(self, b: int, rng, label: str, pool_k: int, fixed: int = -1) -> None:
        if not self.seeded:  # one reset per rollout, seeded from the training generator: resumable
            # the arrays of a reset are the environment's own buffers, which every step rewrites
            self.obs, self.mask, self.seat = self.venv.reset(seed=int(rng.integers(2**62)))
            self.decisions[:] = 0  # every game at the start of a fresh episode
            self.seeded = True
        self.live[b] = True
        self.label[b] = label
        self.side[b] = -1 if label == "self" else int(rng.integers(self.rules.n_sides))
        self.pool[b] = pool_k
        self.fixed[b] = fixed
        if self.relabel is not None:
            self.relabel.draw(b, rng)

    def groups(self) -> dict[int, np.ndarray]:
        """Live games by the player of their acting seat: -1 the learner, k >= 0 snapshot k, -2 - f
        batched fixed player f."""
        live = np.flatnonzero(self.live)
        side = self.side[live]
        learner = (side < 0) | (self.side_of[self.seat[live]] == side) if len(live) else side < 0
        fixed = self.fixed[live]
        ctl = np.where(learner, -1, np.where(fixed >= 0, -2 - fixed, self.pool[live]))
        return {int(k): live[ctl == k] for k in np.unique(ctl)}

    def inputs(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network inputs and masks of games ``idx`` (with other-play, in the acting seats' frames)."""
        history = None
        if self.history:
            history = history_batch(self.rules, self.h_actor[idx], self.h_action[idx], self.decisions[idx], self.seat[idx])
        obs, mask = encode_batch(self.rules, self.obs[idx], self.cfg.features, history), self.mask[idx].astype(bool)
        if self.relabel is not None:
            obs, mask = self.relabel.observe(obs, idx, self.seat[idx]), self.relabel.mask(mask, idx, self.seat[idx])
        return obs, mask

    def record(self, idx, obs, masks, actions, logp, values, buf: Buffer | None) -> None:
        """The chosen actions of games ``idx``; learner transitions go to ``buf`` (None: not recorded).

        Actions chosen on :meth:`inputs` (``obs`` given) are in the seats' frames and are sent through
        them; a batched fixed player's (``obs`` None) are the game's own."""
        sent = actions if self.relabel is None or obs is None else self.relabel.act(actions, idx, self.seat[idx])
        self.actions[idx] = sent
        if self.history:  # the episode is one hand: its decisions so far are the hand's history
            k = self.decisions[idx]
            keep = k < self.h_actor.shape[1]
            self.h_actor[idx[keep], k[keep]] = self.seat[idx[keep]]
            self.h_action[idx[keep], k[keep]] = np.asarray(sent)[keep]
        if self.t_actor is not None:
            k = self.decisions[idx]
            if (k >= TABLE_HISTORY).any():
                raise TrucError(f"a hand of more than {TABLE_HISTORY} decisions: the table player's history is full")
            self.t_actor[idx, k] = self.seat[idx]
            self.t_action[idx, k] = sent
        self.decisions[idx] += 1
        if buf is None:
            return
        seats = self.seat[idx]
        belief = None
        if self.cfg.belief_coef:
            from train.algos.belief import targets_of_hands

            belief = targets_of_hands(self.venv.hands[idx], seats, self.rules)
        hidden = None
        if self.cfg.critic == "privileged":
            from train.algos.privileged import hidden_of_hands

            hidden = hidden_of_hands(self.venv.hands[idx], seats, self.rules)
        j = buf.extend(obs, masks, actions, logp, values, belief, hidden)
        js = np.arange(j, j + len(idx))
        buf.credit(self.pending[idx, seats].tolist(), self.acc[idx, seats].tolist(), js.tolist())
        self.acc[idx, seats] = 0.0  # a reward before a seat's first decision is nobody's doing
        self.pending[idx, seats] = js

    def step(self, buf: Buffer | None) -> list[tuple]:
        """One step of the batched engine; the episodes it finished, as ``(slot, label, return, decisions)``."""
        cfg = self.cfg
        step = self.venv.step(self.actions)
        self.actions[:] = -1
        rew = step.reward.astype(np.float64)
        rew[~self.live] = 0.0
        self.ret += rew
        if cfg.reward == "points":
            self.acc += rew * cfg.reward_scale
        ended = np.flatnonzero(step.done & self.live)
        if not len(ended):
            return []
        if cfg.reward == "win":  # the engine's win reward; ret is zero-sum, so its order is the points'
            for b in ended.tolist():
                self.acc[b] += self.win_table[leading_side(self.ret[b, self.first_seat])] * cfg.reward_scale
        if buf is not None:  # every ended game's seats at once: each pending transition is its own
            buf.credit(self.pending[ended].ravel().tolist(), self.acc[ended].ravel().tolist())
        side = self.side[ended]
        first = np.where(side < 0, 0, self.first_seat[np.maximum(side, 0)])
        finished = [(b, self.label[b], r, d) for b, r, d in
                    zip(ended.tolist(), self.ret[ended, first].tolist(), self.decisions[ended].tolist())]
        self.live[ended] = False
        self.pending[ended] = -1
        self.acc[ended] = 0.0
        self.ret[ended] = 0.0
        self.decisions[ended] = 0
        return finished


class BatchPolicy:
    """A fixed ``ppo:`` network (``observation`` features, or ``+strength``; not the history ones) or the random agent deciding
    for its games of the batched engine at once: the agent's own masked distribution, sampled."""

    def __init__(self, rules, agent):
        self.rules, self.agent, self.key = rules, agent, id(agent)
        self.gen = torch.Generator()

    @staticmethod
    def takes(agent) -> bool:
        from agents.network import PPOAgent
        from agents.players.random import RandomAgent

        return isinstance(agent, RandomAgent) or (isinstance(agent, PPOAgent) and agent.features not in HISTORY_FEATURES
                                                  and not agent.greedy)

    def reset(self, seed: int) -> None:
        self.gen.manual_seed(seed)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        """(B, actions) the agent's distribution in each game, from the batched engine's observations."""
        m = torch.as_tensor(mask.astype(bool))
        with torch.inference_mode():
            if hasattr(self.agent, "net"):
                x = torch.as_tensor(encode_batch(self.rules, obs, self.agent.features))
                return torch.softmax(self.agent.net.masked_logits(x, m), -1)
            return m.float() / m.sum(-1, keepdim=True)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return torch.multinomial(self.probabilities(obs, mask), 1, generator=self.gen).squeeze(-1).numpy()


class Collector:
    """Plays batches of episodes with the learner, the league and fixed agents."""

    def __init__(self, cfg: PPOConfig, rules, device: torch.device):
        self.cfg, self.rules, self.device = cfg, rules, device
        self.fixed_rules = fixed_rules(cfg, rules)
        self.n_actions = layout_of(rules).size
        self.fixed: dict[str, object] = {}
        self._snapshots: dict[int, tuple] = {}  # id(snapshot params) -> (params, network)
        self._stacked: tuple = (None, None, None)  # (snapshot ids, stacked actor layers, their params)
        self.vector: VectorGames | None = None
        self.path, self.why = "engine", "rollout: engine"
        self.batch_players: list = []  # fixed players on the batched engine (BatchHeuristic by style, BatchPolicy)
        if cfg.rollout != "engine":
            why = vector_blocker(cfg, rules)
            if why is None:
                venv = VectorEnv(rules, cfg.num_envs, episode=cfg.episode, reward="points", dealer="random",
                                 random_start_score=cfg.random_start_score)
                why = None if venv.backend == "numba" else (venv.fallback_reason or "numba is not installed")
                if why is None:
                    self.vector = VectorGames(cfg, rules, venv)
                    self.path, self.why = "vector", "network-only episodes on the batched engine"
            if why is not None:
                if cfg.rollout == "vector":
                    raise TrucError(f"rollout: vector cannot run this config: {why}; use rollout: engine (or auto)")
                self.why = f"rollout: auto fell back to engine tables: {why}"

    def agent(self, spec: str):
        if spec not in self.fixed:
            self.fixed[spec] = make_agent(spec, self.fixed_rules, seed=0)
        return self.fixed[spec]

    def batched(self, agent, rng) -> int:
        """The batched player standing in for fixed ``agent`` on the batched engine (-1: none, a table).

        The ``heuristic:*`` players of heads-up rules decide there as on a table (the same action
        for the same information, ``agents/players/heuristic_batch.py``), and so do ``ppo:`` networks whose
        features the batched engine gives and the random agent (:class:`BatchPolicy`); their draws
        come from a generator seeded from ``rng`` in each rollout that needs one."""
        vec = self.vector
        if vec is None:
            return -1
        if isinstance(agent, HeuristicAgent) and batch_supports(self.rules) is None:
            key, build = agent.style_name, lambda: BatchHeuristic(self.rules, agent.style_name)
        elif self.cfg.fixed_batched and self.cfg.fixed_options is None and BatchPolicy.takes(agent):
            # (a network of other options reads another observation layout: it stays on tables)
            key, build = id(agent), lambda: BatchPolicy(self.rules, agent)
        elif (self.cfg.fixed_batched and self.cfg.fixed_options is None and self.cfg.episode == "hand"
              and BatchTable.why_not(agent, self.rules) is None):
            key, build = id(agent), lambda: BatchTable(self.rules, agent)
            vec.keep_table_history()
        else:
            return -1
        keys = [getattr(p, "style_name", None) or p.key for p in self.batch_players]
        if key not in keys:
            self.batch_players.append(build())
            keys.append(key)
        f = keys.index(key)
        if f not in vec.fixed_seeded:  # at its first episode of each rollout, like the deals: resumable
            self.batch_players[f].reset(int(rng.integers(2**62)))
            vec.fixed_seeded.add(f)
        return f

    def new_table(self, rng, opponent: str, pool_k: int = -1, agent=None) -> Table:
        r, cfg = self.rules, self.cfg
        dealer = int(rng.integers(r.players))
        score = None
        if cfg.episode == "hand" and cfg.random_start_score and rng.random() < cfg.random_start_score:
            score = [int(x) for x in rng.integers(0, r.target, size=r.n_sides)]
        state = State(r, episode=cfg.episode, dealer=dealer, score=score)
        if opponent == "self":
            control = ["learner"] * r.players
        else:
            side = int(rng.integers(r.n_sides))
            other = ("pool", pool_k) if pool_k >= 0 else agent
            control = ["learner" if r.side(s) == side else other for s in range(r.players)]
        learner_seats = [s for s in range(r.players) if control[s] == "learner"]
        n = r.players
        relabel = signals_otherplay.Relabelling(r, rng) if cfg.other_play else None
        return Table(state, control, learner_seats, opponent, [-1] * n, [0.0] * n, relabel=relabel)

    def _rewards(self, t: Table) -> None:
        """Add the reward each learning seat received since the last call to its accumulator."""
        rewards = t.episode.rewards()
        for s in t.learner_seats:
            t.acc[s] += rewards[s] * self.cfg.reward_scale

    def _advance(self, t: Table, rng) -> int:
        """Play chance and fixed agents until a network decides; its seat, or -1 at the end."""
        if t.episode is None:
            t.episode = Episode(t.state, self.dealer(rng), self.cfg.reward)
        ep = t.episode
        while True:
            seat = ep.to_decision()
            self._rewards(t)
            if seat < 0:
                return -1
            ctl = t.control[seat]
            if ctl == "learner" or isinstance(ctl, tuple):
                return seat
            mask = ep.mask()
            ep.play(ctl.act(SeatObservation(t.state, seat, mask.copy()), mask))
            self._rewards(t)

    def dealer(self, rng) -> Dealer:
        """Chance for one table's episode: uniform draws from the rollout's generator."""
        return Dealer(self.rules, rng)

    def decide(self, net: PolicyNet, league: League, k: int, x, m, gen, states):
        """Actions, log-probabilities and values of one batch of decisions: the learner (k = -1) or snapshot k."""
        with torch.inference_mode():  # no autograd bookkeeping at all: the rollout never backpropagates
            player = net if k < 0 else self.snapshot_net(net, league, k)
            action, logp, value = player.sample(x, m, generator=gen)
        return action.cpu().numpy(), logp.cpu().numpy(), value.cpu().numpy()

    def snapshot_actions(self, league: League, ks: np.ndarray, obs: np.ndarray, masks: np.ndarray, gen) -> np.ndarray:
        """Sampled actions of many snapshots at once (row i plays snapshot ``ks[i]``): the actor
        layers of every snapshot stacked, and each snapshot's rows in one batched matrix product."""
        key = tuple(id(snap["params"]) for snap in league.snapshots)
        if self._stacked[0] != key:  # the league changes between rollouts only
            params = [snap["params"] for snap in league.snapshots]
            self._stacked = (key, stack_actors(params), params)  # params kept: their ids stay theirs
        S, R = len(league.snapshots), len(ks)
        order = np.argsort(ks, kind="stable")
        counts = np.bincount(ks, minlength=S)
        pos = np.empty(R, np.int64)  # row i is the pos[i]-th decision of snapshot ks[i]
        pos[order] = np.arange(R) - (np.cumsum(counts) - counts)[ks[order]]
        kt, pt = torch.as_tensor(ks, device=self.device), torch.as_tensor(pos, device=self.device)
        x = torch.zeros((S, int(counts.max()), obs.shape[1]), device=self.device)
        x[kt, pt] = torch.as_tensor(obs, device=self.device)
        with torch.no_grad():
            logits = stacked_actor_logits(self._stacked[1], x)[kt, pt]
            m = torch.as_tensor(masks, device=self.device)
            probs = torch.softmax(logits.masked_fill(~m, torch.finfo(logits.dtype).min), -1)
            return torch.multinomial(probs, 1, generator=gen).squeeze(-1).cpu().numpy()

    def snapshot_net(self, net: PolicyNet, league: League, k: int) -> PolicyNet:
        """A network holding snapshot k's parameters, built once per snapshot (a functional call per
        batch costs more than the forward on small batches)."""
        params = league.snapshots[k]["params"]
        hit = self._snapshots.get(id(params))
        if hit is None or hit[0] is not params:
            current = {id(s["params"]) for s in league.snapshots}
            self._snapshots = {i: v for i, v in self._snapshots.items() if i in current}
            player = copy.deepcopy(net)
            player.load_state_dict(params)
            hit = self._snapshots[id(params)] = (params, player)
        return hit[1]

    def _finish(self, t: Table, buf: Buffer | None) -> None:
        if buf is None:
            return
        buf.credit([t.pending[s] for s in t.learner_seats], [t.acc[s] for s in t.learner_seats])

    def rollout(self, net: PolicyNet, league: League, rng: np.random.Generator, gen: torch.Generator,
                pick, target_steps: int = 0, target_episodes: int = 0, learn: bool = True):
        """Play complete episodes until ``target_steps`` learner transitions or ``target_episodes``.

        ``pick(rng) -> (label, pool_k, agent)`` draws each episode's opponents. Returns the buffer
        (None when not learning) and one ``(label, learner_return, decisions)`` per episode.
        """
        cfg = self.cfg
        buf = Buffer() if learn else None
        tables: list[Table | None] = [None] * cfg.num_envs
        vec = self.vector
        live = vec.live if vec is not None else np.zeros(cfg.num_envs, bool)
        if vec is not None:
            vec.begin()
        episodes: list[tuple] = []
        started = 0
        while True:
            for i in np.flatnonzero(~live).tolist():  # free slots in order; the targets hold for all or none
                if not ((target_episodes and started < target_episodes) or (target_steps and len(buf) < target_steps)):
                    break
                if tables[i] is None:
                    label, k, agent = pick(rng)
                    fixed = -1 if agent is None else self.batched(agent, rng)
                    if vec is not None and (agent is None or fixed >= 0):
                        vec.start(i, rng, label, k, fixed)
                    else:
                        tables[i] = self.new_table(rng, label, k, agent)
                    started += 1
            if not any(tables) and not live.any():
                break
            groups: dict[int, list[tuple[int, int]]] = {}  # -1: learner, k: pool snapshot k
            for i, t in enumerate(tables):
                if t is None:
                    continue
                seat = self._advance(t, rng)
                if seat < 0:
                    self._finish(t, buf)
                    ret = t.state.returns()
                    first = t.learner_seats[0]
                    episodes.append((t.opponent, ret[first], t.decisions))
                    tables[i] = None
                    continue
                ctl = t.control[seat]
                groups.setdefault(-1 if ctl == "learner" else ctl[1], []).append((i, seat))
            vgroups = vec.groups() if vec is not None else {}
            for k in [k for k in vgroups if k <= -2]:  # fixed players on the batched engine: no network
                idx = vgroups.pop(k)
                player = self.batch_players[-2 - k]
                action = player.act_in(vec, idx) if isinstance(player, BatchTable) else player.act(vec.obs[idx], vec.mask[idx])
                vec.record(idx, None, None, action, None, None, None)
            pool = [k for k in vgroups if k >= 0]
            if len(pool) > 1:  # several snapshots act on the batched engine: one stacked forward for all
                idx = np.concatenate([vgroups.pop(k) for k in pool])
                obs, masks = vec.inputs(idx)
                ks = vec.pool[idx]
                action = self.snapshot_actions(league, ks, obs, masks, gen)
                assert masks[np.arange(len(idx)), action].all(), "masked sampling chose an illegal action"
                vec.record(idx, obs, masks, action, None, None, None)
            for k in [*groups, *(k for k in vgroups if k not in groups)]:
                items = groups.get(k, [])
                obs = np.stack([encode_state(tables[i].state, s, cfg.features) for i, s in items]) if items else None
                masks = np.zeros((len(items), self.n_actions), dtype=bool)
                for row, (i, s) in enumerate(items):
                    masks[row, tables[i].state.legal_actions()] = True
                    if tables[i].relabel is not None:  # other-play: the seat's own frame
                        obs[row] = tables[i].relabel.observe(obs[row], s)
                        masks[row] = tables[i].relabel.mask(masks[row], s)
                states = [tables[i].state for i, _ in items]
                vidx = vgroups.get(k)
                if vidx is not None:  # this network's decisions on the batched engine join the same forward
                    vobs, vmasks = vec.inputs(vidx)
                    obs = vobs if obs is None else np.concatenate([obs, vobs])
                    masks = np.concatenate([masks, vmasks])
                    states += [None] * len(vidx)
                x = torch.as_tensor(obs, device=self.device)
                m = torch.as_tensor(masks, device=self.device)
                action, logp, value = self.decide(net, league, k, x, m, gen, states)
                if vidx is not None:
                    ne = len(items)
                    va = action[ne:]
                    assert masks[np.arange(ne, len(masks)), va].all(), "masked sampling chose an illegal action"
                    vec.record(vidx, obs[ne:], masks[ne:], va, logp[ne:], value[ne:], buf if k < 0 else None)
                for row, (i, s) in enumerate(items):
                    t = tables[i]
                    a = int(action[row])
                    assert masks[row, a], "masked sampling chose an illegal action"
                    if k < 0 and buf is not None:
                        belief = None
                        if cfg.belief_coef:
                            from train.algos.belief import targets_of_states

                            belief = targets_of_states([(t.state, s)], self.rules)[0]
                        hidden = None
                        if cfg.critic == "privileged":
                            from train.algos.privileged import hidden_of_states

                            hidden = hidden_of_states([(t.state, s)], self.rules)[0]
                        j = buf.add(obs[row], masks[row], a, float(logp[row]), float(value[row]), belief, hidden)
                        buf.credit([t.pending[s]], [t.acc[s]], [j])
                        t.acc[s] = 0.0  # a reward before a seat's first decision is nobody's doing
                        t.pending[s] = j
                    t.decisions += 1
                    t.episode.play(a if t.relabel is None else t.relabel.act(a, s))
                    self._rewards(t)
            if vec is not None and live.any():
                for _, label, ret, decisions in vec.step(buf):
                    episodes.append((label, ret, decisions))
        return buf, episodes


def opponent_picker(cfg: PPOConfig, collector: Collector, league: League):
    """The draw of each training episode's opponents: a fixed agent, the policy itself, or a snapshot."""

    def pick_training(r):
        u = r.random()
        if u < cfg.fixed_prob:
            spec = cfg.fixed_opponents[int(r.integers(len(cfg.fixed_opponents)))]
            agent = collector.agent(spec)
            agent.reset(int(r.integers(2**31)))
            return spec, -1, agent
        if u < cfg.fixed_prob + cfg.self_play_prob or not league.snapshots:
            return "self", -1, None
        k = league.pick(r)
        return f"pool:{k}", k, None

    return pick_training


def score_of(ret: float) -> float:
    return 1.0 if ret > 0 else (0.5 if ret == 0 else 0.0)
