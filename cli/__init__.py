"""The command line: one `cmd_*` module per subcommand over the core in probe/, the server and the evals."""

from .app import main

__all__ = ["main"]
