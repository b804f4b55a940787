"""Other jobs on the machine, for the benchmarks that must hold on a busy one.

    with compile_jobs(3): ...      # three loops, each compiling a Warp app in a fresh kernel cache, over and over
    with burners(2): ...           # two pure-Python CPU burners

Each job runs in a session of its own and is stopped by its own process group when the block ends (only the
processes started here); its temporary caches are removed. `python bench/load.py --jobs 3 --seconds 600` runs the
compile load on its own, e.g. beside a command measured by hand.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD_APP = ROOT / "tests" / "apps" / "heavy_forward"  # three modules with backward code: ~2 s of LLVM per run
BURN = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass\n"
LOOP = """\
import os, shutil, subprocess, sys, tempfile
root, app = sys.argv[1], sys.argv[2]
while True:
    cache = tempfile.mkdtemp(prefix="cache-", dir=root)
    env = dict(os.environ, WARP_CACHE_PATH=cache)
    subprocess.run([sys.executable, "-m", "heavyfwd"], cwd=app, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    shutil.rmtree(cache, ignore_errors=True)
"""


def _stop(procs: list[subprocess.Popen]) -> None:  # type: ignore[type-arg]
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # its own session: the loop and the app it is running
        except (ProcessLookupError, PermissionError):
            pass
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass


@contextmanager
def compile_jobs(jobs: int = 3, python: str = sys.executable) -> Iterator[None]:
    """`jobs` loops compiling tests/apps/heavy_forward in fresh caches for the duration of the block."""
    root = tempfile.mkdtemp(prefix="warp-compile-load-")
    procs = [
        subprocess.Popen([python, "-c", LOOP, root, str(LOAD_APP)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(jobs)
    ]
    try:
        time.sleep(2.0)  # let them get going
        yield
    finally:
        _stop(procs)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def burners(jobs: int = 2) -> Iterator[None]:
    """`jobs` pure-Python CPU burners for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-c", BURN], start_new_session=True) for _ in range(jobs)]
    try:
        time.sleep(0.5)
        yield
    finally:
        _stop(procs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=600.0)
    args = ap.parse_args()
    # a `kill` of this command ends the block as Ctrl-C would, so its jobs (own sessions) and caches go with it
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with compile_jobs(args.jobs):
        time.sleep(args.seconds)


if __name__ == "__main__":
    main()
