"""A spec is read once into a plan that pickles, and built from it anywhere: the same agent for
every game x searcher x evaluator kind of the registry, a network file read once a process
(read again once it changes), a plan refused for rules it was not read for."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import tablegym.models.agents as agents
from tablegym.envs import make_game
from tablegym.envs.evaluator import WrongGameError
from tablegym.models.agents import build_agent, make_agent, plan_agent
from tablegym.models.export import save
from tests import test_route_matrix as matrix
from tests.test_route_matrix import cases, decision_state, evaluator_name

model_files = matrix.model_files  # the same fixture: an exported network and an SB3 zip for every game


@pytest.mark.parametrize("name, template, hand, kind", list(cases()))
def test_a_pickled_plan_builds_the_agent_its_spec_names(model_files, name, template, hand, kind):
    evaluator = evaluator_name(name, hand, kind, model_files)
    if evaluator is None:
        return  # no shipped network for this game (test_route_matrix checks that)
    game = make_game(name)
    spec = template.format(E=evaluator)
    plan = pickle.loads(pickle.dumps(plan_agent(game, spec)))
    assert plan == plan_agent(game, spec) and plan.spec == spec
    state = decision_state(game)
    direct, planned = make_agent(game, spec), build_agent(plan, game)
    assert type(planned) is type(direct) and planned.name == direct.name
    assert planned(state, np.random.default_rng(1)) == direct(state, np.random.default_rng(1))


def _counting(monkeypatch, name: str) -> list:
    calls: list = []
    real = getattr(agents, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(agents, name, counted)
    return calls


def _mlp_file(game, path, seed: int):
    torch.manual_seed(seed)
    size = int(np.prod(game.spec.observation_shape))
    net = torch.nn.Sequential(torch.nn.Linear(size, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1), torch.nn.Tanh())
    return save(net, game, path)


def test_a_match_reads_each_spec_once_and_its_network_once(tmp_path, monkeypatch):
    from tablegym.experiments.match import play_match

    game = make_game("trilobite-tiny")
    path = _mlp_file(game, tmp_path / "net.pt", 0)
    agents._PLANS.clear()
    agents._NETWORKS.clear()
    reads, loads = _counting(monkeypatch, "_read_plan"), _counting(monkeypatch, "load_evaluator")
    spec = f"alphabeta:eval=learned:{path},depth=2"
    result = play_match("trilobite-tiny", spec, "random", games=4, progress=False)
    assert result.games == 4
    assert sorted(call[1] for call in reads) == sorted([spec, "random"])
    assert len(loads) == 1


def test_a_network_file_changed_since_it_was_read_is_read_again(tmp_path):
    game = make_game("trilobite-tiny")
    path = tmp_path / "net.pt"
    spec = f"alphabeta:eval=learned:{path},depth=1"
    _mlp_file(game, path, 0)
    state = game.new_initial_state()
    first = make_agent(game, spec).evaluator
    assert make_agent(game, spec).evaluator is first  # unchanged: the one read
    _mlp_file(game, tmp_path / "other.pt", 1)
    (tmp_path / "other.pt").replace(path)
    second = make_agent(game, spec).evaluator
    assert second is not first and second(state, 0) != first(state, 0)


def test_a_plan_is_refused_for_rules_it_was_not_read_for():
    plan = plan_agent(make_game("trap"), "search:eval=composite,depth=1")
    with pytest.raises(WrongGameError, match=r"planned for trap \{.*'n': 7.*\}, not trap \{.*'n': 5"):
        build_agent(plan, make_game("trap", n=5))


def test_a_spec_that_is_not_a_string_is_refused_in_one_line():
    with pytest.raises(TypeError, match="agent specs are strings, got 3"):
        plan_agent(make_game("trilobite-tiny"), 3)


BAD_SPECS = [
    ("friday", "mc:rollouts=0", "rollouts must be a positive integer"),
    ("friday", "mc:rollouts=many", "rollouts must be a positive integer"),
    ("friday", "mc:horizon=-1", "horizon must be 0"),
    ("friday", "mc:eval=openness", "unknown Friday evaluator"),
    ("friday", "mc:nodes=10", "takes no option"),
    ("friday", "montecarlo", "unknown agent"),
    ("friday", "bestfirst:depth=3", "takes no option"),
    ("friday", "bestfirst:nodes=many", "nodes must be a positive integer"),
    ("friday", "bestfirst:nodes=10,worlds=11", "worlds must lie in"),
    ("friday", "bestfirst:worlds=0", "worlds must be a positive integer"),
    ("friday", "bestfirst:eval=openness", "unknown Friday evaluator"),
    ("friday", "bestfirst:nodes=0", "nodes must be a positive integer"),
    ("threes", "alphago", "unknown agent 'alphago' for threes"),
    ("threes", "greedy:eval=nope", "unknown Threes evaluator"),
    ("threes", "threesus:depth=3", "option"),
    ("friday", "trim:rollouts=3", "takes no option"),
]
"""(game, spec, what the refusal says): keys a searcher does not take, values out of range, names
no game knows."""


@pytest.mark.parametrize("game, spec, message", BAD_SPECS)
def test_a_bad_spec_is_refused_in_one_line(game, spec, message):
    with pytest.raises(ValueError, match=message) as refused:
        make_agent(make_game(game), spec)
    assert "\n" not in str(refused.value)
