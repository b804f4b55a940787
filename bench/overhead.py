"""Benchmark: what the hook and the measurement protocol cost, on a real Warp CPU app.

    python bench/overhead.py [--pairs 3] [--launches 20000] [--out bench/RESULTS.md] [--baseline-hook OLD_HOOK.py]

1. Hook overhead on a whole run: plain cold+warm pairs (private empty caches, no hook) against the same pairs
   with the hook injected, as a ratio of medians.
2. Hook overhead per launch of an already-loaded kernel (many launches in one process), in microseconds.
3. `warp-compile measure --samples N` wall time against N plain cold+warm pairs.
4. The hook's cost per launch inside one process: what it leaves on the launch path (its wrappers of Module.load,
   ModuleExec.get_kernel_hooks and, if still there, wp.init) swapped in and out between blocks of 500 launches,
   the fastest block of each kind kept (robust to a busy machine: other load only ever makes a block slower).
With --baseline-hook (e.g. `git show REV:probe/hook.py > /tmp/old_hook.py`), a third arm runs that hook file in
the same interleaving, so a before/after comparison sees the same machine load. The load average before and
after the run is recorded: on a shared machine the absolute figures move, the ratios less so.
Speed targets live here, with the recorded output, not in timed tests.

    python bench/overhead.py --measure-reps R [--samples 3] [--rev NAME=REV ...] [--tree NAME=DIR ...] [--progress]

5. What `warp-compile measure --samples N` costs against N plain cold+warm pairs, interleaved: each repetition
   runs every arm once (the tool from each `--tree`, the installed tool when none is given, and N plain pairs), in
   an order that rotates per repetition, so load drift hits every arm alike; per repetition the ratio of the
   tool's wall (and CPU: user + system of the whole process tree, from RUSAGE_CHILDREN) to the plain pairs'.
   The first repetition (`--warmup`) only warms the file cache and is not counted. `--rev before=REV` runs the
   tool of that commit (`--tree` an importable `warp_compile` directory), so a before/after comparison sees the
   same load.

    python bench/overhead.py --launch-price PAIRS [--rounds 60] [--before-rev REV] [--out bench/LAUNCH_PRICE.md]

6. Issue 41: the hook's price per launch and on whole runs. (a) In one process with the hook installed as the
   sandbox installs it (hook.py and its companions, their bytecode), its wrappers on the launch path swapped in and
   out between blocks of 500 launches of a small kernel (and of a generic one), CPU time per launch
   (`time.process_time`), plain and hooked blocks interleaved: per round the hooked block minus the plain one,
   median and spread over the rounds. With --before-rev, the hook of that revision in another process, the
   processes alternating. (b) PAIRS interleaved pairs, order alternating, of a plain run against
   `warp-compile measure --samples 1` on a launch-bound app (3 small kernels, 5,000 launches each, warm cache:
   the warm runs compared) and on a compile-bound app (2 modules built from an empty cache: the cold runs
   compared); per pair the ratio of wall times and of CPU times (user + system; measure's are its report's, the
   hook's exit work taken out as measure does).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

APP = """\
import sys
import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] * 2.0

@wp.kernel
def shift(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
a = wp.zeros(8, dtype=wp.float32, device="cpu")
wp.launch(scale, dim=8, inputs=[a], device="cpu")
wp.set_module_options({"fast_math": True})
wp.launch(shift, dim=8, inputs=[a], device="cpu")
wp.synchronize()
t0 = __import__("time").perf_counter()
for _ in range(n):
    wp.launch(shift, dim=8, inputs=[a], device="cpu")
wp.synchronize()
print("LAUNCH_US", (__import__("time").perf_counter() - t0) / max(n, 1) * 1e6)
"""


AB_APP = """\
import sys, time
import warp as wp
from warp._src import context as ctx

@wp.kernel
def shift(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

a = wp.zeros(8, dtype=wp.float32, device="cpu")
wp.launch(shift, dim=8, inputs=[a], device="cpu")
M, E = ctx.Module, ctx.ModuleExec
wl, wh, wi = M.load, E.get_kernel_hooks, ctx.init  # launch() calls init() every time: a wrapper there counts too
plain = tuple(getattr(f, "__wrapped__", f) for f in (wl, wh, wi))
arms = {"plain": plain, "hook": (wl, wh, wi)}
best = {k: 1e9 for k in arms}
for _ in range(int(sys.argv[1])):
    for k, (load, hooks, init) in arms.items():
        M.load, E.get_kernel_hooks, ctx.init = load, hooks, init
        t0 = time.perf_counter()
        for _ in range(500):
            wp.launch(shift, dim=8, inputs=[a], device="cpu")
        best[k] = min(best[k], (time.perf_counter() - t0) * 2000.0)
print("AB_US", best["plain"], best["hook"])
"""


LAUNCH_APP = """\
import sys
import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=wp.float32), s: float):
    i = wp.tid()
    a[i] = a[i] * s

