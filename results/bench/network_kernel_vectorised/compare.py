"""The vectorised-kernel bench rounds in this folder,
summarised by ../game_records/compare.py (same method).

Run from the repository root: `python results/bench/network_kernel_vectorised/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "Vectorised network kernel and value cache: tablegym bench before (4a84afa) and after (c1b5fe3)")
