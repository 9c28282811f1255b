"""Q-learning in afterstate form for two-player games (training/negamax_dqn.py, ``tablegym train
trilobite --algo dqn --afterstate``): the vector env's children are the rules' own, Q is the
negamax of V over them, the learner beats a random player on TrilobiteTiny, its file plays in
the searches, it resumes, and bad arguments get one line."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import tablegym.envs  # noqa: F401
from tablegym.envs import make_game
from tablegym.envs.core import CHANCE, KEY
from tablegym.experiments.cli import main as cli
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import load_checkpoint
from tablegym.search.solver import solved_values
from tablegym.training import negamax_dqn
from tests.cli_errors import assert_one_error_line

negamax_q, dihedral = negamax_dqn.negamax_q, negamax_dqn.dihedral

TINY = [
    "--num-envs",
    "64",
    "--learning-starts",
    "2000",
    "--batch-size",
    "256",
    "--hidden",
    "32",
    "32",
    "--eval-every",
    "0",
    "--no-progress",
]


@pytest.mark.parametrize("env_id", ["tablegym/Trilobite-v0", "tablegym/TrilobiteTiny-v0", "tablegym/Sim-v0"])
def test_children_are_the_positions_the_rules_move_to(env_id):
    envs = gymnasium.make_vec(env_id, num_envs=12, opponent=None)
    envs.reset(seed=5)
    boards, rng = envs.unwrapped, np.random.default_rng(5)
    seen_end = seen_live = 0
    for _ in range(30):
        before = boards._states.copy()
        obs, ended, result, legal = boards.children()
        assert np.array_equal(boards._states, before)  # the boards are left as they were
        for i in range(boards.num_envs):
            state = boards.game_state(i)
            moves = state.legal_actions() if not state.is_terminal() else []
            assert sorted(np.flatnonzero(legal[i])) == sorted(moves)
            for a in moves:
                child = state.child(a)
                if child.is_terminal():
                    seen_end += 1
                    assert ended[i, a] and result[i, a] == child.returns()[state.current_player()]
                else:
                    seen_live += 1
                    assert not ended[i, a]
                    mover = child.current_player()
                    assert mover == 1 - state.current_player()
                    assert np.array_equal(obs[i, a].ravel(), np.asarray(child.observation(mover), np.float32).ravel())
        masks = boards.action_masks()
        envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    assert seen_end and seen_live
    envs.close()


def test_grandchildren_are_the_positions_two_moves_on_and_q_is_their_minimax():
    envs = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=8, opponent=None)
    envs.reset(seed=2)
    boards, rng = envs.unwrapped, np.random.default_rng(2)
    net = negamax_dqn.value_network(27, (8,))
    checked = 0
    for _ in range(12):
        children, grandchildren = boards.children(), boards.grandchildren()
        obs2, ended2, result2, legal2 = grandchildren
        q = negamax_q(net, children, grandchildren)
        for i in range(boards.num_envs):
            state = boards.game_state(i)
            if state.is_terminal():
                continue
            me = state.current_player()
            for a in state.legal_actions():
                child = state.child(a)
                if child.is_terminal():
                    assert not legal2[i, a].any() and q[i, a] == child.returns()[me]
                    continue
                assert sorted(np.flatnonzero(legal2[i, a])) == sorted(child.legal_actions())
                values = []
                for b in child.legal_actions():
                    grand = child.child(b)
                    if grand.is_terminal():
                        assert ended2[i, a, b] and result2[i, a, b] == grand.returns()[me]
                        values.append(grand.returns()[me])
                    else:
                        assert grand.current_player() == me and not ended2[i, a, b]
                        seen = np.asarray(grand.observation(me), np.float32).ravel()
                        assert np.array_equal(obs2[i, a, b].ravel(), seen)
                        with torch.no_grad():
                            values.append(float(net(torch.from_numpy(seen)[None])[0, 0]))
                assert q[i, a] == pytest.approx(min(values), abs=1e-6)
                checked += 1
        masks = boards.action_masks()
        envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    assert checked > 50
    envs.close()


def test_games_with_chance_have_no_children():
    envs = gymnasium.make_vec("tablegym/Trap-v0", num_envs=2, opponent=None)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="chance"):
        envs.unwrapped.children()
    with pytest.raises(ValueError, match="chance"):
        envs.unwrapped.grandchildren()
    envs.close()


def _expected_q_by_the_rules(net, state) -> dict[int, float]:
    """Q of each legal move of ``state`` over the object API: the expectation over the chance
    outcomes of the result, or of V of the position reached for its player to move, negated
    where that is the mover's opponent."""
    me, q = state.current_player(), {}
    for a in state.legal_actions():
        child = state.child(a)
        reached = (
            [(p, child.child(o)) for o, p in child.chance_outcomes()] if child.current_player() == CHANCE else [(1.0, child)]
        )
        total = 0.0
        for p, s in reached:
            if s.is_terminal():
                total += p * s.returns()[me]
            else:
                seen = torch.from_numpy(np.asarray(s.observation(s.current_player()), np.float32).ravel())
                with torch.no_grad():
                    v = float(net(seen[None])[0, 0])
                total += p * (v if s.current_player() == me else -v)
        q[a] = total
    return q


