"""The Sim regression experiment (experiments/sim/regress.py) on a tiny budget: export, agreement, match."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from tablegym.envs.sim.canonical import relabel
from tablegym.envs.sim.core import SimGame
from tablegym.experiments.sim.agreement import canonical_positions
from tablegym.experiments.sim.regress import LAYERS, Report, main, point_symmetries, relabelled, solved_dataset
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.export import from_state_dict

TRAINED, UNTRAINED = "MLP 16, regressed (exported)", "MLP 16, untrained"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Report, Path]:
    out = tmp_path_factory.mktemp("regress")
    argv = [
        "--hidden",
        "16",
        "--epochs",
        "20",
        "--games",
        "4",
        "--depth",
        "2",
        "--out",
        str(out / "r.md"),
        "--save",
        str(out / "net.pt"),
    ]
    return main(argv), out


def random_positions(count: int, seed: int) -> list:
    """Unfinished positions of random K6 games, in arbitrary labellings."""
    rng = np.random.default_rng(seed)
    out, s = [], SimGame(6).new_initial_state()
    while len(out) < count:
        if s.is_terminal():
            s = SimGame(6).new_initial_state()
            continue
        out.append(s)
        s = s.child(int(rng.choice(s.legal_actions())))
    return out


def test_the_compiled_export_is_the_torch_forward_pass(report):
    r, _ = report
    assert r.export_error < 1e-5
    positions = random_positions(40, seed=3)
    x = torch.from_numpy(np.stack([s.observation(s.current_player()).reshape(-1) for s in positions]))
    with torch.no_grad():
        expected = r.net(x).squeeze(1).double().numpy()
    got = np.array([r.evaluator(s, s.current_player()) for s in positions])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # seen by the other player, the value flips sign
    assert r.evaluator(positions[5], 1 - positions[5].current_player()) == pytest.approx(-got[5])


def test_sign_agreement_covers_the_2250_classes_and_the_holdout(report):
    r, _ = report
    for row in r.agreement.values():
        assert row["all 2,250"][1] == 2250
        assert row["held-out"][1] == row["held-out, relabelled"][1] == 450


def test_regression_beats_the_untrained_net_and_the_majority_answer(report):
    r, _ = report
    trained, untrained = r.agreement[TRAINED], r.agreement[UNTRAINED]
    assert trained["all 2,250"][0] > untrained["all 2,250"][0] + 225  # 10 points more of the 2,250
    assert trained["held-out"][0] / 450 > 0.66  # +1 is the answer on 61% of the classes
    assert trained["held-out"][0] > untrained["held-out"][0]


def test_the_match_is_played_in_both_seats_without_draws(report):
    r, out = report
    m = r.match
    assert m.games == 4 and [s.games for s in m.seats] == [2, 2]
    assert m.draws == 0 and m.wins + m.losses == 4  # K6 cannot be drawn (R(3,3) = 6)
    text = (out / "r.md").read_text()
    assert text == r.markdown
    assert "| both seats | 4 |" in text and "python -m tablegym.experiments.sim.regress --hidden 16" in text


def test_the_saved_weights_rebuild_the_same_evaluator(report):
    r, out = report
    payload = load_checkpoint(out / "net.pt", game="sim", options={"n": 6})
    rebuilt = from_state_dict(payload["model"], LAYERS, SimGame(6))
    for s in random_positions(10, seed=4):
        assert rebuilt(s, 0) == r.evaluator(s, 0)


def test_relabelled_observations_are_the_relabelled_boards():
    # a random renaming of the six points, applied to observations, is the observation of the
    # board with its points renamed (canonical.relabel), and the solved value is unchanged
    positions = canonical_positions()[500:520]
    x, y = solved_dataset(positions)
    gathers = point_symmetries()
    rng = np.random.default_rng(0)
    ks = rng.integers(len(gathers), size=len(positions))
    perms = [np.array(p) for p in itertools.permutations(range(6))]
    boards = [SimGame(6).from_colours(relabel(s.colours, perms[k], 6)) for s, k in zip(positions, ks)]
    x2, y2 = solved_dataset(boards)
    np.testing.assert_array_equal(relabelled(x, gathers[ks]), x2)
    np.testing.assert_array_equal(y, y2)
