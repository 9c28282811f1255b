"""The Threes n-tuple network: symmetry, PyTorch/numba agreement, checkpoints, TD learning and
the learned expectimax against a reference built on the rules core's chance nodes."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.threes.board import board_score, swipe
from tablegym.envs.threes.core import ThreesGame
from tablegym.envs.threes.expectimax import LEAF, afterstate_chance
from tablegym.envs.threes.ntuple import (
    BOARD_PART,
    HINT_CELL,
    HINT_PART,
    WHOLE,
    NTupleConfig,
    ntuple_update,
    ntuple_update_tc,
    ntuple_value,
    plan_hint_value,
    plan_indices,
    plan_value,
    symmetries,
)
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import CheckpointError, save_checkpoint
from tablegym.models.threes.ntuple_net import (
    NTupleNet,
    load_ntuple,
    load_ntuple_with_metadata,
    ranks_tensor,
    restage,
    save_ntuple,
)
from tablegym.training.threes.train import Args, parse_args, play_and_learn, train
from tests.test_threes import board_state
from tests.test_threes_search import positions

THREES = ThreesGame()

boards = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def permute(board: int, perm: np.ndarray) -> int:
    out = 0
    for c in range(16):
        out |= ((board >> (4 * c)) & 0xF) << (4 * int(perm[c]))
    return int(np.array(out, dtype=np.uint64).view(np.int64))


def random_net(seed=0, config=None) -> NTupleNet:
    net = NTupleNet(config or NTupleConfig())
    rng = np.random.default_rng(seed)
    net.tables().weights[:] = rng.normal(size=net.table.weight.shape[0]).astype(np.float32)
    return net


def test_the_eight_symmetries_form_the_board_group_and_commute_with_swipes():
    perms = symmetries()
    assert len({p.tobytes() for p in perms}) == 8
    assert all(sorted(p) == list(range(16)) for p in perms)
    rng = np.random.default_rng(3)
    samples = [int(b) for b in rng.integers(-(2**63), 2**63 - 1, size=200, dtype=np.int64)]
    for perm in perms:
        # each symmetry maps every swipe direction to one direction, on every board
        for d in range(4):
            images = [
                e
                for e in range(4)
                if all(permute(int(swipe(b, d)[0]), perm) == int(swipe(permute(b, perm), e)[0]) for b in samples)
            ]
            assert len(images) == 1


@settings(max_examples=60, deadline=None)
@given(board=boards, hint=st.integers(1, 4))
def test_value_is_the_same_in_all_eight_orientations(board, hint):
    t = _NET.tables()
    v = t.value(board, hint)
    for perm in symmetries():
        assert t.value(permute(board, perm), hint) == pytest.approx(v, rel=1e-5, abs=1e-3)


SMALL_TUPLES = ((0, 1, 2, 3), (HINT_CELL, 4, 5, 6))
"""Two 4-tuples, one holding the hint: tables small enough to train in a test."""
_NET = random_net(0)


_cells = st.integers(0, 15) | st.just(HINT_CELL)


@settings(max_examples=40, deadline=None)
@given(
    tuples=st.lists(st.lists(_cells, min_size=1, max_size=5, unique=True), min_size=1, max_size=4),
    board=boards,
    hint=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_the_searches_lookup_reads_the_same_entries_in_the_same_order(tuples, board, hint, seed):
    """``plan_value`` (the searches' lookup) is ``ntuple_value`` to the last bit, hint anywhere
    in a tuple, for the whole value and for each part; so is the hint part from ``plan_indices``."""
    net = random_net(seed, NTupleConfig(tuples=tuple(tuple(t) for t in tuples), stage_ranks=(5, 9)))
    t = net.tables()
    for part in (WHOLE, BOARD_PART, HINT_PART):
        exact = ntuple_value(np.int64(board), hint, t.weights, t.cells, t.offsets, t.stage_ranks, part)
        assert plan_value(np.int64(board), hint, t.weights, t.plan, t.offsets, t.stage_ranks, part) == exact
    indices = np.empty((2, t.cells.shape[0] * t.cells.shape[1]), dtype=np.int64)
    count = plan_indices(np.int64(board), t.weights, t.plan, t.offsets, t.stage_ranks, indices)
    for h in range(1, 5):  # the hint part from indices worked out once, for every hint
        exact = ntuple_value(np.int64(board), h, t.weights, t.cells, t.offsets, t.stage_ranks, HINT_PART)
        assert plan_hint_value(h, t.weights, indices, count) == exact


def test_pytorch_module_and_compiled_lookup_agree_in_every_stage():
    net = random_net(1, NTupleConfig(stage_ranks=(6, 11)))
    rng = np.random.default_rng(1)
    boards_ = rng.integers(-(2**63), 2**63 - 1, size=100, dtype=np.int64)
    boards_[:30] &= 0x5555_5555_5555_5555  # ranks <= 5: stage 0
    boards_[30:60] &= 0x7777_7777_7777_7777  # ranks <= 7: mostly stage 1
    hints = rng.integers(1, 5, size=100)
    with torch.no_grad():
        torch_values = net(ranks_tensor(boards_), torch.as_tensor(hints)).numpy()
    t = net.tables()
    compiled = [t.value(int(b), int(h)) for b, h in zip(boards_, hints)]
    assert np.allclose(torch_values, compiled, rtol=1e-5, atol=1e-3)
    stages = {int((np.max(ranks_tensor([b]).numpy()) >= np.array([6, 11])).sum()) for b in boards_}
    assert stages == {0, 1, 2}


def test_compiled_update_is_a_gradient_step_of_the_module():
    net = random_net(2)
    t = net.tables()
    board, hint = int(positions(0, 1)[0].board), 3
    out = net(ranks_tensor([board]), torch.tensor([hint]))
    out.sum().backward()
    expected = t.weights + 0.25 * net.table.weight.grad.view(-1).numpy()
    ntuple_update(np.int64(board), hint, t.weights, t.cells, t.offsets, t.stage_ranks, 0.25)
    assert np.allclose(t.weights, expected)


def test_temporal_coherence_update_worked_by_hand():
    # One tuple read in one orientation: exactly one entry is active. Its rate starts at 1, then
    # is |sum of errors| / sum of |errors|: after errors +4 and -2 it is |2| / 6 = 1/3.
    net = NTupleNet(NTupleConfig(tuples=((0,),), stage_ranks=(), symmetric=False))
    t = net.tables()
    coherence = np.zeros((2, t.weights.shape[0]), dtype=np.float32)
    board = np.int64(3)  # rank 3 on cell 0: entry 3
    for delta, expected in [(4.0, 0.5 * 4.0), (-2.0, 2.0 + 0.5 * 1.0 * -2.0), (6.0, 1.0 + 0.5 * (2 / 6) * 6.0)]:
        ntuple_update_tc(board, 1, t.weights, coherence, t.cells, t.offsets, t.stage_ranks, 0.5, delta)
        assert t.weights[3] == pytest.approx(expected)
    assert coherence[:, 3].tolist() == [8.0, 12.0] and np.count_nonzero(t.weights) == 1


def test_temporal_coherence_training_is_deterministic_and_learns():
    config = NTupleConfig(tuples=((0, 1, 2, 3), (4, 5, 6, 7), (HINT_CELL, 0, 1, 2)))
    nets = [NTupleNet(config) for _ in range(2)]
    cohs = [np.zeros((2, n.tables().weights.shape[0]), dtype=np.float32) for n in nets]
    runs = [_play(n, 300, seed=7, alpha=1.0, lam=0.5, coherence=c) for n, c in zip(nets, cohs)]
    assert np.array_equal(*runs) and np.array_equal(nets[0].tables().weights, nets[1].tables().weights)
    # every entry learned from has |sum| <= sum of |errors|, so every rate lies in [0, 1]
    assert (np.abs(cohs[0][0]) <= cohs[0][1] + 1e-3).all() and cohs[0][1].max() > 0
    before = _play(NTupleNet(config), 300, seed=99)[:, 0].mean()
    _play(nets[0], 3000, seed=8, alpha=1.0, lam=0.5, coherence=cohs[0])
    assert _play(nets[0], 300, seed=99)[:, 0].mean() > 1.5 * before


def test_config_rejects_bad_tuples_and_stages():
    with pytest.raises(ValueError, match="distinct cells"):
        NTupleConfig(tuples=((0, 0, 1),))
    with pytest.raises(ValueError, match="distinct cells"):
        NTupleConfig(tuples=((0, 17),))
    with pytest.raises(ValueError, match="1 to 6 cells"):
        NTupleConfig(tuples=(tuple(range(7)),))
    with pytest.raises(ValueError, match="stage_ranks"):
        NTupleConfig(stage_ranks=(11, 6))
    assert NTupleConfig.from_dict(NTupleConfig().to_dict()) == NTupleConfig()


def test_sparse_checkpoint_roundtrip_and_clear_errors(tmp_path):
    net = NTupleNet(NTupleConfig(tuples=((0, 1, 2), (HINT_CELL, 5, 6))))
    w = net.tables().weights
    w[[3, 500, 9000]] = [1.5, -2.0, 7.25]
    path = save_ntuple(tmp_path / "n.pt", net, {"games": 12})
    again = load_ntuple(path)
    assert again.config == net.config
    assert np.array_equal(again.tables().weights, w)
    # the float16 file (shipped checkpoints) keeps every value within 2^-11 of the largest
    half = load_ntuple(save_ntuple(tmp_path / "h.pt", net, half=True))
    assert np.allclose(half.tables().weights, w, atol=7.25 * 2**-11, rtol=0)
    assert np.count_nonzero(half.tables().weights) == 3
    pruned = load_ntuple(save_ntuple(tmp_path / "p.pt", net, prune=2.0)).tables().weights
    assert np.flatnonzero(pruned).tolist() == [9000] and pruned[9000] == 7.25
    # a damaged file, a file of another kind, a missing file: CheckpointError naming the problem
    (tmp_path / "bad.pt").write_bytes(path.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_ntuple(tmp_path / "bad.pt")
    save_checkpoint(tmp_path / "dense.pt", model=torch.nn.Linear(2, 1), metadata={"game": "threes", "options": {"hint": "+"}})
    with pytest.raises(CheckpointError, match="not an n-tuple"):
        load_ntuple(tmp_path / "dense.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_ntuple(tmp_path / "nope.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        make_agent(THREES, f"expectimax:depth=1,eval=learned:{tmp_path / 'nope.pt'}")


def _play(net, games, seed, alpha=0.0, lam=0.0, coherence=None):
    t = net.tables()
    stats = np.zeros((games, 5))
    if coherence is None:
        coherence = np.zeros((2, 0), dtype=np.float32)
    play_and_learn(
        games,
        seed,
        alpha,
        lam,
        ThreesGame().new_initial_state().array,
        t.weights,
        t.cells,
        t.offsets,
        t.stage_ranks,
        stats,
        coherence,
    )
    return stats


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_training_is_deterministic_under_a_seed_and_learns(lam):
    config = NTupleConfig(tuples=((0, 1, 2, 3), (4, 5, 6, 7), (HINT_CELL, 0, 1, 2)))
    a, b = NTupleNet(config), NTupleNet(config)
    sa, sb = _play(a, 300, seed=7, alpha=0.1, lam=lam), _play(b, 300, seed=7, alpha=0.1, lam=lam)
    assert np.array_equal(sa, sb) and np.array_equal(a.tables().weights, b.tables().weights)
    # every game ends with a legal Threes score and at least one swipe
    assert (sa[:, 2] > 0).all() and (sa[:, 0] > 0).all()
    # learning helps: after 3,000 more games greedy play scores far above the untrained greedy
    # player (which maximises the immediate score only), measured on the same 300 fresh games
    before = _play(NTupleNet(config), 300, seed=99)[:, 0].mean()
    _play(a, 3000, seed=8, alpha=0.1, lam=lam)
    after = _play(a, 300, seed=99)[:, 0].mean()
    assert after > 1.5 * before


def learned_reference(state, t, depth):
    """Expectimax over the rules core's own chance nodes, scoring afterstates with the network."""

    def best(s, depth):
        if s.is_terminal():
            return float(s.score)
        return max(swipe_value(s, a, depth) for a in s.legal_actions())

    def swipe_value(s, a, depth):
        after, _ = swipe(np.int64(s.board), a)
        if depth == 1:
            return float(board_score(after)) + t.value(int(after), int(s.search_inputs()[4]))
        total = 0.0
        for insert, p in s.child(a).chance_outcomes():
            for draw, q in s.child(a).child(insert).chance_outcomes():
                total += p * q * best(s.child(a).child(insert).child(draw), depth - 1)
        return total

    return {a: swipe_value(state, a, depth) for a in state.legal_actions()}


@pytest.mark.parametrize("depth", [1, 2])
def test_learned_expectimax_equals_a_reference_over_the_rules_core(tmp_path, depth):
    net = random_net(4)
    path = save_ntuple(tmp_path / "n.pt", net)
    agent = make_agent(THREES, f"expectimax:depth={depth},eval=learned:{path}")
    assert agent.models.tolist() == afterstate_chance(depth).tolist() and agent.models[-1] == LEAF
    t = net.tables()
    big = board_state([[8, 1, 2, 3], [0, 3, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]], deck=(2, 2, 3))
    for s in positions(5, 3) + [big.child(64 + 4), big.child(64 + 1)]:
        action = agent(s)
        reference = learned_reference(s, t, depth)
        for a in range(4):
            if a in reference:
                assert agent.values[a] == pytest.approx(reference[a], rel=1e-6)
            else:
                assert agent.values[a] == -np.inf
        assert reference[action] == max(reference.values())


def test_the_leaf_hint_reaches_the_network(tmp_path):
    # A network that reads only the card about to enter: each root value is the afterstate's
    # score plus 100 x the hint code.
    net = NTupleNet(NTupleConfig(tuples=((HINT_CELL,),), symmetric=False))
    net.tables().weights[:5] = [0, 100, 200, 300, 400]
    path = save_ntuple(tmp_path / "hint.pt", net)
    agent = make_agent(THREES, f"greedy:eval=learned:{path}")
    for s in positions(6, 3):
        agent(s)
        hint = s.search_inputs()[4]
        for a in s.legal_actions():
            assert agent.values[a] == board_score(swipe(np.int64(s.board), a)[0]) + 100 * hint


def test_train_resumes_and_cli_flags(tmp_path):
    run = tmp_path / "run"
    args = Args(run_dir=str(run), minutes=0, games=40, log_every=20, tuples=SMALL_TUPLES, out=str(tmp_path / "final.pt"))
    train(args, progress=False)
    train(replace(args, games=80), progress=False)  # resumes: 80 games in all
    _, meta = load_ntuple_with_metadata(run / "checkpoint.pt")
    assert meta["games"] == 80
    assert (tmp_path / "final.pt").exists() and (run / "args.json").exists()
    assert any(p.name.startswith("events.out.tfevents") for p in run.iterdir())
    # Hogwild: two processes learn into one shared table; the module keeps the result
    shared = Args(run_dir=str(tmp_path / "hogwild"), minutes=0, games=600, log_every=100, workers=2, tuples=SMALL_TUPLES)
    train(shared, progress=False)
    net, meta = load_ntuple_with_metadata(tmp_path / "hogwild" / "checkpoint.pt")
    assert meta["games"] == 600 and np.count_nonzero(net.tables().weights) > 1000
    other = Args(run_dir=str(run), minutes=0, games=10, tuples=((0, 1, 2),))
    with pytest.raises(CheckpointError, match="another shape"):
        train(other, progress=False)
    # temporal coherence: its accumulators are saved beside the checkpoint and resumed
    tc = Args(run_dir=str(tmp_path / "tc"), minutes=0, games=40, log_every=20, alpha=1.0, tc=True, tuples=SMALL_TUPLES)
    train(tc, progress=False)
    saved = np.load(tmp_path / "tc" / "coherence.npy")
    tc_net, tc_meta = load_ntuple_with_metadata(tmp_path / "tc" / "checkpoint.pt")
    assert saved.shape == (2, tc_net.tables().weights.shape[0]) and saved[1].max() > 0 and tc_meta["tc"]
    train(tc, progress=False)
    assert (np.load(tmp_path / "tc" / "coherence.npy")[1] >= saved[1]).all()
    with pytest.raises(CheckpointError, match="without --tc"):
        train(replace(tc, run_dir=str(run)), progress=False)
    with pytest.raises(CheckpointError, match="with --tc"):
        train(replace(tc, tc=False), progress=False)
    (tmp_path / "tc" / "coherence.npy").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="missing or corrupt"):
        train(tc, progress=False)
    shared_tc = replace(tc, run_dir=str(tmp_path / "tc2"), workers=2, games=200, log_every=50)
    train(shared_tc, progress=False)
    assert np.load(tmp_path / "tc2" / "coherence.npy")[1].max() > 0
    parsed = parse_args(["--games", "5", "--minutes", "0", "--tuples", "h,0,1", "2,3", "--stage-ranks"])
    assert parsed.tuples == ((HINT_CELL, 0, 1), (2, 3)) and parsed.stage_ranks == () and not parsed.tc
    assert parse_args(["--tc", "--alpha", "1"]).tc
    with pytest.raises(SystemExit):
        parse_args(["--tuples", "0,x"])


