"""Benchmark: `fix --write --unsafe-fixes` on generated variants of the corpus shapes (issue 39, item 4).

    python bench/variants.py [--only SHAPE ...] [--family F ...] [--transform T ...] [--per-shape K] [--limit N]
                             [--variant SHAPE:FAMILY/TRANSFORM ...] [--pairs N] [--out bench/VARIANTS.md]
                             [--json bench/variants.json]

The variants come from tests/shapes_variants/mutate.py (one per transformation that applies to a shape). Each is
written to a scratch folder and run plainly once beside the original: only a variant that prints the same is
given to `fix` (the rest are reported as dropped). Then, as bench/shapes.py does for the originals, `warp-compile
fix --write --unsafe-fixes --json` runs in the variant's folder and the written copy is run plainly again: reached
means something was written and the written copy prints what the original prints. Per variant the record says
whether what was written is the shape's own mechanism (MANIFEST.json's mechanism_expected), and for each miss
(nothing written, or not the shape's own mechanism) fix's own why-not texts: the verdict and reason of each measured
candidate of the shape's mechanisms, and its `not_offered` lines for them (the precondition a rule names).

`--per-shape K` keeps K variants per shape, each time the transformation (then family) used least so far, so a run
over a dozen shapes spreads over the families; `--limit N` stops after N. With `--pairs N` (N > 0) the written copy
is also timed as bench/shapes.py times the originals (plain cold pairs, `plain_pairs`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]
from gentle import exit_on_sigterm, run_gently  # noqa: E402
from shapes import _plain, _warp, manifest, plain_pairs  # noqa: E402

from tests.shapes_variants.mutate import TRANSFORMS, App, Variant, check, generate, plain_lines  # noqa: E402

ORIGINALS = ROOT / "bench" / "shapes-2026-12-06-run6.json"  # what fix wrote on the originals (bench/SHAPES.md)


def mechanisms_of(key: str) -> set[str]:
    """'CS-12@CS-9+CS-10' -> {CS-12, CS-9, CS-10}; 'CS-1#2' -> {CS-1}."""
    return {part.split("#")[0] for part in key.replace("@", "+").split("+") if part}


def select(apps: list[App], variants: dict[str, list[Variant]], per_shape: int, limit: int | None) -> list[Variant]:
    """Up to per_shape variants a shape, each the transformation (then family) chosen least so far."""
    by_transform: Counter[str] = Counter()
    by_family: Counter[str] = Counter()
    chosen: list[Variant] = []
    for app in apps:
        pool = list(variants[app.name])
        for _ in range(per_shape):
            if not pool or (limit is not None and len(chosen) >= limit):
                break
            v = min(pool, key=lambda v: (by_transform[f"{v.family}/{v.transform}"], by_family[v.family]))
            pool.remove(v)
            by_transform[f"{v.family}/{v.transform}"] += 1
            by_family[v.family] += 1
            chosen.append(v)
    return chosen


def run_fix(app: App, v: Variant, expected: list[str], original: list[str], pairs: int, py: str,
            tool: str) -> dict:
    row: dict = {"shape": v.shape, "family": v.family, "transform": v.transform, "sites": v.sites,
                 "expected": expected}
    with tempfile.TemporaryDirectory(prefix=f"variant-{v.shape}-") as tmp:
        pristine = v.write(app, Path(tmp) / "variant" / v.shape)
        copy = Path(tmp) / "fixed" / v.shape
        shutil.copytree(pristine, copy)
        out = Path(tmp) / "fix.json"
        start = time.perf_counter()
        done = run_gently([tool, "fix", "--write", "--unsafe-fixes", "--json", str(out), "--", py, "-m", v.shape],
                          cwd=copy, timeout=3600)
        row["fix_s"] = round(time.perf_counter() - start, 1)
        row["fix_exit"] = done.returncode
        row["summary"] = done.stdout.splitlines()[0] if done.stdout else done.stderr.strip()[-300:]
        if not out.is_file():
            row.update(reached=False, own=False, why=row["summary"])
            return row
        result = json.loads(out.read_text())
        every = [*result.get("candidates", []), *([result["combination"]] if result.get("combination") else []),
                 *result.get("next_round", [])]
        row["applied"], row["written"] = result.get("applied", []), result.get("written", [])
        row["program_runs"] = result.get("costs", {}).get("program_runs")
        wrote = set().union(*(set(c.get("mechanisms") or mechanisms_of(c["key"])) for c in every
                              if c["key"] in row["applied"]), *(mechanisms_of(k) for k in row["applied"]),
                           set(result.get("realised") or []))  # a written plan carries its one-plan findings
        row["mechanisms_written"] = sorted(wrote)
        row["own"] = bool(wrote & set(expected))
        # fix's own why-not texts for the shape's mechanisms: each measured candidate that did not improve, each
        # candidate skipped with its reason, each `not_offered` line naming one of them
        row["why_not"] = [
            f"{c['key']}: {c.get('verdict') or c['status']}: {(c.get('reason') or c.get('verdict_reason') or '')[:500]}"
            for c in every if set(c.get("mechanisms") or mechanisms_of(c["key"])) & set(expected)
            and not c.get("improved")] + [n[:600] for n in result.get("not_offered", [])
                                           if n.split(":", 1)[0] in expected]
        row["held_back"] = [f"{h['key']}: {h.get('reason', '')[:200]}" for h in result.get("held_back", [])]
        if row["written"]:
            if pairs > 0:
                row["plain"] = plain_pairs(py, v.shape, pristine, copy, pairs)
                row["written_same_output"] = row["plain"]["same_output"]
            else:
                row["written_same_output"] = _plain(py, v.shape, copy)[2] == original
        row["reached"] = bool(row["written"]) and bool(row.get("written_same_output"))
        if not row["reached"]:
            row["why"] = ("the written copy prints other lines than the original" if row["written"] else
                          "; ".join(row["why_not"]) or row["summary"])
        elif not row["own"]:
            row["why"] = "wrote " + ", ".join(row["applied"]) + "; own mechanism not written: " + (
                "; ".join(row["why_not"]) or "(fix named no reason)")
    return row


def _rate(rows: list[dict], key: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        k = r["family"] if key == "family" else f"{r['family']}/{r['transform']}"
        c = out.setdefault(k, {"run": 0, "reached": 0, "own": 0})
        c["run"] += 1
        c["reached"] += int(bool(r.get("reached")))
        c["own"] += int(bool(r.get("reached") and r.get("own")))
    return dict(sorted(out.items()))


def _original_own(r: dict) -> bool:
    return bool(set().union(*(mechanisms_of(k) for k in r.get("original_applied", []))) & set(r["expected"]))


def _headline(ran: list[dict]) -> list[str]:
    """Reached and own over the sample, and own over the variants whose original gets its own mechanism written:
    a variant of a shape whose original misses it measures the shape, not the variant's robustness."""
    if not ran:
        return []
    own = sum(bool(r.get("reached") and r.get("own")) for r in ran)
    base = [r for r in ran if _original_own(r)]
    return [f"**Reached {sum(bool(r.get('reached')) for r in ran)} of {len(ran)}; the shape's own mechanism "
            f"written on {own} of {len(ran)}; on {sum(bool(r.get('reached') and r.get('own')) for r in base)} of "
            f"the {len(base)} whose original gets its own mechanism written.**", ""]


