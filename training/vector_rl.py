"""What the trainers over the compiled vector envs share besides their arguments
(training/args.py): the env id and the game a run trains, the boards of a run (self-play and
fixed opponents in one batch), the training boards' options, and the evaluation of a policy over
a vector env (``episode_returns``, ``mean_return``; ``evaluate`` for an actor-critic's greedy
policy, training/ppo.py's and training/imitate.py's network), the start of a replay trainer's run
(``replay_run``) and the end of a run (``finish``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np
import torch

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import make_game, plugin
from tablegym.envs.core import Game
from tablegym.models.policy import MASKED, ActorCritic
from tablegym.training.runs import Run, module_device


def replay_run(
    args: Any, game: Game, learner_of: Callable[[], Any], name: str, prog: str, envs: Any = None
) -> tuple[Any, Run] | None:
    """``learner_of()`` and the ``Run`` that trains it an iteration at a time (every board
    stepped once) within ``--total-steps``; None, ``envs`` closed and the reason printed after
    ``prog``, when the run directory holds a checkpoint of another network."""
    try:
        learner = learner_of()
        iterations = max(1, args.total_steps // args.num_envs)
        budget = f"--total-steps {args.total_steps}"
        run = Run(args, game, learner, iterations=iterations, desc=f"{name} {args.game}", budget=budget, unit="iteration")
    except ValueError as err:
        if envs is not None:
            envs.close()
        print(f"{prog}: error: {err}", file=sys.stderr)
        return None
    return learner, run


def strict(env_id: str) -> dict:
    """How the trainers make their boards: they mask every action, so an illegal one is a bug to
    stop at, where the id's own default ends the episode with a penalty (for unmasked learners);
    ids whose every action is legal (Starship) take no such option."""
    return {"illegal_action": "raise"} if "illegal_action" in gymnasium.spec(env_id).kwargs else {}


def env_id_of(game: str) -> str:
    """The game's first Gymnasium id with a compiled vector env (ValueError naming those that have one)."""
    with_vector = [p.name for p in tablegym.envs.plugins() if p.vector]
    try:
        record = plugin(game)
    except ValueError:
        raise ValueError(
            f"unknown game {game!r}; the vector-env trainers (--algo ppo, dqn) train {', '.join(with_vector)}"
        ) from None
    for env_id in record.gym:
        if env_id in record.vector:
            return env_id
    raise ValueError(
        f"game {game!r} has no compiled vector env; the vector-env trainers (--algo ppo, dqn) train {', '.join(with_vector)}"
    )


def trained_game(name: str, options: dict, out: str | None) -> Game | SimpleNamespace:
    """The ``Game`` a run trains on; for a generator that has none (Starship: an env, no game
    tree to search) a stand-in with its name and rule options, all that a checkpoint records of
    it. Such a run writes no ``--out``: its critic would play in no searcher (ValueError)."""
    if plugin(name).game:
        return make_game(name, **options)
    if out:
        raise ValueError(
            f"--out writes a critic for the searchers, and {name} has none; leave --out out "
            f"(the run's checkpoint.pt holds the policy)"
        )
    return SimpleNamespace(spec=SimpleNamespace(name=name, options=dict(options)))


class Boards:
    """The boards of a run as one batch, in this order: ``selfplay`` boards where the policy plays
    both seats (``opponent=None``), ``pool`` boards where a trainer plays one seat and past
    snapshots the other (also ``opponent=None``: the trainer picks each mover's action), and
    ``fixed`` boards against ``opponent`` (random, a reference player or a compiled search, seats
    alternating; several opponents share the fixed boards out, the first ones taking one more
    where they do not divide: ``opponent_of`` names each board's); the same calls as a vector env,
    over the concatenation. On a fixed board the agent keeps its seat, so ``info["seat"]`` stays
    put there and the negamax sign is +1."""

    def __init__(
        self, env_id: str, selfplay: int, fixed: int, options: dict, *, pool: int = 0, opponent: str | Sequence[str] = "random"
    ) -> None:
        two_player = env_id in tablegym.envs.ENV_IDS
        self.parts = []
        for n in (selfplay, pool):
            if n:
                self.parts.append(
                    gymnasium.make_vec(
                        env_id, num_envs=n, **strict(env_id), **options, **({"opponent": None} if two_player else {})
                    )
                )
        opponents = [opponent] if isinstance(opponent, str) else list(opponent)
        self.opponent_of: list[str | None] = [None] * (selfplay + pool)
        for k, name in enumerate(opponents):
            n = fixed // len(opponents) + (k < fixed % len(opponents))
            if n:
                self.parts.append(
                    gymnasium.make_vec(env_id, num_envs=n, opponent=name, agent_seat="alternate", **strict(env_id), **options)
                )
                self.opponent_of += [name] * n
        first = self.parts[0]
        self.inputs = int(np.prod(first.single_observation_space.shape))
        self.actions = int(first.single_action_space.n)
        self.sizes = [p.num_envs for p in self.parts]

    def _join(self, outs: list[tuple]) -> tuple:
        obs = np.concatenate([o[0].reshape(len(o[0]), -1) for o in outs])
        infos = [o[-1] for o in outs]
        seat = np.concatenate([i.get("seat", np.zeros(n, dtype=np.int64)) for i, n in zip(infos, self.sizes)])
        return obs, [np.concatenate(parts) for parts in zip(*(o[1:-1] for o in outs))], {"seat": seat}

    def reset(self, seed: int) -> tuple[np.ndarray, dict]:
        outs = [p.reset(seed=seed + 100_003 * k) for k, p in enumerate(self.parts)]
        obs, _, info = self._join(outs)
        return obs, info

    def step(self, actions: np.ndarray) -> tuple:
        outs, start = [], 0
        for p, n in zip(self.parts, self.sizes):
            outs.append(p.step(actions[start : start + n]))
            start += n
        obs, (reward, term, trunc), info = self._join(outs)
        return obs, reward, term, trunc, info

    def action_masks(self) -> np.ndarray:
        return np.concatenate([p.unwrapped.action_masks() for p in self.parts])

    def close(self) -> None:
        for p in self.parts:
            p.close()


