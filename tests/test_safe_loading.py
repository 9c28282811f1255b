"""A model file never runs code: hostile files against every loader reachable from a spec, the
command line or a documented function, and an audit of the source for unsafe loading calls.

Each hostile file carries a payload that would create a marker file if it ran; every test checks
that the loader refuses the file with a one-line error and that the marker does not exist.
"""

from __future__ import annotations

import ast
import base64
import functools
import importlib
import json
import os
import pickle
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import make_game, plugins
from tablegym.models.checkpoint import CheckpointError, UnsafeModelError, load_checkpoint
from tablegym.models.export import UnsupportedLayerError, from_sb3, from_torch, load_exported, save
from tablegym.models.learned import default_checkpoint, load_evaluator
from tablegym.models.sb3_files import TrustedCodeWarning, carried_code, read_sb3_network, restore, trusting

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for d in ("envs", "models", "search", "training", "experiments") for p in (ROOT / d).rglob("*.py")]
GAMES_WITH_OBSERVATION_KERNEL = [p.name for p in plugins() if p.observation]
LEARNED_GAMES = [p.name for p in plugins() if default_checkpoint(p.name).is_file() and p.name != "starship"]


class Payload:
    """Pickles as a call of ``os.system`` that creates ``marker``: what a hostile file carries."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.fixture
def marker(tmp_path: Path):
    path = tmp_path / "MARKER"
    yield path
    assert not path.exists(), "a hostile file ran its code"


def refused(call, error=UnsafeModelError, match: str | None = None) -> str:
    """Run ``call``; it must raise ``error`` with a one-line message (returned)."""
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and "\x1b" not in message, message
    if match:
        assert re.search(match, message), message
    return message


# -- Stable-Baselines3 zips ------------------------------------------------------------------------


def _env():
    import gymnasium

    return gymnasium.make("tablegym/Trilobite-v0")


SB3_MODELS = {  # name -> (algorithm, policy_kwargs): every kind the safe reader rebuilds
    "maskableppo": ("MaskablePPO", None),
    "maskableppo-relu-pi-vf": ("MaskablePPO", dict(activation_fn=nn.ReLU, net_arch=dict(pi=[32], vf=[16, 8]))),
    "ppo-leaky": ("PPO", dict(activation_fn=nn.LeakyReLU, net_arch=[24])),
    "ppo-sigmoid-no-hidden": ("PPO", dict(activation_fn=nn.Sigmoid, net_arch=[])),
    "dqn": ("DQN", None),
    "dqn-tanh": ("DQN", dict(activation_fn=nn.Tanh, net_arch=[32, 16])),
}


def _algorithm(name: str):
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN, PPO

    return {"MaskablePPO": MaskablePPO, "PPO": PPO, "DQN": DQN}[name]


def sb3_zip_files(root: Path, names=SB3_MODELS) -> dict[str, Path]:
    """A zip saved by SB3 itself for each of ``names`` (keys of ``SB3_MODELS``), in ``root``."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            algo, kwargs = SB3_MODELS[name]
            extra = dict(learning_starts=0, buffer_size=1000) if algo == "DQN" else dict(n_steps=64, batch_size=32)
            model = _algorithm(algo)("MlpPolicy", _env(), seed=3, device="cpu", policy_kwargs=kwargs, **extra)
            if algo != "DQN":
                model.learn(64)  # trained weights, not only the initial ones
            out[name] = root / f"{name}.zip"
            model.save(out[name])
    return out


@pytest.fixture(scope="module")
def sb3_zips(tmp_path_factory) -> dict[str, Path]:
    return sb3_zip_files(tmp_path_factory.mktemp("sb3"))


@pytest.mark.parametrize("name", SB3_MODELS)
def test_a_legitimate_sb3_zip_reads_the_same_network_as_sb3s_own_loader(sb3_zips, name):
    game = make_game("trilobite")
    safe = load_evaluator(game, sb3_zips[name])
    with pytest.warns(TrustedCodeWarning, match="runs any code the file carries"):
        trusted = load_evaluator(game, sb3_zips[name], trust_code=True)
    assert np.array_equal(safe.params, trusted.params)  # the same compiled network, bit for bit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _algorithm(SB3_MODELS[name][0]).load(sb3_zips[name], device="cpu")
    assert np.array_equal(safe.params, from_sb3(model, game).params)