@wp.kernel
def shift(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + b[i]

@wp.kernel
def clamp(a: wp.array(dtype=wp.float32), hi: float):
    i = wp.tid()
    a[i] = wp.min(a[i], hi)

n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
a = wp.zeros(64, dtype=wp.float32, device="cpu")
b = wp.ones(64, dtype=wp.float32, device="cpu")
for _ in range(n):
    wp.launch(scale, dim=64, inputs=[a, 0.5], device="cpu")
    wp.launch(shift, dim=64, inputs=[a, b], device="cpu")
    wp.launch(clamp, dim=64, inputs=[a, 10.0], device="cpu")
wp.synchronize()
print("sum", float(a.numpy().sum()))
"""

PRICE_APP = """\
import sys, time
from typing import Any
import warp as wp
from warp._src import context as ctx

@wp.kernel
def shift(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

@wp.kernel
def gshift(a: wp.array(dtype=Any)):
    i = wp.tid()
    a[i] = a[i] + a.dtype(1.0)

a = wp.zeros(8, dtype=wp.float32, device="cpu")
kern = gshift if sys.argv[2] == "generic" else shift
wp.launch(kern, dim=8, inputs=[a], device="cpu")
M, E, K = ctx.Module, ctx.ModuleExec, ctx.Kernel
hooked = (M.load, E.get_kernel_hooks, K.add_overload, ctx.init)  # launch() calls init() every time
plain = tuple(getattr(f, "__wrapped__", f) for f in hooked)
for _ in range(300):  # past the hook's first reads of this launch's place: the steady state is measured
    wp.launch(kern, dim=8, inputs=[a], device="cpu")
clock = time.process_time
for _ in range(int(sys.argv[1])):
    got = []
    for load, hooks, overload, init in (plain, hooked):
        M.load, E.get_kernel_hooks, K.add_overload, ctx.init = load, hooks, overload, init
        t0 = clock()
        for _ in range(500):
            wp.launch(kern, dim=8, inputs=[a], device="cpu")
        got.append((clock() - t0) * 2000.0)
    print("ROUND_US", *got)
"""


def _sandbox_hook(dest: Path, rev: str | None = None) -> Path:
    """A hook directory as the sandbox writes it (hook.py as sitecustomize, its companions, their bytecode), of
    this checkout or of git revision `rev`."""
    dest.mkdir(parents=True, exist_ok=True)
    if rev is None:
        from warp_compile.probe.sandbox import Sandbox

        with Sandbox() as box:
            for f in box.hook_dir.rglob("*"):
                if f.is_file():
                    (dest / f.relative_to(box.hook_dir)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, dest / f.relative_to(box.hook_dir))
        return dest
    repo = Path(__file__).resolve().parents[1]
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only", rev, "probe/"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        base = Path(name).name
        if base.startswith("hook") and base.endswith(".py") and base != "hook_cuda.py":
            text = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{name}"], check=True, capture_output=True,
                                  text=True).stdout
            (dest / ("sitecustomize.py" if base == "hook.py" else base)).write_text(text)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", str(dest)],
                   check=True)
    return dest


def _price_rounds(work: Path, hook_dir: Path, kernel: str, rounds: int) -> list[tuple[float, float]]:
    """(plain, hooked) CPU µs per launch of each round, from one process (item 6a)."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-bench-"))
    try:
        env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=str(hook_dir), WARP_COMPILE_EVENTS=str(root / "events.jsonl"))
        _, out = _run([sys.executable, "-m", "priceapp", str(rounds), kernel], work, env)
        return [(float(a), float(b)) for a, b in (ln.split()[1:] for ln in out.splitlines()
                                                  if ln.startswith("ROUND_US"))]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _stat(xs: list[float], fmt: str = "{:.2f}") -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    f = fmt.format
    return f"{f(statistics.median(xs))} (IQR {f(q[0])} to {f(q[2])}, range {f(min(xs))} to {f(max(xs))})"


