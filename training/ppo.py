"""Masked PPO over the compiled vector envs, by self-play for two-player games (CleanRL-shaped).

``tablegym train GAME --algo ppo [--minutes M] [--run-dir D] [--out critic.pt]``: thousands of
boards step in one compiled call (``gymnasium.make_vec``, envs/vector.py); the policy never puts
probability on an illegal action (its logits are masked before the softmax). Two-player games
play themselves: every board's observation is the player to move's (``opponent=None``), so one
policy plays both seats, and the advantage of a move is computed negamax-style: the value of the
next position counts against the mover when the other player moves there (GAE with a sign per
step). The critic is a plain ReLU MLP on the flattened observation, so ``--out`` writes it as a
tablegym checkpoint that ``eval=learned:PATH`` runs compiled in every searcher of the game.

Next-step auto-reset (Gymnasium 1.x): a step after a board's last one restarts that board and
ignores its action, so such steps carry no gradient and no bootstrap (``valid`` below).

The script reads top to bottom: arguments, networks, the rollout, GAE, the clipped update, the
evaluation against a random player, the save.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs.core import Game
from tablegym.envs.rates import per_second
from tablegym.models.policy import MASKED, ActorCritic
from tablegym.training.args import BoardsArgs, require_at_least, require_positive
from tablegym.training.runs import Run, TorchLearner, parse_dataclass_args
from tablegym.training.vector_rl import Boards, env_id_of, evaluate, evaluate_and_save, finish, trained_game, training_options


@dataclass
class Args(BoardsArgs):
    RUN_SUFFIX = "ppo"  # runs/GAME-ppo unless --run-dir says otherwise

    algo: str = "ppo"
    """the algorithm (this trainer: ppo)"""
    random_share: float = 0.25
    """two-player games: the share of the boards where the policy plays a fixed opponent (seats
    alternating) rather than itself; pure self-play teaches nothing to a seat that loses by force"""
    opponent: tuple[str, ...] = ("random",)
    """the fixed opponents of those boards, which they share out in turn: random, a reference player
    the vector env compiles (Trap's medium, hard) or any compiled searcher it plays in the batch
    (alphabeta:eval=advanced,depth=2); each one's mean return is logged (charts/return_vs/...)"""
    pool_share: float = 0.0
    """two-player games: the share of the boards where the policy plays a past snapshot of itself
    (seats alternating; the snapshot samples its own masked policy), so it keeps beating what it
    used to be; the pool's scores are logged (pool/...)"""
    opening_moves: int = 0
    """two-player games: the first steps of every game on every board are uniformly random legal
    moves, not trained on, so that a deterministic opponent (a search) is not met in the same
    few games again and again"""
    opening_plies: int = 0
    """two-player games: uniformly random moves for both seats at the start of every game on
    every board, played inside the env (its opening_plies) before the trainer's seat moves: a
    deterministic opponent (a search) then opens from varied positions, as in matches with
    random opening plies (--opening-moves randomises only the trainer's own first steps)"""
    snapshot_every: int = 20
    """updates between snapshots added to the pool"""
    pool_size: int = 8
    """snapshots kept (the oldest leaves first; the pool starts anew on resume)"""
    num_steps: int = 32
    """steps of every board per update (a batch holds num_envs x num_steps steps)"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    clip: float = 0.2
    """the policy ratio's clip range"""
    ent_coef: float = 0.01
    """entropy bonus at the start, decaying linearly to ent_final"""
    ent_final: float = 0.0
    """entropy bonus at the end of the budget"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    epochs: int = 4
    """passes over each batch"""
    minibatches: int = 4
    """minibatches a pass"""
    eval_every: int = 10
    """updates between evaluations against a random player (0: never)"""
    save_every: int = 50
    """updates between checkpoints"""
    run_dir: str = "runs/trilobite-tiny-ppo"
    out: str | None = None
    """where to write the critic as a tablegym checkpoint for eval=learned:PATH"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("num_steps", "epochs", "minibatches"))
        if (self.num_envs * self.num_steps) % self.minibatches:
            raise ValueError(
                f"--minibatches ({self.minibatches}) must divide num_envs x num_steps ({self.num_envs * self.num_steps})"
            )
        if not 0 < self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise ValueError(f"--gamma must lie in (0, 1] and --gae-lambda in [0, 1], got {self.gamma}, {self.gae_lambda}")
        if not 0 <= self.random_share <= 1 or not 0 <= self.pool_share <= 1 or self.random_share + self.pool_share > 1:
            raise ValueError(
                f"--random-share and --pool-share must lie in [0, 1] with a sum <= 1, got "
                f"{self.random_share} and {self.pool_share}"
            )
        if self.opening_moves < 0 or self.opening_plies < 0:
            raise ValueError(f"--opening-moves and --opening-plies must be >= 0, got {self.opening_moves}, {self.opening_plies}")
        if self.snapshot_every < 1 or self.pool_size < 1:
            raise ValueError(f"--snapshot-every and --pool-size must be >= 1, got {self.snapshot_every}, {self.pool_size}")
        require_at_least(self, 0, ("lr",))  # --lr 0: play, learn nothing
        require_positive(self, ("clip",))
        for name in ("ent_coef", "ent_final", "vf_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        if isinstance(self.opponent, str):  # Args(opponent="hard") from Python: one opponent
            self.opponent = (self.opponent,)
        if not self.opponent or len(set(self.opponent)) != len(self.opponent):
            raise ValueError(f"--opponent takes one or more different opponents, got {' '.join(self.opponent)!r}")
        if self.algo != "ppo":
            raise ValueError(f"--algo must be ppo for this trainer, got {self.algo!r}")


class PPOLearner(TorchLearner):
    """The actor-critic and its Adam optimizer (saved and resumed together)."""

    checkpoint_key = "ppo"

    def __init__(self, args: Args, game: Game, inputs: int, actions: int) -> None:
        self.args, self.game = args, game
        torch.manual_seed(args.seed)
        torch.set_num_threads(args.threads)
        self.device = args.torch_device()
        self.net = ActorCritic(inputs, actions, tuple(args.hidden)).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.lr, eps=1e-5)
        self.shape = {"inputs": inputs, "actions": actions, "hidden": list(args.hidden)}
        self.model = self.net

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        from tablegym.models.export import save

        save(copy.deepcopy(self.net.critic).cpu(), self.game, out, metadata={"trainer": "ppo", **progress})


class Pool:
    """Past snapshots of the actor and the trainer's results against each: a snapshot every
    ``snapshot_every`` updates (the first at update 1), at most ``pool_size`` (FIFO); each pool
    board plays one snapshot, drawn uniformly again when its game ends."""

    def __init__(self, net: ActorCritic, args: Args, boards: int, rng: np.random.Generator) -> None:
        self.net, self.args, self.rng = net, args, rng
        self.actors: list[nn.Module] = []
        self.born: list[int] = []  # the update at which each snapshot was taken
        self.playing = np.zeros(boards, dtype=np.int64)  # board -> index into actors
        self.results: dict[int, list[float]] = {}  # born -> the trainer's returns against it
        self.boards = boards

    def maybe_snapshot(self, update: int) -> None:
        if not self.boards or (self.actors and (update - 1) % self.args.snapshot_every):
            return
        self.actors.append(copy.deepcopy(self.net.actor).requires_grad_(False))
        self.born.append(update)
        if len(self.actors) > self.args.pool_size:
            self.actors.pop(0)
            self.born.pop(0)
            self.playing = np.maximum(self.playing - 1, 0)
        if len(self.actors) == 1:
            self.playing[:] = 0

    def act(self, x: torch.Tensor, mask: torch.Tensor, boards: np.ndarray) -> torch.Tensor:
        """Each listed pool board's snapshot samples its masked policy."""
        out = torch.zeros(len(boards), dtype=torch.long, device=x.device)
        which = self.playing[boards]
        with torch.no_grad():
            for k in np.unique(which):
                rows = torch.as_tensor(np.flatnonzero(which == k), device=x.device)
                logits = self.actors[k](x[rows]).masked_fill(~mask[rows], MASKED)
                out[rows] = torch.distributions.Categorical(logits=logits).sample()
        return out

    def finished(self, board: int, trainer_return: float) -> None:
        self.results.setdefault(self.born[self.playing[board]], []).append(float(trainer_return))
        self.playing[board] = self.rng.integers(len(self.actors))

    def scores(self) -> dict[str, float]:
        """TensorBoard scalars: the trainer's mean return against the pool (last 500 games of each
        snapshot), the oldest snapshot kept and the newest."""
        kept = [b for b in self.born if self.results.get(b)]
        if not kept:
            return {}
        mean = {b: float(np.mean(self.results[b][-500:])) for b in kept}
        return {
            "pool/return": float(np.mean(list(mean.values()))),
            "pool/return_vs_oldest": mean[kept[0]],
            "pool/return_vs_newest": mean[kept[-1]],
            "pool/snapshots": float(len(self.actors)),
        }


def advantages(
    rewards: torch.Tensor,
    values: torch.Tensor,
    next_value: torch.Tensor,
    dones: torch.Tensor,
    signs: torch.Tensor,
    valid: torch.Tensor,
    *,
    gamma: float,
    lam: float,
) -> torch.Tensor:
    """GAE over a (steps, boards) rollout, negamax-signed: ``signs[t]`` is -1 where the other
    player moves after step t, so the next position's value counts against the mover; a step
    that ends its board (``dones``) does not bootstrap, and a step that trains nothing
    (``valid`` 0) passes no advantage back. ``next_value``: each board's value after the last step."""
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(len(rewards))):
        nv = next_value if t == len(rewards) - 1 else values[t + 1]
        carry = 1.0 - dones[t]
        delta = rewards[t] + gamma * signs[t] * nv * carry - values[t]
        last = delta + gamma * lam * signs[t] * carry * last
        last = last * valid[t]
        adv[t] = last
    return adv


