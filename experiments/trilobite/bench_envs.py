"""Env step throughput, side by side with PettingZoo's connect_four_v3 in one process.

Three comparisons, each as random moves per second (every move counted, both players'):

(a) public vs public, both from PettingZoo's registry: ``pettingzoo.make("aec",
    "tablegym/Trilobite-v0")`` (8 x 7, four in a row, in PettingZoo's OrderEnforcingWrapper) vs
    ``pettingzoo.make("aec", "classic/connect_four_v3")`` (7 x 6; this is
    ``connect_four_v3.env()``, with its three standard wrappers);
(b) raw vs raw: our env's ``.unwrapped`` (the ``GameAECEnv``) vs ``connect_four_v3.raw_env()``;
(c) ``gymnasium.make("tablegym/Trilobite-v0")`` against its built-in random opponent.

(a) and (b) run the SAME loop: ``last()``, pick a uniformly random legal action from the
observation's action mask, ``step()``; reset when the game is over (resets are timed too).
Rates are moves per second of this process's CPU time (``time.process_time``), so other jobs
on a shared machine skew them less; measurements alternate between the envs in short slices
and report medians over the slices, so what noise is left hits both sides alike.

The loop is kept lean on purpose (``mask.nonzero()`` and the stdlib's ``random``, about 0.7 us
a move) so that it measures the envs rather than itself: every microsecond the loop spends is
added to both sides and pulls the ratio towards 1. With ``np.flatnonzero`` plus numpy's
``rng.choice`` (about 5 us a move) the same envs measured 3.7x (a) and 3.1x (b).
(c) is not like for like: the opponent's moves there need no observation.

Run: ``python -m tablegym.experiments.trilobite.bench_envs [seconds]``.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def aec_random_moves(env: Any, seconds: float, seed: int = 0) -> float:
    """Random legal moves per second through the AEC API (``last`` + mask + ``step``)."""
    rng = random.Random(seed).random
    env.reset(seed=seed)
    moves = 0
    end = time.perf_counter() + seconds
    cpu = time.process_time()
    while True:
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            if time.perf_counter() >= end:
                break
            env.reset()
            continue
        legal = obs["action_mask"].nonzero()[0]
        env.step(int(legal[int(rng() * len(legal))]))
        moves += 1
    return moves / (time.process_time() - cpu)


def gym_random_moves(env: Any, seconds: float, seed: int = 0) -> float:
    """Random legal moves per second through the Gymnasium API, the opponent's moves counted too."""
    rng = random.Random(seed).random
    _, info = env.reset(seed=seed)
    moves = len(info["opponent_actions"])
    end = time.perf_counter() + seconds
    cpu = time.process_time()
    while True:
        legal = info["action_mask"].nonzero()[0]
        _, _, terminated, truncated, info = env.step(int(legal[int(rng() * len(legal))]))
        moves += 1 + len(info["opponent_actions"])
        if terminated or truncated:
            if time.perf_counter() >= end:
                break
            _, info = env.reset()
            moves += len(info["opponent_actions"])
    return moves / (time.process_time() - cpu)


def _median_rates(
    contestants: dict[str, tuple[Callable[[], Any], Callable[..., float]]], seconds: float, repeats: int
) -> dict[str, float]:
    """Median rate of each contestant, measured in alternation, ``seconds`` each in total."""
    envs = {name: make() for name, (make, _) in contestants.items()}
    for name, (_, loop) in contestants.items():  # warm-up: numba dispatch, first-call imports
        loop(envs[name], 0.05)
    rates: dict[str, list[float]] = {name: [] for name in contestants}
    for r in range(repeats):
        for name, (_, loop) in contestants.items():
            rates[name].append(loop(envs[name], seconds / repeats, seed=r))
    return {name: statistics.median(v) for name, v in rates.items()}


def bench_env_steps(seconds: float = 3.0, *, repeats: int = 9) -> dict[str, float]:
    """Moves per second of tablegym's Trilobite envs and of connect_four_v3, and their ratios.

    Keys: ``ours_wrapped``, ``c4_wrapped``, ``ratio_wrapped`` (a); ``ours_raw``, ``c4_raw``,
    ``ratio_raw`` (b); ``ours_gym`` and ``ratio_gym`` (c, against ``c4_wrapped``).
    ``seconds`` is the measuring time per env, split over ``repeats``.
    """
    import gymnasium
    import pettingzoo
    from pettingzoo.classic.connect_four import connect_four  # connect_four_v3 without its deprecation warning

    import tablegym.envs  # noqa: F401 -- registers the ids

    def ours() -> Any:
        return pettingzoo.make("aec", "tablegym/Trilobite-v0")

    def c4() -> Any:
        return pettingzoo.make("aec", "classic/connect_four_v3")

    wrapped = _median_rates({"ours": (ours, aec_random_moves), "c4": (c4, aec_random_moves)}, seconds, repeats)
    raw = _median_rates(
        {"ours": (lambda: ours().unwrapped, aec_random_moves), "c4": (connect_four.raw_env, aec_random_moves)}, seconds, repeats
    )
    gym = _median_rates({"ours": (lambda: gymnasium.make("tablegym/Trilobite-v0"), gym_random_moves)}, seconds, repeats)
    return {
        "ours_wrapped": wrapped["ours"],
        "c4_wrapped": wrapped["c4"],
        "ratio_wrapped": wrapped["ours"] / wrapped["c4"],
        "ours_raw": raw["ours"],
        "c4_raw": raw["c4"],
        "ratio_raw": raw["ours"] / raw["c4"],
        "ours_gym": gym["ours"],
        "ratio_gym": gym["ours"] / wrapped["c4"],
    }


def format_table(result: dict[str, float]) -> str:
    """The result of ``bench_env_steps`` as a small text table."""
    rows = [
        (
            "(a) AEC, public env",
            'make("tablegym/Trilobite-v0")',
            result["ours_wrapped"],
            "connect_four_v3.env()",
            result["c4_wrapped"],
            result["ratio_wrapped"],
        ),
        (
            "(b) AEC, raw env",
            ".unwrapped",
            result["ours_raw"],
            "connect_four_v3.raw_env()",
            result["c4_raw"],
            result["ratio_raw"],
        ),
        (
            "(c) Gymnasium vs random",
            'make("tablegym/Trilobite-v0")',
            result["ours_gym"],
            "(a) connect_four_v3.env()",
            result["c4_wrapped"],
            result["ratio_gym"],
        ),
    ]
    lines = [f"{'comparison':<25} {'tablegym':<30} {'moves/s':>9}   {'peer':<26} {'moves/s':>9}  {'ratio':>6}"]
    for name, ours, ours_rate, peer, peer_rate, ratio in rows:
        lines.append(f"{name:<25} {ours:<30} {ours_rate:>9,.0f}   {peer:<26} {peer_rate:>9,.0f}  {ratio:>5.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    seconds = float(args[0]) if args else 3.0
    print(format_table(bench_env_steps(seconds)))


if __name__ == "__main__":
    main()
