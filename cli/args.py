"""What the subcommands' parsers have in common, stated once: how a subcommand is added, the --timeout/--quiet
pair of the measuring commands, and the exit on a measurement whose every sample failed."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .io import seconds


def add_command(
    sub: argparse._SubParsersAction, name: str, help: str, description: str, usage: str | None = None
) -> argparse.ArgumentParser:
    """A subcommand whose description keeps its own line breaks (usage: argparse's own when None)."""
    return sub.add_parser(
        name, help=help, usage=usage, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_timeout_quiet(p: Any, timeout_help: str) -> None:
    """--timeout S (900 s by default) with this command's help text, then --quiet; p: a parser or argument group."""
    p.add_argument("--timeout", type=seconds, default=900.0, metavar="S", help=timeout_help)
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def all_failed_exit(report: Any) -> int:
    """Exit status 1 with the last failure's reason (and its stderr tail) when every sample failed, else 0."""
    if not report.all_failed:
        return 0
    reason, tail = report.last_failure()
    sys.stderr.write(f"warp-compile: error: every sample failed ({reason})\n")
    if tail:
        sys.stderr.write(tail.rstrip() + "\n")
    return 1