@pytest.mark.parametrize("env_id", ["tablegym/Trap-v0", "tablegym/TrilobiteTiny-v0"])
def test_outcomes_give_each_moves_expected_value_by_the_rules(env_id):
    envs = gymnasium.make_vec(env_id, num_envs=6, opponent=None, **({"n": 5} if "Trap" in env_id else {}))
    envs.reset(seed=3)
    boards, rng = envs.unwrapped, np.random.default_rng(3)
    inputs = int(np.prod(envs.single_observation_space.shape))
    torch.manual_seed(0)
    net = negamax_dqn.value_network(inputs, (16,))
    checked = chance_moves = ended = 0
    for _ in range(40):
        before = boards._states.copy()
        obs, index, weight, position, result, legal = outcomes = boards.outcomes()
        assert np.array_equal(boards._states, before)  # the boards are left as they were
        q = negamax_dqn.expected_q(net, outcomes)
        sums = np.zeros(legal.size)
        np.add.at(sums, index, np.abs(weight))
        assert np.allclose(sums[legal.ravel()], 1.0) and not sums[~legal.ravel()].any()  # probabilities
        ended += int((position < 0).sum())
        for i in range(boards.num_envs):
            state = boards.game_state(i)
            if state.is_terminal():
                assert not legal[i].any()
                continue
            assert sorted(np.flatnonzero(legal[i])) == sorted(state.legal_actions())
            for a, value in _expected_q_by_the_rules(net, state).items():
                assert float(q[i, a]) == pytest.approx(value, abs=1e-5)
                chance_moves += int(state.child(a).current_player() == CHANCE)
                checked += 1
        if "Tiny" in env_id:  # no chance: the children's negamax, one row a move
            assert torch.allclose(q, negamax_q(net, boards.children()), atol=1e-6) and len(index) == legal.sum()
        masks = boards.action_masks()
        envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    assert checked > 200 and ended > 0 and (chance_moves > 100 or "Tiny" in env_id)
    envs.close()