def test_restaging_keeps_every_value_when_the_new_splits_include_the_old():
    old = random_net(4, NTupleConfig(tuples=((0, 1, 2, 3), (HINT_CELL, 4, 5)), stage_ranks=(11,)))
    new = restage(old, (9, 11, 12, 13))
    assert new.config.num_stages == 5 and new.config.tuples == old.config.tuples
    rng = np.random.default_rng(4)
    t_old, t_new = old.tables(), new.tables()
    for _ in range(300):
        ranks = rng.integers(0, rng.integers(2, 16), size=16)  # highest ranks spread over every stage
        board = int(np.array(sum(int(r) << (4 * c) for c, r in enumerate(ranks)), dtype=np.uint64).view(np.int64))
        hint = int(rng.integers(1, 5))
        assert t_new.value(board, hint) == t_old.value(board, hint)
    # a coarser split cannot keep the values: stage 12+ boards now read the 768 stage's copy of stage 0
    merged = restage(old, ())
    assert merged.config.num_stages == 1
    assert np.array_equal(merged.tables().weights, old.tables().weights[: old.stage_size])


def test_training_warm_starts_from_another_network(tmp_path):
    first = Args(run_dir=str(tmp_path / "a"), minutes=0, games=40, log_every=20, tuples=SMALL_TUPLES)
    train(first, progress=False)
    warm = Args(
        run_dir=str(tmp_path / "b"),
        minutes=0,
        games=20,
        log_every=20,
        tuples=SMALL_TUPLES,
        stage_ranks=(11, 12),
        init_from=str(tmp_path / "a" / "checkpoint.pt"),
    )
    train(warm, progress=False)
    net, meta = load_ntuple_with_metadata(tmp_path / "b" / "checkpoint.pt")
    assert net.config.stage_ranks == (11, 12) and meta["games"] == 20
    assert np.count_nonzero(net.tables().weights) > 0
    bad = Args(
        run_dir=str(tmp_path / "c"), minutes=0, games=5, tuples=((0, 1, 2),), init_from=str(tmp_path / "a" / "checkpoint.pt")
    )
    with pytest.raises(CheckpointError, match="other tuples"):
        train(bad, progress=False)
    assert parse_args(["--init-from", "x.pt"]).init_from == "x.pt"


