"""Masked DQN over the compiled vector envs, by self-play for two-player games (CleanRL-shaped).

``tablegym train GAME --algo dqn [--minutes M] [--run-dir D] [--out q.pt]``: the boards of
``gymnasium.make_vec`` (envs/vector.py) step in one compiled call; the network gives one Q-value
an action and never picks an illegal one (acting, and the target's max, run over the legal
actions only). Two-player games play themselves as in training/ppo.py: every board's observation
is the player to move's (``opponent=None``), so Q(s, a) is the value of move ``a`` for the mover,
and the value of the next position counts against the mover when the other player moves there
(negamax: the n-step return and its discount carry a sign per step). A share of the boards plays
a random opponent. Targets are n-step Double DQN: ``r_n + gamma^n * sign * Q_target(s_n,
argmax_legal Q(s_n, .))`` (``--no-double``: ``max_legal Q_target(s_n, .)``), no bootstrap once the
board ended (terminated, or truncated by a ``max_moves`` option). ``--out`` writes the Q-network
as a tablegym checkpoint whose compiled evaluator takes the largest Q over the legal actions, so
``eval=learned:PATH`` runs it in every searcher of the game.

``--afterstate`` runs neither this network nor this loop but one of two other trainers, chosen by
the game (``cli_main``), since Q from a value of what a move leads to needs that value's network;
each also runs under its own name:

- ``--algo afterstate-dqn`` (training/afterstate_dqn.py), for a game whose record names an
  afterstate network (Threes): Q(s, a) = gain + V(afterstate), V that network;
- ``--algo negamax-dqn`` (training/negamax_dqn.py), for every other game, which must have two
  players (Trilobite, Sim, Trap): Q(s, a) = -V(child), V an MLP on the observation, and where
  chance moves (Trap's throws) the expectation over the outcomes.

Each has its own flags (``GAME --algo negamax-dqn --help``), run folder
(runs/GAME-afterstate-dqn, runs/GAME-negamax-dqn) and progress bar ("afterstate dqn GAME",
"negamax dqn GAME"), and its ``--out`` file's metadata names it (trainer afterstate-dqn,
negamax-dqn).

Next-step auto-reset (Gymnasium 1.x): a step after a board's last one restarts that board and
ignores its action, so such steps start no transition (``restarting`` below).

The script reads top to bottom: arguments, the network, acting, the replay buffer, the
evaluation against a random player, the learner (saved and resumed), then the loop: act, fold
each step into the n-step window of its board, store what is complete, learn, evaluate, save.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs.core import Game
from tablegym.envs.rates import per_second
from tablegym.models.policy import MASKED, qnetwork
from tablegym.training.args import BoardsArgs, ReplayArgs, require_at_least, require_positive, require_share
from tablegym.training.runs import TorchLearner, module_device, parse_dataclass_args
from tablegym.training.vector_rl import (
    Boards,
    env_id_of,
    evaluate_and_save,
    finish,
    mean_return,
    replay_run,
    trained_game,
    training_options,
)


@dataclass
class Args(ReplayArgs, BoardsArgs):
    RUN_SUFFIX = "dqn"  # runs/GAME-dqn unless --run-dir says otherwise

    num_envs: int = 64
    random_share: float = 0.25
    """two-player games: the share of the boards where the network plays a random opponent (seats
    alternating) rather than itself"""
    total_steps: int = 1_000_000
    lr: float = 5e-4
    n_step: int = 3
    """steps of reward in a target before it bootstraps"""
    buffer_size: int = 100_000
    batch_size: int = 256
    learning_starts: int = 5_000
    train_every: int = 1
    """iterations between learning phases"""
    updates: int = 1
    """gradient steps a learning phase"""
    tau: float = 1.0
    """a target update moves the target this share of the way to the online network (1: copy)"""
    eps_start: float = 1.0
    """exploration rate at the start: the chance of a random legal action"""
    eps_end: float = 0.05
    """exploration rate after the decay"""
    eps_fraction: float = 0.5
    """share of the budget (steps or minutes, whichever is further along) over which epsilon
    decays linearly"""
    double: bool = True
    """Double DQN: the online network picks the next position's move and the target network values
    it (--no-double: the target network's own largest legal Q, as plain DQN and SB3's DQN)"""
    max_grad_norm: float = 10.0
    save_every: int = 10_000
    run_dir: str = "runs/trilobite-tiny-dqn"
    out: str | None = None
    """where to write the Q-network as a tablegym checkpoint for eval=learned:PATH"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("n_step", "train_every"))
        require_positive(self, ("lr",))
        for name in ("gamma", "tau"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"--{name.replace('_', '-')} must lie in (0, 1], got {getattr(self, name)}")
        require_share(self, ("eps_start", "eps_end", "eps_fraction", "random_share"))
        if self.algo != "dqn":
            raise ValueError(f"--algo must be dqn for this trainer, got {self.algo!r}")

    def check_buffer(self) -> None:
        """The n-step window of every board fits in the buffer, and so does what learning waits for."""
        if self.buffer_size < self.num_envs * self.n_step:
            raise ValueError(
                f"--buffer-size ({self.buffer_size}) must hold at least num_envs x n_step "
                f"({self.num_envs * self.n_step}) transitions"
            )
        super().check_buffer()


