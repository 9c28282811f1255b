"""The exported-networks bench rounds in this folder,
summarised by ../game_records/compare.py (same method).

Run from the repository root: `python results/bench/exported_networks/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "Compiled exported networks: tablegym bench before (6da343b) and after (f2beca6)")
