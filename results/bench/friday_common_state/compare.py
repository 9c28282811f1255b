"""The bench rounds in this folder (Friday on the common compact state, generic best-first and
Monte-Carlo searchers, one flat observation kernel per game), summarised by
../game_records/compare.py (same method).

Run from the repository root: `python results/bench/friday_common_state/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "Friday on the common state: tablegym bench before (32c7d43) and after")
