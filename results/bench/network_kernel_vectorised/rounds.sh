#!/bin/bash
# Interleaved `tablegym bench` rounds and paired Trilobite ratios: a checkout of BASE against this one.
#   git worktree add /tmp/base 4a84afa && mkdir -p /tmp/basep && ln -sfn /tmp/base /tmp/basep/tablegym
#   bash results/bench/network_kernel_vectorised/rounds.sh /tmp/basep 2
# (the package is the repository root, so PYTHONPATH names a folder holding a `tablegym` link to it)
BASEP=$1
R=${2:-2}
OUT=results/bench/network_kernel_vectorised
bash results/bench/rounds.sh $OUT $BASEP $R  # every bench of every game, interleaved
for r in $(seq 1 3); do
  for v in base now; do
    if [ $v = base ]; then P=$BASEP; else P=; fi
    echo -n "$v $r: "; PYTHONPATH=$P .venv/bin/python results/bench/network_kernel_branch_free/ratio.py --repeats 10 | tail -1
  done
done