def training_options(args, env_id: str) -> dict:
    """The training boards' keyword arguments: the rule options, and ``--reward`` where given
    (ValueError naming it where the env refuses it)."""
    if not args.reward:
        return dict(args.game_options)
    options = {**args.game_options, "reward": args.reward}
    try:
        gymnasium.make_vec(env_id, num_envs=1, **options).close()
    except (ValueError, TypeError) as err:
        raise ValueError(f"--reward {args.reward!r}: {err}") from None
    return options


def episode_returns(
    choose: Callable[[np.ndarray, np.ndarray], np.ndarray], env_id: str, games: int, seed: int, options: dict | None = None
) -> np.ndarray:
    """The return of each of ``games`` games of the player ``choose(observations, masks) ->
    actions`` (a batch of flattened observations and legal masks): against the env's opponent
    (a random player unless ``options`` name another), seats alternating from board to board, for
    a two-player game (+1 won, -1 lost, 0 drawn); the score for a single-player game."""
    two_player = env_id in tablegym.envs.ENV_IDS
    n = min(games, 256)
    envs = gymnasium.make_vec(
        env_id, num_envs=n, **strict(env_id), **(options or {}), **({"agent_seat": "alternate"} if two_player else {})
    )
    obs, _ = envs.reset(seed=seed)
    done: list[float] = []
    returns = np.zeros(n)
    while len(done) < games:
        obs, rewards, terms, truncs, _ = envs.step(choose(obs.reshape(n, -1), envs.unwrapped.action_masks()))
        returns += rewards
        ended = terms | truncs
        done.extend(returns[np.flatnonzero(ended)[: games - len(done)]])
        returns[ended] = 0.0
    envs.close()
    return np.array(done)


def mean_return(
    choose: Callable[[np.ndarray, np.ndarray], np.ndarray], env_id: str, games: int, seed: int, options: dict | None = None
) -> float:
    """The mean of ``episode_returns``: against a random player, half of the games in each seat,
    for a two-player game (a score in [-1, 1]); the mean score for a single-player game. The
    vector-env trainers evaluate through here."""
    return float(episode_returns(choose, env_id, games, seed, options).mean())


def evaluate_and_save(run: Run, args: Any, evaluate: Callable[[int, int], float], two_player: bool, unit: str) -> None:
    """The greedy policy's evaluation every ``--eval-every`` iterations (``evaluate(games, seed)``: its
    return against a random player, or a one-player game's mean return), logged and written
    under the bar, and a checkpoint every ``--save-every``: the end of PPO's and DQN's iteration."""
    if run.due(args.eval_every):
        score = evaluate(args.eval_games, 10_000 + run.iteration)
        run.log({"eval/return_vs_random": score})
        against = "return vs random" if two_player else "mean return"
        run.bar.write(f"{unit} {run.iteration}: greedy policy {against} {score:+.3f} ({args.eval_games} games)")
    if run.due(args.save_every):
        run.save()


def finish(run: Run, envs: Any) -> int:
    """The end of a vector trainer's run: the boards closed, then the run finished (its last
    checkpoint, ``--out``); the command's exit status."""
    envs.close()
    run.finish()
    return 0


def greedy_policy(net: ActorCritic) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The actor's greedy masked choice for a batch: ``choose(observations, masks) -> actions``."""

    device = module_device(net)

    def greedy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net.actor(torch.as_tensor(obs, dtype=torch.float32, device=device))
            return logits.masked_fill(~torch.as_tensor(masks, device=device), MASKED).argmax(-1).cpu().numpy()

    return greedy


def evaluate(net: ActorCritic, env_id: str, games: int, seed: int, options: dict | None = None) -> float:
    """``mean_return`` of the greedy masked policy."""
    return mean_return(greedy_policy(net), env_id, games, seed, options)
