"""Issue 30's done-when list: numbers that must hold with three compile jobs running (bench/load.py).

    python bench/load_numbers.py [--jobs 3] [--runs 5] [--truth-pairs 8] [--truth-after 0] [--raw F.json]
        [--only fix fem] [--out bench/LOAD_NUMBERS.md]
    python bench/load_numbers.py --judge RAW.json [RAW.json ...]   (re-judge recorded runs against all their truths)

- fix: `warp-compile fix --write --unsafe-fixes` on a fresh copy of tests/apps/late_pair (a late option and a late
  generic instance), `--runs` times under load: how often both fixes (CS-3, CS-6) are proven and written.
- fem: warp.fem's example_diffusion. First the truth, on the machine as quiet as it gets (no load started):
  `--truth-pairs` interleaved plain pairs (no hook, a fresh kernel cache per pair, each a cold and a warm run) of the
  example as it is and through a launcher that sets `wp.config.enable_backward = False`; the compile CPU (cold CPU -
  warm CPU, the children's rusage) difference is the saving CS-10's fix makes. Then `diagnose --verify` `--runs`
  times under load: CS-10's estimate and its measurement, each against that truth (within 25%?), on the same clock,
  in ms and as a share of their own run's compile CPU (the truth's share: of the original's, pair by pair). With
  `--truth-after N`, N more quiet pairs once the load has stopped, pooled with the first: a truth that brackets the
  runs carries the host's own drift over them.
- coverage: `python bench/coverage.py --jobs 3` writes bench/COVERAGE.md (run on its own: 70+ minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from gentle import exit_on_sigterm, tool_json  # noqa: E402
from load import compile_jobs  # noqa: E402

PY = sys.executable
WC = str(Path(PY).with_name("warp-compile"))
FEM = ["-m", "warp.examples.fem.example_diffusion", "--headless", "--device", "cpu"]
LAUNCHER = ("import runpy\nimport warp as wp\nwp.config.enable_backward = False\n"
            'runpy.run_module("warp.examples.fem.example_diffusion", run_name="__main__", alter_sys=True)\n')
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.2}


def _cli(args: list[str], cwd: Path, out: Path) -> tuple[int, dict, float]:
    return tool_json(WC, args, cwd, out)


def fix_runs(scratch: Path, runs: int) -> list[str]:
    lines = ["## Two fixes, both proven and written, with three compile jobs running", "",
             "`warp-compile fix --write --unsafe-fixes -- python -m latepair` in a fresh copy of tests/apps/late_pair "
             "each run (a late `set_module_options` and a late float64 instance of a generic kernel: CS-3, CS-6).", "",
             "| run | written | CS-3 | CS-6 | combination | program runs | minutes | load |",
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: |"]
    both = 0
    for i in range(runs):
        tree = scratch / f"late_pair{i}"
        shutil.copytree(ROOT / "tests/apps/late_pair", tree)
        code, r, took = _cli(["fix", "--write", "--unsafe-fixes", "--", PY, "-m", "latepair"], tree,
                             scratch / f"fix{i}.json")
        by = {c["key"]: c for c in r.get("candidates", [])}
        combo = r.get("combination") or {}
        applied = r.get("applied", [])
        ok = {"CS-3", "CS-6"} <= set(applied) or combo.get("key") in applied or "CS-3+CS-6" in "+".join(applied)
        both += bool(ok and r.get("written"))

        def cell(c: dict) -> str:
            if not c:
                return "-"
            return (f"{c.get('verdict') or c.get('status')} {c.get('saving_ms') or 0:,.0f} ms after {c.get('pairs')} "
                    f"({c.get('stopped_because', '')[:60]})")

        lines.append(f"| {i + 1} | {', '.join(r.get('written', [])) or 'nothing'} | {cell(by.get('CS-3', {}))} | "
                     f"{cell(by.get('CS-6', {}))} | {cell(combo)} | {r.get('costs', {}).get('program_runs')} | "
                     f"{took / 60:.1f} | {os.getloadavg()[0]:.1f} |")
    lines += ["", f"**Both fixes proven and written in {both} of {runs} runs.**", ""]
    return lines


def _plain_pair(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """One cold and one warm plain run in a fresh cache: (compile CPU ms, compile wall ms)."""
    cache = tempfile.mkdtemp(prefix="truth-cache-")
    env = dict(os.environ, WARP_CACHE_PATH=cache)
    env.pop("PYTHONPATH", None)
    out = []
    try:
        for _ in range(2):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True, timeout=1800)
            wall = (time.perf_counter() - t0) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
            out.append((cpu, wall))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out[0][0] - out[1][0], out[0][1] - out[1][1]


def _mean_half(xs: list[float]) -> tuple[float, float]:
    if len(xs) < 2:
        return statistics.fmean(xs), float("nan")
    t = T95.get(len(xs) - 1, 1.96 + 2.4 / (len(xs) - 1))  # past the table: within 0.01 of the t quantile
    return statistics.fmean(xs), t * statistics.stdev(xs) / len(xs) ** 0.5


def fem_truth(scratch: Path, pairs: int, tag: str) -> tuple[list[float], list[float]]:
    """CS-10's saving on compile CPU from `pairs` plain interleaved pairs: the differences (ms) and, pair by pair,
    their shares of the original's compile CPU."""
    launcher = scratch / "truth" / "run_example_diffusion.py"  # not in the folder diagnose runs in (its own launcher)
    launcher.parent.mkdir(exist_ok=True)
    launcher.write_text(LAUNCHER)
    diffs, shares = [], []
    for i in range(pairs):
        arms = [([PY, *FEM], "original"), ([PY, str(launcher)], "backward off")]
        got = {}
        for cmd, name in arms if i % 2 == 0 else arms[::-1]:
            got[name] = _plain_pair(cmd, scratch)[0]
        diffs.append(got["original"] - got["backward off"])
        shares.append(100.0 * diffs[-1] / got["original"])
        print(f"truth {tag} {i + 1}/{pairs}: {diffs[-1]:,.0f} ms, {shares[-1]:.1f}%", file=sys.stderr, flush=True)
    return diffs, shares


