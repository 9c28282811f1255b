"""tablegym's games under OpenSpiel (tablegym.interop.openspiel), checked with OpenSpiel's own
tools, and OpenSpiel's MCTS as a tablegym agent. Skipped where the openspiel extra is not
installed."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import minimax  # noqa: E402

from tablegym.envs import make_game, plugins, register, unregister  # noqa: E402
from tablegym.envs.core import CHANCE, sample_outcome  # noqa: E402
from tablegym.experiments.cli import main  # noqa: E402
from tablegym.interop import openspiel as osp  # noqa: E402
from tablegym.models.agents import known_agents, make_agent  # noqa: E402
from tablegym.search.solver import solve  # noqa: E402

GAMES = [p.name for p in plugins() if p.game]
CHANCE_GAMES = {"trap", "threes", "friday"}
Type = pyspiel.GameType


def _load(name: str, **params) -> osp.TablegymGame:
    return pyspiel.load_game(osp.short_name(name), params)


def test_every_game_with_rules_is_registered_and_the_generator_is_not():
    names = set(pyspiel.registered_names())
    assert {osp.short_name(g) for g in GAMES} <= names
    assert set(GAMES) == {"trilobite", "trilobite-tiny", "sim", "trap", "threes", "friday"}
    assert osp.short_name("starship") not in names


@pytest.mark.parametrize("name", GAMES)
def test_openspiel_random_simulations_with_serialisation_pass(name):
    pyspiel.random_sim_test(_load(name), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("name", GAMES)
def test_game_type_and_info_are_the_spec(name):
    game = _load(name)
    spec = make_game(name).spec
    kind = game.get_type()
    assert kind.dynamics == Type.Dynamics.SEQUENTIAL
    assert kind.chance_mode == (Type.ChanceMode.EXPLICIT_STOCHASTIC if name in CHANCE_GAMES else Type.ChanceMode.DETERMINISTIC)
    assert kind.information == Type.Information.PERFECT_INFORMATION
    assert kind.utility == (Type.Utility.ZERO_SUM if spec.num_players == 2 else Type.Utility.GENERAL_SUM)
    assert kind.reward_model == Type.RewardModel.TERMINAL
    assert (game.num_players(), game.num_distinct_actions(), game.max_chance_outcomes(), game.max_game_length()) == (
        spec.num_players,
        spec.num_actions,
        spec.max_chance_outcomes,
        spec.max_game_length,
    )
    assert (game.min_utility(), game.max_utility()) == (spec.min_utility, spec.max_utility)
    assert tuple(game.observation_tensor_shape()) == spec.observation_shape
    assert pyspiel.load_game(str(game)).get_parameters() == game.get_parameters()  # the game string reads back


def test_rule_options_are_game_parameters_with_the_games_defaults():
    game = pyspiel.load_game("python_tablegym_trilobite(width=5,height=4,win_length=3)")
    assert game.tablegym_game.spec.options == {"width": 5, "height": 4, "win_length": 3, "first_player": 0}
    assert (game.num_distinct_actions(), game.max_game_length()) == (5, 20)
    assert _load("trap").get_parameters() == {"n": 7, "turn_cap": 200, "first_player": 0}
    assert _load("trilobite-tiny", first_player=1).new_initial_state().current_player() == 1
    # Threes' hint "+" is spelled "plus": OpenSpiel's parser reads "+..." as a number
    assert _load("threes").get_parameters() == {"hint": "plus"}
    assert _load("threes").tablegym_game.spec.options == {"hint": "+"}
    assert _load("threes", hint="candidates").tablegym_game.spec.options == {"hint": "candidates"}


def test_trap_landing_is_a_chance_node_with_the_cores_probabilities():
    game = _load("trap")
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])  # the step
    state.apply_action(state.legal_actions()[0])  # the throw
    assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE
    outcomes = state.chance_outcomes()
    assert outcomes == sorted(state.tablegym_state.chance_outcomes())
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert state.legal_actions() == [a for a, _ in outcomes]


def test_clone_is_independent_and_observation_is_the_cores():
    game = _load("trilobite")
    state = game.new_initial_state()
    state.apply_action(3)
    copy = state.clone()
    copy.apply_action(3)
    assert state.history() == [3] and copy.history() == [3, 3]
    assert state.current_player() == 1 and copy.current_player() == 0
    for player in (0, 1):
        seen = np.asarray(copy.observation_tensor(player)).reshape(game.observation_tensor_shape())
        np.testing.assert_array_equal(seen, copy.tablegym_state.observation(player))
    assert str(copy) == copy.tablegym_state.to_text()


def test_threes_returns_nothing_until_the_game_is_over():
    state = _load("threes").new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            assert state.returns() == [0.0]
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert state.returns() == [float(state.tablegym_state.returns()[0])] and state.returns()[0] > 0


def test_a_wrapped_position_continues_from_there():
    tg = make_game("trilobite-tiny")
    position = tg.new_initial_state().child(1).child(1)
    state = osp.openspiel_game(tg).new_initial_state(position)
    assert state.tablegym_state == position and state.current_player() == 0
    with pytest.raises(ValueError, match="given to the OpenSpiel game"):
        _load("trilobite").new_initial_state(position)


def test_openspiel_alpha_beta_agrees_with_tablegyms_solver():
    # 4 columns, 3 rows, three in a row: the first player wins
    tg = make_game("trilobite", width=4, height=3, win_length=3)
    value, _ = minimax.alpha_beta_search(osp.openspiel_game(tg))
    assert value == solve(tg.new_initial_state()).value == 1


def test_a_game_registered_at_run_time_registers_with_openspiel():
    from tests.tictactoe import RECORD

    register(RECORD)
    try:
        assert "tictactoe" in osp.register_games() and osp.register_games() == {}
        game = pyspiel.load_game("python_tablegym_tictactoe")
        pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
        state = game.new_initial_state()
        for cell in (4, 1):  # X in the centre, O on an edge
            state.apply_action(cell)
        value, _ = minimax.alpha_beta_search(game, state, maximizing_player_id=0)
        assert value == solve(state.tablegym_state).value
    finally:
        unregister(RECORD.name)


# ---- OpenSpiel's MCTS as a tablegym agent -----------------------------------------------------


def _decisions(game, agents, rng, count):
    """Play ``count`` decisions (or to the end), seat p by ``agents[p]``; the states decided."""
    state, seen = game.new_initial_state(), []
    while len(seen) < count and not state.is_terminal():
        if state.current_player() == CHANCE:
            state = state.child(sample_outcome(state, rng))
            continue
        action = agents[state.current_player()](state, rng)
        assert action in state.legal_actions()
        seen.append(state)
        state = state.child(action)
    return seen


@pytest.mark.parametrize("name", GAMES)
def test_mcts_plays_legal_moves_in_both_seats(name):
    game = make_game(name)
    assert "openspiel-mcts" in known_agents(game)
    agent = make_agent(game, "openspiel-mcts:sims=6")
    seats = [agent] * game.spec.num_players
    seen = _decisions(game, seats, np.random.default_rng(1), 4)
    assert {s.current_player() for s in seen} == set(range(game.spec.num_players))
    assert agent.last_simulations == 6


@pytest.mark.parametrize(
    "name,spec",
    [
        ("trilobite", "openspiel-mcts:sims=20,eval=advanced"),
        ("trap", "openspiel-mcts:sims=20,eval=learned"),
        ("threes", "openspiel-mcts:sims=20,eval=learned"),
        ("friday", "openspiel-mcts:time=0.01,eval=fridai,scale=100000000"),
    ],
)
def test_mcts_with_a_tablegym_evaluator_plays_legal_moves(name, spec):
    game = make_game(name)
    agent = make_agent(game, spec)
    _decisions(game, [agent] * game.spec.num_players, np.random.default_rng(2), 2)
    assert agent.last_simulations >= 2


def test_mcts_takes_the_win():
    # . . .    after X 0, O 1, X 0, O 2 (top row first):
    # X . .    X (player 0) to move wins with column 0
    # X O O
    game = make_game("trilobite-tiny")
    state = game.new_initial_state().child(0).child(1).child(0).child(2)
    agent = make_agent(game, "openspiel-mcts:sims=200")
    assert agent(state, np.random.default_rng(0)) == 0


def test_mcts_spec_errors_are_one_line():
    game = make_game("trilobite")
    cases = {
        "openspiel-mcts:sims=0": "sims must be a positive integer",
        "openspiel-mcts:depth=3": "takes no option depth",
        "openspiel-mcts:time=-1": "time must be a positive",
        "openspiel-mcts:rollouts=2,eval=advanced": "rollouts and eval exclude each other",
        "openspiel-mcts:scale=5": "scale needs an eval",
        "openspiel-mcts:eval=nope": "unknown Trilobite evaluator 'nope'",
    }
    for spec, message in cases.items():
        with pytest.raises(ValueError, match=message) as err:
            make_agent(game, spec)
        assert "\n" not in str(err.value)


def test_mcts_in_tablegym_eval(capsys):
    assert main(["eval", "trilobite-tiny", "openspiel-mcts:sims=50", "random", "--games", "2", "--no-progress"]) == 0
    header, _, row = capsys.readouterr().out.strip().splitlines()
    assert "`openspiel-mcts:sims=50`" in row
    wins, draws, losses = map(int, row.split("|")[4].split("/"))
    assert wins + draws + losses == 2


# ---- state strings: the action history, never a pickle ------------------------------------------


def _random_state(game, rng: np.random.Generator, stop: int) -> osp.TablegymState:
    """A state reached from the start by random moves and chance outcomes: ``stop`` actions, or
    fewer where the game ends first."""
    state = game.new_initial_state()
    while not state.is_terminal() and len(state.history()) < stop:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=np.asarray(probs) / sum(probs))))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def _assert_same(read, state) -> None:
    assert isinstance(read, osp.TablegymState)
    assert read.history() == state.history() and read.move_number() == state.move_number()
    assert [(x.player, x.action) for x in read.full_history()] == [(x.player, x.action) for x in state.full_history()]
    assert read.current_player() == state.current_player() and read.is_terminal() == state.is_terminal()
    assert read.returns() == state.returns() and read.legal_actions() == state.legal_actions()
    assert read.tablegym_state == state.tablegym_state and str(read) == str(state)


def _game_and_state(game, state_text: str) -> str:
    """A game-and-state string in the form ``pyspiel.serialize_game_and_state`` writes."""
    return f"# a comment\n[Meta]\nVersion: 1\n\n[Game]\n{game.serialize()}\n[State]\n{state_text}\n"


@pytest.mark.parametrize("stop", [0, 5, 10**9])
@pytest.mark.parametrize("name", GAMES)
def test_a_serialised_state_is_its_history_and_replays(name, stop):
    game = _load(name)
    state = _random_state(game, np.random.default_rng(stop), stop)
    text = state.serialize()
    assert "__dict__" not in text and "history=" not in text
    assert text.split() == [str(a) for a in state.history()]  # one action a line, chance outcomes included
    _assert_same(game.deserialize_state(text), state)
    both = pyspiel.serialize_game_and_state(game, state)
    assert "__dict__" not in both
    again, read = pyspiel.deserialize_game_and_state(both)
    assert isinstance(again, osp.TablegymGame) and again.get_parameters() == game.get_parameters()
    _assert_same(read, state)
    _assert_same(osp.deserialize_game_and_state(both)[1], state)


@pytest.mark.parametrize(
    "name,params",
    [
        ("trilobite", {"width": 5, "height": 4, "win_length": 3}),
        ("threes", {"hint": "candidates"}),
        ("trap", {"n": 5, "first_player": 1}),
    ],
)
def test_rule_options_come_back_with_the_game_parameters(name, params):
    game = _load(name, **params)
    state = _random_state(game, np.random.default_rng(3), 12)
    text = pyspiel.serialize_game_and_state(game, state)
    assert f"[Game]\n{game.serialize()}\n" in text and "__dict__" not in text
    again, read = pyspiel.deserialize_game_and_state(text)
    assert again.tablegym_game.spec == game.tablegym_game.spec
    _assert_same(read, state)


class _Plant:
    """Unpickling this creates the file ``path``: a stand-in for any code a pickle can run."""

    def __init__(self, path) -> None:
        self.path = path

    def __reduce__(self):
        return (type(self.path).touch, (self.path,))


def _forged(marker) -> str:
    """A state string in the form OpenSpiel's C++ ``PyState::Serialize`` writes for Python
    states, its ``__dict__=`` field a base64 pickle that creates ``marker`` when unpickled."""
    import base64
    import pickle

    payload = base64.b64encode(pickle.dumps({"planted": _Plant(marker)})).decode()
    return f"history=\nmove_number=0\n__dict__={payload}"


@pytest.mark.parametrize(
    "route", ["game.deserialize_state", "pyspiel.deserialize_game_and_state", "pyspiel.deserialize_game_and_state(bytes)"]
)
@pytest.mark.parametrize("name", GAMES)
def test_a_forged_pickle_in_a_state_string_runs_nothing(name, route, tmp_path):
    marker = tmp_path / "pwned"
    game = _load(name)
    try:
        if route == "game.deserialize_state":
            game.deserialize_state(_forged(marker))
        elif route == "pyspiel.deserialize_game_and_state":
            pyspiel.deserialize_game_and_state(_game_and_state(game, _forged(marker)))
        else:  # OpenSpiel's binding takes bytes too
            pyspiel.deserialize_game_and_state(_game_and_state(game, _forged(marker)).encode())
    except ValueError as exc:
        error = exc
    else:
        error = None
    assert not marker.exists(), f"{route} unpickled the forged __dict__= field"
    assert isinstance(error, osp.StateStringError)
    assert "'__dict__=' field" in str(error) and "one action" in str(error) and "\n" not in str(error)


def test_openspiels_own_form_of_a_tablegym_state_is_refused():
    # OpenSpiel's C++ writer (reached by calling the binding itself) pickles the Python attributes
    game = _load("trilobite")
    state = game.new_initial_state()
    state.apply_action(3)
    native = pyspiel.State.serialize(state)
    assert native.startswith("history=0:3\nmove_number=1\n__dict__=")
    with pytest.raises(osp.StateStringError, match="'__dict__=' field"):
        game.deserialize_state(native)


def test_malformed_state_strings_are_refused_in_one_line():
    # trilobite-tiny: 3 columns, 3 rows; X (0) wins column 0 at the fifth move
    game = _load("trilobite-tiny")
    cases = {
        "1\nx\n": r"line 2 of the state string is 'x', not an action",
        "-1\n": r"line 1 of the state string is '-1', not an action",
        " 1\n": r"is ' 1', not an action",
        "1.0\n": r"is '1.0', not an action",
        "\uff11\n": r"is '\uff11', not an action",  # a full-width digit: int() would take it
        "1\n\n2\n": r"line 2 of the state string is '', not an action",
        "starting_state=0\n1\n": r"is 'starting_state=0', not an action",
        "history=0:1\nmove_number=1\n": r"is 'history=0:1', not an action",
        "7\n": r"line 1 of the state string plays 7, which is not legal there; legal: \[0, 1, 2\]",
        "0\n1\n0\n1\n0\n1\n": r"line 6 of the state string plays 1, which is not legal there: the game is over",
        "0\n" * 10: r"a state string of 10 lines .* longer than the game's longest history, 9 actions",
        "0\n" * 10**6: r"a state string of 1000000 lines .* pass a larger max_actions",
        "1" * 30 + "\n": r"is '1{30}', not an action",
        b"0\n": r"a state string is a str, not bytes",
    }
    for text, message in cases.items():
        with pytest.raises(osp.StateStringError, match=message) as err:
            game.deserialize_state(text)
        assert isinstance(err.value, ValueError) and "\n" not in str(err.value)
        assert any(accepted in str(err.value) for accepted in ("one action (an integer) per line", "legal", "max_actions"))
    assert game.deserialize_state("").history() == game.deserialize_state("\n").history() == []
    long = "0\n1\n" * 5  # ten actions, one more than max_game_length: refused by the budget, read past it
    with pytest.raises(osp.StateStringError, match="longer than"):
        game.deserialize_state(long)
    with pytest.raises(osp.StateStringError, match="line 6 .* the game is over"):
        game.deserialize_state(long, max_actions=10)


def test_malformed_game_and_state_strings_are_refused_in_one_line():
    game = _load("trilobite-tiny")
    head = f"[Meta]\nVersion: 1\n\n[Game]\n{game.serialize()}\n"
    cases = {
        head: r"no \[State\] section",
        f"[Game]\n{game.serialize()}\n[State]\n1\n": r"section \[Game\] out of order",
        f"{game.serialize()}\n[Meta]\n": r"line 1 .* before the \[Meta\] section",
        head + "[State]\n1\n[State]\n": r"line 2 of the state string is '\[State\]', not an action",
        head + "[State]\n1\n# note\n": r"line 2 of the state string is '# note', not an action",
    }
    for text, message in cases.items():
        with pytest.raises(osp.StateStringError, match=message) as err:
            pyspiel.deserialize_game_and_state(text)
        assert "\n" not in str(err.value)
    # other games' strings are OpenSpiel's own, read by OpenSpiel
    ttt = pyspiel.load_game("tic_tac_toe")
    state = ttt.new_initial_state()
    state.apply_action(4)
    again, read = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(ttt, state))
    assert str(again) == "tic_tac_toe()" and read.history() == [4]


def test_a_wrapped_position_has_no_state_string():
    tg = make_game("trilobite-tiny")
    state = osp.openspiel_game(tg).new_initial_state(tg.new_initial_state().child(1))
    for route in (state.serialize, state.clone().serialize, lambda: pyspiel.serialize_game_and_state(state.get_game(), state)):
        with pytest.raises(osp.UnserializableStateError, match="wrapped from outside OpenSpiel") as err:
            route()
        assert "\n" not in str(err.value)
