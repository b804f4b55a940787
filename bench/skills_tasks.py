"""Benchmark: NVIDIA's CPU eval tasks for Warp compile time, as they ship, fixed by `warp-compile fix` alone.

    python bench/skills_tasks.py SKILLS_CHECKOUT [--task c01_particle_preprocessing ...] [--pairs 6]
        [--out bench/SKILLS_TASKS.md] [--json bench/skills-tasks.json]

SKILLS_CHECKOUT is a checkout (or a bare git directory) of NVIDIA/skills; nothing of it is copied into this project.
Per task, as its prompt asks (`python -m <package>` from the task folder's `src/`): the task folder is copied to a
scratch directory, `warp-compile fix --write --unsafe-fixes` runs there alone (no hint, no finding picked), then
plain cold runs of the original and the written copy, interleaved, each in a fresh kernel cache (no hook), compare
their CPU time, wall time and printed lines (bench/shapes.py's `plain_pairs`). For c01 it also reads which module
options every built kernel compiled with, in both trees (Warp's own `Module.options` at exit, through a small
`sitecustomize` in a scratch folder on PYTHONPATH), so "fast_math reaches no kernel it did not reach before" is
checked, not assumed. The skills commit is recorded with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import shapes  # noqa: E402
from gentle import exit_on_sigterm  # noqa: E402
from shapes import _warp, fix_alone, plain_pairs  # noqa: E402

TASKS = {"c01_particle_preprocessing": "particle_prep", "c04_batch_signals": "batch_signals"}
# the clock each task is about: c01 pays at every cold start; c04 throws its cache away, so what it costs is the
# run after a first one, in the same cache (what "thousands of times a day" pays)
CLOCK = {"c01_particle_preprocessing": "cold", "c04_batch_signals": "repeat"}
EVALS = "skills/warp-compile-time-optimizer/evals/files"

# Written into a scratch folder put on PYTHONPATH for one plain run: at exit, every loaded Warp module's kernels with
# the options that module was built with. Reads Warp's public module registry only; changes nothing.
_OPTIONS_PROBE = """
import atexit, json, os

def _dump():
    try:
        import warp._src.context as ctx
    except Exception:
        try:
            import warp.context as ctx
        except Exception:
            return
    out = {}
    for name, m in list(getattr(ctx, "user_modules", {}).items()):
        if not getattr(m, "kernels", None):
            continue
        opts = {k: m.options.get(k) for k in ("fast_math", "enable_backward", "mode")}
        for k in m.kernels.values() if isinstance(m.kernels, dict) else m.kernels:
            out[getattr(k, "key", str(k))] = {"module": name, **opts}
    with open(os.environ["WARP_COMPILE_OPTIONS_OUT"], "w") as f:
        json.dump(out, f, sort_keys=True)

atexit.register(_dump)
"""


def _checkout(path: Path, scratch: Path) -> tuple[Path, str]:
    """(the evals folder, the commit): a work tree is used in place, a bare git directory is archived to scratch."""
    if (path / EVALS).is_dir():
        rev = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
        return path / EVALS, rev.stdout.strip() or "unknown"
    rev = subprocess.run(["git", "--git-dir", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    archive = subprocess.run(["git", "--git-dir", str(path), "archive", "HEAD", EVALS], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    return scratch / EVALS, rev


def kernel_options(py: str, module: str, tree: Path) -> dict:
    """Every kernel's module and its options in one plain run of `tree` (a fresh cache)."""
    with tempfile.TemporaryDirectory(prefix="skills-options-") as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(_OPTIONS_PROBE)
        out = Path(tmp) / "options.json"
        env = dict(os.environ, WARP_CACHE_PATH=str(Path(tmp) / "cache"), PYTHONPATH=tmp,
                   WARP_COMPILE_OPTIONS_OUT=str(out))
        subprocess.run([py, "-m", module], cwd=tree, env=env, capture_output=True, text=True, timeout=600,
                       check=True)
        return json.loads(out.read_text()) if out.is_file() else {}


def _by_name(options: dict) -> dict[str, dict]:
    """Kernel name (its key's last part: `make__locals__center_kernel` -> `center_kernel`) -> its options."""
    return {k.replace(".", "__").rsplit("__", 1)[-1]: v for k, v in options.items()}


def _repeat(py: str, module: str, tree: Path) -> tuple[float, float, list[str]]:
    """The second of two plain runs in one fresh kernel cache: (wall s, CPU s, printed lines)."""
    with tempfile.TemporaryDirectory(prefix="skills-repeat-") as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache)
        env.pop("PYTHONPATH", None)
        subprocess.run([py, "-m", module], cwd=tree, env=env, capture_output=True, text=True, timeout=600, check=True)
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([py, "-m", module], cwd=tree, env=env, capture_output=True, text=True, timeout=600,
                              check=True)
        took = time.perf_counter() - start
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)
    return took, cpu, shapes._app_lines(done.stdout)


def repeat_pairs(py: str, module: str, before: Path, after: Path, pairs: int) -> dict:
    """`plain_pairs` on the repeat clock: the same interleaving and verdict, each sample the second run in a cache."""
    plain = shapes._plain
    shapes._plain = _repeat
    try:
        return plain_pairs(py, module, before, after, pairs)
    finally:
        shapes._plain = plain