def truth_line(name: str, diffs: list[float], shares: list[float]) -> tuple[dict, str]:
    """The truth's mean and 95% half-widths ({"ms": (mean, half), "pct": (mean, half)}) and the line that says so."""
    ms, pct = _mean_half(diffs), _mean_half(shares)
    return {"ms": ms, "pct": pct}, (
        f"- {name}: CS-10 saves {ms[0]:,.0f} ms of compile CPU (95% interval {ms[0] - ms[1]:,.0f} to "
        f"{ms[0] + ms[1]:,.0f} ms), {pct[0]:.1f}% of the original's (95% interval {pct[0] - pct[1]:.1f} to "
        f"{pct[0] + pct[1]:.1f}%), over {len(diffs)} interleaved plain pairs (no hook, fresh caches; load "
        f"{os.getloadavg()[0]:.1f}); pair differences: {', '.join(f'{d:,.0f}' for d in diffs)} ms; as shares: "
        f"{', '.join(f'{x:.1f}' for x in shares)}%")


def _within(value: float | None, truth: float) -> bool:
    return value is not None and abs(value - truth) <= 0.25 * abs(truth)


def fem_runs(scratch: Path, runs: int) -> list[dict]:
    """`diagnose --verify` under load: CS-10's estimate and its measurement, in ms and as shares of their own run's
    compile CPU (the load stretches a saving and the compile it belongs to alike)."""
    got = []
    for i in range(runs):
        cwd = scratch / f"fem{i}"  # an empty folder of the user's, as a user starting the example would have
        cwd.mkdir()
        _code, d, took = _cli(["diagnose", "--verify", "--", PY, *FEM], cwd, scratch / f"fem{i}.json")
        f = next((x for x in d.get("findings", []) + [w["finding"] for w in d.get("withdrawn", [])]
                  if x["mechanism"] == "CS-10"), {})
        got.append({"finding": f, "minutes": took / 60, "load": os.getloadavg()[0]})
        print(f"fem run {i + 1}/{runs}: estimate {f.get('estimated_saving_ms')} ms, measured "
              f"{(f.get('measured') or {}).get('saving_ms')} ms", file=sys.stderr, flush=True)
    return got


def _share(v: float | None) -> str:
    """The tool's own reading of the machine other work held while it measured (probe/contention.py)."""
    return f"{v:.0%}" if v is not None else "-"


def judge(results: list[dict], truth: dict) -> list[str]:
    """Each run's estimate and measurement against the truth (within 25%?), in ms and as shares."""
    t_ms, t_pct = truth["ms"][0], truth["pct"][0]
    lines = ["", "| run | CS-10 estimate: ms (share) | within 25%: ms, share | --verify measured: ms (share; 95% "
             "interval, pairs, stop) | within 25%: ms, share | other work (tool) | minutes | load |",
             "| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |"]
    hits = {"e_ms": 0, "e_pct": 0, "m_ms": 0, "m_pct": 0}
    pct = (lambda x: f"{x:.1f}%" if x is not None else "-")  # noqa: E731
    for i, r in enumerate(results):
        f = r["finding"]
        est, est_pct = f.get("estimated_saving_ms"), f.get("estimated_saving_pct")
        m = f.get("measured") or {}
        got, got_pct = m.get("saving_ms"), m.get("saving_pct")
        ok = {"e_ms": _within(est, t_ms), "e_pct": _within(est_pct, t_pct), "m_ms": _within(got, t_ms),
              "m_pct": _within(got_pct, t_pct)}
        for k, v in ok.items():
            hits[k] += v
        yes = {k: "yes" if v else "NO" for k, v in ok.items()}
        est_txt = (f"{est:,.0f} ms ({pct(est_pct)}; {f.get('saving_clock') or 'wall'}, {f.get('saving_source', '')})"
                   if est else "-")
        iv = (f"{m.get('saving_low_ms') or 0:,.0f} to {m.get('saving_high_ms') or 0:,.0f}" if m else "")
        m_txt = (f"{got:,.0f} ms ({pct(got_pct)}; {iv}; {m.get('pairs')} pairs; {m.get('stopped_because', '')})"
                 if got is not None else "-")
        lines.append(f"| {i + 1} | {est_txt} | {yes['e_ms']}, {yes['e_pct']} | {m_txt} | {yes['m_ms']}, "
                     f"{yes['m_pct']} | {_share(m.get('other_share'))} | {r['minutes']:.1f} | {r['load']:.1f} |")
    lines += ["", f"**Within 25% of the quiet truth, of {len(results)} runs: the estimate {hits['e_ms']} in ms, "
              f"{hits['e_pct']} as a share; --verify's measurement {hits['m_ms']} in ms, {hits['m_pct']} as a "
              "share.**", ""]
    return lines


