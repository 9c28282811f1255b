"""Trap agents by spec string (models/trap/agents.py): the searching agent and its options."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.core import CHANCE
from tablegym.envs.trap.core import TrapGame
from tablegym.models.agents import make_agent
from tablegym.models.agents import make_agent as make_any_agent
from tablegym.models.trap.agents import SearchAgent
from tablegym.search.play import play_game

TRAP = TrapGame()


def test_specs_build_every_agent():
    game = TrapGame()
    for spec in (
        "random",
        "easy",
        "medium",
        "hard",
        "hard-sound",
        "hard:depth=2",
        "hard-sound:depth=1",
        "medium:ties=random",
        "medium:ties=first",
        "search:eval=is,depth=2",
        "emm:eval=flood,time=0.05",
        "search:eval=composite,depth=2,recipe=course,cands=4",
    ):
        agent = make_any_agent(game, spec)
        assert agent(game.new_initial_state(), np.random.default_rng(0)) in game.new_initial_state().legal_actions()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("search:eval=nope", "unknown Trap evaluator"),
        ("search:recipe=both,depth=2", "recipe"),
        ("search:depth=two", "depth must be a positive integer"),
        ("search:cands=-1,depth=2", "cands"),
        ("search:time=0", "positive"),
        ("search:speed=3", "takes no option"),
        ("alphabeta", "unknown agent"),
        ("hard:depth=0", "depth must be a positive integer"),
        ("hard-sound:depth=two", "depth must be a positive integer"),
        ("hard:ties=first", "takes no option ties; allowed: depth"),
        ("medium:ties=last", "ties must be 'course', 'first' or 'random'"),
        ("easy:ties=first", "takes no option"),
    ],
)
def test_bad_specs_name_the_problem(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(TRAP, spec)


def test_opponent_specs_pick_the_variant():
    assert make_agent(TRAP, "hard").name == "hard" and make_agent(TRAP, "hard-sound").name == "hard-sound"
    assert make_agent(TRAP, "hard:depth=2").depth == 2
    assert make_agent(TRAP, "medium").ties == "course" and make_agent(TRAP, "medium:ties=random").ties == "random"


@pytest.mark.parametrize("recipe", ["joint", "course"])
def test_search_agent_plays_whole_games_legally(recipe):
    """Both decisions of every turn are legal; throws go at empty cells only."""
    game = TrapGame(n=5, turn_cap=40)
    agent = SearchAgent(make_agent(TRAP, "search:eval=is,depth=2").evaluator, depth=2, recipe=recipe)
    record = play_game(game, [agent, make_agent(TRAP, "easy")], np.random.default_rng(1))
    state = game.new_initial_state()
    for action in record.actions:
        if state.current_player() == 0 and state.phase == "throw":
            assert not state.traps.flat[action - 8], "a search never throws onto a trap"
        state = state.child(action)
    assert state.is_terminal()


def test_search_agent_takes_a_sure_win_and_keeps_the_turn_tables():
    # 2 # . .    player 1 (the agent, at c2) steps W onto b2: player 2 at a1 has no exit left
    # # . 1 .
    # . . . .
    # . . . .
    game = TrapGame(n=4)
    state = game.from_board(
        """
        2 # . .
        # . 1 .
        . . . .
        . . . .
    """,
        to_move=0,
    )
    agent = make_agent(TRAP, "search:eval=composite,depth=3")
    action = agent(state, np.random.default_rng(0))
    assert state.child(action).winner() == 0
    assert agent.last_result.completed and agent.last_result.depth == 3


def test_time_budget_is_split_between_move_and_throw():
    agent = make_agent(TRAP, "search:eval=is,time=0.2")
    state = TrapGame().new_initial_state()
    rng = np.random.default_rng(0)
    state = state.child(agent(state, rng))
    assert state.phase == "throw"
    throw = agent(state, rng)
    assert state.child(throw).current_player() == CHANCE
    assert agent.last_result.depth >= 1