def _rewrite(src: Path, dst: Path, *, data=None, members: dict[str, bytes] | None = None) -> Path:
    """A copy of the zip ``src`` with its ``data`` JSON edited by ``data(dict)`` and members replaced."""
    with zipfile.ZipFile(src) as z:
        contents = {n: z.read(n) for n in z.namelist()}
    if data is not None:
        entries = json.loads(contents["data"])
        data(entries)
        contents["data"] = json.dumps(entries).encode()
    contents.update(members or {})
    with zipfile.ZipFile(dst, "w") as z:
        for n, blob in contents.items():
            z.writestr(n, blob)
    return dst


def _serialized(obj) -> dict:
    return {":type:": "<class 'x'>", ":serialized:": base64.b64encode(pickle.dumps(obj)).decode()}


def _hostile_zips(src: Path, root: Path, marker: Path) -> dict[str, Path]:
    evil = _serialized(Payload(marker))

    def entry(key):
        return lambda d: d.__setitem__(key, evil)

    def lambda_schedule(d):  # what cloudpickle writes for a function: code by value
        import cloudpickle

        d["lr_schedule"] = {
            ":type:": "<class 'function'>",
            ":serialized:": base64.b64encode(cloudpickle.dumps(lambda f: f * 3e-4)).decode(),
        }

    def exec_kwargs(d):
        d["policy_kwargs"] = _serialized({"activation_fn": eval})  # builtins.eval by reference

    pickled_policy = pickle.dumps({"w": Payload(marker)})
    torch_saved = root / "payload.pt"
    torch.save({"x": Payload(marker)}, torch_saved)
    return {
        "lr_schedule": _rewrite(src, root / "lr.zip", data=entry("lr_schedule")),  # the crafted file
        "policy_kwargs": _rewrite(src, root / "kwargs.zip", data=entry("policy_kwargs")),
        "policy_class": _rewrite(src, root / "class.zip", data=entry("policy_class")),
        "observation_space": _rewrite(src, root / "space.zip", data=entry("observation_space")),
        "lambda schedule": _rewrite(src, root / "lambda.zip", data=lambda_schedule),
        "eval in policy_kwargs": _rewrite(src, root / "eval.zip", data=exec_kwargs),
        "policy.pth pickle": _rewrite(src, root / "pth.zip", members={"policy.pth": pickled_policy}),
        "policy.pth torch.save": _rewrite(src, root / "pth2.zip", members={"policy.pth": torch_saved.read_bytes()}),
        "pytorch_variables.pth": _rewrite(src, root / "vars.zip", members={"pytorch_variables.pth": torch_saved.read_bytes()}),
        "data not JSON": _rewrite(src, root / "nojson.zip", members={"data": b"\x80\x04not json"}),
    }


HOSTILE = [
    "lr_schedule",
    "policy_kwargs",
    "policy_class",
    "observation_space",
    "lambda schedule",
    "eval in policy_kwargs",
    "policy.pth pickle",
    "policy.pth torch.save",
    "pytorch_variables.pth",
    "data not JSON",
]


@pytest.mark.parametrize("variant", HOSTILE)
def test_a_hostile_sb3_zip_is_refused_without_running_its_code(sb3_zips, tmp_path, marker, variant):
    path = _hostile_zips(sb3_zips["maskableppo"], tmp_path, marker)[variant]
    game = make_game("trilobite")
    # what names code is UnsafeModelError; a member torch cannot even parse is refused as corrupt
    error = CheckpointError if variant in ("data not JSON", "policy.pth pickle") else UnsafeModelError
    message = refused(lambda: load_evaluator(game, path), error=error)
    assert str(path) in message
    refused(lambda: read_sb3_network(path), error=error)