def corpus_table(record: list[dict]) -> list[str]:
    """Variants per shape from `python -m tests.shapes_variants.mutate --json FILE` (every shape, every variant
    run once beside its original)."""
    total = sum(r["generated"] for r in record)
    same = sum(r["same_output"] or 0 for r in record)
    out = ["## Variants per shape (the generator, all shapes)", "",
           f"{total} variants generated for {len(record)} shapes, {same} print what their original prints "
           f"({sum(r['same_output'] is not None and r['same_output'] >= 5 for r in record)} shapes with at least 5 "
           "that do).", "", "| shape | generated | print the same | dropped (why) |", "| --- | ---: | ---: | --- |"]
    for r in record:
        bad = [f"{v['family']}/{v['transform']}: {' / '.join(v.get('difference', []))[:160]}"
               for v in r["variants"] if v.get("same_output") is False]
        out.append(f"| {r['shape']} | {r['generated']} | {r['same_output']} | {'; '.join(bad) or '-'} |")
    counts: Counter[str] = Counter(f"{v['family']}/{v['transform']}" for r in record for v in r["variants"]
                                   if v.get("same_output"))
    out += ["", "Per transformation (variants that print the same): " + ", ".join(
        f"{k} {n}" for k, n in sorted(counts.items())) + "."]
    return out