def test_a_throw_lands_as_the_rules_say():
    """Trap (rules/trap.md): a throw at Manhattan distance a hits with p = 1 - 0.05 (a - 1) and
    misses onto each of the target's n free neighbours with (1 - p) / n; the opponent moves next."""
    game = make_game("trap")
    state = game.from_board(
        "\n".join(["...1...", ".......", ".......", ".......", ".......", ".......", "...2..."]), phase="throw"
    )
    envs = gymnasium.make_vec("tablegym/Trap-v0", num_envs=1, opponent=None)
    envs.reset(seed=0)
    boards = envs.unwrapped
    boards._states[0, : len(state.array)] = state.array
    boards._masks[0] = 0
    boards._masks[0, state.legal_actions()] = 1
    obs, index, weight, position, result, legal = boards.outcomes()
    corner = 8 + 6 * 7 + 6  # the bottom-right corner: distance 6 + 3 = 9 from the thrower, 3 free neighbours
    rows = index == corner
    assert sorted(weight[rows]) == pytest.approx(sorted([-(1 - 0.05 * 8)] + [-(0.05 * 8) / 3] * 3))
    near = 8 + 1 * 7 + 3  # straight below the thrower: a sure hit
    assert weight[index == near].tolist() == [-1.0]
    assert (position[rows] >= 0).all() and len(set(position[rows])) == 4  # four different landings
    envs.close()


@pytest.mark.parametrize("k", range(8))
def test_trap_keeps_the_squares_symmetries(k):
    """What Trap's record claims (``board_symmetries = 8``) and ``--symmetries`` relies on: a
    board turned or mirrored by ``dihedral`` is the same game: its observation is the turned
    observation, and every move's expected value by the rules is a turned move's."""
    game, rng = make_game("trap"), np.random.default_rng(k)
    cells = rng.permutation(49)
    grid = np.full(49, ".")
    grid[cells[:12]], grid[cells[12]], grid[cells[13]] = "#", "1", "2"
    grid = grid.reshape(7, 7)
    turned = dihedral(torch.from_numpy((grid == "#").astype(np.float32))[None], k)[0].numpy()
    where = {ch: dihedral(torch.from_numpy((grid == ch).astype(np.float32))[None], k)[0].numpy() for ch in "12"}
    other = np.where(turned > 0, "#", np.where(where["1"] > 0, "1", np.where(where["2"] > 0, "2", ".")))
    torch.manual_seed(k)
    inner = negamax_dqn.value_network(5 * 49, (16,))

    def net(x):  # a value that the 8 symmetries keep: the mean over them
        planes = x.view(len(x), 5, 7, 7)
        return sum(inner(dihedral(planes, j).reshape(len(x), -1)) for j in range(8)) / 8

    for phase in ("move", "throw"):
        a = game.from_board("\n".join("".join(r) for r in grid), to_move=1, phase=phase)
        b = game.from_board("\n".join("".join(r) for r in other), to_move=1, phase=phase)
        seen_a = torch.from_numpy(np.asarray(a.observation(1), np.float32))
        assert torch.equal(dihedral(seen_a, k), torch.from_numpy(np.asarray(b.observation(1), np.float32)))
        qa = sorted(_expected_q_by_the_rules(net, a).values())
        qb = sorted(_expected_q_by_the_rules(net, b).values())
        assert qa == pytest.approx(qb, abs=1e-6) and len(qa) > 1


def test_random_symmetries_turn_each_row_by_one_of_the_eight():
    obs = torch.arange(6 * 2 * 3 * 3, dtype=torch.float32).view(6, -1)
    out = negamax_dqn.random_symmetries(obs, (2, 3, 3), np.random.default_rng(0))
    for row, turned in zip(obs, out):
        images = [dihedral(row.view(2, 3, 3), k).reshape(-1) for k in range(8)]
        assert any(torch.equal(turned, image) for image in images)
    assert not torch.equal(out, obs)


