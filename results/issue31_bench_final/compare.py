"""The final issue-31 bench rounds in this folder, summarised by issue 30's compare.py (same method).

Run from the repository root: `python results/issue31_bench_final/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "issue30_bench_final" / "compare.py"))
compare["main"](HERE, "Issue 31: tablegym bench before (6da343b) and after (f2beca6)")
