"""Running warp-compile from a benchmark so that a stop still lets it clean up.

subprocess.run kills its child with SIGKILL on a timeout or an exception (a stopped benchmark), and a SIGKILLed
warp-compile cannot remove its scratch copies and caches. Here the child gets SIGTERM first (the tool unwinds and
removes them), a minute to finish, and SIGKILL only after that.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path


def run_gently(
    argv: list[str], *, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """argv's output and exit code, as subprocess.run(capture_output=True, text=True) would give them; a timeout
    raises subprocess.TimeoutExpired once the child has been stopped."""
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def exit_on_sigterm() -> None:
    """A benchmark stopped with SIGTERM unwinds (its finally blocks and run_gently's stop run) instead of dying."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def tool_json(tool: str, args: list[str], cwd: Path, out: Path, timeout: float = 7200) -> tuple[int, dict, float]:
    """`warp-compile ARGS` with `--json OUT --quiet` put before its `--`: (exit code, the JSON it wrote or
    {"error": its stderr's end}, seconds)."""
    cut = args.index("--")
    argv = [tool, *args[:cut], "--json", str(out), "--quiet", *args[cut:]]
    t0 = time.monotonic()
    done = run_gently(argv, cwd=cwd, timeout=timeout)
    data = json.loads(out.read_text()) if out.exists() and out.stat().st_size else {}
    return done.returncode, data or {"error": done.stderr[-2000:]}, time.monotonic() - t0
