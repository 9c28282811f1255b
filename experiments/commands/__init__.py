"""The subcommands of ``tablegym`` (experiments/cli.py), one module each."""
