"""Q-learning in afterstate form over a compiled vector env (CleanRL-shaped).

``tablegym train threes --algo afterstate-dqn [--minutes M] [--run-dir D] [--out net.pt]`` (or
``--algo dqn --afterstate``, which picks this trainer for a game whose record names an afterstate
network).
Where a move's immediate result is known before chance acts (Threes: the board after a swipe,
before the new card enters), Q(s, a) splits into the move's gain and the value of that
afterstate: ``Q(s, a) = gain(s, a) + V(after(s, a))``. One value per afterstate instead of one
Q-value per action means every legal move is valued by the same network, and the noise of the
card that enters afterwards stays out of the choice (Szubert and Jaskowski 2014 found afterstate
learning far ahead of Q-learning on 2048 for this reason). The network is the game's record's
``afterstate`` network (Threes: the n-tuple network, one ``nn.EmbeddingBag`` of lookup tables);
the vector env gives every board's afterstates (``afterstates()``).

The target of an afterstate is the score the chance step adds (the entered card) plus the best
Q of the next position, with Double DQN's split: the online network picks the next move, the
target network values it; nothing after a board's last move::

    y = (score(s') - score(after)) + gain(s', a*) + V_target(after(s', a*)),  a* = argmax_a' online Q(s', a')

Rewards are the env's (the score's change), undiscounted (gamma 1: the game ends), so V(after) +
score(after) estimates the final score. Learning is plain SGD on sparse gradients: each sampled
afterstate moves each of its entries by ``alpha / entries`` of its error, the step of the n-tuple
TD trainer (training/threes/train.py), now from a replay buffer and a target network.

The script reads top to bottom: arguments, acting, the replay buffer, the evaluation, the
learner (saved and resumed), then the loop: act, store the step, learn, log, evaluate, save.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import torch

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import load, plugin
from tablegym.envs.core import Game
from tablegym.envs.rates import per_second
from tablegym.models.checkpoint import load_checkpoint
from tablegym.training.args import AfterstateArgs, require_positive
from tablegym.training.runs import Learner, parse_dataclass_args
from tablegym.training.vector_rl import env_id_of, finish, replay_run, strict, trained_game


@dataclass
class Args(AfterstateArgs):
    RUN_SUFFIX = "afterstate-dqn"  # runs/GAME-afterstate-dqn unless --run-dir says otherwise
    CPU_ONLY = "the n-tuple network's values and table rows come from compiled CPU code over its tables"

    game: str = "threes"
    """the game (one whose record names an afterstate network: threes)"""
    alpha: float = 0.1
    """SGD step: a sample moves each entry of its afterstate by alpha / entries of its error"""
    target_every: int = 20
    """iterations between copies of the online network into the target network"""
    tc: bool = False
    """temporal coherence learning: each entry's step shrinks as its errors stop agreeing (give --alpha about 1)"""
    epsilon: float = 0.0
    """chance of a uniformly random legal move (the cards that enter explore already)"""
    tuples: tuple[str, ...] = dataclasses.field(default=(), metadata={"type": str, "metavar": "CELLS"})
    """the network's n-tuples, cells joined by commas (Threes: 0..15 row-major from the top-left,
    h = the card about to enter); none: the network's default"""
    stage_ranks: tuple[int, ...] = dataclasses.field(default=(11,), metadata={"nargs": "*"})
    """highest ranks starting a new stage of tables (Threes: 11 = 768)"""
    eval_every: int = 2_000
    """iterations between greedy evaluations (0: never)"""
    eval_games: int = 200
    """games of an evaluation"""
    run_dir: str = "runs/threes-afterstate-dqn"
    out: str | None = None
    """where to write the value network in the game's checkpoint format (eval=learned:PATH)"""
    game_options: dict = dataclasses.field(default_factory=dict)
    """rule options (--option KEY=VALUE): only the defaults, which the network's file records"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_positive(self, ("alpha",))
        if self.game_options:
            raise ValueError(f"--option: the afterstate network is saved for the default rules; got {self.game_options}")


def q_values(net, keys: np.ndarray, hints: np.ndarray, gains: np.ndarray, legal: np.ndarray) -> torch.Tensor:
    """Q(s, a) = gain + V(afterstate) of every board (rows) and move (columns), -inf where illegal."""
    with torch.no_grad():
        v = net.value_of(keys, np.repeat(hints, keys.shape[1])).view(keys.shape)
    return torch.where(torch.from_numpy(legal), torch.from_numpy(gains).float() + v, -torch.inf)


def act(q: torch.Tensor, legal: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Epsilon-greedy over the legal moves (a board with none, waiting for its reset: move 0)."""
    greedy = q.argmax(1).numpy()
    if epsilon <= 0:
        return greedy
    explore = (rng.random(len(greedy)) < epsilon) & legal.any(1)
    return np.where(explore, np.argmax(rng.random(legal.shape) * legal, axis=1), greedy)


