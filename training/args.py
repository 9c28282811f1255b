"""The arguments the trainers share, each declared once with its help line and its check.

A trainer's ``Args`` dataclass subclasses the base of its kind and declares only its own fields;
it redeclares a shared field to change its default, and then the base's help line (the attribute
docstring, which training/runs.py ``field_help`` looks up along the MRO) still shows in its
``--help``, or to say what the field means for it, with a docstring of its own. The bases:

- ``TrainerArgs``: what every run has and training.runs reads (``Run``, ``parse_dataclass_args``):
  the game and its rule options, the seed, the time budget, the run folder, ``--out`` and the
  progress bar;
- ``VectorArgs``: the trainers over the compiled vector envs (training/ppo.py and the DQNs): the
  boards, the budget in env steps, the evaluation and checkpoint schedule, torch's threads;
- ``BoardsArgs``: those that train a network on the boards' observations and the env's reward
  (training/ppo.py, training/dqn.py);
- ``ReplayArgs``: those that learn from a replay buffer with a target network (training/dqn.py
  and the two below);
- ``AfterstateArgs``: ``--algo afterstate-dqn`` and ``--algo negamax-dqn``, Q from a value of
  what a move leads to (training/afterstate_dqn.py, training/negamax_dqn.py);
- ``SelfPlayArgs``: the iterated self-play trainers that fit a ValueMLP on a replay buffer, their
  games played by a pool of workers (training/selfplay.py ``TDArgs``, training/friday/train.py).

Each base checks its own fields in ``__post_init__``; a subclass calls ``super().__post_init__()``
first and then checks what it adds. A refused value is a ValueError naming the flag (the
``require_*`` functions below), which ``parse_dataclass_args`` turns into a usage error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AfterstateArgs",
    "BoardsArgs",
    "ReplayArgs",
    "SelfPlayArgs",
    "TrainerArgs",
    "VectorArgs",
    "require_at_least",
    "learning_device",
    "require_budget",
    "require_positive",
    "require_share",
    "require_widths",
]


def _require(args: Any, names: tuple[str, ...], refused: Callable[[Any], bool], must: str) -> None:
    """A ValueError naming the first of the ``names`` arguments whose value is ``refused``, as its
    flag: ``--NAME must MUST, got VALUE``."""
    for name in names:
        value = getattr(args, name)
        if refused(value):
            raise ValueError(f"--{name.replace('_', '-')} must {must}, got {value}")


def require_at_least(args: Any, low: int, names: tuple[str, ...]) -> None:
    """A ValueError naming the first of the ``names`` arguments below ``low`` (as its flag:
    ``--num-envs must be >= 1, got 0``): the bound checks every trainer's ``Args`` makes."""
    _require(args, names, lambda value: value < low, f"be >= {low}")


def require_positive(args: Any, names: tuple[str, ...]) -> None:
    """A ValueError naming the first of the ``names`` arguments that is not > 0 (a step size, a
    clip range): ``--lr must be > 0, got -1.0``."""
    _require(args, names, lambda value: not value > 0, "be > 0")


def require_share(args: Any, names: tuple[str, ...]) -> None:
    """A ValueError naming the first of the ``names`` arguments outside [0, 1] (a probability,
    a lambda): ``--epsilon must lie in [0, 1], got 2.0``."""
    _require(args, names, lambda value: not 0 <= value <= 1, "lie in [0, 1]")


def require_widths(args: Any, name: str = "hidden") -> None:
    """A ValueError unless ``name`` lists one or more layer widths, each >= 1."""
    widths = getattr(args, name)
    if not widths or any(w < 1 for w in widths):
        raise ValueError(f"--{name.replace('_', '-')} needs one or more widths >= 1, got {' '.join(map(str, widths))}")


def require_budget(args: Any) -> None:
    """A ValueError unless ``minutes`` is None (no limit) or >= 0."""
    if args.minutes is not None and not args.minutes >= 0:
        raise ValueError(f"--minutes must be >= 0 (0: no time limit), got {args.minutes}")


