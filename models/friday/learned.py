"""Friday's learned evaluator: a small ValueMLP over deck, life, step, pirates and hazards left.

Fridai's own score (life first, then the mean card rating) cannot see which pirates are coming
or weigh a life point against a hazard beaten. The network sees exactly those things and
learns from self-played games what a state is worth.

What it predicts. The training target of a state is the RETURN of the game it was seen in,
one of two (``TARGETS``, recorded in the checkpoint):

- ``score``: the final score (rules/friday.md, "Score") plus ``WIN_BONUS`` for a win;
- ``progress``: the same without the cards owned (``k_progress``: -3 per undefeated hazard,
  +15 per pirate, +5 per life at a win) plus ``WIN_BONUS``. Why: the score pays +1 for every
  "distracted" card and +5 for every aging card destroyed, at once, so a network of score
  returns learns to lose fights on purpose to destroy them; with ``progress`` a better deck is
  worth only the hazards and pirates it goes on to beat;
- ``outcome``: the ``outcome`` evaluator of the finished game (heuristics.outcome_eval: the score
  plus 10 per step reached plus 100 for a win), the value Monte-Carlo planning's rollouts end in
  (envs/friday/rollout.py). Why: a network of this return can sit at the horizon of cut rollouts
  in the same units as the rollouts that finish before it.

A probability of winning is the natural target, but Fridai's search never wins, so a P(win)
network trained on its games would be trained on zeros and could not rank two losing states (the
trainer fits one beside the return network and reports its calibration, training/friday/train.py).
The returns are graded and a win still dominates them: a won game returns far more than any
lost one. Finished games are valued exactly, in the same units, so the search never
trusts the network over the rules.

Inputs (``NUM_FEATURES`` reals, computed from the compact state by ``friday_features`` so that
training and search see the same numbers; cheaper than the env's 816-entry observation, which
the compiled search would pay at every leaf):

    0       life / 22
    1-4     step: green, yellow, red, pirates (one-hot)
    5       in a fight (1/0)
    6       fight total - hazard value, clipped to +-20, / 10 (0 outside fights)
    7       free draws left / 5
    8       aging cards that entered the deck / 11
    9-18    the revealed pirates not yet beaten (one-hot per pirate id)
    19      pirates beaten / 2
    20-57   cards owned per fighting-card type / 4 (starting, knowledge and aging cards)
    58      cards owned / 40
    59      sum of the owned non-aging cards' values / 20
    60      cards left in the fighting stack / 20 (draws until the next reshuffle ages the deck)
    61      aging cards left in the aging stack / 11
    62-66   undefeated hazards per hazard group / the group's size
    67      hazards left in this step's stack / 30
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from tablegym.envs.core import HEADER, k_outcome, k_to_move
from tablegym.envs.evaluator import KernelEvaluator, WrongGameError
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.core import FridayGame, FridayState, state_moves
from tablegym.envs.friday.decisions import k_owned, k_progress, k_score
from tablegym.envs.friday.heuristics import outcome_score
from tablegym.envs.friday.layout import body
from tablegym.envs.friday.observation import flat_observation
from tablegym.envs.friday.turns import fight_target, fight_total
from tablegym.models.checkpoint import CheckpointError
from tablegym.models.learned import CHECKPOINT_DIR, mlp_forward_mixed
from tablegym.models.netkernel import solo_network_value
from tablegym.models.value_net import ValueMLP

NUM_GROUPS = 5
NUM_FEATURES = 68
WIN_BONUS = 100.0
"""Return of a win on top of its score: keeps any win above every loss (README)."""
SCALE = 150.0
"""Score units per unit of network output (tanh): returns lie within about -100..+150."""
GAME = "friday"

_NO_ACTIVE = np.zeros(0, dtype=np.int64)
_NO_PARAMS = np.zeros(1)


@njit(cache=True)
def friday_features(s, x):
    """Write the ``NUM_FEATURES`` inputs of state ``s`` into ``x`` (see the module docstring)."""
    x[:] = 0.0
    x[0] = s[L.LIFE] / 22.0
    x[1 + s[L.STEPI]] = 1.0
    fighting = s[L.FIGHT] >= 0 or s[L.PFIGHT] >= 0
    if fighting:
        x[5] = 1.0
        x[6] = min(max(fight_total(s) - fight_target(s), -20), 20) / 10.0
        if s[L.FREE_ENDED] == 0:
            x[7] = max(s[L.FREE_ALLOWED] - s[L.FREE_DRAWN], 0) / 5.0
    x[8] = s[L.AGING_IN] / 11.0
    for k in range(2):
        p = s[L.PIRATE_A + k]
        if p >= 0 and ((s[L.BEATEN] >> k) & 1) == 0:
            x[9 + p] = 1.0
    x[19] = ((s[L.BEATEN] & 1) + ((s[L.BEATEN] >> 1) & 1)) / 2.0
    owned = np.zeros(C.NUM_TYPES, dtype=np.int64)
    k_owned(s, owned)
    n = 0
    value = 0
    for t in range(C.NUM_TYPES):
        x[20 + t] = owned[t] / 4.0
        n += owned[t]
        if C.KIND[t] != C.AGING:
            value += C.VALUE[t] * owned[t]
    x[58] = n / 40.0
    x[59] = value / 20.0
    stack = s[L.TOP_N] + s[L.BOTTOM_N]
    for t in range(C.NUM_TYPES):
        stack += s[L.MID + t]
    x[60] = stack / 20.0
    aging_left = 0
    for a in range(C.NUM_AGING_TYPES):
        aging_left += s[L.AGING_STACK + a]
    x[61] = aging_left / 11.0
    left = 0
    for t in range(C.NUM_HAZARD_TYPES):
        x[62 + C.GROUP[t]] += s[L.HSTACK + t] + s[L.HDISC + t]
        left += s[L.HSTACK + t]
    for k in (L.CHOICE_A, L.CHOICE_B, L.FIGHT):
        if s[k] >= 0 and s[L.STEPI] < 3:
            x[62 + C.GROUP[s[k]]] += 1.0
    for g in range(NUM_GROUPS):
        x[62 + g] /= _group_cards(g)
    x[67] = left / 30.0


@njit(cache=True)
def _group_cards(g):
    """Hazard cards in group ``g`` (10/8/6/4/2)."""
    return (10.0, 8.0, 6.0, 4.0, 2.0)[g]


TARGETS = ("score", "progress", "outcome")


@njit(cache=True)
def game_return(s):
    """The ``score`` return of a finished game: its score, plus ``WIN_BONUS`` for a win."""
    return k_score(s) + (WIN_BONUS if s[L.RESULT] == L.WON else 0.0)


@njit(cache=True)
def progress_return(s):
    """The ``progress`` return of a finished game: ``k_progress``, plus ``WIN_BONUS`` for a win."""
    return k_progress(s) + (WIN_BONUS if s[L.RESULT] == L.WON else 0.0)


@njit(cache=True)
def outcome_return(s):
    """The ``outcome`` return of a finished game (heuristics.outcome_score)."""
    return outcome_score(s)


@njit(cache=True)
def _network(s, params):
    x = np.empty(NUM_FEATURES, dtype=np.float64)
    friday_features(s, x)
    return SCALE * mlp_forward_mixed(x, _NO_ACTIVE, 0, params)


# The leaf evaluators: ``kernel(s, player, params)`` over the common state (one player).


@njit(cache=True)
def friday_value(s, player, params):
    """The search's leaf value (``score`` target): exact at a finished game, else the network's."""
    b = body(s)
    return game_return(b) if b[L.RESULT] != L.ONGOING else _network(b, params)


@njit(cache=True)
def friday_progress_value(s, player, params):
    """The search's leaf value (``progress`` target): exact at a finished game, else the network's."""
    b = body(s)
    return progress_return(b) if b[L.RESULT] != L.ONGOING else _network(b, params)


@njit(cache=True)
def friday_outcome_value(s, player, params):
    """The leaf value (``outcome`` target): exact at a finished game, else the network's."""
    b = body(s)
    return outcome_return(b) if b[L.RESULT] != L.ONGOING else _network(b, params)