class CoherentSGD(torch.optim.Optimizer):
    """Temporal coherence learning (Beal and Smith; Jaskowski for 2048) as an optimizer of sparse
    gradients: each table entry steps by ``lr`` times its mean gradient over the samples of the
    batch that read it, times |sum of its gradients| / sum of |its gradients| (1 while fresh).
    Why: one step cannot suit both the opening entries every batch reads, whose errors flip
    sign from batch to batch, and the end-game entries a few samples read; an entry's rate
    falls exactly as its errors stop agreeing (training/threes/train.py's ``--tc``, there one update
    a sample). The mean, not the sum: an entry that 300 samples of a batch read would otherwise
    take 300 steps at once, at a rate of up to 1, and overshoot."""

    def __init__(self, params, lr: float) -> None:
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad  # one row a sample and entry (uncoalesced), summed here per entry
                rows, inverse = torch.unique(grad._indices()[0], return_inverse=True)
                values = torch.zeros(len(rows)).index_add_(0, inverse, grad._values().reshape(-1))
                values /= torch.bincount(inverse, minlength=len(rows))
                if not self.state[p]:
                    self.load_sums(p, rows[:0], values[:0], values[:0])
                signed, absolute = self.state[p]["signed"], self.state[p]["absolute"]
                seen = absolute[rows]
                rate = torch.where(seen > 0, signed[rows].abs() / seen.clamp_min(1e-30), 1.0)
                p.view(-1).index_add_(0, rows, -group["lr"] * rate * values)
                signed.index_add_(0, rows, values)
                absolute.index_add_(0, rows, values.abs())

    def sums(self, p: torch.Tensor) -> dict[str, torch.Tensor] | None:
        """The entries of ``p`` seen so far and their signed and absolute gradient sums (what a
        checkpoint keeps, sparse); None before the first step."""
        state = self.state.get(p)
        if not state:
            return None
        rows = torch.nonzero(state["absolute"]).view(-1)
        return {"tc_rows": rows, "tc_signed": state["signed"][rows], "tc_absolute": state["absolute"][rows]}

    def load_sums(self, p: torch.Tensor, rows: torch.Tensor, signed: torch.Tensor, absolute: torch.Tensor) -> None:
        """Start ``p``'s sums from ``sums``' saved entries (zero elsewhere)."""
        state = self.state[p]
        state["signed"], state["absolute"] = torch.zeros(p.shape[0]), torch.zeros(p.shape[0])
        state["signed"][rows], state["absolute"][rows] = signed, absolute


