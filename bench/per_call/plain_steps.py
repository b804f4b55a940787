"""Time a step of the two per_call apps in a plain process (no warp-compile hook): what WC-1's fix saves per step.

Run from the repository root, with the project's interpreter; the kernel cache is a fresh temporary directory, and
each app's kernels are built (and the first step taken) before the clock starts:

    .venv/bin/python bench/per_call/plain_steps.py [steps] [rounds]

Prints, per round and app, the median milliseconds a step takes over `steps` steps, and for `project` the time its
two factories take per call pair (the construction a cache removes).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

APPS = Path(__file__).resolve().parents[2] / "tests" / "apps" / "per_call"


def _load(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    os.environ["WARP_CACHE_PATH"] = tempfile.mkdtemp(prefix="per-call-bench-")
    sys.argv = [sys.argv[0], "0"]  # the apps read their step count from argv at import: take none there
    import warp as wp

    wp.config.quiet = True
    apps = {"project": _load(APPS / "project" / "app.py", "project_app"), "once": _load(APPS / "once" / "app.py",
                                                                                          "once_app")}
    for r in range(rounds):
        for name, mod in apps.items():
            x = wp.zeros(mod.N, dtype=wp.vec3, device="cpu")
            v = wp.zeros(mod.N, dtype=wp.vec3, device="cpu")
            mod.step(x, v, 0.01)
            wp.synchronize()
            times = []
            for _ in range(steps):
                t = time.perf_counter()
                mod.step(x, v, 0.01)
                wp.synchronize()
                times.append((time.perf_counter() - t) * 1000.0)
            line = f"round {r + 1} {name}: step {statistics.median(times):.3f} ms (median of {steps})"
            if name == "project":
                t = time.perf_counter()
                for _ in range(steps):
                    mod.make_integrate(0.995)
                    mod.make_bounce(0.0, 0.5)
                line += f"; both factories {(time.perf_counter() - t) * 1000.0 / steps:.3f} ms a call pair"
            print(line, flush=True)


if __name__ == "__main__":
    main()