@pytest.mark.parametrize(
    "name",
    [
        "torch.hub.load",
        "torch.utils.cpp_extension.load_inline",
        "torch.serialization.load",
        "torch.package.package_importer.PackageImporter",
    ],
)
def test_a_torch_function_that_loads_code_is_refused_in_policy_kwargs(sb3_zips, tmp_path, marker, name):
    """torch's own loaders fetch and run code (a hub repository, a C++ extension, a pickle, a
    package's modules): named in ``policy_kwargs`` they are refused like ``builtins.eval``, though
    torch's layer classes pass."""
    module, _, attr = name.rpartition(".")
    function = getattr(importlib.import_module(module), attr)
    path = _rewrite(
        sb3_zips["maskableppo"],
        tmp_path / "torch.zip",
        data=lambda d: d.__setitem__("policy_kwargs", _serialized({"activation_fn": function})),
    )
    message = refused(lambda: load_evaluator(make_game("trilobite"), path))
    assert f"policy_kwargs carries code ({name})" in message
    refused(lambda: read_sb3_network(path))


FUNCTIONS_BESIDE_DATA_CLASSES = [
    ("stable_baselines3.common.save_util", "load_from_pkl"),
    ("sb3_contrib.common.maskable.utils", "get_action_masks"),
    ("gymnasium.spaces.utils", "flatten"),
    ("tablegym.models.sb3_files", "read_sb3_network"),
    ("numpy.random.mtrand", "seed"),
    ("torch.nn.modules.module", "register_module_forward_hook"),
    ("torch.optim.optimizer", "register_optimizer_step_pre_hook"),
]
"""A function from a module under each prefix the scanner admits classes from."""


def test_the_allow_list_admits_classes_not_the_functions_beside_them():
    from tablegym.models.sb3_files import DATA_CLASS_MODULES, DATA_GLOBALS, is_data_global

    assert all(any(m.startswith(p) for m, _ in FUNCTIONS_BESIDE_DATA_CLASSES) for p in DATA_CLASS_MODULES)
    for module, name in FUNCTIONS_BESIDE_DATA_CLASSES:
        obj = getattr(importlib.import_module(module), name)
        assert callable(obj) and not isinstance(obj, type)
        assert not is_data_global(module, name), (module, name)
    assert is_data_global("torch.nn.modules.activation", "ReLU") and is_data_global("torch.optim.adam", "Adam")
    functions = {(m, n) for m, n in DATA_GLOBALS if not n[:1].isupper()}  # each admitted function by its own name
    assert functions and all(not m.endswith(".") for m, _ in functions)


@pytest.mark.parametrize("variant", ["lr_schedule", "policy_kwargs", "policy.pth pickle", "pytorch_variables.pth"])
def test_restoring_a_hostile_zip_into_a_model_is_refused(sb3_zips, tmp_path, marker, variant):
    from sb3_contrib import MaskablePPO

    path = _hostile_zips(sb3_zips["maskableppo"], tmp_path, marker)[variant]
    model = MaskablePPO("MlpPolicy", _env(), n_steps=64, seed=0, device="cpu")
    refused(lambda: restore(model, path), error=CheckpointError)


def test_restore_gives_a_model_built_here_the_files_weights_and_steps(sb3_zips):
    from sb3_contrib import MaskablePPO

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = MaskablePPO.load(sb3_zips["maskableppo"], device="cpu")
    model = restore(MaskablePPO("MlpPolicy", _env(), n_steps=64, seed=9, device="cpu"), sb3_zips["maskableppo"])
    assert model.num_timesteps == saved.num_timesteps == 64
    for (k, a), (_, b) in zip(model.policy.state_dict().items(), saved.policy.state_dict().items()):
        assert torch.equal(a, b), k
    from stable_baselines3 import PPO  # a MaskablePPO file is not a PPO's, though the shapes agree

    refused(
        lambda: restore(PPO("MlpPolicy", _env(), n_steps=64, device="cpu"), sb3_zips["maskableppo"]),
        error=CheckpointError,
        match="holds a MaskableActorCriticPolicy, this model a ActorCriticPolicy",
    )