def test_restart_shaping_replays_late_positions_and_leaves_plain_td_unchanged():
    config = NTupleConfig(tuples=SMALL_TUPLES)
    template = ThreesGame().new_initial_state().array

    def play(restart, columns=6, rank=7):
        t = NTupleNet(config).tables()
        stats = np.zeros((400, columns))
        play_and_learn(
            400,
            3,
            0.1,
            0.0,
            template,
            t.weights,
            t.cells,
            t.offsets,
            t.stage_ranks,
            stats,
            np.zeros((2, 0), dtype=np.float32),
            restart,
            rank,
            50,
        )
        return stats, t.weights

    plain5 = _play(NTupleNet(config), 400, seed=3, alpha=0.1)
    plain6, _ = play(0.0)
    # restart 0 draws nothing extra: the same games as plain TD, none restarted
    assert np.array_equal(plain6[:, :5], plain5) and not plain6[:, 5].any()
    a, wa = play(0.5)
    b, wb = play(0.5)
    assert np.array_equal(a, b) and np.array_equal(wa, wb)  # deterministic under a seed
    restarted = a[:, 5] == 1
    # about half the games restart once the pool has positions (rank 7 = 48 is reached in most games)
    assert 0.3 < restarted.mean() < 0.6
    # a restarted game starts where the highest card had reached rank 7, and cards never shrink
    assert (a[restarted, 1] >= 7).all()
    # and it plays fewer swipes than a fresh game: it started mid-game
    assert a[restarted, 2].mean() < a[~restarted, 2].mean()