def test_trap_trains_and_its_file_plays_in_the_expectiminimax(tmp_path, capsys):
    run = tmp_path / "run"
    assert (
        cli(
            [
                "train",
                "trap",
                "--algo",
                "dqn",
                "--afterstate",
                "--symmetries",
                "--lam",
                "0.7",
                "--option",
                "n=5",
                "--total-steps",
                str(32 * 40),
                "--num-envs",
                "32",
                "--learning-starts",
                "500",
                "--batch-size",
                "128",
                "--hidden",
                "16",
                "--eval-every",
                "20",
                "--eval-games",
                "8",
                "--no-progress",
                "--run-dir",
                str(run),
                "--out",
                str(run / "v.pt"),
            ]
        )
        == 0
    )
    assert "one-ply greedy vs random" in capsys.readouterr().out
    game = make_game("trap", n=5)
    state = game.new_initial_state()
    agent = make_agent(game, f"search:eval=learned:{run / 'v.pt'},depth=2")
    assert agent(state, np.random.default_rng(0)) in state.legal_actions()
    with pytest.raises(ValueError, match="rule"):  # saved for 5x5: the default 7x7 game refuses it
        make_agent(make_game("trap"), f"search:eval=learned:{run / 'v.pt'},depth=2")


def test_q_is_the_result_or_minus_the_childs_value():
    obs = np.zeros((2, 3, 4), dtype=np.float32)
    obs[0, 1] = 1.0
    ended = np.array([[True, False, False], [False, False, False]])
    result = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    legal = np.array([[True, True, False], [True, False, True]])
    net = torch.nn.Sequential(torch.nn.Linear(4, 1))
    with torch.no_grad():
        net[0].weight[:] = 0.25
        net[0].bias[:] = 0.5
    q = negamax_q(net, (obs, ended, result, legal))
    assert q.tolist() == [[1.0, -1.5, -np.inf], [-0.5, -np.inf, -0.5]]


def test_lambda_returns_by_hand():
    # three positions, movers alternating; the last mover won
    values = np.array([0.2, -0.4, 0.6], dtype=np.float32)
    g2 = 0.5 * 0.6 + 0.5 * 1.0
    g1 = 0.5 * -0.4 + 0.5 * -g2
    g0 = 0.5 * 0.2 + 0.5 * -g1
    assert negamax_dqn.lambda_returns(values, 1.0, 0.5) == pytest.approx([g0, g1, g2])
    assert negamax_dqn.lambda_returns(values, 1.0, 0.0) == pytest.approx(values)  # lambda 0: the search values
    assert negamax_dqn.lambda_returns(values, -1.0, 1.0) == pytest.approx([-1.0, 1.0, -1.0])  # 1: the result


def test_lambda_returns_keep_the_sign_where_the_mover_decides_again():
    # Trap: position 0 is a step, 1 the same player's throw, 2 the opponent's step; it won
    values = np.array([0.2, 0.4, -0.6], dtype=np.float32)
    g2 = 0.5 * -0.6 + 0.5 * 1.0
    g1 = 0.5 * 0.4 + 0.5 * -g2
    g0 = 0.5 * 0.2 + 0.5 * g1  # the same mover: no sign change
    same = np.array([True, False])
    assert negamax_dqn.lambda_returns(values, 1.0, 0.5, same) == pytest.approx([g0, g1, g2])
    assert negamax_dqn.lambda_returns(values, -1.0, 1.0, same) == pytest.approx([1.0, 1.0, -1.0])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("negamax") / "run"
    argv = [
        "trilobite-tiny",
        "--algo",
        "dqn",
        "--afterstate",
        "--total-steps",
        str(64 * 800),
        *TINY,
        "--run-dir",
        str(run),
        "--out",
        str(run / "v.pt"),
    ]
    assert cli(["train", *argv]) == 0
    return run, argv


def _positions(state, seen):
    """Every unfinished position reachable from ``state`` (by its key)."""
    if state.is_terminal() or state.array[KEY] in seen:
        return
    seen[state.array[KEY]] = state
    for a in state.legal_actions():
        _positions(state.child(a), seen)


def _solved_share(net) -> float:
    """The share of TrilobiteTiny's unfinished positions whose exact result for the player to
    move (won, drawn, lost: the solver's) ``net`` tells (V above 1/3, between, below -1/3)."""
    game = make_game("trilobite-tiny")
    positions = {}
    _positions(game.new_initial_state(), positions)
    obs = np.stack([np.asarray(p.observation(p.current_player()), np.float32).ravel() for p in positions.values()])
    with torch.no_grad():
        v = net(torch.from_numpy(obs)).squeeze(1).numpy()
    told = np.digitize(v, [-1 / 3, 1 / 3]) - 1
    exact = np.sign([max(solved_values(p).values()) for p in positions.values()])
    return float(np.mean(told == exact))