class Replay:
    """The newest ``capacity`` transitions (a ring): the chosen afterstate and its card code, the
    score the chance step added, whether the board ended, and the next position's afterstates,
    card code, gains and legal moves (what the target maximises over)."""

    def __init__(self, capacity: int, moves: int) -> None:
        self.capacity, self.n, self.pos = capacity, 0, 0
        self.key = np.zeros(capacity, dtype=np.int64)
        self.hint = np.zeros(capacity, dtype=np.int64)
        self.chance = np.zeros(capacity, dtype=np.float32)
        self.done = np.zeros(capacity, dtype=bool)
        self.next_keys = np.zeros((capacity, moves), dtype=np.int64)
        self.next_hint = np.zeros(capacity, dtype=np.int64)
        self.next_gains = np.zeros((capacity, moves), dtype=np.float32)
        self.next_legal = np.zeros((capacity, moves), dtype=bool)

    def add(self, *columns: np.ndarray) -> None:
        idx = (self.pos + np.arange(len(columns[0]))) % self.capacity
        for array, values in zip(self.arrays(), columns):
            array[idx] = values
        self.pos = int((self.pos + len(idx)) % self.capacity)
        self.n = min(self.n + len(idx), self.capacity)

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.key, self.hint, self.chance, self.done, self.next_keys, self.next_hint, self.next_gains, self.next_legal)

    def sample(self, rng: np.random.Generator, batch: int) -> tuple[np.ndarray, ...]:
        idx = rng.integers(self.n, size=batch)
        return tuple(a[idx] for a in self.arrays())


def evaluate(net, env_id: str, games: int, seed: int) -> np.ndarray:
    """The final scores of ``games`` greedy games (Q over the afterstates, no exploration): one
    game a board, so long games count as often as short ones."""
    envs = gymnasium.make_vec(env_id, num_envs=games)
    envs.reset(seed=seed)
    scores, done = np.zeros(games), np.zeros(games, dtype=bool)
    while not done.all():
        keys, hints, gains, legal = envs.unwrapped.afterstates()
        _, _, term, trunc, info = envs.step(q_values(net, keys, hints, gains, legal).argmax(1).numpy())
        first = (term | trunc) & ~done
        scores[first], done[first] = info["score"][first], True
    envs.close()
    return scores


class AfterstateLearner(Learner):
    """The online value network and its target copy. Saved in the game's own checkpoint format
    (the n-tuple file: ``--out`` is the same file, so ``eval=learned:PATH`` reads either) with the
    run's progress; the replay buffer is not saved (a resumed run refills it)."""

    def __init__(self, args: Args, game: Game) -> None:
        self.args, self.game = args, game
        self.network_class = load(plugin(game.spec.name).afterstate)
        self.net = self.network_class.for_training(args.tuples, args.stage_ranks)
        self.target = self.network_class.for_training(args.tuples, args.stage_ranks)
        step = args.alpha / self.net.num_features
        self.optimizer = (
            CoherentSGD(self.net.parameters(), lr=step) if args.tc else torch.optim.SGD(self.net.parameters(), lr=step)
        )

    def sync_target(self) -> None:
        self.target.table.weight.data.copy_(self.net.table.weight.data)

    def start(self, checkpoint: Path | None) -> dict:
        if checkpoint is None:
            self.sync_target()
            return {}
        net, meta = self.network_class.load_with_metadata(checkpoint)
        if net.config != self.net.config:
            raise ValueError(
                f"{checkpoint} holds another network ({net.config}); use a new --run-dir or its --tuples and --stage-ranks"
            )
        if bool(meta.get("tc")) != self.args.tc:
            raise ValueError(
                f"{checkpoint} was trained {'with' if meta.get('tc') else 'without'} --tc; "
                f"use a new --run-dir or the same setting"
            )
        self.net.table.weight.data.copy_(net.table.weight.data)
        self.sync_target()
        if self.args.tc and "tc_rows" in (saved := load_checkpoint(checkpoint)["model"]):  # the coherence sums
            self.optimizer.load_sums(self.net.table.weight, saved["tc_rows"], saved["tc_signed"], saved["tc_absolute"])
        return meta

    def save(self, path: Path, progress: dict, *, final: bool = False) -> None:
        extra = self.optimizer.sums(self.net.table.weight) if self.args.tc and not final else None
        self.net.save(
            path,
            {"trainer": "afterstate-dqn", "tc": self.args.tc, "args": dataclasses.asdict(self.args), **progress},
            extra=extra,
        )

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        self.save(out, progress, final=True)