def _plain_timed(work: Path, module: str, args: list[str], warm: int,
                 hook_dir: Path | None = None) -> tuple[float, float, float, float]:
    """(wall ms, CPU ms, 0, 0) of a plain cold run in a private cache (`warm` 0); else, after an untimed cold run,
    (wall ms, CPU ms) of a plain warm run and of a warm run in the same cache with `hook_dir` installed as the
    sandbox installs it, the plain one first for `warm` 1, second for 2."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-bench-"))
    try:
        env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1")
        cmd = [sys.executable, "-m", module, *args]
        if not warm:
            wall, _out, cpu = _run_cpu(cmd, work, env)
            return wall, cpu, 0.0, 0.0
        _run(cmd, work, env)
        hooked = dict(env, PYTHONPATH=str(hook_dir), WARP_COMPILE_EVENTS=str(root / "events.jsonl"))
        got = {}
        for arm in ("plain", "hook") if warm == 1 else ("hook", "plain"):
            wall, _out, cpu = _run_cpu(cmd, work, env if arm == "plain" else hooked)
            got[arm] = (wall, cpu)
        return (*got["plain"], *got["hook"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _measured(work: Path, module: str, args: list[str], warm: bool) -> tuple[float, float, int]:
    """(wall ms, CPU ms, launches) of `measure --samples 1`'s warm (or cold) run, as its report gives them."""
    out = work / "r.json"
    subprocess.run([sys.executable, "-m", "warp_compile", "measure", "--samples", "1", "--quiet", "--json", str(out),
                    "--cwd", str(work), "--", sys.executable, "-m", module, *args], check=True, capture_output=True)
    run = json.loads(out.read_text())["sample_results"][0]["warm" if warm else "cold"]
    return run["wall_ms"], run["cpu_ms"], run.get("launches", 0)


