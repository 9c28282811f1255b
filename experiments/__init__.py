import tablegym.envs  # noqa: F401  (chooses numba's cache folder before any kernel here is defined)