def main(argv: list[str] | None = None) -> int:
    prog = "tablegym train GAME --algo afterstate-dqn"
    args = parse_dataclass_args(Args, argv, prog, __doc__.splitlines()[0])
    try:
        env_id = env_id_of(args.game)
        game = trained_game(args.game, args.game_options, args.out)
        if plugin(args.game).afterstate is None:
            with_one = [p.name for p in tablegym.envs.plugins() if p.afterstate]
            raise ValueError(
                f"game {args.game!r} names no afterstate network; this trainer trains {', '.join(with_one)} "
                f"(two-player games: training/negamax_dqn.py)"
            )
    except (ValueError, TypeError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    started = replay_run(args, game, lambda: AfterstateLearner(args, game), "afterstate dqn", prog)
    if started is None:
        return 2
    learner, run = started
    with run:
        net, target, optimizer = learner.net, learner.target, learner.optimizer
        rng = np.random.default_rng([args.seed, run.iteration])
        envs = gymnasium.make_vec(env_id, num_envs=args.num_envs, **strict(env_id))
        _, info = envs.reset(seed=args.seed + run.iteration)
        boards, score = envs.unwrapped, info["score"]
        replay = Replay(args.buffer_size, envs.single_action_space.n)

        keys, hints, gains, legal = boards.afterstates()
        scores, errors = [], []
        rows = np.arange(args.num_envs)
        while run.next_iteration():
            # 1. one move on every board: the legal move of largest gain + V(afterstate)
            action = act(q_values(net, keys, hints, gains, legal), legal, args.epsilon, rng)
            chosen, chosen_hint, after_score = keys[rows, action], hints, score + gains[rows, action]
            moved = legal[rows, action]  # False on a board waiting for its reset: no transition
            _, _, term, trunc, info = envs.step(action)
            ended, score = term | trunc, info["score"]
            next_keys, next_hints, next_gains, next_legal = boards.afterstates()
            # 2. store: the chance step's points are the score now less the afterstate's
            chance = score - after_score
            replay.add(
                chosen[moved],
                chosen_hint[moved],
                chance[moved],
                ended[moved],
                next_keys[moved],
                next_hints[moved],
                next_gains[moved],
                next_legal[moved],
            )
            scores.extend(score[ended])
            run.played(int(ended.sum()))
            keys, hints, gains, legal = next_keys, next_hints, next_gains, next_legal
            # 3. learn: Double DQN targets over the next position's afterstates
            if replay.n >= max(args.learning_starts, args.batch_size):
                for _ in range(args.updates):
                    b_key, b_hint, b_chance, b_done, b_next, b_nhint, b_ngain, b_nlegal = replay.sample(rng, args.batch_size)
                    best = q_values(net, b_next, b_nhint, b_ngain, b_nlegal).argmax(1)
                    with torch.no_grad():
                        pick = torch.arange(len(best)), best
                        bootstrap = torch.from_numpy(b_ngain)[pick] + target.value_of(
                            b_next[pick[0].numpy(), best.numpy()], b_nhint
                        )
                        live = torch.from_numpy(~b_done & b_nlegal.any(1))
                        y = torch.from_numpy(b_chance) + torch.where(live, bootstrap, 0.0)
                    v = net.value_of(b_key, b_hint)
                    error = v - y
                    loss = 0.5 * (error**2).sum()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    errors.append(float(error.detach().abs().mean()))
                if run.due(args.target_every):
                    learner.sync_target()
            if run.due(args.log_every):
                run.log(
                    {"charts/steps_per_s": per_second(run.iteration * args.num_envs, run.seconds())}
                    | ({"losses/td_abs": float(np.mean(errors))} if errors else {})
                    | ({"charts/episode_score": float(np.mean(scores[-500:]))} if scores else {})
                )
                errors.clear()
                del scores[:-500]
            # 4. evaluate, save
            if run.due(args.eval_every):
                result = evaluate(net, env_id, args.eval_games, seed=10_000 + run.iteration)
                run.log({"eval/mean_score": float(result.mean())})
                run.bar.write(f"iteration {run.iteration}: greedy mean score {result.mean():,.0f} ({args.eval_games} games)")
            if run.due(args.save_every):
                run.save()
        return finish(run, envs)


if __name__ == "__main__":
    sys.exit(main())
