"""``vector_ab.py`` for the Starship vector envs, by class name, narrow observations (as the
tables of results/bench/vec/table.md were measured):
`python results/bench/vec/starship_ab.py REV [StarshipVectorEnv|StarshipTargetsVectorEnv] [BOARDS] [ROUNDS]`."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from vector_ab import compare  # noqa: E402

IDS = {"StarshipVectorEnv": "tablegym/Starship-v0", "StarshipTargetsVectorEnv": "tablegym/StarshipTargets-v0"}

if __name__ == "__main__":
    cls = sys.argv[2] if len(sys.argv) > 2 else "StarshipVectorEnv"
    compare(sys.argv[1], IDS[cls], int(sys.argv[3]) if len(sys.argv) > 3 else 1024,
            int(sys.argv[4]) if len(sys.argv) > 4 else 16, representation="narrow")
