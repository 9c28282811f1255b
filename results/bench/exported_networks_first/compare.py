"""The exported-networks bench rounds in this folder,
summarised by ../game_records_refactor/compare.py (same method).

Run from the repository root: `python results/bench/exported_networks_first/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records_refactor" / "compare.py"))
compare["main"](HERE, "Compiled exported networks, first step: tablegym bench before (6da343b) and after (70c4798)")