def learning_device(name: str, cpu_only: str = "") -> Any:
    """The ``torch.device`` of ``--device``: cpu, cuda, cuda:N or auto (cuda when torch finds a
    CUDA device, else cpu); a ValueError naming what is refused and what is accepted. A trainer
    whose network learns on the CPU only says why in ``cpu_only``: auto is then the CPU and cuda
    is refused with that reason."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() and not cpu_only else "cpu")
    if name != "cpu" and not (name == "cuda" or name.startswith("cuda:") and name[5:].isdigit()):
        raise ValueError(f"--device must be cpu, cuda, cuda:N or auto, got {name!r}")
    if name.startswith("cuda"):
        if cpu_only:
            raise ValueError(f"--device {name}: {cpu_only}; use --device cpu or auto")
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name[5:]) if ":" in name else 0
        if index >= count:
            raise ValueError(
                f"--device {name}: torch finds {count} CUDA device{'s' if count != 1 else ''} here "
                f"(a CPU build of torch finds none); use --device cpu or auto"
            )
    return torch.device(name)


@dataclass
class TrainerArgs:
    """What every training run has. The checks of these fields are the trainers' own: their
    budgets differ (steps, games, iterations), and so does what a time budget of 0 means."""

    game: str = ""
    """the game"""
    game_options: dict = field(default_factory=dict)
    """rule options of the game (--option KEY=VALUE)"""
    seed: int = 0
    """seed of the run's networks and games"""
    minutes: float | None = 0.0
    """wall-clock budget in minutes (0 or None: none)"""
    run_dir: str = ""
    """run directory: checkpoint.pt (resumed), TensorBoard logs"""
    out: str | None = None
    """where to write the trained network when the run ends"""
    progress: bool = True
    """show a progress bar"""
    device: str = "cpu"
    """where the network learns: cpu, cuda (cuda:N) or auto (cuda when torch finds one); games,
    boards and searches stay on the CPU"""

    CPU_ONLY = ""  # why this trainer's network learns on the CPU only ("" where --device chooses)

    def __post_init__(self) -> None:
        self.torch_device()

    def torch_device(self) -> Any:
        """The ``torch.device`` the network learns on (``learning_device``)."""
        return learning_device(self.device, self.CPU_ONLY)


@dataclass
class VectorArgs(TrainerArgs):
    """A trainer over the boards of a compiled vector env (``gymnasium.make_vec``), its budget
    in env steps of all boards (training/vector_rl.py has what they share beyond arguments)."""

    game: str = "trilobite-tiny"
    """the game (its first Gymnasium id with a compiled vector env is trained)"""
    game_options: dict = field(default_factory=dict)
    """rule options of the game (--option KEY=VALUE): the env id's keyword arguments"""
    num_envs: int = 256
    """boards stepped together"""
    total_steps: int = 2_000_000
    """env steps to train for (all boards), unless --minutes ends the run first"""
    eval_every: int = 2_000
    """iterations between evaluations (0: never)"""
    eval_games: int = 200
    """games of an evaluation (both seats for two-player games)"""
    save_every: int = 2_000
    """iterations between checkpoints"""
    threads: int = 1
    """torch threads (small networks run fastest on one: more spin and wait on a shared machine)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("num_envs", "total_steps", "eval_games", "threads"))
        require_at_least(self, 0, ("eval_every", "save_every", "minutes"))


@dataclass
class BoardsArgs(VectorArgs):
    """A vector-env trainer of a network on the observation of the player to move, over
    training/vector_rl.py ``Boards`` (self-play, and a share of the boards against a fixed
    opponent): Adam on the env's reward, ``--reward`` where the env offers several, scaled."""

    lr: float = 3e-4
    """Adam's step size"""
    gamma: float = 0.99
    """discount"""
    reward_scale: float = 1.0
    """rewards are multiplied by this (Threes' score changes run to hundreds)"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    reward: str | None = None
    """the reward the boards train on, where the env offers several (Friday: win or score, the
    score shaping a sparse win); evaluations always report the env's default reward"""
    hidden: tuple[int, ...] = (128, 128)
    """hidden layer widths (ReLU) of the Q-network, or of the actor and of the critic"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_positive(self, ("reward_scale", "max_grad_norm"))
        require_widths(self)


@dataclass
class ReplayArgs(VectorArgs):
    """A vector-env trainer that steps every board once an iteration, keeps what it saw in a
    replay buffer (not saved: a resumed run refills it) and bootstraps from a target network."""

    algo: str = "dqn"
    """the algorithm (this trainer: dqn)"""
    num_envs: int = 256
    """boards stepped together (an iteration steps each once)"""
    buffer_size: int = 200_000
    """samples (transitions, or positions with their targets) the replay buffer keeps (the newest)"""
    batch_size: int = 512
    """samples a gradient step"""
    learning_starts: int = 10_000
    """samples in the buffer before learning starts (again after a resume: the buffer is not saved)"""
    updates: int = 1
    """gradient steps an iteration"""
    target_every: int = 250
    """iterations between target-network updates (copies of the online network)"""
    log_every: int = 100
    """iterations between TensorBoard scalars"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("buffer_size", "batch_size", "updates", "target_every", "log_every"))
        require_at_least(self, 0, ("learning_starts",))
        self.check_buffer()

    def check_buffer(self) -> None:
        """A ValueError unless the buffer can hold what learning waits for."""
        if self.learning_starts > self.buffer_size:
            raise ValueError(f"--learning-starts ({self.learning_starts}) must be at most --buffer-size ({self.buffer_size})")


