"""The `warp-compile` command line: one small entry module, each subcommand in its own `cmd_*.py`."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from warp_compile import __version__
from warp_compile.probe.errors import WarpCompileError

# subcommand -> module providing register(subparsers) and run(namespace) -> int
COMMANDS = {
    "measure": "warp_compile.cmd_measure",
    "compare": "warp_compile.cmd_compare",
    "diagnose": "warp_compile.cmd_diagnose",
    "explain": "warp_compile.cmd_explain",
    "serve": "warp_compile.cmd_serve",
    "eval": "warp_compile.cmd_eval",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        sys.stderr.write(f"warp-compile: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="warp-compile",
        description="Find out why an NVIDIA Warp application compiles kernels for seconds before its first launch: "
        "measure it in a sandbox, name the mechanism (CS-1..CS-13) and the line, and prove the fix.",
        epilog="Typical loop: measure --json before.json -- CMD; diagnose --report before.json; change one thing; "
        "measure --json after.json -- CMD; compare before.json after.json.",
    )
    parser.add_argument("--version", action="version", version=f"warp-compile {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for modname in COMMANDS.values():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                continue  # subcommand not built yet
            raise
        mod.register(sub)
    return parser


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split at the first `--`: options before it, the measured argv after it (kept verbatim)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    opts, command = split_command(argv)
    parser = build_parser()
    ns = parser.parse_args(opts)
    ns.cmd_argv = command
    if not getattr(ns, "command", None):
        parser.print_help(sys.stderr)
        return 2
    if ns.command != "serve":
        # a terminated CLI still unwinds: the sandbox kills the child tree and removes its temp root
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(ns.func(ns) or 0)
    except WarpCompileError as exc:
        sys.stderr.write(f"warp-compile: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("warp-compile: interrupted; the measured process tree was stopped\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