@dataclass
class MinibatchLoss:
    """What one minibatch's update minimises, and its parts as means over the valid steps."""

    loss: torch.Tensor
    """the clipped policy loss plus the weighted value loss minus the entropy bonus (to backpropagate)"""
    pg: torch.Tensor
    """the clipped policy loss"""
    vf: torch.Tensor
    """the squared error of the value"""
    entropy: torch.Tensor
    """the policy's entropy"""
    clipfrac: torch.Tensor
    """the share of steps whose policy ratio left the clip range"""


def minibatch_loss(
    net: ActorCritic,
    obs: torch.Tensor,
    mask: torch.Tensor,
    actions: torch.Tensor,
    old_logp: torch.Tensor,
    adv: torch.Tensor,
    returns: torch.Tensor,
    valid: torch.Tensor,
    *,
    clip: float,
    vf_coef: float,
    ent_coef: float,
) -> MinibatchLoss:
    """The clipped PPO loss of a minibatch, its advantages normalised over its valid steps: one
    step size then suits any reward scale (Threes' scores, Trilobite's +-1), and the policy
    loss is 0 while the policy is still the one that played (ratio 1). Steps with ``valid`` 0
    count for nothing."""

    def mean(x: torch.Tensor) -> torch.Tensor:
        return (x * valid).sum() / valid.sum()

    dist = net.policy(obs, mask)
    ratio = (dist.log_prob(actions) - old_logp).exp()
    a = (adv - mean(adv)) / (adv[valid > 0].std() + 1e-8)
    pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip))
    vf = (net.value(obs) - returns) ** 2
    ent = dist.entropy()
    loss = mean(pg + vf_coef * 0.5 * vf - ent_coef * ent)
    with torch.no_grad():
        return MinibatchLoss(loss, mean(pg), mean(vf), mean(ent), mean(((ratio - 1).abs() > clip).float()))