def act(qnet: nn.Module, obs: np.ndarray, mask: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Masked epsilon-greedy: on each board a uniformly random legal action with probability
    ``epsilon``, else the legal action of largest Q."""
    device = module_device(qnet)
    with torch.no_grad():
        q = qnet(torch.as_tensor(obs, dtype=torch.float32, device=device)).masked_fill(
            ~torch.as_tensor(mask, device=device), MASKED
        )
    greedy = q.argmax(-1).cpu().numpy()
    if epsilon <= 0:
        return greedy
    explore = rng.random(len(greedy)) < epsilon
    return np.where(explore, np.argmax(rng.random(mask.shape) * mask, axis=1), greedy)


class Replay:
    """The newest ``capacity`` n-step transitions, as numpy arrays (a ring): the observation, the
    action, the n-step return, its discount ``gamma^n`` times the negamax signs, whether the board
    ended (no bootstrap), and the observation and legal mask the target bootstraps from."""

    def __init__(self, capacity: int, inputs: int, actions: int) -> None:
        self.capacity, self.n, self.pos = capacity, 0, 0
        self.obs = np.zeros((capacity, inputs), dtype=np.float32)
        self.action = np.zeros(capacity, dtype=np.int64)
        self.ret = np.zeros(capacity, dtype=np.float32)
        self.disc = np.zeros(capacity, dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.next_obs = np.zeros((capacity, inputs), dtype=np.float32)
        self.next_mask = np.zeros((capacity, actions), dtype=bool)

    def add(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        ret: np.ndarray,
        disc: np.ndarray,
        done: np.ndarray,
        next_obs: np.ndarray,
        next_mask: np.ndarray,
    ) -> None:
        idx = (self.pos + np.arange(len(action))) % self.capacity
        self.obs[idx], self.action[idx], self.ret[idx], self.disc[idx] = obs, action, ret, disc
        self.done[idx], self.next_obs[idx], self.next_mask[idx] = done, next_obs, next_mask
        self.pos = int((self.pos + len(action)) % self.capacity)
        self.n = min(self.n + len(action), self.capacity)

    def sample(self, rng: np.random.Generator, batch: int, device: Any = "cpu") -> tuple[torch.Tensor, ...]:
        """``batch`` transitions drawn uniformly (with replacement), as tensors on ``device`` in
        the order of ``add``."""
        idx = rng.integers(self.n, size=batch)
        return tuple(
            torch.from_numpy(a[idx]).to(device)
            for a in (self.obs, self.action, self.ret, self.disc, self.done, self.next_obs, self.next_mask)
        )


def evaluate(qnet: nn.Module, env_id: str, games: int, seed: int, *, epsilon: float = 0.0, options: dict | None = None) -> float:
    """``vector_rl.mean_return`` of the greedy masked policy (``epsilon`` 1: a random player's)."""
    rng = np.random.default_rng(seed)
    return mean_return(lambda obs, masks: act(qnet, obs, masks, epsilon, rng), env_id, games, seed, options)


class DQNLearner(TorchLearner):
    """The Q-network, its target network and their Adam optimizer (saved and resumed together).
    The replay buffer is not saved: a resumed run refills it and waits --learning-starts
    transitions before it learns again."""

    checkpoint_key = "dqn"

    def __init__(self, args: Args, game: Game, inputs: int, actions: int) -> None:
        self.args, self.game = args, game
        torch.manual_seed(args.seed)
        torch.set_num_threads(args.threads)
        self.device = args.torch_device()
        self.nets = nn.ModuleDict(
            {"q": qnetwork(inputs, actions, args.hidden), "target": qnetwork(inputs, actions, args.hidden)}
        ).to(self.device)
        self.qnet, self.target = self.nets["q"], self.nets["target"]
        self.target.load_state_dict(self.qnet.state_dict())
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.qnet.parameters(), lr=args.lr)
        self.shape = {"inputs": inputs, "actions": actions, "hidden": list(args.hidden)}
        self.model = self.nets

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        from tablegym.models.export import save

        save(copy.deepcopy(self.qnet).cpu(), self.game, out, output="max", metadata={"trainer": "dqn", **progress})


def bootstrap(qnet: nn.Module, target: nn.Module, next_obs: torch.Tensor, next_mask: torch.Tensor, double: bool) -> torch.Tensor:
    """The value a target bootstraps from, over the legal moves of the next position: the target
    network's Q of the online network's best move (Double DQN, which counters max's upward bias)
    or, with ``double`` off, the target network's own largest Q."""
    chooser = qnet if double else target
    best = chooser(next_obs).masked_fill(~next_mask, MASKED).argmax(-1, keepdim=True)
    return target(next_obs).gather(1, best).squeeze(1)


def main(argv: list[str] | None = None) -> int:
    args = parse_dataclass_args(Args, argv, "tablegym train GAME --algo dqn", f"{__doc__.splitlines()[0]} {afterstate_help()}")
    try:
        env_id = env_id_of(args.game)
        game = trained_game(args.game, args.game_options, args.out)
        options = training_options(args, env_id)
    except (ValueError, TypeError) as err:
        print(f"tablegym train GAME --algo dqn: error: {err}", file=sys.stderr)
        return 2
    two_player = env_id in tablegym.envs.ENV_IDS
    N = args.num_envs
    fixed = round(N * args.random_share) if two_player else 0
    envs = Boards(env_id, N - fixed, fixed, options)
    inputs, actions = envs.inputs, envs.actions
    started = replay_run(
        args, game, lambda: DQNLearner(args, game, inputs, actions), "dqn", "tablegym train GAME --algo dqn", envs
    )
    if started is None:
        return 2
    learner, run = started
    with run:
        qnet, target, optimizer = learner.qnet, learner.target, learner.optimizer
        rng = np.random.default_rng([args.seed, run.iteration])
        replay = Replay(args.buffer_size, inputs, actions)
        # boards whose returns are the agent's own (against the random player, or alone)
        scored = np.arange(N) >= N - fixed if two_player else np.ones(N, dtype=bool)

        # The n-step window of every board: slot t % n holds the transition started at step t, its
        # return and discount growing each step until it is n steps long or its board ends.
        n = args.n_step
        w_obs = np.zeros((n, N, inputs), dtype=np.float32)
        w_act = np.zeros((n, N), dtype=np.int64)
        w_ret = np.zeros((n, N), dtype=np.float32)
        w_disc = np.ones((n, N), dtype=np.float32)
        w_open = np.zeros((n, N), dtype=bool)

        obs, info = envs.reset(seed=args.seed + run.iteration)
        seat = info["seat"]
        mask = envs.action_masks()
        restarting = np.zeros(N, dtype=bool)  # the next step of these boards restarts them
        episode_return, episodes = np.zeros(N), []
        td_sum, q_sum, learned = 0.0, 0.0, 0
        while run.next_iteration():
            spent = max(run.iteration / run.iterations, run.seconds() / (60.0 * args.minutes) if args.minutes else 0.0)
            decayed = min(1.0, spent / args.eps_fraction) if args.eps_fraction else 1.0
            epsilon = args.eps_start + decayed * (args.eps_end - args.eps_start)
            # 1. one step of every board, epsilon-greedy over the legal actions
            action = act(qnet, obs, mask, epsilon, rng)
            slot = run.iteration % n
            w_obs[slot], w_act[slot], w_ret[slot], w_disc[slot], w_open[slot] = obs, action, 0.0, 1.0, ~restarting
            obs, reward, term, trunc, info = envs.step(action)
            next_seat, mask = info["seat"], envs.action_masks()
            ended = term | trunc
            # 2. fold the step into every open transition of its board: the next position's value
            # counts for the mover if the mover moves again, against it if not
            w_ret += w_disc * (reward * args.reward_scale).astype(np.float32)
            w_disc *= args.gamma * np.where(next_seat == seat, 1.0, -1.0).astype(np.float32)
            # 3. store what is complete: a board's oldest transition once n steps long (bootstrapped
            # from here), all of a board's transitions when it ended (not bootstrapped)
            complete = w_open & (ended[None, :] | (np.arange(n) == (run.iteration + 1) % n)[:, None])
            slots, boards = np.nonzero(complete)
            replay.add(
                w_obs[slots, boards],
                w_act[slots, boards],
                w_ret[slots, boards],
                w_disc[slots, boards],
                ended[boards],
                obs[boards],
                mask[boards],
            )
            w_open[slots, boards] = False
            episode_return += np.where(restarting, 0.0, reward)
            for i in np.flatnonzero(ended & ~restarting & scored):
                episodes.append(episode_return[i])
            episode_return[ended | restarting] = 0.0
            run.played(int((ended & ~restarting).sum()))
            restarting, seat = ended, next_seat
            # 4. learn: n-step (Double) DQN targets over the legal actions, Huber loss
            if replay.n >= max(args.learning_starts, 1) and run.due(args.train_every):
                for _ in range(args.updates):
                    b_obs, b_act, b_ret, b_disc, b_done, b_next, b_mask = replay.sample(rng, args.batch_size, learner.device)
                    with torch.no_grad():
                        y = b_ret + b_disc * (1.0 - b_done) * bootstrap(qnet, target, b_next, b_mask, args.double)
                    q = qnet(b_obs).gather(1, b_act[:, None]).squeeze(1)
                    loss = F.smooth_l1_loss(q, y)
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(qnet.parameters(), args.max_grad_norm)
                    optimizer.step()
                    td_sum, q_sum, learned = td_sum + float(loss.detach()), q_sum + float(q.detach().mean()), learned + 1
                if run.due(args.target_every):
                    with torch.no_grad():
                        for t_param, param in zip(target.parameters(), qnet.parameters()):
                            t_param.lerp_(param, args.tau)
            if run.due(args.log_every):
                run.log(
                    {"charts/epsilon": epsilon, "charts/steps_per_s": per_second(run.iteration * N, run.seconds())}
                    | ({"losses/td": td_sum / learned, "losses/q_values": q_sum / learned} if learned else {})
                    | ({"charts/episode_return": float(np.mean(episodes[-500:]))} if episodes else {})
                )
                td_sum, q_sum, learned = 0.0, 0.0, 0
                del episodes[:-500]
            # 5. evaluate, save
            evaluate_and_save(run, args, partial(evaluate, qnet, env_id, options=args.game_options), two_player, "iteration")
        return finish(run, envs)


def afterstate_help() -> str:
    """What ``--afterstate`` runs for which game, for this trainer's ``--help``."""
    with_network = ", ".join(p.name for p in tablegym.envs.plugins() if p.afterstate)
    return (
        f"--afterstate runs another trainer, chosen by the game: afterstate DQN (--algo afterstate-dqn, "
        f"training/afterstate_dqn.py: Q(s, a) = gain + V(afterstate), V the network the game's record names) for "
        f"{with_network}; negamax DQN (--algo negamax-dqn, training/negamax_dqn.py: Q(s, a) = -V(child), its "
        f"expectation where chance moves) for every other game, which must have two players. GAME --algo dqn "
        f"--afterstate --help lists that trainer's flags."
    )


def cli_main(argv: list[str] | None = None) -> int:
    """``tablegym train GAME --algo dqn ...`` (the CLI hands over the arguments as typed); with
    ``--afterstate``, afterstate DQN (training/afterstate_dqn.py) for a game whose record names an
    afterstate network (Threes), or an unknown game (it names the games it trains), else negamax
    DQN (training/negamax_dqn.py), which refuses a game without two players."""
    if argv is not None and "--afterstate" in argv:
        from tablegym.training import afterstate_dqn, negamax_dqn

        game = argv[0] if argv and not argv[0].startswith("-") else Args.game
        try:
            by_children = tablegym.envs.plugin(game).afterstate is None
        except ValueError:  # an unknown game: the afterstate trainer names the known ones
            by_children = False
        return (negamax_dqn if by_children else afterstate_dqn).main(argv)
    return main(argv)


if __name__ == "__main__":
    sys.exit(main())