def test_unsupported_sb3_networks_are_refused_with_the_export_route(tmp_path):
    from stable_baselines3 import PPO
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class Extractor(BaseFeaturesExtractor):  # defined here: pickled by value, code
        def __init__(self, space):
            super().__init__(space, 8)
            self.net = nn.Sequential(nn.Flatten(), nn.Linear(168, 8))

        def forward(self, x):
            return self.net(x)

    model = PPO("MlpPolicy", _env(), n_steps=64, device="cpu", policy_kwargs=dict(features_extractor_class=Extractor))
    model.save(tmp_path / "custom.zip")
    game = make_game("trilobite")
    message = refused(lambda: load_evaluator(game, tmp_path / "custom.zip"))
    assert "tablegym.models.export.save" in message and "--trust-model-code" in message
    # the route the refusal names: the user loads the file in their own process and exports it
    with pytest.raises(UnsupportedLayerError, match="features extractor Extractor"):  # cannot be compiled either way
        save(model, game, tmp_path / "critic.pt")
    plain = PPO("MlpPolicy", _env(), n_steps=64, device="cpu")
    save(plain, game, tmp_path / "critic.pt")
    assert np.array_equal(load_evaluator(game, tmp_path / "critic.pt").params, from_sb3(plain, game).params)


def test_a_data_scan_names_code_and_passes_sb3s_own_data(sb3_zips):
    for path in sb3_zips.values():
        with zipfile.ZipFile(path) as z:
            assert carried_code(json.loads(z.read("data"))) is None
    assert carried_code({"x": _serialized(Payload(Path("m")))}) == ("x", "posix.system")
    assert carried_code({"x": {":serialized:": "not base64!"}}) == ("x", "an unreadable pickle")


# -- the command line ------------------------------------------------------------------------------