def launch_price(ns: argparse.Namespace) -> int:
    """Item 6 of the docstring."""
    work = Path(tempfile.mkdtemp(prefix="warp-compile-benchapp-"))
    hooks = Path(tempfile.mkdtemp(prefix="warp-compile-benchhook-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    repo = Path(__file__).resolve().parents[1]
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "probe/", "bench/"],
                           capture_output=True, text=True).stdout.strip()
    try:
        for name, text in (("priceapp", PRICE_APP), ("launchapp", LAUNCH_APP), ("benchapp", APP)):
            (work / name).mkdir()
            (work / name / "__init__.py").write_text("")
            (work / name / "__main__.py").write_text(textwrap.dedent(text))
        arms = {"this hook": _sandbox_hook(hooks / "this")}
        if ns.before_rev:
            arms[f"hook at {ns.before_rev}"] = _sandbox_hook(hooks / "before", ns.before_rev)
        load_before = os.getloadavg()
        price: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for kernel in ("plain", "generic"):
            for _ in range(3):  # processes alternate between the hooks, so drift hits each alike
                for arm, d in arms.items():
                    price.setdefault((arm, kernel), []).extend(_price_rounds(work, d, kernel, ns.rounds // 3))
        print("per-launch rounds done", flush=True)
        launch_rows, compile_rows, loads = [], [], []
        for i in range(ns.launch_price):
            first_plain = i % 2 == 0
            pair = {}
            for arm in ("plain", "measure") if first_plain else ("measure", "plain"):
                pair[arm] = (_plain_timed(work, "launchapp", ["5000"], 1 if first_plain else 2, arms["this hook"])
                             if arm == "plain" else _measured(work, "launchapp", ["5000"], True))
            launch_rows.append(pair)
            pair = {}
            for arm in ("plain", "measure") if first_plain else ("measure", "plain"):
                pair[arm] = (_plain_timed(work, "benchapp", ["1"], 0) if arm == "plain"
                             else _measured(work, "benchapp", ["1"], False))
            compile_rows.append(pair)
            loads.append(os.getloadavg()[0])
            print(f"pair {i}: launch-bound warm {launch_rows[-1]['measure'][0] / launch_rows[-1]['plain'][0]:.3f}"
                  f" (direct {launch_rows[-1]['plain'][2] / launch_rows[-1]['plain'][0]:.3f}),"
                  f" compile-bound cold {compile_rows[-1]['measure'][0] / compile_rows[-1]['plain'][0]:.3f}"
                  f" (load {loads[-1]:.2f})", flush=True)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(hooks, ignore_errors=True)
    import warp  # noqa: PLC0415  (only for the version line)

    lines = [
        f"# The hook's price per launch (issue 41), {time.strftime('%Y-%m-%d %H:%M')} UTC",
        "",
        f"machine: {platform.machine()}, {os.cpu_count()} cpu, {platform.platform()}; python"
        f" {platform.python_version()}; warp-lang {warp.__version__};"
        f" commit {commit}{' (uncommitted changes)' if dirty else ''}",
        f"load average (1/5/15 min) before: {' / '.join(f'{x:.2f}' for x in load_before)}, after:"
        f" {' / '.join(f'{x:.2f}' for x in load_after)}; 1-min load at the pairs: {_stat(loads)}",
        "",
        f"## Per launch, in one process ({ns.rounds // 3 * 3} rounds of 500 launches per arm, CPU time)",
        "",
        "| hook | kernel | plain block (µs per launch) | hooked block (µs per launch) | hook's cost per launch (µs,"
        " per-round difference) | fastest blocks' difference |",
        "|---|---|---|---|---|---|",
    ]
    for (arm, kernel), rows in price.items():
        plain_us, hooked_us = [r[0] for r in rows], [r[1] for r in rows]
        lines.append(f"| {arm} | {'generic (Any)' if kernel == 'generic' else 'concrete'} | {_stat(plain_us)} |"
                     f" {_stat(hooked_us)} | {_stat([h - p for p, h in rows])} |"
                     f" {min(hooked_us) - min(plain_us):.2f} |")
    lines += [
        "",
        f"## Whole runs: a plain run against `measure --samples 1`'s run, {ns.launch_price} interleaved pairs",
        "",
        "| app | runs compared | plain wall (median) | measured wall (median) | wall ratio (per pair) | CPU ratio (per"
        " pair) | fastest run of each side: wall ratio, CPU ratio (a busy machine only slows a run) |",
        "|---|---|---|---|---|---|---|",
    ]

    def fastest(rows: list[dict], arm: str, i: int, j: int) -> str:
        return (f"{min(r[arm][i] for r in rows) / min(r['plain'][0] for r in rows):.3f},"
                f" {min(r[arm][j] for r in rows) / min(r['plain'][1] for r in rows):.3f}")

    for app, what, rows in (("launch-bound (3 kernels x 5,000 launches)", "warm", launch_rows),
                            ("compile-bound (2 modules built)", "cold", compile_rows)):
        walls = [r["measure"][0] / r["plain"][0] for r in rows]
        cpus = [r["measure"][1] / r["plain"][1] for r in rows]
        lines.append(f"| {app} | {what} | {statistics.median(r['plain'][0] for r in rows):,.0f} ms |"
                     f" {statistics.median(r['measure'][0] for r in rows):,.0f} ms | {_stat(walls, '{:.3f}')} |"
                     f" {_stat(cpus, '{:.3f}')} | {fastest(rows, 'measure', 0, 1)} |")
    walls = [r["plain"][2] / r["plain"][0] for r in launch_rows]
    cpus = [r["plain"][3] / r["plain"][1] for r in launch_rows]
    plain_ms = statistics.median(r["plain"][0] for r in launch_rows)
    lines.append(f"| launch-bound, the hook installed directly (as the sandbox does; the same warm cache, right"
                 f" before or after the plain run) | warm | {plain_ms:,.0f} ms |"
                 f" {statistics.median(r['plain'][2] for r in launch_rows):,.0f} ms | {_stat(walls, '{:.3f}')} |"
                 f" {_stat(cpus, '{:.3f}')} | {fastest(launch_rows, 'plain', 2, 3)} |")
    launches = {r["measure"][2] for r in launch_rows}
    lines += ["", f"Launches the measured warm runs counted: {sorted(launches)}.", ""]
    text = "\n".join(lines)
    print(text)
    if ns.out:
        Path(ns.out).write_text(text)
    return 0


def _ab(cwd: Path, hook_dir: Path, blocks: int = 60) -> tuple[float, float]:
    """(plain, hooked) µs per launch in one process, fastest block of each (see item 4 of the docstring)."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-bench-"))
    try:
        env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=str(hook_dir), WARP_COMPILE_EVENTS=str(root / "events.jsonl"))
        _, out = _run([sys.executable, "-m", "abapp", str(blocks)], cwd, env)
        plain, hooked = (float(x) for x in next(ln for ln in out.splitlines() if ln.startswith("AB_US")).split()[1:])
        return plain, hooked
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    wall, out, _cpu = _run_cpu(cmd, cwd, env)
    return wall, out


def _run_cpu(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str, float]:
    """(wall ms, stdout, CPU ms of the child: user + system). CPU time moves far less than wall time when other
    processes share the cores, so it is the steadier view of what the hook adds on a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # in its own session, as the sandbox starts the app: where the kernel groups sessions for scheduling
    # (autogroup), a busy machine otherwise gives the plain run a smaller share of the CPU than the measured one
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=True, start_new_session=True)
    wall = (time.perf_counter() - t0) * 1000.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0
    return wall, out.stdout, cpu


def _pair(cwd: Path, hook_dir: Path | None, launches: int) -> tuple[float, float, float, float]:
    """One cold + warm pair with private caches; returns (cold ms, warm ms, us per launch in the warm run,
    warm CPU ms)."""
    root = Path(tempfile.mkdtemp(prefix="warp-compile-bench-"))
    try:
        env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1")
        if hook_dir is not None:
            env["PYTHONPATH"] = str(hook_dir)
            env["WARP_COMPILE_EVENTS"] = str(root / "events.jsonl")
        cmd = [sys.executable, "-m", "benchapp", str(launches)]
        cold, _ = _run(cmd, cwd, env)
        warm, out, cpu = _run_cpu(cmd, cwd, env)
        us = float(next(ln.split()[1] for ln in out.splitlines() if ln.startswith("LAUNCH_US")))
        return cold, warm, us, cpu
    finally:
        shutil.rmtree(root, ignore_errors=True)


TOOL_LAUNCHER = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); runpy.run_module('warp_compile', run_name='__main__')"
)


