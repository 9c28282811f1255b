"""The bench rounds in this folder (Friday's rules core calling ``_draw`` with a typed destination,
so numba compiles it and ``_place`` once instead of once per literal), summarised by
../game_records/compare.py (same method).

Run from the repository root: `python results/bench/compile_once/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "Friday's draw compiled once: tablegym bench friday before (86bd756) and after")
