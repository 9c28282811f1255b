"""Games/s of the same match on the process and Ray backends, 1 and 2 workers.

    python -m tablegym.experiments.ray_scaling

(its tables are the first part of results/ray_scaling/README.md). Needs the ``distributed`` extra
(Ray). A Ray instance is started once (2 CPUs) and reused, as a driver on a cluster would; its
start-up time is reported on its own. The tiny match (random against random, Trap 5x5) measures the
per-game overhead of each backend: its games take about a millisecond, so nearly all of its
time per game is the backend's.
"""

import argparse
import time

from tablegym.experiments.match import play_match

MATCHES = {
    "Trilobite, alphabeta depth 4 advanced vs depth 3 advanced, 40 games": dict(
        game_name="trilobite",
        spec_a="alphabeta:depth=4,eval=advanced",
        spec_b="alphabeta:depth=3,eval=advanced",
        games=40,
        game_options=None,
    ),
    "Trap 5x5, random vs random, 200 games (overhead)": dict(
        game_name="trap", spec_a="random", spec_b="random", games=200, game_options={"n": 5}
    ),
}


def timed(backend: str, workers: int, match: dict) -> float:
    start = time.perf_counter()
    result = play_match(workers=workers, backend=backend, progress=False, seed=0, **match)
    assert result.games == match["games"]
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"Ray start-up (local, 2 CPUs): {time.perf_counter() - start:.2f} s\n")
    for name, match in MATCHES.items():
        for backend in ("process", "ray"):  # warm: imports, numba caches, Ray workers
            timed(backend, 2, dict(match, games=4))
        print(f"### {name}\n")
        print("| backend | workers | seconds | games/s | ratio to process | overhead ms/game vs process |")
        print("|---|---|---|---|---|---|")
        for workers in (1, 2):
            secs = {b: min(timed(b, workers, match) for _ in range(2)) for b in ("process", "ray")}
            for backend in ("process", "ray"):
                s = secs[backend]
                extra = 1000 * (s - secs["process"]) * workers / match["games"]
                print(f"| {backend} | {workers} | {s:.2f} | {match['games'] / s:.1f} | {secs['process'] / s:.2f} | {extra:.2f} |")
        print()
    ray.shutdown()


if __name__ == "__main__":
    main()
