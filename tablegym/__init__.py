"""tablegym: Gymnasium environments, compiled tree search and learned leaf evaluators for six
tabletop games.

The subpackages live in folders of their own at the top of a checkout (pyproject.toml's
``package-dir``): ``tablegym.envs``, ``tablegym.search``, ``tablegym.models``, ``tablegym.training``,
``tablegym.experiments`` and ``tablegym.interop``. Importing ``tablegym`` imports none of them.
"""

__version__ = "0.1.0"
"""The distribution's version: pyproject.toml reads it from here (``tool.setuptools.dynamic``)."""
