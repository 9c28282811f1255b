"""Stable-Baselines3 ``model.zip`` files read as data, never as code.

SB3's own ``load`` unpickles (cloudpickle) the entries of the archive's ``data`` JSON marked
``:serialized:``, so a crafted zip runs whatever it carries. Here a zip is read the way
safetensors reads a file: the JSON with ``json``, the weights of ``policy.pth`` with
``torch.load(weights_only=True)`` (plain tensors, as SB3 writes them), and from the serialized
entries only the two that say how the value network is built, ``policy_class`` and
``policy_kwargs``, through an unpickler that imports nothing: every global it meets becomes an
inert ``Reference(module, name)``, which can be compared with an allow list but never called.
What the network is comes from the state dict's shapes; its activation from the reference to one
of the classes the compiled format has (ReLU, LeakyReLU, Tanh, Sigmoid, Identity). A zip whose
``data`` names code in any entry (a global outside SB3's own data classes, read off the pickles'
opcodes with ``pickletools``, never run: ``os.system``, ``builtins.eval``, a cloudpickled
function) is refused, as is anything the compiled format cannot rebuild (a custom policy class, a
features extractor with weights), in one line that says how to export the network in the
user's own process instead. Sizes are read before anything is inflated (tablegym.envs.limits):
the zip's members together within ``model_bytes``, its ``data`` within ``json_bytes`` and
``json_depth``, each ``.pth`` a torch archive of stored members whose tensors fit their storages
and, over all members, the same budget; the policy's weights must be finite.

``trust_code=True`` (the CLI's ``--trust-model-code``; tablegym.models.trust says where else the
decision comes from) is the explicit opt-in for files one trusts: SB3's own loader, with a warning
naming who trusted the file. ``restore`` puts a zip's weights into a model the
caller built with its own constructor (what tablegym's SB3 scripts do to evaluate or resume a run).
"""

from __future__ import annotations

import io
import os
import pickle
import pickletools
import zipfile
from base64 import b64decode
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tablegym.envs.limits import LimitError, checked_zip, current, loads_json, read_member, refuse
from tablegym.models.checkpoint import (
    CheckpointError,
    UnsafeModelError,
    check_finite_weights,
    check_tensors,
    check_torch_archive,
    first_line,
    load_error,
    model_limits,
)
from tablegym.models.trust import TRUST_ENV, TrustedCodeWarning, trust_model_code, trusting

__all__ = [
    "SB3Network",
    "TRUST_ENV",
    "TrustedCodeWarning",
    "UnsafeModelError",
    "read_sb3_network",
    "restore",
    "trust_model_code",
    "trusting",
]

EXPORT_HINT = (
    "export the network in your own process instead: tablegym.models.export.save(model, game, "
    "'critic.pt'), then eval=learned:critic.pt; or pass --trust-model-code (trust_code=True) for a "
    "file you trust"
)

ACTIVATIONS = {
    ("torch.nn.modules.activation", "ReLU"): "relu",
    ("torch.nn.modules.activation", "LeakyReLU"): "leaky_relu",
    ("torch.nn.modules.activation", "Tanh"): "tanh",
    ("torch.nn.modules.activation", "Sigmoid"): "sigmoid",
    ("torch.nn.modules.linear", "Identity"): "identity",
}
LEAKY_SLOPE = 0.01  # torch's default: policy_kwargs names a class, never an instance with its own slope

ACTOR_CRITIC, Q_NETWORK = "actor-critic", "q-network"
POLICIES = {
    ("stable_baselines3.common.policies", "ActorCriticPolicy"): ACTOR_CRITIC,
    ("sb3_contrib.common.maskable.policies", "MaskableActorCriticPolicy"): ACTOR_CRITIC,
    ("stable_baselines3.dqn.policies", "DQNPolicy"): Q_NETWORK,
}
KNOWN_PREFIXES = {
    ACTOR_CRITIC: ("mlp_extractor.policy_net.", "mlp_extractor.value_net.", "action_net.", "value_net.", "log_std"),
    Q_NETWORK: ("q_net.q_net.", "q_net_target.q_net."),
}
DEFAULT_ACTIVATION = {ACTOR_CRITIC: "tanh", Q_NETWORK: "relu"}  # SB3's defaults when policy_kwargs names none
FLATTEN = ("stable_baselines3.common.torch_layers", "FlattenExtractor")
# policy_kwargs that do not change what the critic or Q-network computes on a flat observation
HARMLESS_KWARGS = {
    "net_arch",
    "activation_fn",
    "features_extractor_class",
    "features_extractor_kwargs",
    "share_features_extractor",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
    "ortho_init",
    "log_std_init",
    "use_sde",
    "full_std",
    "use_expln",
    "squash_output",
}


