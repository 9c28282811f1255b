#!/bin/sh
# tablegym's searches (hand-made evaluators) against OpenSpiel's Python MCTS at equal time a move,
# two workers; games alternate seats; a rerun continues each run from its journal.
set -e
cd "$(dirname "$0")/../.."
T=.venv/bin/tablegym
R=results/openspiel
$T eval trilobite "alphabeta:eval=advanced,time=0.1" "openspiel-mcts:time=0.1" --games 200 \
  --workers 2 --no-progress --journal $R/trilobite.jsonl --csv $R/trilobite.csv | tee $R/trilobite.md
$T eval sim "alphabeta:eval=safe-moves,time=0.1" "openspiel-mcts:time=0.1" --games 200 \
  --workers 2 --no-progress --journal $R/sim.jsonl --csv $R/sim.csv | tee $R/sim.md
# Trap: the expectiminimax's time is a turn's (step + throw), the MCTS's a decision's: 0.05 s each
$T eval trap "search:eval=composite,time=0.1" "openspiel-mcts:time=0.05" --games 200 \
  --workers 2 --no-progress --journal $R/trap.jsonl --csv $R/trap.csv | tee $R/trap.md
$T eval trap "search:eval=composite,time=0.1" "openspiel-mcts:time=0.05,eval=composite,scale=20" --games 200 \
  --workers 2 --no-progress --journal $R/trap_eval.jsonl --csv $R/trap_eval.csv | tee $R/trap_eval.md
$T eval trilobite "alphabeta:eval=learned,time=0.1" "openspiel-mcts:time=0.1" --games 200 --workers 2 --no-progress \
  --journal $R/trilobite_learned.jsonl --csv $R/trilobite_learned.csv | tee $R/trilobite_learned.md
$T eval trap "search:eval=learned,time=0.1" "openspiel-mcts:time=0.05" --games 200 --workers 2 --no-progress \
  --journal $R/trap_learned.jsonl --csv $R/trap_learned.csv | tee $R/trap_learned.md
$T eval sim "alphabeta:eval=safe-moves,time=1" "openspiel-mcts:time=1" --games 40 --workers 2 --no-progress \
  --journal $R/sim_1s.jsonl --csv $R/sim_1s.csv | tee $R/sim_1s.md
