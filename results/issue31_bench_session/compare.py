"""This session's issue-31 bench rounds, summarised by issue 30's compare.py (same method).

Run from the repository root: `python results/issue31_bench_session/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "issue30_bench_final" / "compare.py"))
compare["main"](HERE, "Issue 31 (this session): tablegym bench before (4a84afa) and after (c1b5fe3)")