@dataclass
class AfterstateArgs(ReplayArgs):
    """Q(s, a) from one value network of what move ``a`` leads to, rather than training/dqn.py's
    Q-network with one output a move: ``--algo afterstate-dqn`` (training/afterstate_dqn.py) and
    ``--algo negamax-dqn`` (training/negamax_dqn.py), each trainer's ``RUN_SUFFIX`` its name.
    ``--algo dqn --afterstate`` names neither and lets the game choose (training/dqn.py
    ``cli_main``)."""

    RUN_SUFFIX = ""

    algo: str = "dqn"
    """the algorithm: this trainer's name, or dqn with --afterstate (the game chooses the trainer)"""
    afterstate: bool = True
    """Q(s, a) from a value of what the move leads to (this trainer; --no-afterstate is
    training/dqn.py's Q-network)"""
    total_steps: int = 1_000_000_000
    minutes: float = 0.0
    """wall-clock budget in minutes, all of the run's training (0: none)"""
    threads: int = 1
    """torch threads"""
    seed: int = 0
    """seed of the boards, of exploration and of sampling"""
    game_options: dict = field(default_factory=dict)
    """rule options (--option KEY=VALUE), recorded in the checkpoint"""
    epsilon: float = 0.1
    """chance of a uniformly random legal move"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_share(self, ("epsilon",))
        if self.algo not in ("dqn", self.RUN_SUFFIX) or not self.afterstate:
            raise ValueError(f"this trainer is --algo {self.RUN_SUFFIX} (or --algo dqn --afterstate)")


@dataclass
class SelfPlayArgs(TrainerArgs):
    """An iterated self-play trainer: each iteration ``workers`` play ``games_per_iter`` games
    with the current ValueMLP in their search, which is then fitted on a replay buffer of the
    positions (Adam, ``batch_size`` a step); evaluations on schedule; a budget of iterations or
    games and of minutes, the resumed runs included."""

    seed: int = 1
    """seeds torch, numpy and the self-play games"""
    minutes: float | None = 5.0
    """stop after this much training time, resumed runs included (None or 0: no time limit)"""
    games_per_iter: int = 200
    """self-play games per iteration"""
    workers: int = 1
    """chunks of self-play games played side by side each iteration (1: in this process)"""
    backend: str = "process"
    """where the chunks run: process (worker processes) or ray (Ray tasks; the learner stays here)"""
    address: str | None = None
    """with backend ray: the cluster to join (auto, HOST:PORT); default a local Ray instance"""
    hidden: tuple[int, ...] = (128, 64)
    """hidden layer sizes of the ValueMLP"""
    lr: float = 1e-3
    """Adam learning rate"""
    batch_size: int = 512
    """positions per gradient step"""
    buffer_size: int = 200_000
    """replay buffer of the most recent positions"""
    eval_every: int = 10
    """iterations between evaluation matches against the hand-made evaluator (0: never)"""
    eval_games: int = 40
    """games per evaluation match (half in each seat)"""
    run_dir: str = "runs/td"
    """TensorBoard logs and checkpoint.pt live here"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("games_per_iter", "batch_size", "buffer_size", "eval_games", "workers"))
        require_at_least(self, 0, ("eval_every", "lr"))  # --lr 0: play, learn nothing
        require_budget(self)
        require_widths(self)