def render(meta: dict, rows: list[dict], generated: list[dict], dropped: list[dict],
           corpus: list[dict] | None = None) -> str:
    ran = [r for r in rows if "fix_exit" in r]
    out = [
        "# Issue 39 item 4: fix on generated variants of the corpus shapes",
        "",
        f"`{meta['command']}` ({meta['started']}, {meta['machine']}, warp-lang {meta['warp']}, commit "
        f"{meta['commit']}, {meta['took_min']:.0f} min). Variants from tests/shapes_variants/mutate.py; each "
        "printed what its original prints before `fix --write --unsafe-fixes` ran on it. Reached: something "
        "written and the written copy prints the original's lines. Own: what was written includes the shape's own "
        "mechanism (MANIFEST.json).",
        "",
        *([] if meta.get("complete", True) else [f"**Stopped before the end: {len(ran)} of {len(meta['chosen'])} "
                                                  "chosen variants were run.**", ""]),
        f"**A sample: {len(ran)} variant(s) run through fix**, of {sum(g['generated'] for g in generated)} "
        f"generated for the {len(generated)} shape(s) asked ({sum(g['same_output'] for g in generated)} of those "
        "checked printed the same). It is a sample, not the corpus: one fix takes a minute or more on this shared "
        "2-core machine.",
        "",
        *_headline(ran),
        "## Reach per family",
        "",
        "| family | run | reached | own mechanism written |",
        "| --- | ---: | ---: | ---: |",
    ]
    out += [f"| {k} | {c['run']} | {c['reached']} | {c['own']} |" for k, c in _rate(ran, "family").items()]
    out += ["", "## Reach per transformation", "", "| transformation | run | reached | own mechanism written |",
            "| --- | ---: | ---: | ---: |"]
    out += [f"| {k} | {c['run']} | {c['reached']} | {c['own']} |" for k, c in _rate(ran, "transform").items()]
    out += ["", "## Each variant", "",
            "The original's columns: bench/shapes-2026-12-06-run6.json (fix on the unchanged shape); own there means "
            "the same test on what the original got written.", "",
            "| shape | variant | original wrote | original own | variant wrote | reached | own |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in ran:
        before = ", ".join(r.get("original_applied", [])) or "-"
        was_own = _original_own(r)
        out.append(f"| {r['shape']} | {r['family']}/{r['transform']} | {before} | {'yes' if was_own else 'no'} | "
                   f"{', '.join(r.get('applied', [])) or 'nothing'} | {'yes' if r.get('reached') else 'no'} | "
                   f"{'yes' if r.get('reached') and r.get('own') else 'no'} |")
    out += ["", "## Misses and their named preconditions", ""]
    for r in ran:
        if r.get("why"):
            out.append(f"- **{r['shape']} {r['family']}/{r['transform']}** (expected {', '.join(r['expected'])}; "
                       f"the variant: {'; '.join(r['sites'])[:300]}): {r['why'][:1500]}")
    if dropped:
        out += ["", "## Variants dropped before fix (did not print what the original prints)", ""]
        out += [f"- {d['shape']} {d['family']}/{d['transform']}: {' / '.join(d.get('difference', []))[:300]}"
                for d in dropped]
    if corpus:
        out += ["", *corpus_table(corpus)]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="shape names")
    ap.add_argument("--family", nargs="*", choices=list(TRANSFORMS))
    ap.add_argument("--transform", nargs="*", help="family/transform names, e.g. where/method")
    ap.add_argument("--variant", nargs="*", help="exactly these variants, SHAPE:FAMILY/TRANSFORM (e.g. "
                    "qualname_stages:where/method); --only is then the shapes they name")
    ap.add_argument("--per-shape", type=int, default=1000)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--pairs", type=int, default=0, help="plain cold pairs timing the written copy (0: one run)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "VARIANTS.md"))
    ap.add_argument("--json", default=str(ROOT / "bench" / "variants.json"))
    ap.add_argument("--generated", help="mutate.py's --json record of every shape, tabled in --out")
    ap.add_argument("--list", action="store_true", help="print the variants chosen and stop (no Warp run)")
    ap.add_argument("--rerender", action="store_true", help="write --out again from the records in --json")
    ns = ap.parse_args(argv)
    if ns.rerender:
        rec = json.loads(Path(ns.json).read_text())
        corpus = json.loads(Path(ns.generated).read_text()) if ns.generated else None
        Path(ns.out).write_text(render(rec["meta"], rec["rows"], rec["generated"], rec["dropped"], corpus))
        return 0
    exit_on_sigterm()
    py = sys.executable
    tool = str(Path(py).parent / "warp-compile")
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.perf_counter()
    if ns.variant:
        ns.only = list(dict.fromkeys(v.split(":", 1)[0] for v in ns.variant))
    shapes = {a["name"]: a for a in manifest() if not ns.only or a["name"] in ns.only}
    originals = {r["name"]: r for r in json.loads(ORIGINALS.read_text())} if ORIGINALS.is_file() else {}
    apps = [App.load(name) for name in shapes]
    variants: dict[str, list[Variant]] = {}
    for app in apps:
        made, _ = generate(app, ns.family)
        variants[app.name] = [v for v in made if not ns.transform or f"{v.family}/{v.transform}" in ns.transform]
    if ns.variant:
        chosen = [v for app in apps for v in variants[app.name] if v.key in ns.variant]
        missing = sorted(set(ns.variant) - {v.key for v in chosen})
        if missing:
            print(f"variants: not generated: {', '.join(missing)}", file=sys.stderr)
    else:
        chosen = select(apps, variants, ns.per_shape, ns.limit)
    if ns.list:
        print("\n".join(f"{v.key}  {'; '.join(v.sites)[:150]}" for v in chosen))
        return 0
    rows: list[dict] = []
    generated: list[dict] = []
    dropped: list[dict] = []
    corpus = json.loads(Path(ns.generated).read_text()) if ns.generated else None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    meta = {"command": "python bench/variants.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "started": started, "machine": f"{platform.machine()}, {os.cpu_count()} vCPUs", "warp": _warp(),
            "commit": commit, "took_min": 0.0, "chosen": [v.key for v in chosen]}

    def save() -> None:  # after every variant: a stopped run keeps what it measured
        meta["took_min"] = (time.perf_counter() - t0) / 60
        meta["complete"] = len(rows) + len(dropped) == len(chosen)
        Path(ns.json).write_text(json.dumps({"meta": meta, "generated": generated, "dropped": dropped,
                                             "rows": rows}, indent=1))
        Path(ns.out).write_text(render(meta, rows, generated, dropped, corpus))

    for app in apps:
        mine = [v for v in chosen if v.shape == app.name]
        if not mine:
            continue
        code, original, err = plain_lines(app.folder, app.name, py)
        if code != 0:
            raise RuntimeError(f"the original {app.name} failed: {err}")
        kept = check(app, mine, original, py)
        generated.append({"shape": app.name, "generated": len(mine), "same_output": len(kept)})
        dropped += [{"shape": v.shape, "family": v.family, "transform": v.transform, **v.checked}
                    for v in mine if v not in kept]
        for v in kept:
            print(f"variants: {v.key} ...", file=sys.stderr, flush=True)
            try:
                row = run_fix(app, v, shapes[app.name]["mechanism_expected"], original, ns.pairs, py, tool)
            except Exception as exc:  # noqa: BLE001 (a broken run is a row, not the end of the benchmark)
                row = {"shape": v.shape, "family": v.family, "transform": v.transform, "sites": v.sites,
                       "expected": shapes[app.name]["mechanism_expected"], "fix_exit": None, "reached": False,
                       "why": f"{type(exc).__name__}: {exc}"}
            row["original_applied"] = originals.get(app.name, {}).get("applied", [])
            rows.append(row)
            print(f"variants: {v.key}: reached={row.get('reached')} own={row.get('own')} {row.get('why', '')[:200]}",
                  file=sys.stderr, flush=True)
            save()
    save()
    print(Path(ns.out).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
