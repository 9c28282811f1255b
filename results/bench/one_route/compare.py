"""The one-route bench rounds in this folder (searchers declared once, shared search table,
trainers on training.Run), summarised by ../game_records/compare.py (same method).

Run from the repository root: `python results/bench/one_route/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "One route from a spec to a search: tablegym bench before (80c9653) and after")
