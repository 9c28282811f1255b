"""Friday's learned evaluator (models/friday/learned.py) and its self-play trainer
(training/friday/train.py): inputs worked by hand, exact values at finished games, the compiled
forward pass against PyTorch, checkpoints, and a tiny training run that resumes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tablegym.envs.friday.core import FridayGame, sample_chance
from tablegym.envs.friday.layout import CONCEDE, END_FIGHT
from tablegym.envs.friday.scenario import scenario
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import CheckpointError, save_checkpoint
from tablegym.models.friday.learned import (
    NUM_FEATURES,
    SCALE,
    WIN_BONUS,
    features_of,
    friday_outcome_value,
    friday_progress_value,
    friday_value,
    load_friday_evaluator,
    load_friday_model,
)
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.friday.train import Args, calibration, parse_args, search_spec, train
from tablegym.training.runs import metadata
from tests.test_friday_search import play_legally

FRIDAY = FridayGame()  # the default rules (level 1), as the agents are built for

WEAPON2, WEAPON4, REALIZATION3 = 12, 23, 19
DISTRACTED, WEAK, EATING, FOCUSED, GENIUS = 24, 25, 26, 27, 28
P6_20, P7_25 = 0, 1


def start(level: int = 1, seed: int = 0):
    return sample_chance(FridayGame(level=level).new_initial_state(), np.random.default_rng(seed))


def test_inputs_of_the_starting_position_are_worked_by_hand():
    s = start()
    x = features_of(s.array)
    assert x.shape == (NUM_FEATURES,)
    assert x[0] == pytest.approx(20 / 22) and x[1:5].tolist() == [1, 0, 0, 0]  # life 20, green
    assert x[5:8].tolist() == [0, 0, 0]  # no fight yet
    assert x[8] == 0  # no aging card has entered the deck at level 1
    a, b = s.pirates
    assert sorted(np.flatnonzero(x[9:19]).tolist()) == sorted([a, b]) and x[19] == 0
    owned = {DISTRACTED: 5, WEAK: 8, EATING: 1, FOCUSED: 3, GENIUS: 1}  # the 18 starting cards
    assert {t: round(4 * x[20 + t]) for t in range(38) if x[20 + t]} == owned
    assert x[58] == pytest.approx(18 / 40)
    assert x[59] == pytest.approx((5 * -1 + 3 * 1 + 2) / 20)  # the starting deck's values sum to 0
    assert x[60] == pytest.approx(18 / 20)  # all 18 still in the fighting stack
    assert x[61] == pytest.approx(10 / 11)  # level 1: every aging card but "very stupid"
    assert x[62:67].tolist() == [1, 1, 1, 1, 1]  # every hazard undefeated (the two drawn ones too)
    assert x[67] == pytest.approx(28 / 30)  # two of 30 hazards are drawn for the first choice
    fight = s.child(0)  # fight the first hazard: one input says so, the stack is unchanged
    y = features_of(fight.array)
    assert y[5] == 1 and y[7] > 0 and y[60] == x[60]


def test_finished_games_are_valued_exactly_as_score_plus_the_win_bonus():
    table = [(WEAPON4, "L"), (WEAPON4, "L"), (REALIZATION3, "L"), (GENIUS, "L"), (WEAPON2, "L"), (WEAPON2, "L")]
    won = scenario(pirate=P6_20, pirates=(P7_25, P6_20), beaten=True, table=table + [FOCUSED] * 3).child(END_FIGHT)
    assert won.won
    # cards owned 4+4+3+2+2+2+1+1+1 = 20, two pirates 30, 20 life x 5 = 100, no hazard left
    assert won.score == 150
    params = ValueMLP(NetConfig(NUM_FEATURES, (8,))).export()
    assert friday_value(won.array, 0, params) == 150 + WIN_BONUS
    lost = scenario(pirate=P6_20, pirates=(P6_20, P7_25), table=[(GENIUS, "L")], stack={WEAK: 5}).child(CONCEDE)
    assert lost.is_terminal() and not lost.won
    assert friday_value(lost.array, 0, params) == 2  # genius 2 + five weak 0, nothing else
    # the progress return leaves the cards out: pirates 30 + life 100 (+ the bonus); nothing for the loss
    assert friday_progress_value(won.array, 0, params) == 130 + WIN_BONUS
    assert friday_progress_value(lost.array, 0, params) == 0
    start_ = start()  # 30 undefeated hazards, no pirate: -90; the network is not asked at finished games only
    assert friday_progress_value(start_.array, 0, params) == friday_value(start_.array, 0, params)
    # the outcome return adds 10 per step reached (both games end at the pirates, step 3) to the score
    assert friday_outcome_value(won.array, 0, params) == 150 + 30 + 100
    assert friday_outcome_value(lost.array, 0, params) == 2 + 30
    assert friday_outcome_value(start_.array, 0, params) == friday_value(start_.array, 0, params)


def test_the_compiled_value_is_the_pytorch_network_on_states_of_real_games():
    torch.manual_seed(0)
    model = ValueMLP(NetConfig(NUM_FEATURES, (64, 32)))
    params = model.export()
    agent = make_agent(FRIDAY, "rules")
    rng = np.random.default_rng(3)
    rows, compiled = [], []
    for level in (1, 4):
        s = sample_chance(FridayGame(level=level).new_initial_state(), rng)
        while not s.is_terminal():
            rows.append(features_of(s.array))
            compiled.append(friday_value(s.array, 0, params))
            s = sample_chance(s.child(agent(s, rng)), rng)
    with torch.no_grad():
        expected = SCALE * model(torch.from_numpy(np.array(rows))).numpy()
    assert len(rows) > 50
    assert np.allclose(compiled, expected, rtol=1e-4, atol=1e-3)


def _save(path, model, **meta_overrides):
    game = FridayGame()
    meta = metadata(Args(), game, model.config, 1, 10, 1.0)
    meta.update(meta_overrides)
    return save_checkpoint(path, model=model, metadata=meta)


def test_learned_checkpoint_plugs_into_the_search_and_plays_a_legal_game(tmp_path):
    path = _save(tmp_path / "f.pt", ValueMLP(NetConfig(NUM_FEATURES, (16,))))
    ev = load_friday_evaluator(path)
    assert ev.name == f"learned:{path}"
    agent = make_agent(FRIDAY, f"bestfirst:nodes=200,eval=learned:{path}")
    rng = np.random.default_rng(5)
    moves = play_legally(start(level=2, seed=5), agent, rng)
    assert moves > 10 and agent.decisions > 0


def test_a_learned_agent_refuses_a_game_under_other_rule_options(tmp_path):
    # the network learned the official rule (the default); a game of the first reading is another game
    path = _save(tmp_path / "f.pt", ValueMLP(NetConfig(NUM_FEATURES, (8,))))
    old = sample_chance(FridayGame(level=2, empty_aging="reshuffle").new_initial_state(), np.random.default_rng(0))
    for spec in (f"bestfirst:nodes=50,eval=learned:{path}", f"mc:rollouts=2,eval=learned:{path}"):
        with pytest.raises(ValueError, match="empty_aging: network 'lose', game 'reshuffle'"):
            make_agent(FRIDAY, spec)(old, np.random.default_rng(0))
        assert make_agent(FRIDAY, spec)(start(level=2), np.random.default_rng(0)) in start(level=2).legal_actions()
    assert make_agent(FRIDAY, "mc:rollouts=2")(old, np.random.default_rng(0)) in old.legal_actions()  # hand-made: any rules


def test_bad_checkpoints_give_clear_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_friday_model(tmp_path / "missing.pt")
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_friday_evaluator(corrupt)
    with pytest.raises(CheckpointError, match="inputs"):
        load_friday_model(_save(tmp_path / "wide.pt", ValueMLP(NetConfig(NUM_FEATURES + 1, (8,)))))
    with pytest.raises(CheckpointError, match="rule options"):
        load_friday_model(
            _save(
                tmp_path / "opt.pt",
                ValueMLP(NetConfig(NUM_FEATURES, (8,))),
                options={**FridayGame().spec.options, "abilities": "after_free"},
            )
        )
    with pytest.raises(CheckpointError, match="game"):
        load_friday_model(_save(tmp_path / "trap.pt", ValueMLP(NetConfig(NUM_FEATURES, (8,))), game="trap"))


def test_calibration_bins_hold_equal_counts_and_their_means():
    predicted = np.arange(20, dtype=float)
    observed = predicted * 2
    won = (predicted >= 15).astype(float)
    rows = calibration(predicted, observed, won, bins=4)
    assert [r["n"] for r in rows] == [5, 5, 5, 5]
    assert [r["predicted"] for r in rows] == [2, 7, 12, 17]
    assert [r["observed"] for r in rows] == [4, 14, 24, 34]
    assert [r["win_rate"] for r in rows] == [0, 0, 0, 1]


def _tiny(run_dir, **kw) -> Args:
    base = dict(
        run_dir=str(run_dir),
        minutes=None,
        iterations=2,
        games_per_iter=4,
        nodes=40,
        workers=1,
        hidden=(8,),
        batch_size=32,
        epochs=1.0,
        progress=False,
    )
    base.update(kw)
    return Args(**base)


def test_training_learns_resumes_and_is_deterministic(tmp_path):
    train(_tiny(tmp_path / "a"))
    train(_tiny(tmp_path / "b"))
    a, meta = load_friday_model(tmp_path / "a" / "checkpoint.pt")
    b, _ = load_friday_model(tmp_path / "b" / "checkpoint.pt")
    assert meta["iteration"] == 2 and meta["games"] == 8
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    assert (tmp_path / "a" / "nets" / "iter0002.pt").exists()
    with np.load(tmp_path / "a" / "buffer.npz") as data:
        n_states = len(data["y"])
        assert n_states > 8 and np.all(np.abs(data["y"]) < 1)  # returns / SCALE
    # resume: one more iteration, with the buffer read back and the iteration-2 network searching
    train(_tiny(tmp_path / "a", iterations=3, out=str(tmp_path / "final.pt")))
    _, meta = load_friday_model(tmp_path / "a" / "checkpoint.pt")
    assert meta["iteration"] == 3 and meta["games"] == 12
    with np.load(tmp_path / "a" / "buffer.npz") as data:
        assert len(data["y"]) > n_states
    assert load_friday_evaluator(tmp_path / "final.pt").params.shape == a.export().shape
    with pytest.raises(ValueError, match="another network"):
        train(_tiny(tmp_path / "a", iterations=4, hidden=(16,)))
    with pytest.raises(ValueError, match="another return"):
        train(_tiny(tmp_path / "a", iterations=4, target="progress"))


def test_the_progress_target_trains_on_progress_returns_and_loads_its_own_kernel(tmp_path):
    train(_tiny(tmp_path / "p", iterations=1, target="progress", worlds=2))
    with np.load(tmp_path / "p" / "buffer.npz") as data:
        y = data["y"] * SCALE
    # no game is won: a progress return is -3 per undefeated hazard (30 or 31 hazards: -93..0)
    assert np.all(y <= 0) and np.all(y >= -93) and np.all(np.round(y) % 3 == 0)
    ev = load_friday_evaluator(tmp_path / "p" / "nets" / "iter0001.pt")
    assert ev.kernel is friday_progress_value
    assert load_friday_evaluator(tmp_path / "p" / "nets" / "iter0001.pt").kernel is not friday_value
    with pytest.raises(ValueError, match="unknown target"):
        train(_tiny(tmp_path / "q", target="wins"))


def test_monte_carlo_self_play_learns_the_outcome_return_and_is_evaluated_in_the_same_search(tmp_path):
    args = _tiny(
        tmp_path / "mc",
        iterations=2,
        planner="mc",
        target="outcome",
        rollouts=2,
        horizon=1,
        games_per_iter=4,
        eval_every=2,
        eval_games=1,
    )
    # no network yet: rollouts to the end; then the network at the horizon, against Fridai's score there
    assert search_spec(args, None) == "mc:rollouts=2"
    net = tmp_path / "net.pt"
    assert search_spec(args, net) == f"mc:rollouts=2,horizon=1,eval=learned:{net}"
    assert search_spec(args, None, evaluating=True) == "mc:rollouts=2,horizon=1,eval=fridai"
    train(args)
    with np.load(tmp_path / "mc" / "buffer.npz") as data:
        y = data["y"] * SCALE
    # every state of a game shares its outcome return: a lost game's score (>= -90 with 30 hazards
    # left, <= 150) plus 10 per step; the clip keeps |y| below SCALE
    assert len(y) > 8 and np.all(y >= -90 - 1e-3) and np.all(y < SCALE)
    assert len(np.unique(np.round(y, 3))) <= 8  # one value per game, 8 games
    ev = load_friday_evaluator(tmp_path / "mc" / "nets" / "iter0002.pt")
    assert ev.kernel is friday_outcome_value
    # beside it, the P(win) network: trained on won 1/0, calibrated on the second iteration's new
    # games, and refused as a search evaluator (it predicts no return)
    with np.load(tmp_path / "mc" / "win_buffer.npz") as data:
        assert len(data["y"]) == len(y) and set(np.unique(data["y"])) <= {0.0, 1.0}
    table = (tmp_path / "mc" / "calibration.md").read_text()
    assert "iteration 2" in table and "| predicted P(win) | observed win rate |" in table
    with pytest.raises(CheckpointError, match="unknown return 'win'"):
        load_friday_evaluator(tmp_path / "mc" / "win.pt")
    agent = make_agent(FRIDAY, f"mc:rollouts=2,horizon=1,eval=learned:{tmp_path / 'mc' / 'nets' / 'iter0002.pt'}")
    play_legally(start(level=2), agent, np.random.default_rng(0))  # a whole game with the network at the rollouts' horizon
    for bad in (dict(planner="alphazero"), dict(planner="mc", horizon=0)):
        with pytest.raises(ValueError, match="planner"):
            train(_tiny(tmp_path / "bad", **bad))


def test_training_arguments_and_refusals(tmp_path):
    args = parse_args(["friday", "--games-per-iter", "8", "--nodes", "100", "--hidden", "32", "16"])
    assert args.games_per_iter == 8 and args.nodes == 100 and args.hidden == (32, 16)
    with pytest.raises(ValueError, match="default rule options"):
        train(_tiny(tmp_path / "x", game_options={"abilities": "after_free"}))
    with pytest.raises(ValueError, match="Friday only"):
        train(_tiny(tmp_path / "y", game="trap"))


def test_the_shipped_network_watches_a_game_from_the_command_line(capsys):
    from tablegym.experiments.cli import main

    model, meta = load_friday_model()  # models/checkpoints/friday.pt
    assert model.config.num_features == NUM_FEATURES and meta["game"] == "friday" and meta["iteration"] >= 1
    assert main(["play", "friday", "--agent", "search", "--eval", "learned", "--quiet", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "watching 'search:eval=learned'" in out and out.strip().splitlines()[-1].startswith("final score ")


def test_the_shipped_planner_network_sits_at_the_horizon_of_mc_and_plays_from_the_command_line(capsys):
    from tablegym.experiments.cli import main
    from tablegym.models.friday.agents import LEARNED_HORIZON
    from tablegym.models.friday.learned import MC_CHECKPOINT

    model, meta = load_friday_model(MC_CHECKPOINT)  # models/checkpoints/friday_mc.pt
    assert meta["args"]["planner"] == "mc" and meta["args"]["target"] == "outcome"
    assert meta["args"]["horizon"] == LEARNED_HORIZON  # mc:eval=learned cuts where the network was trained
    agent = make_agent(FRIDAY, "mc:rollouts=8,eval=learned")
    assert agent.horizon == LEARNED_HORIZON and agent.evaluator.kernel is friday_outcome_value
    assert np.array_equal(agent.evaluator.params, model.export())
    assert make_agent(FRIDAY, "mc:rollouts=8").horizon == 0  # the hand-made outcome: rollouts to the end
    assert main(["play", "friday", "--agent", "mc", "--eval", "learned", "--quiet", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "watching 'mc:eval=learned'" in out and out.strip().splitlines()[-1].startswith("final score ")


def test_reports_give_the_step_each_game_ended_in_and_paired_score_differences(tmp_path):
    import json

    from tablegym.experiments.friday.evaluate import paired_report, report

    opts = FridayGame().spec.options
    lines = []
    for agent, scores, steps in (("a", [-60, -70, -80], [1, 1, 0]), ("b", [-50, -58, -75], [1, 3, 2])):
        for game, (score, step) in enumerate(zip(scores, steps)):
            lines.append(
                json.dumps(
                    {
                        "game": game,
                        "agent": agent,
                        "level": 1,
                        "seed": 0,
                        "options": opts,
                        "won": False,
                        "score": score,
                        "life": 0,
                        "step": step,
                        "pirates_beaten": 0,
                        "decisions": 9,
                        "seconds": 1.0,
                        "polled": 0,
                    }
                )
            )
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    table = report([str(path)])
    assert "| a | 1 | 3 | 0 | 0.0% " in table and "| 33% / 67% / 0% / 0% |" in table
    assert "| 0% / 33% / 33% / 33% |" in table  # b: yellow, pirates, red
    paired = paired_report([str(path)], "a")
    # differences +10, +12, +5: mean +9.0, sd 3.606, 1.96 x 3.606 / sqrt(3) = 4.1
    assert "| b | 1 | 3 | +9.0 ± 4.1 |" in paired and "| a |" not in paired


def test_the_variant_report_pairs_an_agent_with_its_own_games_under_other_rules(tmp_path):
    import json

    from tablegym.experiments.friday.evaluate import variant_report

    new, old = FridayGame().spec.options, {**FridayGame(empty_aging="reshuffle").spec.options}
    del old["sort_draws"]  # records of the first reading have no such key

    def write(name, options, wins, scores):
        path = tmp_path / name
        path.write_text(
            "".join(
                json.dumps(
                    {
                        "game": g,
                        "agent": "a",
                        "level": 1,
                        "seed": 0,
                        "options": options,
                        "won": w,
                        "score": s,
                        "life": 0,
                        "step": 3,
                        "pirates_beaten": 0,
                        "decisions": 9,
                        "seconds": 1.0,
                        "polled": 0,
                    }
                )
                + "\n"
                for g, (w, s) in enumerate(zip(wins, scores))
            )
        )
        return str(path)

    here = write("new.jsonl", new, [True, False, False, False], [100, -50, -60, -40])
    there = write("old.jsonl", old, [True, True, False, True], [110, 90, -60, 80])
    table = variant_report([here], [there])
    # wins -0, -1, 0, -1: mean -50 points, sd 57.7, 1.96 x 57.7 / 2 = 56.6
    # scores -10, -140, 0, -120: mean -67.5, sd 72.7, 1.96 x 72.7 / 2 = 71.3
    assert (
        "| a | 1 | empty_aging reshuffle -> lose, sort_draws - -> one_at_a_time | 4 | -50.0 ± 56.6 | -67.5 ± 71.3 | 3 |" in table
    )
    assert variant_report([here], [here]).count("\n") == 1  # the same options: nothing to pair


def test_the_speed_benchmark_runs_the_search_with_either_evaluator():
    from tablegym.experiments.friday.bench import bench_search

    for evaluator in ("fridai", "learned"):
        out = bench_search(nodes=300, positions=2, seed=1, evaluator=evaluator)
        polled, generated = out["polled_per_s"], out["generated_per_s"]
        assert out["positions"] == 2 and not generated < polled  # NaN: a search shorter than the clock's tick
        assert math.isnan(polled) or polled > 0
