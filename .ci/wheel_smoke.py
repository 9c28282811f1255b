"""The built wheel checked as a user gets it (run by .ci/wheel_smoke.sh).

``contents WHEEL``, from the checkout: every file git tracks in the package's folders (the modules
and the data beside them: game.toml, the shipped checkpoints, the starship audit reference,
py.typed) is in the wheel at its package path, and so is the LICENSE.

``run``, with the wheel installed in a new venv and from a folder outside the checkout: the
package imports from that venv, its version is the distribution's, a Gymnasium env is made by id,
the shipped Trilobite network plays a game inside the compiled search, and the ``tablegym``
command prints its version and evaluates a match.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

SUBPACKAGES = ("envs", "search", "models", "training", "experiments", "interop")
"""Each in a folder of its own in the checkout, all under tablegym/ in the wheel."""
GAME = "trilobite"
SPEC = "alphabeta:eval=learned,depth=2"


def contents(wheel: str) -> None:
    """Fail, naming them, when tracked files of the package folders are missing from ``wheel``."""
    setuptools = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {folder: package.replace(".", "/") for package, folder in setuptools["package-dir"].items()}
    tracked = subprocess.run(["git", "ls-files", "--", *folders], capture_output=True, text=True, check=True).stdout.split()
    expected = {folders[path.split("/", 1)[0]] + "/" + path.split("/", 1)[1] for path in tracked}
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected - names)
    if not any(name.endswith(".dist-info/licenses/LICENSE") for name in names):
        missing.append("*.dist-info/licenses/LICENSE")
    if missing:
        sys.exit(f"{Path(wheel).name} lacks {len(missing)} of the checkout's files: " + ", ".join(missing))
    data = sorted(path for path in expected if not path.endswith(".py"))
    print(f"wheel: {len(expected)} tracked files present, data among them: {', '.join(data)}")


def run() -> None:
    """Use the installed package from outside the checkout; any failure is an exception."""
    import gymnasium
    import numpy as np

    import tablegym
    from tablegym.envs import make_game
    from tablegym.models.agents import make_agent
    from tablegym.models.learned import load_evaluator
    from tablegym.search import play_game

    prefix = Path(sys.prefix).resolve()
    for module in (tablegym, *(importlib.import_module(f"tablegym.{sub}") for sub in SUBPACKAGES)):
        assert Path(module.__file__).resolve().is_relative_to(prefix), f"{module.__name__} from {module.__file__}"
    version = importlib.metadata.version("tablegym")
    assert tablegym.__version__ == version, (tablegym.__version__, version)
    for package, name in (("tablegym", "py.typed"), ("tablegym.experiments.starship", "audit_reference.json")):
        assert importlib.resources.files(package).joinpath(name).is_file(), f"{package}: no {name}"

    env = gymnasium.make("tablegym.envs:tablegym/Threes-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    print(f"Threes-v0: observation {obs.shape}, reward {reward}")

    game = make_game(GAME)
    shipped = load_evaluator(game)
    assert Path(shipped.name.partition(":")[2]).resolve().is_relative_to(prefix), shipped.name
    record = play_game(game, [make_agent(game, SPEC), make_agent(game, "random")], np.random.default_rng(0))
    print(f"{GAME}: {SPEC} against random, winner {record.winner} after {len(record.actions)} moves")

    command = Path(sys.prefix, "bin", "tablegym")
    shown = subprocess.run([command, "--version"], capture_output=True, text=True, check=True).stdout
    assert shown == f"tablegym {version}\n", shown
    played = subprocess.run(
        [command, "eval", GAME, SPEC, "random", "--games", "2", "--seed", "0", "--no-progress"], capture_output=True, text=True
    )
    assert played.returncode == 0, played.stderr
    print(shown + played.stdout, end="")


if __name__ == "__main__":
    if sys.argv[1:2] == ["contents"] and len(sys.argv) == 3:
        contents(sys.argv[2])
    elif sys.argv[1:] == ["run"]:
        run()
    else:
        sys.exit("usage: wheel_smoke.py contents WHEEL | run")
