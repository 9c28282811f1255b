"""The issue-31 bench rounds of the branch-free network kernel in this folder, summarised by issue 30's
compare.py (same method). Before: fdc3861 (the kernel skipping zero activations row by row); after:
b9fa7e6 (the non-zero activations listed first). Benches whose code paths use the compiled networks:
search (Trilobite alpha-beta with the learned network), trap, friday.

Run from the repository root: `python results/issue31_bench_kernel/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "issue30_bench_final" / "compare.py"))
compare["main"](HERE, "Issue 31: the network kernel before (fdc3861) and after (b9fa7e6)")