def test_the_crafted_zip_on_the_command_line_is_one_line_and_exit_2(sb3_zips, tmp_path, marker, capsys, monkeypatch):
    from tablegym.experiments.cli import main

    path = _hostile_zips(sb3_zips["maskableppo"], tmp_path, marker)["lr_schedule"]
    monkeypatch.chdir(tmp_path)
    status = main(["eval", "trilobite", f"alphabeta:eval=learned:{path},depth=1", "random", "--games", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "lr_schedule carries code (posix.system), refused" in err, err
    assert "Traceback" not in err


def test_trust_model_code_uses_sb3s_loader_with_a_warning_line(sb3_zips, tmp_path):
    import subprocess
    import sys

    from tablegym.models.sb3_files import TRUST_ENV

    env = {k: v for k, v in os.environ.items() if k != TRUST_ENV}
    command = [
        sys.executable,
        "-m",
        "tablegym.experiments.cli",
        "eval",
        "trilobite",
        f"alphabeta:eval=learned:{sb3_zips['dqn']},depth=1",
        "random",
        "--games",
        "2",
        "--no-progress",
    ]
    trusted = subprocess.run([*command, "--trust-model-code"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert trusted.returncode == 0 and "| 2 (" in trusted.stdout
    lines = trusted.stderr.splitlines()  # a real process: the warnings as a user sees them
    assert lines and all(
        line.startswith("tablegym: warning: loading") and "runs any code the file carries" in line for line in lines
    ), trusted.stderr
    # without the flag: no warning (in-process, cheaper than a second interpreter)
    from tablegym.experiments.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("error", TrustedCodeWarning)
        assert main(command[3:]) == 0


def test_trust_reaches_agents_built_from_specs(sb3_zips, tmp_path, marker):
    from tablegym.models.agents import make_agent

    game = make_game("trilobite")
    spec = f"alphabeta:eval=learned:{sb3_zips['maskableppo']},depth=1"
    make_agent(game, spec)  # safe: no warning needed
    with pytest.warns(TrustedCodeWarning):
        make_agent(game, spec, trust_code=True)
    with pytest.warns(TrustedCodeWarning), trusting():
        make_agent(game, spec)
    hostile = _hostile_zips(sb3_zips["maskableppo"], tmp_path, marker)["lr_schedule"]
    refused(lambda: make_agent(game, f"alphabeta:eval=learned:{hostile},depth=1"))


# -- tablegym checkpoints: every game's loader -----------------------------------------------------


def _with_payload_in_metadata(src: Path, dst: Path, marker: Path) -> Path:
    payload = load_checkpoint(src)
    payload["metadata"] = {**payload["metadata"], "note": Payload(marker)}
    torch.save(payload, dst)
    return dst


@pytest.mark.parametrize("name", LEARNED_GAMES)
def test_every_games_checkpoint_loader_refuses_objects(tmp_path, marker, name):
    game = make_game(name)
    metadata = _with_payload_in_metadata(default_checkpoint(name), tmp_path / "meta.pt", marker)
    refused(lambda: load_evaluator(game, metadata), match="holds objects other than tensors and plain values")
    module = tmp_path / "module.pt"
    torch.save(nn.Sequential(nn.Linear(3, 1)), module)  # a torch.save'd module: its classes are globals
    refused(lambda: load_evaluator(game, module), match=r"a torch\.save'd module\? save a network with")
    objects = tmp_path / "objects.pt"  # an n-tuple table (or any weight) as an object array
    payload = load_checkpoint(default_checkpoint(name))
    payload["model"] = {k: np.array([Payload(marker)], dtype=object) for k in payload["model"]}
    torch.save(payload, objects)
    refused(lambda: load_evaluator(game, objects))


def test_a_starship_generator_with_objects_is_refused(tmp_path, marker):
    from tablegym.models.starship.learned import CHECKPOINT, LearnedGenerator

    path = _with_payload_in_metadata(CHECKPOINT, tmp_path / "gen.pt", marker)
    refused(lambda: LearnedGenerator.load(path))


def test_a_resumed_training_run_refuses_a_checkpoint_with_objects(tmp_path, marker):
    from types import SimpleNamespace

    from tablegym.models.value_net import NetConfig
    from tablegym.training.runs import start_or_resume

    game = make_game("trilobite")
    path = _with_payload_in_metadata(default_checkpoint("trilobite"), tmp_path / "checkpoint.pt", marker)
    args = SimpleNamespace(seed=0, lr=1e-3)
    refused(lambda: start_or_resume(path, game, NetConfig(1), args))


def test_numpy_files_of_resumed_runs_refuse_object_arrays(tmp_path, marker):
    from tablegym.training.friday.train import load_buffer
    from tablegym.training.runs import ReplayBuffer
    from tablegym.training.threes.train import _load_coherence

    arrays = tmp_path / "tc.npy"
    np.save(arrays, np.array([Payload(marker)], dtype=object), allow_pickle=True)
    refused(lambda: _load_coherence(arrays, 1), error=CheckpointError)
    buffer = tmp_path / "buffer.npz"
    np.savez(buffer, x=np.array([Payload(marker)], dtype=object), y=np.zeros(1))
    refused(lambda: load_buffer(buffer, ReplayBuffer(4, 3)), error=CheckpointError, match="replay buffer")


# -- exported networks: the file a user's own network is saved to ----------------------------------


@pytest.mark.parametrize("name", GAMES_WITH_OBSERVATION_KERNEL)
def test_a_saved_network_loads_as_learned_path_in_every_game(tmp_path, name):
    game = make_game(name)
    size = int(np.prod(game.spec.observation_shape))
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(size, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Tanh())
    path = save(net, game, tmp_path / "net.pt")
    loaded = load_evaluator(game, path)
    assert np.array_equal(loaded.params, from_torch(net, game).params)
    assert loaded.name == f"learned:{path}"
    q = nn.Sequential(nn.Linear(size, game.spec.num_actions))
    assert np.array_equal(
        load_exported(game, save(q, game, tmp_path / "q.pt", output="max")).params, from_torch(q, game, output="max").params
    )
    other = next(g for g in GAMES_WITH_OBSERVATION_KERNEL if g != name)
    refused(
        lambda: load_evaluator(make_game(other), path),
        error=CheckpointError,
        match=f"is for game '{game.spec.name}'|was trained with other rule options",
    )


def test_a_saved_network_plays_from_the_command_line(tmp_path, capsys):
    from tablegym.experiments.cli import main

    game = make_game("trilobite")
    path = save(nn.Sequential(nn.Flatten(), nn.Linear(168, 8), nn.ReLU(), nn.Linear(8, 1)), game, tmp_path / "n.pt")
    assert main(["eval", "trilobite", f"alphabeta:eval=learned:{path},depth=2", "random", "--games", "2", "--no-progress"]) == 0
    assert "| 2 (" in capsys.readouterr().out


# -- journals and records files --------------------------------------------------------------------


def test_a_records_line_that_is_not_json_is_refused_in_one_line(tmp_path, capsys):
    from tablegym.experiments.cli import main
    from tablegym.experiments.game_runs import RecordsError, read_records, recorded

    path = tmp_path / "games.jsonl"
    path.write_text('{"game": 0, "agent": "random"}\n' + "__import__('os').system('touch x')\n")
    refused(lambda: read_records(path), error=RecordsError, match="games.jsonl, line 2: not valid JSON")
    refused(lambda: recorded(str(path), agent="random"), error=RecordsError)
    path.write_text("[1, 2]\n")
    refused(lambda: read_records(path), error=RecordsError, match="line 1: not a game record")
    path.write_text('{"game": 0}\nnot json\n')
    assert main(["eval", "threes", "random", "--games", "2", "--journal", str(path), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2: not valid JSON" in err


@pytest.mark.parametrize("module", ["tablegym.experiments.threes.evaluate", "tablegym.experiments.friday.evaluate"])
def test_the_evaluation_scripts_refuse_a_bad_records_file(tmp_path, capsys, module):
    import importlib

    path = tmp_path / "r.jsonl"
    path.write_text("{not json\n")
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--report", str(path)])
    assert exit_info.value.code == 2
    assert "r.jsonl, line 1: not valid JSON" in capsys.readouterr().err


# -- the audit: no loading call in the package can run a file's code --------------------------------


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return f"{_name(func.value)}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else "?"


def _keyword(call: ast.Call, name: str):
    return next((k.value.value for k in call.keywords if k.arg == name and isinstance(k.value, ast.Constant)), None)


@functools.cache
def _parsed(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), str(path))


# Where a pickle is read on purpose, and why that is safe.
PICKLE_READERS = {
    "models/sb3_files.py": "the reference unpickler: every global becomes an inert Reference, nothing imports",
    "envs/conformance.py": "round-trips states the checker itself made in memory (pickle.loads(pickle.dumps(s)))",
}


def test_every_torch_load_in_the_package_is_weights_only():
    found = []
    for path in SOURCES:
        for call in _calls(_parsed(path)):
            if _name(call.func) == "torch.load":
                found.append(path.relative_to(ROOT).as_posix())
                assert _keyword(call, "weights_only") is True, f"{path}:{call.lineno}: torch.load without weights_only=True"
    assert set(found) == {"models/checkpoint.py", "models/sb3_files.py"}  # the two readers the README lists


def test_no_pickle_eval_or_pickled_numpy_anywhere_else():
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        for call in _calls(_parsed(path)):
            name = _name(call.func)
            where = f"{rel}:{call.lineno}: {name}"
            assert name not in ("eval", "exec", "compile", "__import__"), where
            assert (
                not re.fullmatch(r"(c?pickle|cloudpickle|dill|marshal|shelve|joblib)\.(loads?|Unpickler|open)", name)
                or rel in PICKLE_READERS
            ), where
            if name in ("np.load", "numpy.load"):
                assert _keyword(call, "allow_pickle") is False, f"{where}: np.load must say allow_pickle=False"
            if re.fullmatch(r"(MaskablePPO|PPO|DQN|cls|[A-Za-z_.]*\bDQN|[A-Za-z_.]*PPO)\.load", name):
                assert rel == "models/export.py", f"{where}: SB3's code-running loader outside the trusted path"


LOADERS = ["load_checkpoint", "read_sb3_network", "restore", "read_records", "--journal", "np.load", "--trust-model-code"]


def test_the_security_page_lists_every_loader_and_how_it_is_safe():
    section = (ROOT / "docs" / "security.md").read_text()  # the front page links to it
    for loader in LOADERS:
        assert loader in section, f"docs/security.md does not name {loader}"
