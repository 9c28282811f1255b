"""The bench rounds of the branch-free network kernel in this folder, summarised by
../game_records/compare.py (same method). Before: fdc3861 (the kernel skipping zero activations row by row); after:
b9fa7e6 (the non-zero activations listed first). Benches whose code paths use the compiled networks:
search (Trilobite alpha-beta with the learned network), trap, friday.

Run from the repository root: `python results/bench/network_kernel_branch_free/compare.py`.
"""

import runpy
from pathlib import Path

HERE = Path(__file__).parent
compare = runpy.run_path(str(HERE.parent / "game_records" / "compare.py"))
compare["main"](HERE, "Branch-free network kernel: before (fdc3861) and after (b9fa7e6)")