def test_restart_options_are_checked():
    with pytest.raises(ValueError, match="--restart"):
        Args(restart=1.0)
    with pytest.raises(ValueError, match="--restart"):
        Args(restart_rank=0)


def test_compact_checkpoint_keeps_every_entry_within_half_a_quantisation_step(tmp_path):
    net = NTupleNet(NTupleConfig(tuples=((0, 1, 2, 3), (HINT_CELL, 5, 6, 7)), stage_ranks=(9, 11)))
    w = net.tables().weights
    rng = np.random.default_rng(5)
    touched = rng.choice(w.size, 5000, replace=False)
    w[touched] = rng.normal(0, 300, 5000).astype(np.float32)
    w[touched[0]] = -9000.0  # the largest magnitude sets the step
    path = save_ntuple(tmp_path / "c.pt", net, {"games": 3}, compact=True)
    again = load_ntuple(path)
    step = 9000.0 / 32767
    assert again.config == net.config
    assert np.abs(again.tables().weights - w).max() <= step / 2 + 1e-3
    # an entry that was zero stays zero: only the touched entries are stored
    assert set(np.flatnonzero(again.tables().weights)) <= set(touched.tolist())
    # the packed form is far smaller than the float16 one
    assert path.stat().st_size < 0.7 * save_ntuple(tmp_path / "h.pt", net, half=True).stat().st_size
    # damaged packed bytes inside a readable checkpoint: CheckpointError naming the problem
    from tablegym.models.checkpoint import load_checkpoint, save_checkpoint

    payload = load_checkpoint(path, game="threes", options={"hint": "+"})
    state = dict(payload["model"])
    state["value_lzma"] = state["value_lzma"][: len(state["value_lzma"]) // 2]
    save_checkpoint(tmp_path / "cut.pt", state=state, metadata=payload["metadata"])
    with pytest.raises(CheckpointError, match="does not match its n-tuple description"):
        load_ntuple(tmp_path / "cut.pt")