def main(argv: list[str] | None = None) -> int:
    args = parse_dataclass_args(Args, argv, "tablegym train GAME --algo ppo", __doc__.splitlines()[0])
    try:
        env_id = env_id_of(args.game)
        game = trained_game(args.game, args.game_options, args.out)
        options = training_options(args, env_id)
        if args.opening_plies:
            if env_id not in tablegym.envs.ENV_IDS:
                raise ValueError(f"--opening-plies is for two-player games; {args.game} has one player")
            options["opening_plies"] = args.opening_plies
    except (ValueError, TypeError) as err:
        print(f"tablegym train GAME --algo ppo: error: {err}", file=sys.stderr)
        return 2
    two_player = env_id in tablegym.envs.ENV_IDS
    fixed = round(args.num_envs * args.random_share) if two_player else 0
    P = round(args.num_envs * args.pool_share) if two_player else 0
    S = args.num_envs - fixed - P
    try:
        envs = Boards(env_id, S, fixed, options, pool=P, opponent=args.opponent)
    except (ValueError, TypeError) as err:  # an opponent spec the vector env refuses
        print(f"tablegym train GAME --algo ppo: error: --opponent {' '.join(args.opponent)!r}: {err}", file=sys.stderr)
        return 2
    inputs, actions = envs.inputs, envs.actions
    learner = PPOLearner(args, game, inputs, actions)
    net, optimizer = learner.net, learner.optimizer
    batch = args.num_envs * args.num_steps
    updates = max(1, args.total_steps // batch)
    try:
        run = Run(
            args,
            game,
            learner,
            iterations=updates,
            desc=f"ppo {args.game}",
            budget=f"--total-steps {args.total_steps}",
            unit="update",
        )
    except ValueError as err:  # the run folder in use by another training, or a checkpoint of another network
        envs.close()
        print(f"tablegym train GAME --algo ppo: error: {err}", file=sys.stderr)
        return 2

    with run:
        # The rollout buffers: step t of every board.
        T, N = args.num_steps, args.num_envs
        dev = learner.device  # the network and its batches; the boards step on the CPU
        obs_buf = torch.zeros((T, N, inputs), device=dev)
        mask_buf = torch.zeros((T, N, actions), dtype=torch.bool, device=dev)
        act_buf = torch.zeros((T, N), dtype=torch.long, device=dev)
        logp_buf = torch.zeros((T, N), device=dev)
        val_buf = torch.zeros((T, N), device=dev)
        rew_buf = torch.zeros((T, N), device=dev)
        done_buf = torch.zeros((T, N), device=dev)
        sign_buf = torch.ones((T, N), device=dev)
        valid_buf = torch.zeros((T, N), device=dev)

        obs, info = envs.reset(seed=args.seed + run.iteration)
        seat = info.get("seat", np.zeros(N, dtype=np.int64))
        restarting = np.zeros(N, dtype=bool)  # the next step of these boards restarts them
        episode_return, episodes = np.zeros(N), []  # episodes: the agent's returns against the fixed opponents (or alone)
        versus: dict[str, list[float]] = {name: [] for name in args.opponent}  # the same, by fixed opponent
        # The pool boards [S, S + P): the trainer's seat alternates by board; the snapshot a board
        # plays is drawn again when its game ends; results[k] holds the trainer's returns against k.
        pool = Pool(net, args, P, np.random.default_rng(args.seed))
        in_pool = np.zeros(N, dtype=bool)
        in_pool[S : S + P] = True
        trainer_seat = np.zeros(N, dtype=np.int64)
        trainer_seat[S : S + P] = np.arange(P) % 2
        last_t = np.full(N, -1)  # a pool board's last step of the trainer in this rollout
        game_steps = np.zeros(N, dtype=np.int64)  # steps of each board's game so far (--opening-moves)
        while run.next_iteration():
            frac = min(1.0, (run.iteration - 1) / updates)
            ent_coef = args.ent_coef + frac * (args.ent_final - args.ent_coef)
            pool.maybe_snapshot(run.iteration)
            last_t[:] = -1
            # 1. play num_steps steps of every board with the current policy (the snapshots' moves on pool boards)
            for t in range(T):
                x = torch.as_tensor(obs.reshape(N, -1), dtype=torch.float32, device=dev)
                mask = torch.as_tensor(envs.action_masks(), device=dev)
                with torch.no_grad():
                    dist = net.policy(x, mask)
                    action = dist.sample()
                    val_buf[t] = net.value(x)
                theirs = in_pool & (seat != trainer_seat) & ~restarting  # a snapshot moves there
                if theirs.any():
                    rows = torch.as_tensor(theirs, device=dev)
                    action[rows] = pool.act(x[rows], mask[rows], np.flatnonzero(theirs) - S)
                opening = (game_steps < args.opening_moves) & ~restarting if two_player else np.zeros(N, dtype=bool)
                if opening.any():
                    rows = torch.as_tensor(opening, device=dev)
                    action[rows] = torch.multinomial(mask[rows].float(), 1).squeeze(1)
                obs_buf[t], mask_buf[t], act_buf[t], logp_buf[t] = x, mask, action, dist.log_prob(action)
                valid_buf[t] = torch.as_tensor(~restarting & ~theirs & ~opening, dtype=torch.float32, device=dev)
                obs, reward, term, trunc, info = envs.step(action.cpu().numpy())
                next_seat = info.get("seat", seat)
                ended = term | trunc
                rew_buf[t] = torch.as_tensor(reward * args.reward_scale, dtype=torch.float32, device=dev)
                done_buf[t] = torch.as_tensor(ended, dtype=torch.float32, device=dev)
                # the next position's value counts for the mover if the mover moves again, against it if not
                sign_buf[t] = torch.as_tensor(np.where(next_seat == seat, 1.0, -1.0), dtype=torch.float32, device=dev)
                # a snapshot's move is the trainer's environment: its reward counts against the trainer's
                # last step, and a game it ends ends that step (no bootstrap)
                for i in np.flatnonzero(theirs & (last_t >= 0)):
                    rew_buf[last_t[i], i] -= float(reward[i]) * args.reward_scale
                    if ended[i]:
                        done_buf[last_t[i], i] = 1.0
                last_t[in_pool & ~theirs & ~restarting] = t
                episode_return += np.where(restarting, 0.0, np.where(theirs, -reward, reward))
                for i in np.flatnonzero(ended & ~restarting):
                    if in_pool[i]:
                        pool.finished(i - S, episode_return[i])
                    elif i >= S + P or not two_player:  # a self-play board's return is nobody's
                        episodes.append(episode_return[i])
                        if two_player:
                            versus[envs.opponent_of[i]].append(episode_return[i])
                episode_return[ended | restarting] = 0.0
                game_steps = np.where(restarting, 0, game_steps + 1)
                restarting, seat = ended, next_seat
            finished = int(done_buf.mul(valid_buf).sum())
            run.played(finished)
            # 2. advantages by GAE, negamax-signed; a step that ends its board does not bootstrap
            with torch.no_grad():
                next_value = net.value(torch.as_tensor(obs.reshape(N, -1), dtype=torch.float32, device=dev))
                next_value = torch.where(torch.as_tensor(restarting, device=dev), torch.zeros(N, device=dev), next_value)
                adv = advantages(
                    rew_buf, val_buf, next_value, done_buf, sign_buf, valid_buf, gamma=args.gamma, lam=args.gae_lambda
                )
                returns = adv + val_buf
            # 3. the clipped update over minibatches of valid steps
            b_obs, b_mask = obs_buf.reshape(-1, inputs), mask_buf.reshape(-1, actions)
            b_act, b_logp, b_adv = act_buf.reshape(-1), logp_buf.reshape(-1), adv.reshape(-1)
            b_ret, b_valid = returns.reshape(-1), valid_buf.reshape(-1)
            size = batch // args.minibatches
            stats = {"pg": 0.0, "vf": 0.0, "entropy": 0.0, "clipfrac": 0.0}
            for _ in range(args.epochs):
                order = torch.randperm(batch)
                for start in range(0, batch, size):
                    idx = order[start : start + size].to(dev)  # drawn on the CPU: the same order on any device
                    w = b_valid[idx]
                    if w.sum() == 0:
                        continue
                    losses = minibatch_loss(
                        net,
                        b_obs[idx],
                        b_mask[idx],
                        b_act[idx],
                        b_logp[idx],
                        b_adv[idx],
                        b_ret[idx],
                        w,
                        clip=args.clip,
                        vf_coef=args.vf_coef,
                        ent_coef=ent_coef,
                    )
                    optimizer.zero_grad()
                    losses.loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                    optimizer.step()
                    for name in stats:
                        stats[name] += float(getattr(losses, name))
            k = args.epochs * args.minibatches
            run.log(
                {f"losses/{name}": v / k for name, v in stats.items()}
                | {"charts/steps_per_s": per_second(run.iteration * batch, run.seconds()), "charts/ent_coef": ent_coef}
                | ({"charts/episode_return": float(np.mean(episodes[-500:]))} if episodes else {})
                | {f"charts/return_vs/{name}": float(np.mean(r[-500:])) for name, r in versus.items() if r}
                | pool.scores()
            )
            # 4. evaluate, save
            evaluate_and_save(run, args, partial(evaluate, net, env_id, options=args.game_options), two_player, "update")
        return finish(run, envs)


if __name__ == "__main__":
    sys.exit(main())
