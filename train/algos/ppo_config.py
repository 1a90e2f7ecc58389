"""The settings of a PPO / MMD self-play run (``truc train ppo``), with their schema."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.network import FEATURES, feature_size
from agents.network.network import has_envido
from train import config
from train.algos import signals_otherplay
from truc_env.batch.vector import batch_bytes
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import make_rules
from truc_env.io.checks import check_memory

ROLLOUTS = ("auto", "vector", "engine")
ALGORITHMS = ("ppo", "mmd")
AVERAGES = ("none", "uniform", "linear")
BACKENDS = ("local", "ray")


@dataclass
class PPOConfig(config.RunConfig):
    # --- experiment
    name: str = "ppo"
    """run name: files go to ``{out_dir}/{name}/``"""
    out_dir: str = "runs"
    """folder of the runs"""
    seed: int = 0
    """seed of every random generator (deals, opponents, sampling, initial weights)"""
    device: str = "auto"
    """``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``"""
    deterministic: bool = False
    """``torch.use_deterministic_algorithms(True)``: bit-exact reruns on one device"""
    torch_threads: int = 1
    """intra-op threads of torch (the engine is single-threaded Python; small MLPs gain little)"""
    # --- game (variant, options: config.RunConfig)
    episode: str = "hand"
    """``hand`` (one hand per episode; dealer and learner seats drawn at random) or ``game``"""
    reward: str = "points"
    """``points``: zero-sum hand points as they are scored; ``win``: +-1 at the end of the episode"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before learning"""
    random_start_score: float = 0.0
    """probability that a training hand starts from a random score (so the policy sees mon reste / 11)"""
    # --- budget
    total_steps: int = 1_000_000
    """learner transitions (decisions of learning seats) to train on: the budget, independent of the CPU"""
    time_limit_minutes: float = 0.0
    """stop after the update that passes this wall-clock time (0: no limit); makes a run depend on the CPU"""
    num_envs: int = 64
    """tables played at once (the inference batch)"""
    steps_per_update: int = 4096
    """learner transitions per update, at least (rollouts finish their episodes)"""
    rollout: str = "auto"
    """where network-only episodes are played: ``vector`` (the batched engine), ``engine`` (State
    tables), ``auto`` (vector where the kernel supports the Rules, features and options); episodes
    against fixed agents are on tables, except heads-up ``heuristic:*`` ones. See the module docstring."""
    rollout_shards: int = 1
    """the rollout split into this many shards of ``num_envs / rollout_shards`` tables, each with its own
    generators seeded from (seed, shard) and at least ``steps_per_update / rollout_shards`` learner steps, joined
    in shard order (:mod:`train.algos.rollout_shards`); 1: one rollout on the training generators (every run
    of the project before Ray). The result depends on this, never on ``backend`` or ``workers``."""
    backend: str = "local"
    """who plays the shards: ``local`` (this process, one after the other) or ``ray`` (Ray actors, the
    ``distributed`` extra: ``pip install 'truc-env[distributed]'``), with the same result"""
    workers: int = 1
    """backend ray: Ray actors playing the shards (each whole shards; at most rollout_shards)"""
    # --- network
    features: str = "observation"
    """network input: ``observation`` (flat), ``info_state`` (flat + this hand's decision history),
    ``observation+strength`` or ``info_state+strength`` (+ card strengths; see :mod:`agents.network.network`), or
    ``observation+strength+envido`` (+ the seat's own envido points and flor; variants with envido)"""
    hidden: list = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the actor and of the critic"""
    init_from: str = ""
    """start from this ``policy.pt`` instead of random weights (``{seed}`` is replaced by the run's seed): a
    policy of the same variant, features and hidden sizes, possibly for Rules without some sections of this
    run's observation and actions (the signal channel): those start at zero weight, the rest is copied, so
    the network plays as the source did (:mod:`train.algos.warm_start`). Not applied on ``--resume``."""
    init_instruct_none: float = 0.9
    """with ``init_from`` from Rules without governor instructions: the probability of ``instruct none`` at
    the start (above 0, below 1; the other instructions share the rest equally)"""
    # --- learning algorithm
    algorithm: str = "ppo"
    """``ppo``: clipped PPO (CleanRL's loss); ``mmd``: magnetic mirror descent (Sokota et al. 2023) as a
    PPO loss plus a reverse-KL pull towards a magnet policy, ``loss += alpha_t * KL(pi || magnet)``, with
    ``alpha_t`` annealed from ``magnet_coef`` to ``magnet_coef_end``. The KL to the magnet is logged
    (``magnet_kl``). With the uniform magnet, ``KL(pi || uniform) = log(#legal) - H(pi)``: an entropy
    bonus of weight alpha_t on top of ``ent_coef``. (PSRO is ``truc train psro``, :mod:`train.algos.psro`.)"""
    magnet: str = "uniform"
    """mmd: the magnet, ``uniform`` over the legal actions, or ``moving``: a frozen copy of the policy,
    refreshed every ``magnet_update_every`` updates (the policy is pulled towards its own recent past)"""
    magnet_coef: float = 0.05
    """mmd: the KL weight (MMD's temperature alpha) at the first update"""
    magnet_coef_end: float = 0.005
    """mmd: the KL weight at the last update; linear annealing in between (equal to magnet_coef: constant)"""
    magnet_update_every: int = 10
    """mmd with ``magnet: moving``: updates between refreshes of the magnet (a copy of the current policy)"""
    average: str = "none"
    """also keep the average policy of the iterates measured by ``exploitability_every`` (heads-up rules
    without a vira; with a redeal, the hand after it too): each is tabulated on the public tree and averaged per information set, weighted by
    its own reach (:class:`train.algos.psro.ReachAverage`); ``uniform`` weighs every iterate alike, ``linear``
    the iterate of update t by t. Its exploitability joins the log; it is saved as ``average.npz``
    (``table:PATH`` plays it). ``none``: the last iterate only."""
    # --- PPO
    learning_rate: float = 2.5e-4
    """Adam step size"""
    anneal_lr: bool = True
    """anneal the step size linearly to 0 over the run"""
    gamma: float = 1.0
    """discount per own decision"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    update_epochs: int = 4
    """passes over the batch per update"""
    num_minibatches: int = 4
    """minibatches per pass"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    clip_coef: float = 0.2
    """PPO surrogate clipping"""
    clip_vloss: bool = True
    """clip the value loss as in the PPO paper's code"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clipping"""
    signal_coef: float = 0.0
    """positive signalling (Eccles et al. 2019; 2 vs 2 with a channel): maximise this weight times the batch
    estimate of I(observation; token) at the speakers' decisions (:mod:`train.algos.signals_biases`)"""
    listen_coef: float = 0.0
    """positive listening: maximise this weight times the total variation between the listener's policy and
    its policy had the partner shown nothing (:mod:`train.algos.signals_biases`)"""
    belief_coef: float = 0.0
    """listener auxiliary loss (2 vs 2): a head on the actor's last hidden layer predicts the partner's unplayed
    cards (binary cross-entropy, this weight; :mod:`train.algos.belief`); not part of ``policy.pt``"""
    critic: str = "observation"
    """what the advantages' baseline reads: ``observation`` (the policy's own critic) or ``privileged``: a second
    critic that also reads every other seat's unplayed cards, during training only (lower-variance advantages,
    still unbiased; :mod:`train.algos.privileged`); the policy and ``policy.pt`` never see them"""
    target_kl: float | None = None
    """stop an update's epochs early when the approximate KL passes this (None: never)"""
    # --- league
    self_play_prob: float = 0.5
    """probability that an episode is pure self-play against the current policy"""
    pool_scheme: str = "prioritized"
    """how a frozen opponent is drawn from the pool: ``latest``, ``uniform`` or ``prioritized``"""
    snapshot_every: int = 10
    """updates between snapshots of the learner added to the pool"""
    pool_size: int = 20
    """snapshots kept (the oldest leaves first)"""
    pfsp_power: float = 2.0
    """prioritized: weight of a snapshot is (1 - learner's win rate against it) ** pfsp_power"""
    fixed_opponents: list = field(default_factory=list)
    """agent specs mixed in as opponents (``heuristic:honest``, ``table:PATH``...)"""
    fixed_prob: float = 0.0
    """probability that an episode's opponents are one of ``fixed_opponents``"""
    fixed_options: dict | None = None
    """the variant options the fixed (and evaluation) opponents were trained for, when they play under
    the training options without sharing them (a ``net:`` team trained at ``intercept: 0`` facing a
    learner trained at ``intercept: 1``); None: the training options"""
    fixed_batched: bool = False
    """also play the episodes against a fixed ``ppo:`` network or ``random`` on the batched engine
    (:class:`BatchPolicy`; off: on engine tables, as the committed runs did)"""
    other_play: bool = False
    """free signals only: per episode and side, one seat plays with the signal tokens relabelled by a
    random permutation (other-play, :mod:`train.algos.signals_otherplay`), on engine tables and the batched engine"""
    # --- evaluation, logging, checkpoints
    eval_opponent: str = "heuristic:honest"
    """fixed opponent of the periodic evaluation"""
    eval_every: int = 10
    """updates between evaluations (and at the last update)"""
    eval_episodes: int = 400
    """episodes per evaluation"""
    exploitability_every: int = 0
    """updates between exact exploitability measurements (heads-up public-tree games; 0: never)"""
    exploitability_first_hands: int = 4
    """first hands sampled per seat for the play after a redeal in those measurements"""
    exploitability_cache: str = ""
    """where the measurements keep their public trees ("": ``$TRUC_CACHE_DIR`` or ``~/.cache/truc-env``)"""
    checkpoint_every: int = 1
    """updates between checkpoints: updates completed since the last one are lost on a kill"""
    keep_every: int = 0
    """also keep ``checkpoint_<update>.pt`` every this many updates (0: never)"""
    plot: bool = True
    """draw the learning curves as a PNG (``curves.png`` in the run folder) at the end"""
    curves_png: str = ""
    """also copy the learning-curve PNG here (e.g. ``docs/results/img/ppo_le_truc.png``)"""
    progress: bool = True
    """tqdm progress bar"""
    tensorboard: bool = True
    """TensorBoard scalars in the run folder"""

    KIND = "PPO"

    @classmethod
    def from_dict(cls, d: dict, source: str = "PPO config") -> PPOConfig:
        """A checked config from a mapping of settings (missing ones take the defaults)."""
        return config.build(cls, d, source)

    @classmethod
    def from_yaml(cls, path: str, overrides=()) -> PPOConfig:
        """The config of a YAML file, checked, with ``--set`` overrides applied."""
        return config.load(cls, path, overrides)

    def validate(self) -> None:
        """Cross-setting rules (ranges and types are in ``SCHEMA``)."""
        def need(ok, what):
            if not ok:
                raise TrucError(f"PPO setting {what}")

        rules = self.rules()
        if self.fixed_options is not None:
            make_rules(self.variant, **self.fixed_options)
        need(self.fixed_prob + self.self_play_prob <= 1.0 + 1e-9, "fixed_prob + self_play_prob must be at most 1")
        need(not (self.fixed_prob > 0 and not self.fixed_opponents), "fixed_prob > 0 needs fixed_opponents")
        need(self.random_start_score == 0.0 or self.episode == "hand", "random_start_score needs episode: hand")
        need(not has_envido(self.features) or rules.envido,
             f"features {self.features!r} need a variant with envido (truco_argentino); {rules.variant} has none")
        need(self.average == "none" or self.exploitability_every > 0,
             "average needs exploitability_every > 0 (the iterates it averages are the ones measured)")
        if self.average != "none" and rules.vira:
            need(False, "average needs a game without a vira (the average is kept on the tree of one hand; "
                 "heads-up Paulista has one per vira); exploitability_every alone measures it")
        if self.init_from:
            from train.algos.warm_start import init_path

            init_path(self.init_from, self.seed)
        need(0.0 < self.init_instruct_none < 1.0, f"init_instruct_none must be above 0 and below 1, "
             f"got {self.init_instruct_none}")
        if self.belief_coef:
            from train.algos.belief import check_applies as belief_applies

            try:
                belief_applies(rules)
            except TrucError as e:
                need(False, str(e))
        if self.signal_coef or self.listen_coef:
            from train.algos.signals_biases import SignalBiases

            try:
                SignalBiases(rules)
            except TrucError as e:
                need(False, f"signal_coef / listen_coef: {e}")
        if self.critic == "privileged":
            from train.algos.privileged import check_applies as privileged_applies

            try:
                privileged_applies(self)
            except TrucError as e:
                need(False, str(e))
        if self.other_play:
            try:
                signals_otherplay.check_applies(rules)
            except TrucError as e:
                need(False, f"other_play: {e}")
        if self.exploitability_every:
            from train.eval.exploitability import check_applies

            try:
                check_applies(rules)
            except TrucError as e:
                need(False, f"exploitability_every needs a game the public tree takes: {e}")
        need(self.num_envs % self.rollout_shards == 0, f"rollout_shards {self.rollout_shards} must divide num_envs "
             f"{self.num_envs} (each shard plays num_envs / rollout_shards tables)")
        need(self.backend == "ray" or self.workers == 1, f"workers {self.workers} counts Ray actors: set backend: ray, "
             "or leave workers at 1")
        need(self.workers <= self.rollout_shards, f"workers {self.workers} is more than rollout_shards "
             f"{self.rollout_shards}: each worker plays whole shards (set rollout_shards to a multiple of "
             f"{self.workers} dividing num_envs {self.num_envs}; the result depends on rollout_shards alone)")
        if self.backend == "ray":
            config.require_ray()
        check_memory(self.memory_estimate(rules), f"this PPO run (hidden={self.hidden}, num_envs={self.num_envs}, "
                     f"steps_per_update={self.steps_per_update})", "shrink hidden, num_envs or steps_per_update")

    def memory_estimate(self, rules) -> int:
        """Bytes the run needs at least, an estimate made before anything is allocated: the actor and
        critic with their gradients and Adam moments, the pool of actor snapshots, one update's
        transitions and a minibatch's activations, and the batched engine's tables."""
        F, A = feature_size(rules, self.features), layout_of(rules).size
        widths = [F, *self.hidden]
        body = sum(a * b for a, b in zip(widths, widths[1:]))
        actor, critic = body + self.hidden[-1] * A, body + self.hidden[-1]
        steps = self.steps_per_update
        return (16 * (actor + critic) + 4 * actor * self.pool_size + steps * (4 * F + A + 64)
                + 12 * (steps // self.num_minibatches + 1) * sum(self.hidden)
                + batch_bytes(rules, self.num_envs, "loop" if self.rollout == "engine" else "numba", F))

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.steps_per_update)


_COUNT = config.Int(1, 10**12)
_PROB = config.Float(0.0, 1.0)
PPOConfig.SCHEMA = {
    "name": config.NAME, "out_dir": config.STR, "seed": config.SEED, "device": config.Choice("auto", "cpu", "cuda"),
    "deterministic": config.BOOL, "torch_threads": config.Int(1, 1024), **config.RUN_SCHEMA,
    "episode": config.Choice("hand", "game"), "reward": config.Choice("points", "win"),
    "reward_scale": config.Float(), "random_start_score": _PROB, "total_steps": _COUNT,
    "time_limit_minutes": config.Float(0.0), "num_envs": config.Int(1, 1 << 20), "steps_per_update": _COUNT,
    "rollout": config.Choice(*ROLLOUTS), "rollout_shards": config.Int(1, 1 << 20),
    "backend": config.Choice(*BACKENDS), "workers": config.WORKERS, "features": config.Choice(*FEATURES),
    "hidden": config.List(config.Int(1, 1 << 16), min_len=1), "init_from": config.STR,
    "init_instruct_none": config.Float(0.0, 1.0), "learning_rate": config.Float(0.0),
    "anneal_lr": config.BOOL, "gamma": _PROB, "gae_lambda": _PROB, "update_epochs": config.Int(1, 10**6),
    "num_minibatches": config.Int(1, 10**6), "norm_adv": config.BOOL, "clip_coef": config.Float(0.0),
    "clip_vloss": config.BOOL, "ent_coef": config.Float(), "vf_coef": config.Float(), "max_grad_norm": config.Float(0.0),
    "target_kl": config.Float(0.0, none=True),
    "signal_coef": config.Float(0.0), "listen_coef": config.Float(0.0), "belief_coef": config.Float(0.0), "critic": config.Choice("observation", "privileged"), "self_play_prob": _PROB,
    "pool_scheme": config.Choice("latest", "uniform", "prioritized"), "snapshot_every": _COUNT,
    "pool_size": config.Int(1, 10**6), "pfsp_power": config.Float(0.0), "fixed_opponents": config.List(config.STR),
    "fixed_prob": _PROB, "fixed_options": config.Setting("dict", none=True), "fixed_batched": config.BOOL, "other_play": config.BOOL, "eval_opponent": config.STR, "eval_every": _COUNT, "eval_episodes": config.Int(1, 10**9),
    "checkpoint_every": _COUNT, "keep_every": config.Int(0), "plot": config.BOOL, "curves_png": config.STR,
    "progress": config.BOOL, "tensorboard": config.BOOL, "exploitability_every": config.Int(0, 10**12),
    "exploitability_first_hands": config.Int(1, 10**6), "exploitability_cache": config.STR,
    "algorithm": config.Choice(*ALGORITHMS), "magnet": config.Choice("uniform", "moving"),
    "magnet_coef": config.Float(0.0), "magnet_coef_end": config.Float(0.0), "magnet_update_every": _COUNT,
    "average": config.Choice(*AVERAGES),
}
