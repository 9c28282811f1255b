#!/bin/bash
# Interleaved `tablegym bench` rounds: a checkout of BASE against this one, each bench once per
# round on each side, alternating which goes first; outputs OUT/<bench>.<before|after>.<round>.txt.
#   git worktree add /tmp/base REV
#   (cd /tmp/base/tablegym && for d in envs search models training experiments interop; do ln -sfn ../$d $d; done)
#   mkdir -p /tmp/rounds && bash results/bench/rounds.sh /tmp/rounds /tmp/base 2
# (the subpackages are tablegym.* only through pyproject's package-dir, so the links make the checkout
# importable from PYTHONPATH; python -P keeps the current folder off sys.path, so the "after" side is
# the installed checkout); BENCHES="search trap" limits the benches; a 4th argument numbers the first round.
OUT=$1
BASEP=$2
R=${3:-2}
FIRST=${4:-1}  # the number of the first round (more rounds after earlier ones)
for r in $(seq $FIRST $((FIRST + R - 1))); do
  for b in ${BENCHES:-search sim-solve envs trap threes friday starship}; do
    if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for v in $order; do
      if [ $v = before ]; then P=$BASEP; else P=; fi
      PYTHONPATH=$P .venv/bin/python -P -c "import sys; from tablegym.experiments.cli import main; sys.exit(main())" \
        bench $b > $OUT/$b.$v.$r.txt 2>&1
    done
  done
done