def rejudge(raws: list[Path]) -> list[str]:
    """Every run of several benches against the truth all their quiet pairs make together."""
    data = [json.loads(r.read_text()) for r in raws]
    diffs = [d for x in data for part in ("truth_before", "truth_after") for d in x[part][0]]
    shares = [v for x in data for part in ("truth_before", "truth_after") for v in x[part][1]]
    truth, line = truth_line(f"all quiet pairs of {', '.join(r.name for r in raws)}", diffs, shares)
    out = [line.split("; load ")[0] + ")"]
    for r, x in zip(raws, data, strict=True):
        out += ["", f"Runs of {r.name}:", *judge(x["runs"], truth)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--truth-pairs", type=int, default=8, help="quiet plain pairs before the load starts")
    ap.add_argument("--truth-after", type=int, default=0, help="quiet plain pairs after the load stops (pooled with "
                    "the ones before: the host's own drift over the runs is then in the truth too)")
    ap.add_argument("--raw", help="write the truth's pairs and the runs' CS-10 findings to this JSON file")
    ap.add_argument("--only", nargs="*", default=["fix", "fem"])
    ap.add_argument("--out", default=str(HERE / "LOAD_NUMBERS.md"))
    ap.add_argument("--judge", nargs="+", metavar="RAW", help="measure nothing: pool the quiet pairs of these --raw "
                    "files into one truth and judge each file's runs against it (markdown on stdout)")
    args = ap.parse_args()
    if args.judge:
        print("\n".join(rejudge([Path(f) for f in args.judge])))
        return
    exit_on_sigterm()  # the load's finally runs: its jobs are stopped
    import warp

    scratch = Path(tempfile.mkdtemp(prefix="warp-compile-load-numbers-"))
    body: list[str] = []
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        before: tuple[list[float], list[float]] = ([], [])
        if "fem" in args.only:
            print("fem truth (quiet) ...", file=sys.stderr, flush=True)
            before = fem_truth(scratch, args.truth_pairs, "before")
        results: list[dict] = []
        with compile_jobs(args.jobs):
            time.sleep(20)  # let the load settle
            if "fix" in args.only:
                print("fix runs ...", file=sys.stderr, flush=True)
                body = fix_runs(scratch, args.runs) + body
            if "fem" in args.only:
                print("fem runs ...", file=sys.stderr, flush=True)
                results = fem_runs(scratch, args.runs)
        if "fem" in args.only:
            time.sleep(30)  # the load's jobs gone
            after = fem_truth(scratch, args.truth_after, "after") if args.truth_after else ([], [])
            body += ["## warp.fem's diffusion example: CS-10's estimate and --verify against the quiet truth", "",
                     f"`warp-compile diagnose --verify -- python {' '.join(FEM)}`, {args.runs} runs with "
                     f"{args.jobs} compile jobs running.", ""]
            truths = [("quiet truth before the runs", *before)]
            if after[0]:
                truths += [("quiet truth after the runs", *after),
                           ("both, pooled (the truth the runs are judged against)", before[0] + after[0],
                            before[1] + after[1])]
            for name, diffs, shares in truths:
                truth, line = truth_line(name, diffs, shares)
                body.append(line)
            body += judge(results, truth)
            if args.raw:
                Path(args.raw).write_text(json.dumps({"truth_before": before, "truth_after": after,
                                                      "runs": results}, indent=1))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    head = ["# Issue 30: numbers under load", "",
            f"`python bench/load_numbers.py --jobs {args.jobs} --runs {args.runs}` ({started}, {platform.machine()}, "
            f"{os.cpu_count()} vCPUs, warp-lang {warp.__version__}); {args.jobs} compile jobs (bench/load.py: loops "
            "compiling another Warp app in fresh caches) run during every measured item. The coverage of the 95% "
            "intervals under the same load: bench/COVERAGE.md.", ""]
    Path(args.out).write_text("\n".join(head + body) + "\n")
    print("\n".join(head + body))


if __name__ == "__main__":
    main()
