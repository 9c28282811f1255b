# Two entry points for a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test lint typecheck wheel-smoke docs bench results trilobite-ppo threes-dqn sim-regress threes-results threes-learned threes-checkpoint threes-large checkpoints trap-results trap-round-robin trap-round-robin-1s trap-checkpoint trap-learned friday-results friday-mc friday-sb3 friday-checkpoint friday-learned friday-mc-checkpoint friday-mc-learned starship-results starship-rl starship-learned starship-checkpoint starship-targets starship-audit starship-imitate starship-search starship-search-empty starship-controls clean

# --no-compile: the bytecode of what is imported is written on first import (compiling all of
# torch and ray at install time took 40 of the 67 seconds). That needs Python allowed to write
# it: with PYTHONDONTWRITEBYTECODE set (as on CI machines) every test's subprocess and Ray worker
# compiled torch's sources again, 5 s each, 230 s of the test run.
unexport PYTHONDONTWRITEBYTECODE
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e ".[dev,rl,distributed,openspiel]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) -m tablegym.experiments.demo

test: install
	$(PY) tests/warm_caches.py  # each game's numba kernels compiled once, two tasks at a time (a fresh clone has none)
	$(PY) -m pytest -q -n 2 --dist loadscope  # two workers (pytest-xdist); a module stays on one worker, so its shared fixtures (a Ray instance, trained models) are built once

# ruff over the package, the tests and the scripts ([tool.ruff] in pyproject.toml), then mypy over the
# public API ([tool.mypy]); both come with the dev extra, pinned in constraints.txt.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) --no-print-directory typecheck