@njit(cache=True)
def final_return(s):
    """A finished game's return, as ``State.returns()`` says: +1 won, -1 lost."""
    return 1.0 if body(s)[L.RESULT] == L.WON else -1.0


@njit(cache=True)
def network_value(s, player, params):
    """An exported network (tablegym.models.export) on the observation: its value, or a
    Q-network's best legal output (-inf at a chance node: no decision there); the game's return
    (+1 won, -1 lost) once it is over."""
    return solo_network_value(s, params, state_moves, k_outcome, k_to_move, flat_observation, final_return)


KERNELS = {"score": friday_value, "progress": friday_progress_value, "outcome": friday_outcome_value}
RETURNS = {"score": game_return, "progress": progress_return, "outcome": outcome_return}


def target_of(meta: dict) -> str:
    """The return a checkpoint's network predicts (networks saved before there was a choice: score)."""
    target = meta.get("args", {}).get("target", "score")
    if target not in TARGETS:
        raise CheckpointError(f"checkpoint predicts an unknown return {target!r}; known: {', '.join(TARGETS)}")
    return target


def features_of(s: np.ndarray) -> np.ndarray:
    """The input vector of one common state (float32, for training batches)."""
    x = np.empty(NUM_FEATURES, dtype=np.float64)
    friday_features(s[HEADER:].view(np.int8), x)
    return x.astype(np.float32)


