"""The `warp-compile` command line: one small entry module, each subcommand in its own `cmd_*.py`."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys

from .. import __version__
from ..probe.errors import WarpCompileError
from . import cmd_compare, cmd_diagnose, cmd_eval, cmd_explain, cmd_fix, cmd_measure, cmd_serve, cmd_try
from .io import CLIP, clip, clip_path, end_progress

# subcommand -> module providing register(subparsers) and run(namespace) -> int
COMMANDS = {
    "measure": cmd_measure,
    "compare": cmd_compare,
    "diagnose": cmd_diagnose,
    "explain": cmd_explain,
    "serve": cmd_serve,
    "eval": cmd_eval,
    "try": cmd_try,
    "fix": cmd_fix,
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other bad input
        # argparse quotes the offending value ('...'): clip it like every other echo of user input
        message = re.sub(rf"'([^']{{{CLIP + 1},}})'", lambda m: repr(clip(m.group(1))), message)
        sys.stderr.write(f"warp-compile: error: {_one_line(message)}\n")
        raise SystemExit(2)


MAX_ERROR = 600  # characters of one error line; user input inside it is clipped further where it is echoed


def _one_line(message: object) -> str:
    """An error message as one line of bounded length (head and tail kept: the tail usually says what is wrong)."""
    text = " ".join(str(message).split())
    if len(text) <= MAX_ERROR:
        return text
    return text[: MAX_ERROR - 200] + " … " + text[-197:]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="warp-compile",
        description="Find out why an NVIDIA Warp application compiles kernels for seconds before its first launch: "
        "measure it in a sandbox, name the mechanism (CS-1..CS-13, and WC-1 for kernels made at every call) and "
        "the line, and prove the fix.",
        epilog="Typical loop: measure --json before.json -- CMD; diagnose --report before.json; change one thing; "
        "measure --json after.json -- CMD; compare before.json after.json.",
    )
    parser.add_argument("--version", action="version", version=f"warp-compile {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in COMMANDS.values():
        mod.register(sub)
    return parser


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split at the first `--`: options before it, the measured argv after it (kept verbatim)."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


class Terminated(KeyboardInterrupt):
    """SIGTERM, SIGHUP or SIGQUIT arrived: unwind like Ctrl-C (every sandbox `finally` kills its tree and removes its
    temp root), then exit 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# signals that end a non-serve command by unwinding; SIGINT is Python's own KeyboardInterrupt (exit 130)
TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))


def _terminate(signum: int, frame: object) -> None:
    # once: a second signal must not interrupt the cleanup the first one started
    for sig in TERMINATING:
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


def _install_handlers() -> dict[int, object]:
    previous = {}
    for sig in TERMINATING:
        try:
            previous[sig] = signal.signal(sig, _terminate)
        except (ValueError, OSError):  # not the main thread (an embedding caller): leave the handlers alone
            pass
    return previous


def _restore_handlers(previous: dict[int, object]) -> None:
    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)  # type: ignore[arg-type]
        except (ValueError, OSError, TypeError):
            pass


def _say(line: str) -> None:
    try:
        end_progress()  # a progress status line on the terminal goes first
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # the terminal went away (SIGHUP): the exit code still tells
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    opts, command = split_command(argv)
    parser = build_parser()
    ns = parser.parse_args(opts)
    ns.cmd_argv = command
    if not getattr(ns, "command", None):
        _say(f"warp-compile: error: missing command ({', '.join(COMMANDS)}); see warp-compile --help")
        return 2
    # serve installs its own handlers (stop everything at once, exit 128 + signal)
    previous = _install_handlers() if ns.command != "serve" else {}
    try:
        return int(ns.func(ns) or 0)
    except WarpCompileError as exc:
        _say(f"warp-compile: error: {_one_line(exc)}")
        return exc.exit_code
    except Terminated as exc:
        _say("warp-compile: interrupted; the measured process tree was stopped")
        return 128 + exc.signum
    except KeyboardInterrupt:
        _say("warp-compile: interrupted; the measured process tree was stopped")
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to say to it
        try:
            sys.stdout = open(os.devnull, "w")  # for the flush at exit, which would fail on the closed pipe
        except OSError:
            pass
        return 128 + signal.SIGPIPE if hasattr(signal, "SIGPIPE") else 1
    except OSError as exc:  # the environment refused a path or a process (e.g. a name too long): no traceback
        where = f"{clip_path(exc.filename)}: " if exc.filename else ""
        _say(f"warp-compile: error: {where}{exc.strerror or _one_line(exc)}")
        return 2
    finally:
        _restore_handlers(previous)


if __name__ == "__main__":
    raise SystemExit(main())
