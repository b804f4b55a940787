"""Plain runs of two trees, interleaved, each in a fresh kernel cache: what a user sees without any tool attached.

`python bench/plain_runs.py PY MODULE BEFORE AFTER N` times `PY -m MODULE` cold (the first run in a new cache);
with `--repeat` it times the second of two runs in one new cache (what a kept cache saves). Prints both medians, the
change and whether the printed output (Warp's banner and module lines left out) is the same in both trees.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time


def _app_lines(stdout: str) -> str:
    return "\n".join(ln for ln in stdout.splitlines() if not ln.startswith(("Warp ", "Module ", " ")))


def _timed(py: str, module: str, tree: str, runs: int) -> tuple[float, str]:
    """The last of `runs` runs in one fresh cache: (its wall time, its output)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache)
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run([py, "-m", module], cwd=tree, env=env, capture_output=True, text=True, check=True)
            took = time.perf_counter() - start
    return took, _app_lines(done.stdout)


def main(argv: list[str]) -> int:
    repeat = "--repeat" in argv
    py, module, before, after, n = [a for a in argv if a != "--repeat"]
    times: dict[str, list[float]] = {before: [], after: []}
    outputs: dict[str, set[str]] = {before: set(), after: set()}
    for i in range(int(n)):
        for tree in (before, after) if i % 2 == 0 else (after, before):
            took, out = _timed(py, module, tree, 2 if repeat else 1)
            times[tree].append(took)
            outputs[tree].add(out)
    mb, ma = statistics.median(times[before]), statistics.median(times[after])
    kind = "repeat run" if repeat else "cold run"
    print(f"{kind} before median {mb:.2f} s {[round(x, 2) for x in times[before]]}")
    print(f"{kind} after  median {ma:.2f} s {[round(x, 2) for x in times[after]]}")
    print(f"change {100 * (ma - mb) / mb:+.1f}%; outputs identical: {outputs[before] == outputs[after]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