def test_it_learns_the_solvers_values(trained):
    run, _ = trained
    payload = load_checkpoint(run / "checkpoint.pt")
    net = negamax_dqn.value_network(27, (32, 32))
    net.load_state_dict({k.partition(".")[2]: v for k, v in payload["model"].items() if k.startswith("v.")})
    torch.manual_seed(0)
    learned, untrained = _solved_share(net), _solved_share(negamax_dqn.value_network(27, (32, 32)))
    assert learned >= 0.45 and learned > untrained + 0.25, (learned, untrained)


def test_its_file_plays_in_the_search_and_through_the_cli(trained, capsys):
    run, _ = trained
    game = make_game("trilobite-tiny")
    state = game.new_initial_state()
    for spec in (f"alphabeta:eval=learned:{run / 'v.pt'},depth=3", f"alphabeta:eval=learned:{run / 'v.pt'},time=0.01"):
        assert make_agent(game, spec)(state, np.random.default_rng(0)) in state.legal_actions()
    assert (
        cli(
            [
                "eval",
                "trilobite-tiny",
                f"alphabeta:eval=learned:{run / 'v.pt'},depth=2",
                "random",
                "--games",
                "2",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "| 2 (" in capsys.readouterr().out


def test_it_resumes_at_the_next_iteration(trained):
    run, argv = trained
    assert load_checkpoint(run / "checkpoint.pt")["metadata"]["iteration"] == 800
    more = [a if a != str(64 * 800) else str(64 * 850) for a in argv]
    assert cli(["train", *more]) == 0
    assert load_checkpoint(run / "checkpoint.pt")["metadata"]["iteration"] == 850


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "friday", "--algo", "dqn", "--afterstate"], "'friday' is neither"),
        (["train", "trap", "--algo", "dqn", "--afterstate", "--plies", "2"], "--plies 2 searches games without chance"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--symmetries"], "'trilobite-tiny' has none"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--epsilon", "2"], "--epsilon"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--hidden", "0"], "--hidden"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--plies", "3"], "--plies"),
        (["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--lam", "1.5"], "--lam"),
        (
            ["train", "sim", "--algo", "dqn", "--afterstate", "--eval-opponent", "alphabeta:eval=advanced,depth=2"],
            "unknown Sim evaluator 'advanced'",
        ),
        (
            ["train", "trilobite-tiny", "--algo", "dqn", "--afterstate", "--learning-starts", "10", "--buffer-size", "5"],
            "--learning-starts",
        ),
    ],
)
def test_bad_arguments_get_one_line(argv, words, capsys):
    assert_one_error_line(argv, words, capsys)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "threes", "--algo", "negamax-dqn"], "not 'threes'; its afterstate network trains with --algo afterstate-dqn"),
        (["train", "trilobite-tiny", "--algo", "afterstate-dqn"], "names no afterstate network"),
        (["train", "trilobite-tiny", "--algo", "negamax-dqn", "--no-afterstate"], "this trainer is --algo negamax-dqn"),
    ],
)
def test_each_afterstate_trainer_has_its_own_algo_name(argv, words, capsys):
    assert_one_error_line(argv, words, capsys)


def test_the_negamax_trainer_runs_under_its_own_name(tmp_path):
    run = tmp_path / "run"
    argv = ["train", "trilobite-tiny", "--algo", "negamax-dqn", "--total-steps", str(64 * 3), *TINY, "--run-dir", str(run)]
    assert cli(argv) == 0
    assert load_checkpoint(run / "checkpoint.pt")["metadata"]["args"]["algo"] == "negamax-dqn"
