"""Q-learning in afterstate form for two-player games (CleanRL-shaped).

``tablegym train trilobite --algo negamax-dqn [--minutes M] [--run-dir D] [--out v.pt]`` (or
``--algo dqn --afterstate``, which picks this trainer for a two-player game).
In a game without chance a move's result is the next position itself, so Q(s, a) needs no
network of its own: it is the result when the move ends the game, else minus the value of the
child for the player who moves there (negamax)::

    Q(s, a) = result(s, a)            if a ends the game (+1 won, -1 lost, 0 drawn)
            = -V(child(s, a))         otherwise

In a game with chance (Trap's throws) a move leads to a distribution of positions, and Q(s, a)
is the expectation over the outcomes (expectimax), with V's sign + where the mover decides
again (Trap's throw after its move) and - where the opponent does (``expected_q``).

One network V over the observation of the player to move, which is what a search wants at its
leaves: ``--out`` writes V (a ReLU MLP and a final Tanh) as a tablegym checkpoint that
``eval=learned:PATH`` runs compiled in every searcher of the game. The Q-network of
training/dqn.py, by contrast, is a leaf evaluator only through its largest Q, a value it never
learns directly (its Trilobite critic scored 0.278 against the shipped TD network at depth 5).

Every board plays itself (``opponent=None``; the env's random opening plies and epsilon-greedy
moves make the positions vary). At each position s reached the target is the best child by
the target network, ``y(s) = max_a Q_target(s, a)``, stored with the observation of s in the
replay buffer; the boards move by the same Q (epsilon-greedy), the learner fits V(s) to y(s)
(MSE, Adam), and the target network follows the online one every ``--target-every``
iterations. This is TD(0) of Tesauro's TD-Gammon with a one-ply max as in Q-learning; with
``--plies 2`` each Q is a two-ply search instead (the reply worst for the mover), the targets
of the TD-leaf trainer (training/td.py) at its depth 2 with lambda 0. The children (and their
replies) of all boards come from one compiled call of the vector env (``children()``,
``grandchildren()``), so millions of positions a run are valued and only the network runs in
torch.

The script reads top to bottom: arguments, the network and its negamax Q, lambda-returns, the
evaluation against a compiled alpha-beta in the batch, the learner (saved and resumed), then the
loop: search the children, store targets, act, learn, log, evaluate, save. Moves are
epsilon-greedy as training/afterstate_dqn.py's (``act``); positions and their targets wait in
training.runs' ``ReplayBuffer``.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs.core import Game
from tablegym.envs.rates import per_second
from tablegym.models.policy import value_network
from tablegym.training.afterstate_dqn import act
from tablegym.training.args import AfterstateArgs, require_at_least, require_positive, require_share, require_widths
from tablegym.training.runs import ReplayBuffer, TorchLearner, module_device, parse_dataclass_args
from tablegym.training.vector_rl import env_id_of, finish, replay_run, strict, trained_game


@dataclass
class Args(AfterstateArgs):
    RUN_SUFFIX = "negamax-dqn"  # runs/GAME-negamax-dqn unless --run-dir says otherwise

    game: str = "trilobite"
    """the game (two players: trilobite, trilobite-tiny, sim, trap)"""
    plies: int = 1
    """the search behind each target and move: 1 (the children) or 2 (their replies too, as the
    TD-leaf trainer's depth 2)"""
    lam: float = 0.0
    """lambda of the targets: 0 stores each position's search value at once; above 0 a board's
    positions wait for its game's end and get lambda-returns of the search values and the result
    (the TD-leaf trainer's lambda, 0.7 there)"""
    symmetries: bool = False
    """learn each position under a random one of the square board's 8 symmetries (rotations and
    reflections of the observation planes; games whose record says the rules keep them: Trap)"""
    opening_plies: int = 2
    """random moves of both seats at each board's start (the env's opening_plies)"""
    hidden: tuple[int, ...] = (256, 128)
    """hidden layer widths of V (ReLU)"""
    lr: float = 3e-4
    """Adam's step"""
    buffer_size: int = 500_000
    batch_size: int = 1024
    learning_starts: int = 20_000
    target_every: int = 25
    eval_games: int = 200
    """games of an evaluation: one-ply greedy play against --eval-opponent, seats alternating, from
    --opening-plies random moves (at least 2)"""
    eval_opponent: str = "random"
    """the other seat of the evaluation: random, or a compiled search spec of the game (Trilobite:
    alphabeta:eval=advanced,depth=2)"""
    run_dir: str = "runs/trilobite-negamax-dqn"
    out: str | None = None
    """where to write V as a tablegym checkpoint (eval=learned:PATH)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 0, ("opening_plies",))
        if self.plies not in (1, 2):
            raise ValueError(f"--plies must be 1 or 2, got {self.plies}")
        require_share(self, ("lam",))
        require_positive(self, ("lr",))
        require_widths(self)


def _values(net: nn.Module, x: np.ndarray) -> torch.Tensor:
    """V of the rows of ``x``, computed on the network's device (``--device``) and returned on the
    CPU, where the boards are."""
    with torch.no_grad():
        return net(torch.from_numpy(x).to(module_device(net))).cpu()


def negamax_q(
    net: nn.Module, children: tuple[np.ndarray, ...], grandchildren: tuple[np.ndarray, ...] | None = None
) -> torch.Tensor:
    """Q(s, a) of every board (rows) and move (columns) from the env's ``children()``: the
    result where the move ends the game, else -V(child); -inf where illegal. With the env's
    ``grandchildren()``, a search of two plies instead: the reply worst for the mover, each
    reply valued by its result or V of the position after it (the mover's own view)."""
    obs, ended, result, legal = children
    n, a = legal.shape
    if grandchildren is None:
        v = -_values(net, obs.reshape(n * a, -1)).view(n, a)
    else:
        obs2, ended2, result2, legal2 = grandchildren
        live = legal2 & ~ended2  # only these need the network
        values = torch.from_numpy(np.where(ended2, result2, np.inf)).float()
        values[torch.from_numpy(live)] = _values(net, obs2[live].reshape(int(live.sum()), -1)).squeeze(1)
        v = values.masked_fill(~torch.from_numpy(legal2), torch.inf).min(2).values
    q = torch.where(torch.from_numpy(ended), torch.from_numpy(result).float(), v)
    return q.masked_fill(~torch.from_numpy(legal), -torch.inf)


def expected_q(net: nn.Module, outcomes: tuple[np.ndarray, ...]) -> torch.Tensor:
    """Q(s, a) of every board and move in a game with chance, from the env's ``outcomes()``: the
    expectation over the move's chance outcomes of the result where the game ended, else V of
    the position reached, negated where the mover's opponent is to move there; -inf where
    illegal. Without chance it is ``negamax_q`` (one outcome a move, weight -1)."""
    obs, index, weight, position, result, legal = outcomes
    n, a = legal.shape
    v = _values(net, obs.reshape(len(obs), -1)).squeeze(1).double()
    reached = position >= 0
    values = torch.from_numpy(np.where(reached, 0.0, np.abs(weight) * result))
    values[torch.from_numpy(reached)] = torch.from_numpy(weight[reached]) * v[torch.from_numpy(position[reached])]
    q = torch.zeros(n * a, dtype=torch.float64).index_add_(0, torch.from_numpy(index), values).float().view(n, a)
    return q.masked_fill(~torch.from_numpy(legal), -torch.inf)


def board_q(net: nn.Module, boards: gymnasium.vector.VectorEnv, plies: int = 1) -> tuple[torch.Tensor, np.ndarray]:
    """Q of every board's moves by ``net`` and the legal moves: the children's values
    (``negamax_q``), or their expected values where the game has chance (``expected_q``)."""
    if boards.has_chance:
        outcomes = boards.outcomes()
        return expected_q(net, outcomes), outcomes[-1]
    children = boards.children()
    return negamax_q(net, children, boards.grandchildren() if plies == 2 else None), children[3]


def dihedral(planes: torch.Tensor, k: int) -> torch.Tensor:
    """The ``k``-th (0-7) of the square's 8 symmetries of a batch of planes (last two dims):
    ``k % 4`` quarter turns, then a mirror where ``k >= 4``."""
    planes = torch.rot90(planes, k % 4, dims=(-2, -1))
    return planes.flip(-1) if k >= 4 else planes


def random_symmetries(obs: torch.Tensor, shape: tuple[int, ...], rng: np.random.Generator) -> torch.Tensor:
    """Each row of ``obs`` (flattened planes of ``shape``) under a random one of the 8 symmetries."""
    planes = obs.view(len(obs), *shape)
    out = torch.empty_like(planes)
    which = torch.from_numpy(rng.integers(8, size=len(obs)))
    for k in range(8):
        rows = which == k
        out[rows] = dihedral(planes[rows], k)
    return out.view(len(obs), -1)


def lambda_returns(values: np.ndarray, result: float, lam: float, same: np.ndarray | None = None) -> np.ndarray:
    """The lambda-return of each position of one game: ``values[t]`` is the search value of
    position t for its mover, ``result`` the last mover's result;
    ``G_t = (1 - lam) * values[t] + lam * (+-G_{t+1})``, the last position's next term the result,
    the sign - where players alternate, + where ``same[t]`` says the mover of position t moves
    again at t + 1 (Trap's move, then its throw)."""
    returns = np.empty(len(values), dtype=np.float32)
    ahead = result
    for t in range(len(values) - 1, -1, -1):
        returns[t] = (1 - lam) * values[t] + lam * ahead
        ahead = returns[t] if same is not None and t > 0 and same[t - 1] else -returns[t]
    return returns


def evaluate(net: nn.Module, env_id: str, opponent: str, games: int, seed: int, options: dict, opening_plies: int = 2) -> float:
    """The mean result (+1 a win, -1 a loss) of one-ply greedy play against ``opponent``, which
    moves inside the batch, seats alternating, from ``opening_plies`` random moves (without them
    a deterministic opponent plays two distinct games); one game a board."""
    envs = gymnasium.make_vec(
        env_id, num_envs=games, opponent=opponent, agent_seat="alternate", opening_plies=opening_plies, **options
    )
    envs.reset(seed=seed)
    boards = envs.unwrapped
    results, done = np.zeros(games), np.zeros(games, dtype=bool)
    while not done.all():
        _, reward, term, trunc, _ = envs.step(board_q(net, boards)[0].argmax(1).numpy())
        first = (term | trunc) & ~done
        results[first], done[first] = reward[first], True
    envs.close()
    return float(results.mean())


class NegamaxLearner(TorchLearner):
    """V, its target copy and their Adam optimizer (saved and resumed together; the replay
    buffer is not saved: a resumed run refills it)."""

    checkpoint_key = "negamax_dqn"

    def __init__(self, args: Args, game: Game, inputs: int) -> None:
        self.args, self.game = args, game
        torch.manual_seed(args.seed)
        torch.set_num_threads(args.threads)
        self.nets = nn.ModuleDict({"v": value_network(inputs, args.hidden), "target": value_network(inputs, args.hidden)})
        self.device = args.torch_device()
        self.nets.to(self.device)
        self.net, self.target = self.nets["v"], self.nets["target"]
        self.target.load_state_dict(self.net.state_dict())
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.lr)
        self.shape = {"inputs": inputs, "hidden": list(args.hidden)}
        self.model = self.nets

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        from tablegym.models.export import save

        save(copy.deepcopy(self.net).cpu(), self.game, out, metadata={"trainer": "negamax-dqn", **progress})


def main(argv: list[str] | None = None) -> int:
    prog = "tablegym train GAME --algo negamax-dqn"
    args = parse_dataclass_args(Args, argv, prog, __doc__.splitlines()[0])
    try:
        env_id = env_id_of(args.game)
        game = trained_game(args.game, args.game_options, args.out)
        if env_id not in tablegym.envs.ENV_IDS or game.spec.num_players != 2:
            if args.algo == "dqn":  # --afterstate let the game choose, and neither trainer fits it
                raise ValueError(
                    f"--afterstate trains a two-player game by its children (trilobite, trilobite-tiny, "
                    f"sim, trap) or a game whose record names an afterstate network (threes); "
                    f"{args.game!r} is neither"
                )
            raise ValueError(
                f"--algo negamax-dqn trains two-player games by their children (trilobite, trilobite-tiny, "
                f"sim, trap), not {args.game!r}"
                + (
                    "; its afterstate network trains with --algo afterstate-dqn"
                    if tablegym.envs.plugin(args.game).afterstate
                    else ""
                )
            )
        if args.plies == 2 and game.new_initial_state().kernels.chance is not None:
            raise ValueError(f"--plies 2 searches games without chance nodes; {args.game!r} has them (--plies 1)")
        envs = gymnasium.make_vec(
            env_id, num_envs=args.num_envs, opponent=None, opening_plies=args.opening_plies, **strict(env_id), **args.game_options
        )
        shape = tuple(envs.single_observation_space.shape)
        if args.symmetries and tablegym.envs.plugin(args.game).board_symmetries != 8:
            envs.close()
            raise ValueError(
                f"--symmetries needs rules that the square's 8 symmetries keep (its record's "
                f"board_symmetries: trap); {args.game!r} has none"
            )
        if args.eval_every:  # the evaluation's opponent, built now rather than refused an evaluation later
            gymnasium.make_vec(env_id, num_envs=1, opponent=args.eval_opponent, **args.game_options).close()
    except (ValueError, TypeError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    inputs = int(np.prod(envs.single_observation_space.shape))
    started = replay_run(args, game, lambda: NegamaxLearner(args, game, inputs), "negamax dqn", prog, envs)
    if started is None:
        return 2
    learner, run = started
    with run:
        net, target, optimizer = learner.net, learner.target, learner.optimizer
        rng = np.random.default_rng([args.seed, run.iteration])
        replay = ReplayBuffer(args.buffer_size, inputs, dtype=np.float32)  # (observation, target y) pairs
        boards = envs.unwrapped
        obs, info = envs.reset(seed=args.seed + run.iteration)
        longest = game.spec.max_game_length + 1
        game_obs = np.zeros((args.num_envs, longest if args.lam else 0, inputs), dtype=np.float32)
        game_y = np.zeros((args.num_envs, longest if args.lam else 0), dtype=np.float32)
        game_mover = np.zeros((args.num_envs, longest if args.lam else 0), dtype=np.int64)
        game_length = np.zeros(args.num_envs, dtype=np.int64)
        losses, values = [], []
        while run.next_iteration():
            # 1. search every board's children; the target of each position is its best child
            q, legal = board_q(target, boards, args.plies)
            live = legal.any(1)  # a board that ended on the last step restarts now: no position
            y = q.max(1).values.numpy()
            if args.lam == 0:
                replay.add(obs.reshape(len(obs), -1)[live], y[live])
            else:  # kept until the game ends, with each position's mover
                t = game_length[live]
                game_obs[live, t], game_y[live, t] = obs.reshape(len(obs), -1)[live], y[live]
                game_mover[live, t] = info["seat"][live]
                game_length[live] += 1
            # 2. one move on every board, epsilon-greedy over the same Q (one search a step; the
            # target network is at most --target-every iterations behind)
            action = act(q, legal, args.epsilon, rng)
            obs, reward, term, trunc, info = envs.step(action)
            run.played(int((term | trunc).sum()))
            # 2b. lambda-returns of the games that ended, backwards from the mover's result of the
            # last move; a step back is the other player's view unless the same player moved twice
            for i in np.flatnonzero((term | trunc) & (game_length > 0)):
                n = game_length[i]
                same = game_mover[i, 1:n] == game_mover[i, : n - 1]
                replay.add(game_obs[i, :n], lambda_returns(game_y[i, :n], reward[i] if term[i] else 0.0, args.lam, same))
                game_length[i] = 0
            # 3. learn: V(s) towards y(s)
            if replay.n >= max(args.learning_starts, args.batch_size):
                for _ in range(args.updates):
                    b_obs, b_y = map(torch.from_numpy, replay.sample(rng, args.batch_size))
                    if args.symmetries:
                        b_obs = random_symmetries(b_obs, shape, rng)
                    b_obs, b_y = b_obs.to(learner.device), b_y.to(learner.device)
                    v = net(b_obs).squeeze(1)
                    loss = 0.5 * ((v - b_y) ** 2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    losses.append(float(loss.detach()))
                    values.append(float(v.detach().abs().mean()))
                if run.due(args.target_every):
                    target.load_state_dict(net.state_dict())
            if run.due(args.log_every):
                run.log(
                    {"charts/steps_per_s": per_second(run.iteration * args.num_envs, run.seconds())}
                    | ({"losses/mse": float(np.mean(losses)), "losses/abs_value": float(np.mean(values))} if losses else {})
                )
                losses.clear()
                values.clear()
            # 4. evaluate, save
            if run.due(args.eval_every):
                score = evaluate(
                    net,
                    env_id,
                    args.eval_opponent,
                    args.eval_games,
                    10_000 + run.iteration,
                    args.game_options,
                    max(args.opening_plies, 2),
                )
                run.log({"eval/return_vs_opponent": score})
                run.bar.write(
                    f"iteration {run.iteration}: one-ply greedy vs {args.eval_opponent} {score:+.3f} ({args.eval_games} games)"
                )
            if run.due(args.save_every):
                run.save()
        return finish(run, envs)


if __name__ == "__main__":
    sys.exit(main())