def _tool_cmd(tree: str | None, samples: int, work: Path, progress: bool) -> list[str]:
    """`warp-compile measure` from a package tree (put first on sys.path, the app's environment untouched)."""
    head = [sys.executable, "-c", TOOL_LAUNCHER, tree] if tree else [sys.executable, "-m", "warp_compile"]
    quiet = [] if progress else ["--quiet"]
    return head + ["measure", "--samples", str(samples), *quiet, "--json", str(work / "r.json"), "--cwd", str(work),
                   "--", sys.executable, "-m", "benchapp", "1"]


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, float]:
    """(wall ms, CPU ms of the whole waited-for process tree, wall ms of the app runs inside, from the report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    wall = (time.perf_counter() - t0) * 1000.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    runs = json.loads((cwd / "r.json").read_text())["sample_results"]
    inside = sum(s["cold"]["wall_ms"] + (s["warm"] or {}).get("wall_ms", 0.0) for s in runs)
    return wall, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0, inside


def _plain_pairs(work: Path, samples: int) -> tuple[float, float, float]:
    wall = cpu = 0.0
    for _ in range(samples):
        root = Path(tempfile.mkdtemp(prefix="warp-compile-bench-"))
        try:
            env = dict(os.environ, WARP_CACHE_PATH=str(root / "cache"), TMPDIR=str(root), PYTHONDONTWRITEBYTECODE="1")
            for _run in ("cold", "warm"):
                w, _out, c = _run_cpu([sys.executable, "-m", "benchapp", "1"], work, env)
                wall, cpu = wall + w, cpu + c
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return wall, cpu, wall


def _band(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return f"{statistics.median(xs):.3f} (IQR {q[0]:.3f}-{q[2]:.3f}, range {min(xs):.3f}-{max(xs):.3f})"


PACKAGE_DIRS = {"probe": "probe", "server": "server", "knowledge": "knowledge", "evals": "evals"}  # pyproject


def _tree_of(rev: str, dest: Path) -> Path:
    """An importable `warp_compile` package of git revision `rev` of this repository (the layout pyproject.toml
    maps: probe/ becomes warp_compile/probe, ...), compiled so the first run does not pay for it."""
    repo = Path(__file__).resolve().parents[1]
    raw = dest / "raw"
    raw.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "warp_compile", *PACKAGE_DIRS],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(raw)], input=archive, check=True)
    tree = dest / "tree"
    tree.mkdir()
    (raw / "warp_compile").rename(tree / "warp_compile")
    for src, name in PACKAGE_DIRS.items():
        (raw / src).rename(tree / "warp_compile" / name)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True)
    return tree


def measure_cost(ns: argparse.Namespace) -> int:
    """Item 5 of the docstring."""
    trees = dict(t.split("=", 1) for t in ns.tree or [])
    made = Path(tempfile.mkdtemp(prefix="warp-compile-benchtrees-"))
    try:
        for name, rev in (r.split("=", 1) for r in ns.rev or []):
            trees[name] = str(_tree_of(rev, made / name))
        return _measure_cost(ns, trees or {"installed": ""})
    finally:
        shutil.rmtree(made, ignore_errors=True)


def _measure_cost(ns: argparse.Namespace, trees: dict[str, str]) -> int:
    arms = [*trees, "plain"]
    work = Path(tempfile.mkdtemp(prefix="warp-compile-benchapp-"))
    rows: dict[str, list[tuple[float, float, float]]] = {a: [] for a in arms}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped benchmark still removes its temp dirs
    try:
        (work / "benchapp").mkdir()
        (work / "benchapp" / "__init__.py").write_text("")
        (work / "benchapp" / "__main__.py").write_text(textwrap.dedent(APP))
        load_before = os.getloadavg()
        for rep in range(ns.measure_reps + ns.warmup):
            order = arms[rep % len(arms):] + arms[: rep % len(arms)]
            got = {}
            for arm in order:
                if arm == "plain":
                    got[arm] = _plain_pairs(work, ns.samples)
                else:
                    got[arm] = _timed(_tool_cmd(trees[arm] or None, ns.samples, work, ns.progress), work)
            if rep < ns.warmup:
                continue  # warm-up: file cache, the trees' bytecode
            for arm in arms:
                rows[arm].append(got[arm])
            line = "  ".join(f"{a} {got[a][0] / got['plain'][0]:.3f}/{got[a][1] / got['plain'][1]:.3f}"
                             f" (own {got[a][0] - got[a][2]:,.0f} ms)" for a in trees)
            print(f"rep {rep}: plain {got['plain'][0]:,.0f} ms wall {got['plain'][1]:,.0f} ms cpu; {line}",
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    plain = rows["plain"]
    lines = [
        f"`warp-compile measure --samples {ns.samples}{'' if ns.progress else ' --quiet'}` against {ns.samples}"
        f" plain cold+warm pairs, {ns.measure_reps} interleaved repetitions"
        f" ({time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cpu, load average before"
        f" {' / '.join(f'{x:.2f}' for x in load_before)}, after {' / '.join(f'{x:.2f}' for x in load_after)}):",
        "",
        "| tool | plain pairs wall (median) | tool wall (median) | tool's own wall outside the app runs (median)"
        " | wall ratio, median of the per-repetition ratios | CPU ratio (user + system, whole tree) |",
        "|---|---|---|---|---|---|",
    ]
    for arm in trees:
        walls = [t[0] / p[0] for t, p in zip(rows[arm], plain, strict=True)]
        cpus = [t[1] / p[1] for t, p in zip(rows[arm], plain, strict=True)]
        lines.append(f"| {arm} | {statistics.median(p[0] for p in plain):,.0f} ms |"
                     f" {statistics.median(t[0] for t in rows[arm]):,.0f} ms |"
                     f" {statistics.median(t[0] - t[2] for t in rows[arm]):,.0f} ms | {_band(walls)} | {_band(cpus)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if ns.append:
        with open(ns.append, "a", encoding="utf-8") as f:
            f.write("\n" + text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--measure-reps", type=int, default=0, metavar="R", help="only item 5, R repetitions")
    ap.add_argument("--samples", type=int, default=3, help="item 5: samples of `measure` (and plain pairs)")
    ap.add_argument("--tree", action="append", metavar="NAME=DIR", help="item 5: a warp_compile tree to run")
    ap.add_argument("--rev", action="append", metavar="NAME=REV", help="item 5: the tool at a git revision")
    ap.add_argument("--progress", action="store_true", help="item 5: run measure with live progress (no --quiet)")
    ap.add_argument("--append", metavar="FILE", help="item 5: append the table to FILE")
    ap.add_argument("--warmup", type=int, default=1, metavar="W", help="item 5: repetitions run first, not counted")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    ap.add_argument("--baseline-hook", metavar="FILE", help="an older hook.py to run as a third arm (before/after)")
    ap.add_argument("--launch-price", type=int, default=0, metavar="PAIRS", help="only item 6, PAIRS pairs")
    ap.add_argument("--rounds", type=int, default=60, help="item 6: rounds of 500 launches per arm")
    ap.add_argument("--before-rev", metavar="REV", help="item 6: also the hook of this git revision, per launch")
    ns = ap.parse_args()
    if ns.measure_reps:
        return measure_cost(ns)
    if ns.launch_price:
        if ns.out == str(Path(__file__).with_name("RESULTS.md")):
            ns.out = str(Path(__file__).with_name("LAUNCH_PRICE.md"))
        return launch_price(ns)

    work = Path(tempfile.mkdtemp(prefix="warp-compile-benchapp-"))
    hook = Path(tempfile.mkdtemp(prefix="warp-compile-benchhook-"))
    base: Path | None = None
    try:
        (work / "benchapp").mkdir()
        (work / "benchapp" / "__init__.py").write_text("")
        (work / "benchapp" / "__main__.py").write_text(textwrap.dedent(APP))
        (work / "abapp").mkdir()
        (work / "abapp" / "__init__.py").write_text("")
        (work / "abapp" / "__main__.py").write_text(AB_APP)
        from warp_compile.probe.sandbox import write_hook

        write_hook(hook)  # as the sandbox does

        if ns.baseline_hook:
            base = Path(tempfile.mkdtemp(prefix="warp-compile-benchbase-"))
            (base / "sitecustomize.py").write_text(Path(ns.baseline_hook).read_text())  # as its sandbox did
        load_before = os.getloadavg()
        plain, hooked, based = [], [], []
        for _ in range(ns.pairs):  # interleave so drift hits every arm
            plain.append(_pair(work, None, ns.launches))
            hooked.append(_pair(work, hook, ns.launches))
            if base is not None:
                based.append(_pair(work, base, ns.launches))

        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "warp_compile", "measure", "--samples", str(ns.pairs), "--quiet", "--json",
             str(work / "r.json"), "--cwd", str(work), "--", sys.executable, "-m", "benchapp", "1"],
            check=True, capture_output=True,
        )
        measure_ms = (time.perf_counter() - t0) * 1000.0
        plain_pairs = [_pair(work, None, 1) for _ in range(ns.pairs)]
        ab = _ab(work, hook)
        ab_base = _ab(work, base) if base is not None else None
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(hook, ignore_errors=True)
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)

    med = statistics.median
    pc, pw, pl = (med([p[i] for p in plain]) for i in range(3))
    hc, hw, hl = (med([p[i] for p in hooked]) for i in range(3))
    pair_sum = sum(p[0] + p[1] for p in plain_pairs)
    pcpu, hcpu = med([p[3] for p in plain]), med([h[3] for h in hooked])
    import warp  # noqa: PLC0415  (only for the version line)

    lines = [
        f"# warp-compile benchmark ({time.strftime('%Y-%m-%d')})",
        "",
        f"machine: {platform.machine()}, {os.cpu_count()} cpu, {platform.platform()};"
        f" python {platform.python_version()};"
        f" warp-lang {warp.__version__}; {ns.pairs} pairs, {ns.launches} launches per warm run",
        f"load average (1/5/15 min) before: {' / '.join(f'{x:.2f}' for x in load_before)},"
        f" after: {' / '.join(f'{x:.2f}' for x in load_after)}",
        "",
        "| what | plain | with hook | ratio |",
        "|---|---|---|---|",
        f"| cold run wall (median) | {pc:,.0f} ms | {hc:,.0f} ms | {hc / pc:.3f} |",
        f"| warm run wall incl. {ns.launches} launches (median) | {pw:,.0f} ms | {hw:,.0f} ms | {hw / pw:.3f} |",
        f"| per launch of a loaded kernel (median) | {pl:.2f} µs | {hl:.2f} µs | {hl / pl:.3f} |",
        f"| hook cost per launch (median of the per-pair differences) | | "
        f"{med([h[2] - p[2] for p, h in zip(plain, hooked, strict=True)]):.2f} µs | |",
        f"| warm run wall ratio (median of the per-pair ratios) | | | "
        f"{med([h[1] / p[1] for p, h in zip(plain, hooked, strict=True)]):.3f} |",
        f"| warm run wall, fastest of the {ns.pairs} (a busy machine only slows a run) |"
        f" {min(p[1] for p in plain):,.0f} ms"
        f" | {min(h[1] for h in hooked):,.0f} ms | {min(h[1] for h in hooked) / min(p[1] for p in plain):.3f} |",
        f"| warm run CPU time, user + system (median) | {pcpu:,.0f} ms | {hcpu:,.0f} ms | {hcpu / pcpu:.3f} |",
    ]
    if based:
        bc, bw, bl = (med([p[i] for p in based]) for i in range(3))
        lines += [
            "",
            f"Baseline hook `{Path(ns.baseline_hook).name}` in the same interleaving:",
            "",
            "| what | plain | with baseline hook | ratio |",
            "|---|---|---|---|",
            f"| cold run wall (median) | {pc:,.0f} ms | {bc:,.0f} ms | {bc / pc:.3f} |",
            f"| warm run wall incl. {ns.launches} launches (median) | {pw:,.0f} ms | {bw:,.0f} ms | {bw / pw:.3f} |",
            f"| per launch of a loaded kernel (median) | {pl:.2f} µs | {bl:.2f} µs | {bl / pl:.3f} |",
            f"| hook cost per launch (median of the per-pair differences) | | "
            f"{med([b[2] - p[2] for p, b in zip(plain, based, strict=True)]):.2f} µs | |",
            f"| warm run wall ratio (median of the per-pair ratios) | | | "
            f"{med([b[1] / p[1] for p, b in zip(plain, based, strict=True)]):.3f} |",
            f"| warm run wall, fastest of the {ns.pairs} | {min(p[1] for p in plain):,.0f} ms"
            f" | {min(b[1] for b in based):,.0f} ms | {min(b[1] for b in based) / min(p[1] for p in plain):.3f} |",
            f"| warm run CPU time, user + system (median) | {pcpu:,.0f} ms | {med([b[3] for b in based]):,.0f} ms |"
            f" {med([b[3] for b in based]) / pcpu:.3f} |",
        ]
    lines += [
        "",
        "In one process, wrappers swapped in and out between blocks of 500 launches (fastest block of each):",
        "",
        "| hook | plain | with hook | cost per launch |",
        "|---|---|---|---|",
        f"| this hook | {ab[0]:.2f} µs | {ab[1]:.2f} µs | {ab[1] - ab[0]:.2f} µs |",
    ]
    if ab_base is not None:
        lines.append(f"| baseline `{Path(ns.baseline_hook).name}` | {ab_base[0]:.2f} µs | {ab_base[1]:.2f} µs |"
                     f" {ab_base[1] - ab_base[0]:.2f} µs |")
    lines += [
        "",
        f"`warp-compile measure --samples {ns.pairs}`: {measure_ms:,.0f} ms wall, against {pair_sum:,.0f} ms for"
        f" {ns.pairs} plain cold+warm pairs run by hand (ratio {measure_ms / pair_sum:.2f}).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(ns.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
