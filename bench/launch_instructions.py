"""The hook's price on a launch-bound run, counted in instructions (issue 41): load-independent, so it settles on a
shared machine what wall and CPU time cannot.

A warm run of bench/overhead.py's launch-bound app (3 kernels x N launches) runs under
`valgrind --tool=cachegrind --cache-sim=no` plain, with this checkout's hook installed as the sandbox installs it,
and with the hook of each `--rev`; the same with 0 launches gives the fixed start-up and exit cost. Prints a
Markdown table (instructions, ratio to plain, instructions per launch added) and writes raw JSON with `--json`.

    .venv/bin/python bench/launch_instructions.py --launches 5000 --rev main --json /tmp/li.json
    .venv/bin/python bench/launch_instructions.py --compile-bound --json /tmp/lc.json

`--compile-bound` counts instead the cold run of bench/overhead.py's compile-bound app (2 modules built from an
empty cache, header included), plain and hooked, each arm in a fresh cache of its own: the issue's second bound
(1.03x), in instructions, where wall time on a shared machine moves by more than the bound.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import APP, LAUNCH_APP, _sandbox_hook  # noqa: E402


def _instructions(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions of one run under cachegrind (the count of the whole process, Python and Warp's native code)."""
    out = cwd / "cg.out"
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}", *cmd],
                          cwd=cwd, env=env, capture_output=True, text=True, check=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if not m:
        raise RuntimeError(f"no instruction count in valgrind's output: {proc.stderr[-300:]}")
    out.unlink(missing_ok=True)
    return int(m.group(1).replace(",", ""))


def _write_app(root: Path, name: str, source: str) -> None:
    """The app as a package `name` under `root`, run with `python -m name`."""
    app = root / name
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "__main__.py").write_text(textwrap.dedent(source))


def count(arms: dict[str, Path | None], launches: int) -> dict[str, dict[int, int]]:
    """Instructions per arm (None = plain) for 0 and `launches` launches per kernel, from one warm cache."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-li-"))
    try:
        _write_app(root, "launchapp", LAUNCH_APP)
        env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONPATH", None)
        cmd = [sys.executable, "-m", "launchapp"]
        # build under valgrind: its CPU is not the host's, and the kernel cache of the host's would not be hit
        _instructions([*cmd, "1"], root, env)
        got: dict[str, dict[int, int]] = {}
        for n in (0, launches):
            for arm, hook in arms.items():
                run_env = env if hook is None else dict(env, PYTHONPATH=str(hook),
                                                        WARP_COMPILE_EVENTS=str(root / "events.jsonl"))
                got.setdefault(arm, {})[n] = _instructions([*cmd, str(n)], root, run_env)
                print(f"{arm}, {n} launches per kernel: {got[arm][n]:,}", file=sys.stderr, flush=True)
        return got
    finally:
        shutil.rmtree(root, ignore_errors=True)


def count_cold(arms: dict[str, Path | None], reps: int) -> dict[str, list[int]]:
    """Instructions of the compile-bound app's cold run per arm, `reps` times, each in an empty cache of its own."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-lc-"))
    try:
        _write_app(root, "benchapp", APP)
        got: dict[str, list[int]] = {}
        for i in range(reps):
            for arm, hook in arms.items():
                cache = root / f"cache-{arm.replace(' ', '_')}-{i}"
                env = dict(os.environ, WARP_CACHE_PATH=str(cache), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1")
                env.pop("PYTHONPATH", None)
                if hook is not None:
                    env.update(PYTHONPATH=str(hook), WARP_COMPILE_EVENTS=str(root / f"events-{i}.jsonl"))
                got.setdefault(arm, []).append(_instructions([sys.executable, "-m", "benchapp", "1"], root, env))
                print(f"{arm}, cold run {i}: {got[arm][-1]:,}", file=sys.stderr, flush=True)
                shutil.rmtree(cache, ignore_errors=True)
        return got
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table_cold(got: dict[str, list[int]]) -> str:
    plain = min(got["plain"])
    rows = ["| arm | instructions, cold run (each run) | ratio to plain (fewest of each) |", "|---|---|---|"]
    for arm, c in got.items():
        rows.append(f"| {arm} | {', '.join(f'{x:,}' for x in c)} | {min(c) / plain:.4f} |")
    return "\n".join(rows)


def table(got: dict[str, dict[int, int]], launches: int) -> str:
    plain = got["plain"]
    per_plain = (plain[launches] - plain[0]) / (3 * launches)
    rows = [f"| arm | instructions, 3 x {launches:,} launches | ratio to plain | instructions, 0 launches |"
            " added per launch (beyond the fixed cost) |", "|---|---|---|---|---|"]
    for arm, c in got.items():
        added = ((c[launches] - c[0]) - (plain[launches] - plain[0])) / (3 * launches)
        rows.append(f"| {arm} | {c[launches]:,} | {c[launches] / plain[launches]:.4f} | {c[0]:,} | "
                    f"{'-' if arm == 'plain' else f'{added:,.0f}'} |")
    rows.append(f"\nA plain launch: {per_plain:,.0f} instructions.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=5000, help="launches per kernel (3 kernels)")
    ap.add_argument("--rev", action="append", default=[], help="also count the hook of this git revision")
    ap.add_argument("--json", type=Path, help="write the raw counts here")
    ap.add_argument("--compile-bound", action="store_true", help="count the compile-bound app's cold run instead")
    ap.add_argument("--reps", type=int, default=2, help="--compile-bound: cold runs per arm")
    ns = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        print("launch_instructions: valgrind is not on PATH", file=sys.stderr)
        return 2
    repo = Path(__file__).resolve().parents[1]
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    hooks = Path(tempfile.mkdtemp(prefix="warp-compile-lihook-"))
    try:
        arms: dict[str, Path | None] = {"plain": None, "this hook": _sandbox_hook(hooks / "this")}
        for rev in ns.rev:
            arms[f"hook at {rev}"] = _sandbox_hook(hooks / rev.replace("/", "_"), rev)
        got = count_cold(arms, ns.reps) if ns.compile_bound else count(arms, ns.launches)
    finally:
        shutil.rmtree(hooks, ignore_errors=True)
    import warp  # noqa: PLC0415 (the release the counts are of)

    head = (f"machine: {platform.machine()}, {os.cpu_count()} cpu; python {platform.python_version()}; "
            f"warp-lang {warp.__version__}; commit {commit}; valgrind cachegrind, --cache-sim=no")
    print(head + "\n\n" + (table_cold(got) if ns.compile_bound else table(got, ns.launches)))
    if ns.json:
        ns.json.write_text(json.dumps({"head": head, "launches": ns.launches, "counts": got}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