# -- the restricted unpickler --------------------------------------------------------------------


class Reference:
    """A global named inside a pickle (``module.name``), never imported: it cannot be called,
    built or given state, so unpickling a structure of references runs nothing."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    @property
    def key(self) -> tuple[str, str]:
        return self.module, self.name

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


class _ReferenceUnpickler(pickle.Unpickler):
    """An unpickler whose globals are ``Reference``s (the Python documentation's "restricting
    globals", taken to the end: nothing is allowed to load). Calling one, the only way a pickle
    runs code, fails with TypeError; persistent ids are refused by the base class."""

    def find_class(self, module: str, name: str) -> Reference:
        return Reference(module, name)


def read_references(blob: bytes) -> Any:
    """The object a pickle describes, with every global as a ``Reference``; UnpicklingError
    (or TypeError, AttributeError, ...) for a pickle that would have to run something."""
    return _ReferenceUnpickler(io.BytesIO(blob)).load()


# Globals a pickle of SB3's own data may name: the classes of its library (schedules, buffers,
# spaces, policies; tablegym's own features extractors), of numpy's random generators and of torch's
# layers and optimizers, and the few functions named one by one below (numpy's array, dtype and
# random-generator rebuilders). Every module named by prefix holds functions too (SB3's
# load_from_pkl, torch's hook registries), so a prefix admits classes only; anything else
# (os.system, builtins.eval, torch.hub.load, cloudpickle's rebuilt functions) is code.
DATA_CLASS_MODULES = (
    "stable_baselines3.",
    "sb3_contrib.",
    "gymnasium.spaces.",
    "tablegym.",
    "numpy.random.",
    "torch.nn.modules.",
    "torch.optim.",
)
DATA_GLOBALS = {
    ("numpy", "dtype"),
    ("numpy", "ndarray"),
    ("collections", "OrderedDict"),
    ("collections", "deque"),
    ("copyreg", "_reconstructor"),
    *(("numpy.random._pickle", f"__{kind}_ctor") for kind in ("generator", "bit_generator", "randomstate")),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    *(
        (f"numpy.{core}.{mod}", name)
        for core in ("core", "_core")
        for mod, name in (("numeric", "_frombuffer"), ("multiarray", "scalar"), ("multiarray", "_reconstruct"))
    ),
    *(
        ("builtins", t)
        for t in (
            "object",
            "set",
            "frozenset",
            "slice",
            "complex",
            "bytearray",
            "range",
            "list",
            "dict",
            "tuple",
            "int",
            "float",
            "str",
            "bool",
        )
    ),
}
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING", "STRING"}


def pickle_globals(blob: bytes) -> list[tuple[str | None, str | None]]:
    """The (module, name) of every global a pickle would import, read off its opcodes without
    running them (``pickletools.genops``): STACK_GLOBAL takes the two strings pushed before it,
    from the memo too; a global whose names cannot be told is (None, None)."""
    memo: dict[Any, Any] = {}
    stack: list[Any] = []
    found: list[tuple[str | None, str | None]] = []
    for op, arg, _ in pickletools.genops(blob):
        name = op.name
        if name in _STRINGS:
            stack.append(arg)
            continue
        if name == "MEMOIZE":
            memo[len(memo)] = stack[-1] if stack else None
            continue
        if name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1] if stack else None
            continue
        if name in ("PROTO", "FRAME", "STOP"):
            continue
        if name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo.get(arg))
            continue
        elif name == "GLOBAL":
            module, _, attr = str(arg).partition(" ")
            found.append((module, attr))
        elif name == "STACK_GLOBAL":
            name_arg, module_arg = (stack.pop() if stack else None), (stack.pop() if stack else None)
            found.append((module_arg if isinstance(module_arg, str) else None, name_arg if isinstance(name_arg, str) else None))
        elif name in ("INST", "OBJ", "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID"):
            found.append((None, None))
        stack.append(None)
    return found


def is_data_global(module: str | None, name: str | None) -> bool:
    if module is None or name is None:
        return False
    if (module, name) in DATA_GLOBALS:
        return True
    return module.startswith(DATA_CLASS_MODULES) and name[:1].isupper()  # a class, not a function


def carried_code(data: dict) -> tuple[str, str] | None:
    """The first serialized entry of an SB3 ``data`` JSON that names code (a global outside
    SB3's own data classes), as (entry, global); None when every one is plain data. Nothing is
    unpickled: this only decides whether to refuse the file."""
    for key, entry in data.items():
        if not (isinstance(entry, dict) and ":serialized:" in entry):
            continue
        try:
            names = pickle_globals(b64decode(str(entry[":serialized:"])))
        except Exception:  # not base64, or not a pickle
            return str(key), "an unreadable pickle"
        for module, name in names:
            if not is_data_global(module, name):
                return str(key), f"{module}.{name}" if module and name else "a global it hides"
    return None


# -- reading a zip --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SB3Network:
    """The value network of an SB3 model file: (W, b, activation, parameter) per Linear layer, and
    ``output`` ("value" for a PPO/MaskablePPO critic, "max" for a DQN Q-network)."""

    layers: list[tuple[np.ndarray, np.ndarray, str, float]]
    output: str
    policy: str


def _open(path: str) -> zipfile.ZipFile:
    """The zip at ``path`` once its directory is within the budgets (tablegym.envs.limits
    ``checked_zip``: members stored or deflated, all of them together within ``model_bytes``)."""
    with model_limits():
        return checked_zip(path, repr(path))


def _member(archive: zipfile.ZipFile, name: str, path: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise CheckpointError(f"{path!r} is not a MaskablePPO, PPO or DQN model: the zip has no {name!r}") from None
    return read_member(archive, info, f"{path!r}")


def _data(archive: zipfile.ZipFile, path: str) -> dict:
    """The archive's ``data`` JSON, its declared size and its nesting within the budgets
    (``json_bytes``, ``json_depth``) before it is inflated and parsed."""
    what = f"{path!r}: its data"
    with model_limits():
        info = archive.getinfo("data") if "data" in archive.namelist() else None
        if info is not None and info.file_size > current().json_bytes:
            raise refuse(what, f"{info.file_size:,} bytes of JSON", "json_bytes")
        blob = _member(archive, "data", path)
        try:
            data = loads_json(blob, what)
        except LimitError:
            raise
        except ValueError:
            raise CheckpointError(f"{path!r} is not a MaskablePPO, PPO or DQN model: its data is not JSON") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path!r} is not a MaskablePPO, PPO or DQN model: its data is not a JSON object")
    return data


def _serialized(data: dict, key: str, path: str) -> Any:
    """An entry of the ``data`` JSON: plain JSON as is, a ``:serialized:`` one through
    ``read_references``."""
    entry = data.get(key)
    if not (isinstance(entry, dict) and ":serialized:" in entry):
        return entry
    try:
        return read_references(b64decode(entry[":serialized:"]))
    except Exception as exc:  # TypeError: it calls something; UnpicklingError, binascii.Error, ...
        raise UnsafeModelError(
            f"{path!r}: its {key} is pickled code ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}), refused; {EXPORT_HINT}"
        ) from None


def _policy_kind(data: dict, path: str) -> str:
    ref = _serialized(data, "policy_class", path)
    if not isinstance(ref, Reference):
        raise UnsafeModelError(f"{path!r}: its policy_class is not a class reference (refused); {EXPORT_HINT}")
    if ref.key not in POLICIES:
        known = ", ".join(name for _, name in POLICIES)
        raise UnsafeModelError(
            f"{path!r}: policy class {ref!r} cannot be rebuilt without its code (known: {known}); {EXPORT_HINT}"
        )
    return POLICIES[ref.key]


def _activation(data: dict, kind: str, path: str) -> tuple[str, float]:
    kwargs = _serialized(data, "policy_kwargs", path) or {}
    if not isinstance(kwargs, dict):
        raise UnsafeModelError(f"{path!r}: its policy_kwargs is not a dict (refused)")
    unknown = sorted(set(kwargs) - HARMLESS_KWARGS)
    if unknown:
        raise UnsafeModelError(
            f"{path!r}: policy_kwargs {', '.join(map(str, unknown))} may change the network, which "
            f"cannot be rebuilt from the file alone; {EXPORT_HINT}"
        )
    extractor = kwargs.get("features_extractor_class")
    if extractor is not None and not (isinstance(extractor, Reference) and extractor.key == FLATTEN):
        raise UnsafeModelError(
            f"{path!r}: features extractor {extractor!r} cannot be compiled (supported: "
            f"FlattenExtractor, the MlpPolicy's); {EXPORT_HINT}"
        )
    act = kwargs.get("activation_fn")
    if act is None:
        name = DEFAULT_ACTIVATION[kind]
    elif isinstance(act, Reference) and act.key in ACTIVATIONS:
        name = ACTIVATIONS[act.key]
    else:
        raise UnsafeModelError(
            f"{path!r}: activation {act!r} cannot be compiled (supported: ReLU, LeakyReLU, Tanh, "
            f"Sigmoid, Identity); {EXPORT_HINT}"
        )
    return name, LEAKY_SLOPE if name == "leaky_relu" else 0.0


def _torch_members(archive: zipfile.ZipFile, path: str) -> dict[str, Any]:
    """Every ``.pth`` member (policy, optimizer, pytorch_variables) loaded with
    ``weights_only=True``, as SB3 itself does; one that holds anything else is refused by name.
    Each is a torch archive checked before torch reads it (its own members stored, its pickle
    within ``pickle_bytes``: tablegym.models.checkpoint ``check_torch_archive``), and the tensors
    of all of them together fit ``model_bytes`` and their storages; the policy's weights are finite."""
    members = {}
    spent = 0
    for name in archive.namelist():
        if not name.endswith(".pth"):
            continue
        what = f"{path!r}: its {name}"
        blob = _member(archive, name, path)
        check_torch_archive(blob, what)
        try:
            members[name] = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
        except Exception as exc:  # weights_only refuses anything but tensors and plain values
            raise load_error(what, exc) from None
        del blob
        spent = check_tensors(members[name], what, spent)
    if "policy.pth" in members:
        check_finite_weights(members["policy.pth"], f"{path!r}: its policy.pth")
    return members


def _state_dict(archive: zipfile.ZipFile, path: str) -> dict[str, torch.Tensor]:
    state = _torch_members(archive, path).get("policy.pth")
    if state is None:
        _member(archive, "policy.pth", path)  # says it is missing
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise UnsafeModelError(f"{path!r}: its policy.pth is not a state dict of tensors")
    return state


def _linear_chain(
    state: dict[str, torch.Tensor], prefix: str, activation: tuple[str, float], path: str
) -> list[tuple[np.ndarray, np.ndarray, str, float]]:
    """The Linear layers ``prefix.0``, ``prefix.2``, ... of an SB3 MLP (a Linear, then its
    activation: even indices), each followed by ``activation``."""
    indices = sorted(
        int(k[len(prefix) + 1 :].split(".")[0]) for k in state if k.startswith(prefix + ".") and k.endswith(".weight")
    )
    if indices != list(range(0, 2 * len(indices), 2)):
        raise UnsafeModelError(f"{path!r}: {prefix} is not SB3's Linear/activation MLP (layers {indices}); {EXPORT_HINT}")
    return [(_array(state, f"{prefix}.{i}.weight", path), _bias(state, f"{prefix}.{i}", path), *activation) for i in indices]


def _array(state: dict[str, torch.Tensor], key: str, path: str) -> np.ndarray:
    if key not in state:
        raise UnsafeModelError(f"{path!r}: its policy.pth has no {key!r}")
    return state[key].detach().double().numpy()


def _bias(state: dict[str, torch.Tensor], prefix: str, path: str) -> np.ndarray:
    if prefix + ".bias" in state:
        return _array(state, prefix + ".bias", path)
    return np.zeros(state[prefix + ".weight"].shape[0])


def _existing(path: str | os.PathLike, what: str) -> str:
    """``path`` as a string, refused in one line where no file is there."""
    path = str(path)
    if not Path(path).is_file():
        raise CheckpointError(f"{what} {path!r} does not exist")
    return path


def _code_free_data(archive: zipfile.ZipFile, path: str, label: str, hint: str) -> dict:
    """The archive's ``data`` JSON, refused (``UnsafeModelError``, naming ``label``) where it
    names code to run (``carried_code``): nothing else of the zip is read before this check."""
    data = _data(archive, path)
    code = carried_code(data)
    if code is not None:
        raise UnsafeModelError(f"{label}: its {code[0]} carries code ({code[1]}), refused{hint}")
    return data


def read_sb3_network(path: str | os.PathLike) -> SB3Network:
    """The critic (PPO, MaskablePPO) or Q-network (DQN) of the SB3 zip at ``path``, read without
    running anything it carries; ``UnsafeModelError`` (one line) for what cannot be read so."""
    path = _existing(path, "checkpoint")
    try:
        with _open(path) as archive:
            data = _code_free_data(archive, path, repr(path), f"; {EXPORT_HINT}")
            kind = _policy_kind(data, path)
            activation = _activation(data, kind, path)
            state = _state_dict(archive, path)
    except zipfile.BadZipFile:
        raise CheckpointError(f"checkpoint {path!r} is not a MaskablePPO, PPO or DQN model (not a zip file)") from None
    extractors = sorted({k.split(".")[0] for k in state if "features_extractor" in k.split(".")[0]})
    if extractors:
        raise UnsafeModelError(
            f"{path!r}: its features extractor has weights ({', '.join(extractors)}): not the "
            f"MlpPolicy's FlattenExtractor, cannot be compiled; {EXPORT_HINT}"
        )
    known = KNOWN_PREFIXES[kind]
    other = sorted({k.rsplit(".", 1)[0] for k in state if not k.startswith(known)})
    if other:
        raise UnsafeModelError(
            f"{path!r}: its policy has layers SB3's MlpPolicy does not ({', '.join(other[:3])}); {EXPORT_HINT}"
        )
    if kind == Q_NETWORK:
        layers = _linear_chain(state, "q_net.q_net", activation, path)
        output = "max"
    else:
        layers = _linear_chain(state, "mlp_extractor.value_net", activation, path)
        layers.append((_array(state, "value_net.weight", path), _bias(state, "value_net", path), "identity", 0.0))
        output = "value"
    if not layers:
        raise UnsafeModelError(f"{path!r}: its policy.pth has no value network")
    w, b, _, p = layers[-1]
    layers[-1] = (w, b, "identity", p)  # the last Linear of SB3's Q-network has no activation
    return SB3Network(layers, output, kind)


# -- weights into a model built here --------------------------------------------------------------


COUNTERS = ("num_timesteps", "_n_updates", "_episode_num")


def restore(model: Any, path: str | os.PathLike) -> Any:
    """Load the weights (and optimizer state) of the SB3 zip at ``path`` into ``model``, which
    the caller built with the constructor that trained it; the step counters come from the
    archive's JSON. Nothing in the file is unpickled: ``set_parameters`` reads only the ``.pth``
    members, with ``weights_only=True``. Returns ``model``."""
    path = _existing(path, "model")
    try:
        with _open(path) as archive:
            data = _code_free_data(archive, path, f"model {path!r}", "")
            members = _torch_members(archive, path)
        saved = _serialized(data, "policy_class", path)
        policy = type(model.policy)
        if isinstance(saved, Reference) and saved.key != (policy.__module__, policy.__qualname__):
            raise CheckpointError(f"model {path!r} holds a {saved.name}, this model a {policy.__qualname__}")
        # the members read and checked above, as SB3's own load_from_zip_file names them (the file is not read twice)
        params = {
            name[: -len(".pth")]: obj for name, obj in members.items() if name not in ("pytorch_variables.pth", "tensors.pth")
        }
        model.set_parameters(params, exact_match=True, device="cpu")
    except zipfile.BadZipFile:
        raise CheckpointError(f"model {path!r} is not a Stable-Baselines3 zip") from None
    except CheckpointError:
        raise
    except Exception as exc:  # a member that is not plain tensors, another network's shapes, ...
        raise CheckpointError(f"model {path!r} does not fit this model ({type(exc).__name__}: {first_line(exc)[:300]})") from None
    for key in COUNTERS:
        if isinstance(data.get(key), int):
            setattr(model, key, data[key])
    return model