def run_task(task: str, folder: Path, pairs: int, py: str, tool: str) -> dict:
    module = TASKS[task]
    row: dict = {"task": task, "module": module}
    with tempfile.TemporaryDirectory(prefix=f"skills-{task}-") as tmp:
        copy = Path(tmp) / task
        shutil.copytree(folder, copy)
        src = copy / "src"
        result = fix_alone(tool, py, module, src, Path(tmp) / "fix.json", row)
        row["applied"], row["written"] = result.get("applied", []), result.get("written", [])
        row["program_runs"] = (result.get("costs") or {}).get("program_runs")
        row["diff"] = subprocess.run(["diff", "-ru", str(folder / "src"), str(src), "-x", "__pycache__"],
                                     capture_output=True, text=True).stdout.replace(str(folder), "a").replace(
                                         str(copy), "b")
        if row["written"]:
            row["clock"] = CLOCK[task]
            row["plain"] = (plain_pairs(py, module, folder / "src", src, pairs) if CLOCK[task] == "cold"
                            else repeat_pairs(py, module, folder / "src", src, pairs))
            before, after = kernel_options(py, module, folder / "src"), kernel_options(py, module, src)
            row["options_before"], row["options_after"] = before, after
            b, a = _by_name(before), _by_name(after)
            row["fast_math_new"] = sorted(k for k, v in a.items() if v.get("fast_math")
                                          and not (b.get(k) or {}).get("fast_math"))
    return row


def _own_commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def render(rows: list[dict], commit: str, pairs: int, started: str, took_min: float) -> str:
    out = [
        "# NVIDIA's CPU eval tasks as they ship, fixed by `warp-compile fix` alone",
        "",
        f"`python bench/skills_tasks.py <NVIDIA/skills checkout> --pairs {pairs}` ({started}, {platform.machine()}, "
        f"{os.cpu_count()} vCPUs, warp-lang {_warp()}, {took_min:.0f} min; warp-compile at `{_own_commit()}`; "
        f"NVIDIA/skills at `{commit}`, "
        f"`{EVALS}/`). Each task folder copied to a scratch directory, `warp-compile fix --write --unsafe-fixes` run "
        "there alone, then plain runs (no hook, a fresh kernel cache each, interleaved, at least "
        f"{pairs} pairs and until the CPU interval leaves out zero) of the original and the written copy, on the "
        "clock the task is about: `cold`, the first run in the cache; `repeat`, the second run in the same cache "
        "(c04 throws its cache away, so every later invocation pays the compile again).",
        "",
        "| task | clock | fix wrote | fix took | plain CPU before -> after (median) | change | 95% interval of the "
        "CPU difference | wall before -> after | change | pairs | same output | fast_math newly on |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        p = r.get("plain") or {}
        wrote = ", ".join(r.get("applied", [])) or "nothing"
        if p:
            out.append(
                f"| {r['task']} | {r.get('clock', 'cold')} | {wrote} | {r['fix_s']:.0f} s | "
                f"{p['cpu_median_before_s']:.2f} -> "
                f"{p['cpu_median_after_s']:.2f} s | {p['cpu_change_pct']:+.1f}% | {p['cpu_interval_s'][0]:+.2f} to "
                f"{p['cpu_interval_s'][1]:+.2f} s | {p['median_before_s']:.2f} -> {p['median_after_s']:.2f} s | "
                f"{p['change_pct']:+.1f}% | {p['pairs']} | {'yes' if p['same_output'] else 'NO'} | "
                f"{', '.join(r.get('fast_math_new', [])) or 'none'} |")
        else:
            out.append(f"| {r['task']} | | {wrote} | {r['fix_s']:.0f} s | | | | | | | | |")
    for r in rows:
        out += ["", f"## {r['task']}", "", f"`{r['summary']}`", ""]
        if r.get("options_after"):
            out.append("Kernels and the module options they were built with (before -> after): "
                       + "; ".join(f"{k}: {(r['options_before'] or {}).get(k, {}).get('module', '?')} -> "
                                   f"{v['module']} (fast_math {v.get('fast_math')}, enable_backward "
                                   f"{v.get('enable_backward')})" for k, v in sorted(r["options_after"].items())))
            out.append("")
        if r.get("diff"):
            out += ["```diff", r["diff"].rstrip(), "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    exit_on_sigterm()
    ap = argparse.ArgumentParser()
    ap.add_argument("skills", type=Path, help="a checkout or bare git directory of NVIDIA/skills")
    ap.add_argument("--task", action="append", choices=sorted(TASKS), default=None)
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "SKILLS_TASKS.md")
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "skills-tasks.json")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tool", default=str(Path(sys.executable).parent / "warp-compile"))
    args = ap.parse_args(argv)
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="skills-checkout-") as scratch:
        evals, commit = _checkout(args.skills, Path(scratch))
        rows = []
        for task in args.task or sorted(TASKS):
            print(f"{task}: fix --write --unsafe-fixes, then plain pairs", file=sys.stderr, flush=True)
            rows.append(run_task(task, evals / task, args.pairs, args.python, args.tool))
    took = (time.perf_counter() - t0) / 60
    args.json.write_text(json.dumps({"commit": commit, "started": started, "rows": rows}, indent=1))
    args.out.write_text(render(rows, commit, args.pairs, started, took))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
