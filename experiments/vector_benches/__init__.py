"""Speed of the compiled vector envs: threads, auto-reset modes, Starship's step, another git revision."""