# mypy reads the package as tablegym.*, which envs/, search/, ... are only through pyproject.toml's
# package-dir (and the editable install's import hook, which mypy does not follow): a tree of links
# in build/typecheck/tablegym/, laid out afresh each time, stands in for the installed package.
TYPECHECK_TREE := build/typecheck/tablegym
typecheck: install
	rm -rf $(TYPECHECK_TREE) && mkdir -p $(TYPECHECK_TREE)
	for f in tablegym/*; do if [ -f $$f ] && [ ! -L $$f ]; then ln -s ../../../$$f $(TYPECHECK_TREE)/; fi; done  # the top-level package's files
	for d in envs search models training experiments interop; do ln -s ../../../$$d $(TYPECHECK_TREE)/$$d; done
	$(VENV)/bin/mypy

# The wheel a user's pip installs: built (sdist, then the wheel from it), checked to hold every tracked
# file of the package's folders, installed into a new venv outside the checkout with -c constraints.txt
# and used from outside it: an env, the shipped network in a search, `tablegym --version` and
# `tablegym eval` (.ci/wheel_smoke.sh). About 4 minutes on 2 cores: building 0.5, installing torch and
# the rest 1, compiling and running what the smoke test calls 1.5, removing the venv the rest.
wheel-smoke: install
	bash .ci/wheel_smoke.sh $(PY)

# The documentation site (docs/, mkdocs.yml) built into site/. --strict: a warning (a broken link, a
# docstring mkdocstrings cannot read) fails the build. The docs extra goes into the same venv, where
# mkdocstrings finds the package through its editable install. NO_MKDOCS_2_WARNING: mkdocs-material
# prints no banner about MkDocs 2.
DOCS_STAMP := $(VENV)/.docs-stamp
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

bench: install
	$(VENV)/bin/tablegym bench search
	$(VENV)/bin/tablegym bench sim-solve
	$(VENV)/bin/tablegym bench envs

clean:
	rm -rf $(VENV) runs site .pytest_cache .benchmarks __pycache__ .ruff_cache build/typecheck build/mypy_cache  # __pycache__: the compiled kernels (tablegym/kernel_cache.py)

# The README's result tables, exactly as published (minutes to tens of minutes on 2 cores).
TG := $(VENV)/bin/tablegym
results: install
	mkdir -p results/sim results/trilobite results/bench
	$(TG) solve sim | tee results/sim/solve.txt
	$(PY) -m tablegym.experiments.sim.agreement --eval learned | tee results/sim/agreement.txt
	$(PY) -m tablegym.experiments.sim.agreement --eval safe-moves | tee -a results/sim/agreement.txt
	$(TG) eval sim alphabeta:eval=learned,depth=1 expert medium easy dumb --games 200 --opening-plies 2 \
		--workers 2 --seed 0 --elo --no-progress --csv results/sim/round_robin.csv | tee results/sim/round_robin.md
	$(TG) eval trilobite alphabeta:eval=learned,depth=5 alphabeta:eval=advanced,depth=5 --games 400 \
		--opening-plies 2 --workers 2 --seed 0 --elo --no-progress --csv results/trilobite/learned_vs_advanced_d5.csv | tee results/trilobite/learned_vs_advanced_d5.md
	$(TG) eval trilobite alphabeta:eval=learned,depth=5 alphabeta:eval=advanced,depth=5 --games 400 \
		--opening-plies 4 --workers 2 --seed 1 --elo --no-progress --csv results/trilobite/learned_vs_advanced_d5_4ply.csv | tee results/trilobite/learned_vs_advanced_d5_4ply.md
	$(TG) eval trilobite alphabeta:eval=learned,depth=5 alphabeta:eval=advanced,depth=5 \
		alphabeta:eval=gap-tolerant,depth=5 alphabeta:eval=simplest,depth=5 alphabeta:eval=win-loss,depth=5 random \
		--games 100 --opening-plies 2 --workers 2 --seed 2 --elo --no-progress --csv results/trilobite/round_robin.csv \
		| tee results/trilobite/round_robin.md
	$(TG) bench search | tee results/bench/search.txt
	$(TG) bench sim-solve | tee results/bench/sim_solve.txt
	$(TG) bench envs | tee results/bench/envs.txt

# The shipped networks (outside CI: ~36 minutes on 2 cores). Wall-clock budgets, so a faster
# machine plays more games; the README gives the games and seconds of the shipped files.
checkpoints: install
	$(TG) train trilobite --minutes 30 --run-dir runs/trilobite-ship --eval-every 20 --eval-games 40 \
		--out models/checkpoints/trilobite.pt
	$(TG) train sim --minutes 6 --run-dir runs/sim-ship --depth 1 --epsilon 0.3 --lam 0 --games-per-iter 500 \
		--eval-every 10 --eval-games 20 --eval-depth 2 --eval-baseline safe-moves --out models/checkpoints/sim.pt
	$(MAKE) threes-checkpoint

# The shipped Threes n-tuple network: six 5-tuples, two stages, temporal coherence learning; 40 min
# on one process, 94 on two (Hogwild), then 90 on two with restart shaping (half the games from a
# position with a 1536 an earlier game reached), written in the compact form (int16 values,
# lzma-packed, entries below 20 left out: 3.4 MB). As shipped (2.83 M games); a rerun resumes
# runs/threes5-tc and trains on (each command's --minutes count that command only).
THREES5 := 0,1,2,3,4 4,5,6,7,8 0,1,2,4,5 4,5,6,8,9 h,0,1,2,3 h,4,5,6,7
THREES5_TRAIN := $(TG) train threes --run-dir runs/threes5-tc --tc --alpha 1.0 --lam 0.5 --stage-ranks 11 \
	--tuples $(THREES5) --save-minutes 10
threes-checkpoint: install
	$(THREES5_TRAIN) --workers 1 --minutes 40
	$(THREES5_TRAIN) --workers 2 --minutes 94
	$(THREES5_TRAIN) --workers 2 --minutes 90 --restart 0.5 --restart-rank 12 --out models/checkpoints/threes.pt --out-compact

# Q-learning in afterstate form over the same n-tuple network (results/rl/README.md): 55 minutes
# (the results' run: 8, then resumed to 55), then its greedy and depth-2 rows on the usual deals.
threes-dqn: install
	$(TG) train threes --algo dqn --afterstate --tc --alpha 1.0 --minutes 55 --eval-every 2000 \
		--run-dir runs/threes-asdqn-tc --out runs/threes-asdqn-tc/net.pt
	$(THREES) greedy:eval=learned:runs/threes-asdqn-tc/net.pt --games 1000 --workers 2 --seed 0
	$(THREES) expectimax:depth=2,eval=learned:runs/threes-asdqn-tc/net.pt --games 200 --workers 2 --seed 0

# The large Threes network behind the "6-tuple, TC" rows (not shipped: too big for the repository,
# see README): six 6-tuples, temporal coherence learning, about 90 minutes on two processes
# (a rerun resumes runs/threes-tc6 and trains 90 minutes more). Writes runs/threes-tc6/threes6.pt.
THREES6 := 0,1,2,3,4,5 4,5,6,7,8,9 0,1,2,4,5,6 4,5,6,8,9,10 h,0,1,2,3,4 h,4,5,6,7,8
threes-large: install
	$(TG) train threes --run-dir runs/threes-tc6 --tc --alpha 1.0 --lam 0.5 --stage-ranks 11 \
		--tuples $(THREES6) --workers 2 --minutes 90 --save-minutes 15 --out runs/threes-tc6/threes6.pt

# Threes tables (hours on 2 cores: Threesus plays ~1,000 moves a game at ~0.05 s a move).
# Finished games are appended to the JSONL files; rerunning resumes where a run stopped.
THREES := $(PY) -m tablegym.experiments.threes.evaluate
threes-results: install
	$(THREES) threesus --games 100 --workers 2 --seed 0 --out results/threes/threesus_om.jsonl
	for a in greedy expectimax:depth=1 expectimax:depth=2; do \
		$(THREES) $$a --games 100 --workers 2 --seed 0 --out results/threes/baselines.jsonl; done
	$(THREES) random --games 1000 --workers 2 --seed 0 --out results/threes/baselines.jsonl
	$(THREES) expectimax:depth=3 --games 100 --workers 2 --seed 0 --out results/threes/expectimax3.jsonl
	$(MAKE) threes-learned

# The learned network's rows and the generic deep-RL baselines (about an hour on 2 cores).
threes-learned: install
	for a in greedy:eval=learned expectimax:depth=2,eval=learned expectimax:depth=3,eval=learned; do \
		$(THREES) $$a --games 200 --workers 2 --seed 0 --out results/threes/learned.jsonl; done
	$(THREES) expectimax:depth=2 --games 200 --workers 2 --seed 0 --out results/threes/baselines.jsonl
	$(PY) -m tablegym.experiments.sb3_baseline threes --algo maskableppo --timesteps 500000 --seed 0 \
		--run-dir runs/threes-sb3-maskableppo --eval-games 200 --out results/threes/sb3.jsonl
	$(PY) -m tablegym.experiments.sb3_baseline threes --algo dqn --timesteps 500000 --seed 0 \
		--run-dir runs/threes-sb3-dqn --eval-games 200 --out results/threes/sb3.jsonl
	$(THREES) --report results/threes/*.jsonl | tee results/threes/table.md
	$(TG) bench threes | tee results/bench/threes.txt

# Trap: the best hand-made searcher against the course's opponents, the round robin, the speed
# bench (about 90 minutes on 2 cores; README "Trap"). One process per match, so a 1 s search
# has a core; the two Hard matches ran side by side.
trap-results: install
	$(TG) eval trap random easy medium medium:ties=random hard hard-sound --games 200 --seed 0 --elo \
		--no-progress --csv results/trap/course_opponents.csv | tee results/trap/course_opponents.md
	for h in hard hard-sound; do $(TG) eval trap "search:eval=composite,time=1" $$h --games 200 --workers 1 --seed 0 \
		--elo --csv results/trap/composite_vs_$$(echo $$h | tr - _).csv | tee results/trap/composite_vs_$$(echo $$h | tr - _).md; done
	for b in medium easy; do $(TG) eval trap "search:eval=composite,time=0.25" $$b --games 200 --workers 1 \
		--seed 0 --elo --csv results/trap/composite_vs_$$b.csv | tee results/trap/composite_vs_$$b.md; done
	$(MAKE) trap-round-robin
	$(TG) bench trap | tee results/bench/trap.txt

# The round robin of the course's opponents and every hand-made evaluator in the same search at
# one fixed depth (a depth budget does not depend on the machine's load; ~15 min on 2 cores).
TRAP_EVALS := is ais ais-course ocls flood cut composite
trap-round-robin: install
	$(TG) eval trap random easy medium hard hard-sound $(foreach e,$(TRAP_EVALS),"search:eval=$(e),depth=3") \
		--games 100 --workers 2 --seed 0 --elo --no-progress --journal results/trap/round_robin.jsonl \
		--csv results/trap/round_robin.csv | tee results/trap/round_robin.md

# The full round robin: 200 games a pairing, 1 s a turn for every searcher (about 27 CPU-hours).
# Every finished game is appended to the journal, so the same command resumes an interrupted run
# (TRAP_RR_MINUTES bounds one sitting; the tables then say "partial"). TRAP_RR_WORKERS=1 leaves a core free.
TRAP_RR_MINUTES ?= 100000
TRAP_RR_WORKERS ?= 2
trap-round-robin-1s: install
	$(TG) eval trap random easy medium:ties=random hard-sound $(foreach e,$(TRAP_EVALS),"search:eval=$(e),time=1") \
		--games 200 --workers $(TRAP_RR_WORKERS) --seed 0 --elo --no-progress --journal results/trap/round_robin_1s.jsonl \
		--stop-after $(TRAP_RR_MINUTES) --csv results/trap/round_robin_1s.csv | tee results/trap/round_robin_1s.md

# The shipped Trap network (outside CI): self-play TD-leaf through the expectiminimax, 2 processes.
trap-checkpoint: install
	$(TG) train trap --minutes 20 --workers 2 --games-per-iter 100 --eval-every 10 --eval-games 40 \
		--run-dir runs/trap-td --out models/checkpoints/trap.pt

# The learned Trap rows of the README (about 40 minutes on 2 cores).
TRAP_T := 0.1
trap-learned: install
	$(TG) eval trap "search:eval=learned,time=$(TRAP_T)" "search:eval=composite,time=$(TRAP_T)" --games 400 \
		--workers 2 --seed 0 --elo --csv results/trap/learned_vs_composite.csv | tee results/trap/learned_vs_composite.md
	for h in hard hard-sound; do $(TG) eval trap "search:eval=learned,time=$(TRAP_T)" $$h --games 200 --workers 1 \
		--seed 0 --csv results/trap/learned_vs_$$(echo $$h | tr - _).csv | tee results/trap/learned_vs_$$(echo $$h | tr - _).md; done
	$(TG) eval trap "search:eval=learned,depth=1" medium --games 400 --workers 1 --seed 0 \
		--csv results/trap/learned_policy_vs_medium.csv | tee results/trap/learned_policy_vs_medium.md
	$(PY) -m tablegym.experiments.sb3_baseline trap --timesteps 500000 --seed 0 --run-dir runs/trap-sb3-maskableppo \
		--eval-games 400 --opponent medium:ties=random --out results/trap/sb3.md
	$(PY) -m tablegym.experiments.sb3_baseline trap --algo dqn --timesteps 200000 --seed 0 --run-dir runs/trap-sb3-dqn \
		--eval-games 400 --opponent random,easy,medium:ties=random,hard-sound --eval-opponent medium:ties=random \
		--out results/trap/sb3_dqn.md
	$(TG) bench trap | tee results/bench/trap.txt

# The staged starship generator over 1,000 seeds: validity rate, ships per second, the
# quality terms (seconds); the pictures of seed 7 and of its 14 stages.
starship-results: install
	$(PY) -m tablegym.experiments.starship.bench --seeds 1000 --out results/starship/generator.md
	$(TG) starship --seed 7 --out results/starship/seed7.png --quiet
	$(TG) starship --seed 7 --stages --out results/starship/stages_seed7.png --quiet

# Friday win rates per level. Random and rule-based: seconds. Fridai at 10,000 polled
# states: about 1.5 s a game, 25 min on two cores for 4 x 500 games. At 100,000: 13-22 s a game,
# about 9 CPU-hours for 4 x 500. Finished games are appended to the JSONL files; a rerun resumes.
FRIDAY := $(PY) -m tablegym.experiments.friday.evaluate
# Default rule options: the official empty-aging rule. The first reading's records
# ("reshuffle without aging", forced replacement, sort all at once) are in results/friday/empty_aging_reshuffle/;
# --against pairs every agent with its own games there on the same deals. Fridai at 100,000 states
# was not re-run under the official rule (its games end in yellow, far from an empty aging stack).
FRIDAY_RESHUFFLE := results/friday/empty_aging_reshuffle
friday-results: install
	$(FRIDAY) random --games 500 --seed 0 --no-progress --out results/friday/random.jsonl
	$(FRIDAY) rules --games 500 --seed 0 --no-progress --out results/friday/rules.jsonl
	$(FRIDAY) "bestfirst:nodes=10000" --games 500 --workers 2 --seed 0 --no-progress --out results/friday/fridai_10k.jsonl
	$(FRIDAY) --report results/friday/random.jsonl results/friday/rules.jsonl results/friday/fridai_10k.jsonl \
		--baseline "bestfirst:nodes=10000" --against $(FRIDAY_RESHUFFLE)/random.jsonl \
		$(FRIDAY_RESHUFFLE)/rules.jsonl $(FRIDAY_RESHUFFLE)/fridai_10k.jsonl | tee results/friday/fridai_random_rules.md
	$(TG) bench friday | tee results/bench/friday.txt

# Flat Monte-Carlo planning (envs/friday/rollout.py): every legal action valued by 256 whole-game
# rollouts of the compiled trimming player; 1-4 s a game, about an hour on 2 cores for 4 x 500.
friday-mc: install
	$(FRIDAY) trim --games 500 --seed 0 --no-progress --out results/friday/trim.jsonl
	$(FRIDAY) "mc:rollouts=256" --games 500 --workers 2 --seed 0 --no-progress --out results/friday/mc_256.jsonl
	$(FRIDAY) --report results/friday/rules.jsonl results/friday/trim.jsonl results/friday/mc_256.jsonl \
		--baseline rules --against $(FRIDAY_RESHUFFLE)/trim.jsonl $(FRIDAY_RESHUFFLE)/mc_256.jsonl \
		| tee results/friday/mc.md

# Friday's generic deep-RL baseline (experiments/sb3_baseline.py): one MaskablePPO trained on all four
# levels with the score reward (no agent has ever won, so +1/-1 gives no signal), then 500 games per
# level on the rules core, appended to results/friday/sb3.jsonl (a rerun resumes; --eval-only skips training).
friday-sb3: install
	$(PY) -m tablegym.experiments.sb3_baseline friday --timesteps 200000 --seed 0 --run-dir runs/friday-sb3-maskableppo \
		--games 500 --levels 1 2 3 4 --workers 2 --no-progress --out results/friday/sb3.jsonl
	$(FRIDAY) --report results/friday/sb3.jsonl --against $(FRIDAY_RESHUFFLE)/sb3.jsonl

# The shipped Friday value network (training/friday/train.py): 15 iterations of 200
# self-played games (levels 1-4 in turn) through Fridai's search at 2,000 states per decision,
# the first with Fridai's own score at the leaves; 14 minutes on 2 processes.
friday-checkpoint: install
	$(TG) train friday --minutes 60 --iterations 15 --games-per-iter 200 --nodes 2000 --workers 2 \
		--eval-every 5 --eval-games 10 --eval-nodes 2000 --no-progress --run-dir runs/friday-value-official \
		--out models/checkpoints/friday.pt

# The learned Friday rows of the README: same search and budget as Fridai's 10,000-state row, one
# sampled world and the mean over 8 (about 30 minutes each on 2 cores; runs resume).
friday-learned: install
	$(FRIDAY) "bestfirst:nodes=10000,eval=learned" --games 500 --workers 2 --seed 0 --no-progress \
		--out results/friday/learned_10k.jsonl
	$(FRIDAY) "bestfirst:nodes=10000,eval=learned,worlds=8" --games 500 --workers 2 --seed 0 --no-progress \
		--out results/friday/learned_10k_w8.jsonl
	$(FRIDAY) --report results/friday/fridai_10k.jsonl results/friday/learned_10k.jsonl \
		results/friday/learned_10k_w8.jsonl results/friday/sb3.jsonl --baseline "bestfirst:nodes=10000" \
		--against $(FRIDAY_RESHUFFLE)/learned_10k.jsonl $(FRIDAY_RESHUFFLE)/learned_10k_w8.jsonl \
		| tee results/friday/learned.md

# The Friday value network through Monte-Carlo planning (training/friday/train.py --planner mc): 25 iterations of 400
# self-played games, the first with rollouts to the end, then 64 rollouts per action cut after 2
# turns with the current network there; each state learns its game's outcome return; 300 Adam
# steps per iteration. About 50 minutes on 2 processes.
friday-mc-checkpoint: install
	$(TG) train friday --planner mc --target outcome --rollouts 64 --horizon 2 --games-per-iter 400 \
		--iterations 25 --minutes 120 --steps-per-iter 300 --buffer-size 600000 --workers 2 --no-progress \
		--run-dir runs/friday-mc-official --out models/checkpoints/friday_mc.pt

# The Monte-Carlo table: the same planner and budget (64 rollouts per action, cut after 2 turns) with
# the shipped network, Fridai's score and the hand-made outcome at the cut; about 15 minutes on 2 cores.
friday-mc-learned: install
	$(FRIDAY) "mc:rollouts=64,horizon=2,eval=learned" --games 500 --workers 2 --seed 0 --no-progress \
		--out results/friday/mc_h2_learned.jsonl
	$(FRIDAY) "mc:rollouts=64,horizon=2,eval=fridai" --games 500 --workers 2 --seed 0 --no-progress \
		--out results/friday/mc_h2_fridai.jsonl
	$(FRIDAY) "mc:rollouts=64,horizon=2,eval=outcome" --games 500 --workers 2 --seed 0 --no-progress \
		--out results/friday/mc_h2_outcome.jsonl
	$(FRIDAY) --report results/friday/mc_h2_fridai.jsonl results/friday/mc_h2_outcome.jsonl \
		results/friday/mc_h2_learned.jsonl results/friday/mc_256.jsonl \
		--baseline "mc:rollouts=64,horizon=2,eval=fridai" --against $(FRIDAY_RESHUFFLE)/mc_h2_fridai.jsonl \
		$(FRIDAY_RESHUFFLE)/mc_h2_outcome.jsonl $(FRIDAY_RESHUFFLE)/mc_h2_learned.jsonl \
		$(FRIDAY_RESHUFFLE)/mc_256.jsonl | tee results/friday/mc_learned.md

# The starship audit: the staged generator's audit reference (experiments/starship/audit_reference.json,
# seeds 0-999) regenerated and compared (about 15 s; a difference fails the target), then classifiers telling
# staged ships from the shipped learned generator's, random-masked and other staged ones on 200 held-out
# seeds, the audit's rule pass rates there and the pictures (results/starship/audit.md, audit_seeds.png),
# and the same for the PPO generator (audit_ppo.md): about 21 minutes on one core from scratch for the
# shipped generator's report (2,400 ships, most of it the learned generator's 600 ships of 2,048 edits),
# 9 for the PPO one's; the ships are cached in runs/starship-audit, so a rerun takes minutes and gives the
# same reports.
starship-audit: install
	$(PY) -m tablegym.experiments.starship.audit --check
	$(PY) -m tablegym.experiments.starship.two_sample --train 400 --test 200 --out results/starship/audit.md \
		--notes results/starship/audit_notes.md
	$(PY) -m tablegym.experiments.starship.two_sample --train 400 --test 200 --checkpoint models/checkpoints/starship.pt \
		--out results/starship/audit_ppo.md --notes results/starship/audit_ppo_notes.md

# The shipped starship generator: the policy fitted to the staged generator's edits on seeds 10000-10399
# (training/starship/imitate.py: 40 s of demonstrations, 1.8 GB in runs/starship-imitate, then 6 epochs, about
# 15 minutes on 2 cores), copied into models/checkpoints/, then its audit report.
starship-imitate: install
	$(PY) -m tablegym.training.starship.imitate --seeds 400 --epochs 6 --out runs/starship-imitate/generator.pt
	cp runs/starship-imitate/generator.pt models/checkpoints/starship_imitated.pt
	$(PY) -m tablegym.experiments.starship.two_sample --train 400 --test 200 --out results/starship/audit.md \
		--notes results/starship/audit_notes.md

# The shipped searching generator (results/starship/README.md): the fitted policy drawing 16 ships
# whole and keeping the best, and its audit (about 45 minutes on 2 cores; the ships are cached).
starship-search: install
	$(PY) -m tablegym.training.starship.value --policy models/checkpoints/starship_imitated.pt --epochs 0 --beam 1 \
		--branch 16 --out models/checkpoints/starship_search.pt
	$(PY) -m tablegym.experiments.starship.two_sample --train 400 --test 200 --checkpoint models/checkpoints/starship_search.pt \
		--workers 2 --cache runs/starship-audit-search --out results/starship/audit_search.md

# Tried, not shipped: the policy fitted from the empty hull (21 minutes on 2 cores for its 3 epochs) and
# a value network fitted to 2,560 ships it draws (about 10 minutes), searched as the tuning table says.
starship-search-empty: install
	$(PY) -m tablegym.training.starship.imitate --start empty --seeds 400 --epochs 6 --stop-after 3 \
		--data runs/starship-empty/demos.npz --out runs/starship-empty/policy_e3.pt
	$(PY) -m tablegym.training.starship.value --policy runs/starship-empty/policy_e3.pt --seeds 160 --boards 16 \
		--data runs/starship-search/values.npz --out runs/starship-search/search.pt

# The control rows (generators asked for targets, with caps) under the audit: results/starship/audit_controls.md
# (about 30 minutes on one core: 18 of training, the rest building 3 x 200 ships twice).
starship-controls: install
	$(PY) -m tablegym.experiments.starship.rl_caps_zero_shot runs/starship-caps-start/generator.pt
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-caps-start/generator.pt --episodes 200 \
		--workers 1 --out results/starship/audit_targets_caps_start.md --no-progress
	$(PY) -m tablegym.experiments.starship.rl --timesteps 500000 --value-warmup 50000 --targets --target-caps --target-weight 3 \
		--masks safe --reward gated --max-steps 1024 --init-from models/checkpoints/starship.pt --seed 12 \
		--save-every 250000 --episodes 1 --run-dir runs/starship-targets-caps --out runs/starship-targets-caps/rl.md
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-targets-caps/generator.pt --episodes 200 \
		--workers 1 --out results/starship/audit_targets_caps_500000.md --no-progress

# PPO as a starship designer vs the staged generator, random edits and the start ship
# (experiments/starship/rl.py). Budget: a 30,720-step run of this command trained at 261 steps/s on
# one core of the shared 2-core machine (load 2-3), so 20 minutes is 1,200 s x 261 = 313,000 steps:
# 300,000 (301,056 taken, whole rollouts of 2,048), 301,056 / 261 = 1,153 s, about 19 minutes.
# Evaluation (200 seeds x 4 rows, 2 processes) adds about 40 minutes: PPO and random episodes that
# never become valid run to the env's 4,096-step limit (9 to 17 s each). A rerun resumes the
# evaluation (runs/starship-ppo/eval_episodes.jsonl); --eval-only skips training.
starship-rl: install
	$(PY) -m tablegym.experiments.starship.rl --timesteps 300000 --representation narrow --start partial \
		--seed 0 --episodes 200 --workers 2 --run-dir runs/starship-ppo --out results/starship/rl.md

# The learned starship generator, in two runs of MaskablePPO with the gated reward and
# one sweep of the grid per episode (--max-steps 1024): 3M steps under the "build" masks (about 80
# minutes on one core), then 1.5M steps under the "safe" masks from that run's 2M-step snapshot
# (about 40 minutes); each evaluated on 200 held-out seeds. starship-checkpoint ships the second's
# export (float16). starship-targets: the shipped generator asked for targets (thrust and weapon
# points, forward firepower) with caps, untrained, then trained 500k steps from it (about 20
# minutes on one core), each measured against the staged generator given the same targets.
starship-learned: install
	$(PY) -m tablegym.experiments.starship.rl --timesteps 3000000 --masks build --reward gated --max-steps 1024 \
		--seed 1 --episodes 200 --workers 2 --run-dir runs/starship-sweep --out results/starship/sweep.md
	$(PY) -m tablegym.experiments.starship.rl --timesteps 1500000 --masks safe --reward gated --max-steps 1024 \
		--init-from runs/starship-sweep/model_2000000_steps.zip --seed 3 --episodes 200 --workers 2 \
		--run-dir runs/starship-safe --out results/starship/safe.md
starship-checkpoint: starship-learned
	cp runs/starship-safe/generator.pt models/checkpoints/starship.pt
starship-targets: install
	$(PY) -m tablegym.experiments.starship.rl_caps_zero_shot runs/starship-caps-start/generator.pt
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-caps-start/generator.pt --episodes 200 \
		--workers 2 --out results/starship/targets_caps_start.md
	$(PY) -m tablegym.experiments.starship.rl --timesteps 500000 --value-warmup 50000 --targets --target-caps --target-weight 3 \
		--masks safe --reward gated --max-steps 1024 --init-from models/checkpoints/starship.pt --seed 12 \
		--save-every 250000 --episodes 200 --workers 2 --run-dir runs/starship-targets-caps --out results/starship/targets_caps_rl.md
	$(PY) -m tablegym.experiments.starship.rl_snapshot runs/starship-targets-caps/model_250000_steps.zip
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-targets-caps/generator_250000.pt --episodes 200 \
		--workers 2 --out results/starship/targets_caps_250000.md
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-targets-caps/generator.pt --episodes 200 \
		--workers 2 --out results/starship/targets_caps_500000.md
	$(PY) -m tablegym.experiments.starship.rl --timesteps 250000 --value-warmup 50000 --targets --target-caps --target-weight 1 \
		--masks safe --reward gated --max-steps 1024 --init-from models/checkpoints/starship.pt --seed 13 \
		--episodes 1 --run-dir runs/starship-targets-caps-w1 --out runs/starship-targets-caps-w1/rl.md
	$(PY) -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-targets-caps-w1/generator.pt --episodes 200 \
		--workers 2 --out results/starship/targets_caps_w1_250000.md

# MaskablePPO on tablegym/Trilobite-v0 (about 25 minutes on one core), its critic exported into
# depth-5 alpha-beta against the hand-made evaluator and the shipped TD network, both seats.
PPO_ZIP := runs/trilobite-ppo/model.zip
trilobite-ppo: install
	$(PY) -m tablegym.experiments.sb3_baseline trilobite train --timesteps 500000 --run-dir runs/trilobite-ppo
	$(TG) eval trilobite "alphabeta:eval=learned:$(PPO_ZIP),depth=5" "alphabeta:eval=advanced,depth=5" \
		--games 200 --opening-plies 2 --workers 2 --seed 0 --no-progress | tee results/trilobite/ppo_vs_advanced.md
	$(TG) eval trilobite "alphabeta:eval=learned:$(PPO_ZIP),depth=5" "alphabeta:eval=learned,depth=5" \
		--games 200 --opening-plies 2 --workers 2 --seed 0 --no-progress | tee results/trilobite/ppo_vs_td.md

# A torch MLP regressed on Sim's exact solver values (80% of the 2,250 canonical K6 classes, plus
# relabelled copies), exported with from_torch: sign agreement against safe-moves and the shipped
# network, then depth-3 alpha-beta against safe-moves, 100 games, both seats (under a minute, one core).
sim-regress: install
	$(PY) -m tablegym.experiments.sim.regress --out results/sim/regress.md