class FridayEvaluator(KernelEvaluator):
    """A compiled leaf score ``kernel(s, player, params)`` over Friday's common state, by name;
    ``options``: the rule options a learned evaluator was trained under (``None``: any rules)."""

    def __init__(self, name: str, kernel: Any, params: np.ndarray, options: dict | None = None) -> None:
        super().__init__(name, kernel, params, game=GAME)
        self.options = options

    def check_rules(self, state: FridayState) -> None:
        """Refuse a game played under other rule options than the network learned (level aside):
        its values would be of another game, silently (``check_game`` asks every evaluator)."""
        if self.options is None:
            return
        want = {k: v for k, v in self.options.items() if k != "level"}
        got = {k: v for k, v in state.game.spec.options.items() if k != "level"}
        if want != got:
            diff = ", ".join(f"{k}: network {want.get(k)!r}, game {v!r}" for k, v in got.items() if want.get(k) != v)
            raise WrongGameError(f"evaluator {self.name!r} was trained under other Friday rule options ({diff})")


# ---- checkpoints ----------------------------------------------------------------------------------

CHECKPOINT = CHECKPOINT_DIR / "friday.pt"
"""The shipped network of the best-first search (``score`` return, trained on its games)."""
MC_CHECKPOINT = CHECKPOINT_DIR / "friday_mc.pt"
"""The shipped network of Monte-Carlo planning's cut rollouts (``outcome`` return, trained on
the planner's games): what ``mc:...,eval=learned`` loads."""


def load_friday_model(path: str | os.PathLike | None = None, default: Path = CHECKPOINT) -> tuple[ValueMLP, dict]:
    """The network saved at ``path`` (the shipped ``default`` when ``None``) and its metadata.

    The rule options are checked against the default game's: a network trained under other
    options values other states.
    """
    from tablegym.models.learned import load_model

    path = default if path in (None, "") else Path(path)
    model, meta = load_model(path, FridayGame())
    if model.config.num_features != NUM_FEATURES:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has {model.config.num_features} inputs; Friday's learned evaluator reads {NUM_FEATURES}"
        )
    return model, meta


def load_friday_evaluator(path: str | os.PathLike | None = None, default: Path = CHECKPOINT) -> FridayEvaluator:
    """``--eval learned[:PATH]``: the network as a FridayEvaluator (``default`` when no PATH)."""
    model, meta = load_friday_model(path, default)
    return FridayEvaluator(
        f"learned:{path}" if path else "learned", KERNELS[target_of(meta)], model.export(), options=meta.get("options")
    )


def friday_evaluator(game, path: Path) -> FridayEvaluator:
    """The Friday record's ``loader`` (``tablegym.models.learned.load_evaluator``): the shipped
    networks keep the short name ``learned``."""
    return load_friday_evaluator(None if path in (CHECKPOINT, MC_CHECKPOINT) else path, default=path)
