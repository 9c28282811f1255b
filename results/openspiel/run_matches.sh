#!/bin/sh
# tablegym's searches (hand-made evaluators) against OpenSpiel's Python MCTS at equal time a move,
# one worker (one core); each run stops after its minutes (--stop-after), games alternate seats.
set -e
cd "$(dirname "$0")/../.."
T=.venv/bin/tablegym
R=results/openspiel
$T eval trilobite "alphabeta:eval=advanced,time=0.1" "openspiel-mcts:time=0.1" --games 200 --stop-after 5 \
  --workers 1 --no-progress --journal $R/trilobite.jsonl --csv $R/trilobite.csv | tee $R/trilobite.md
$T eval sim "alphabeta:eval=safe-moves,time=0.1" "openspiel-mcts:time=0.1" --games 200 --stop-after 3 \
  --workers 1 --no-progress --journal $R/sim.jsonl --csv $R/sim.csv | tee $R/sim.md
# Trap: the expectiminimax's time is a turn's (step + throw), the MCTS's a decision's: 0.05 s each
$T eval trap "search:eval=composite,time=0.1" "openspiel-mcts:time=0.05" --games 200 --stop-after 5 \
  --workers 1 --no-progress --journal $R/trap.jsonl --csv $R/trap.csv | tee $R/trap.md
$T eval trap "search:eval=composite,time=0.1" "openspiel-mcts:time=0.05,eval=composite,scale=20" --games 200 \
  --stop-after 5 --workers 1 --no-progress --journal $R/trap_eval.jsonl --csv $R/trap_eval.csv | tee $R/trap_eval.md
