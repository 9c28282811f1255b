"""Every `tablegym bench` of the commit before the one-route work (80c9653) against main at the end
of it, in interleaved rounds, summarised by ../game_records/compare.py (same method).

Run from the repository root: `python results/bench/one_route_final/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "One route, whole change: tablegym bench before (80c9653) and after (main, 2026-11-28)")
