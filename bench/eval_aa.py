"""The A/A control of the eval judge: a do-nothing agent, measured anyway, over every case N times.

    python bench/eval_aa.py [--trials N] [--pairs 4] [--case ID ...] [--out bench/EVAL_AA.md]

Each trial copies the project for the agent (which changes nothing), then measures the original against that copy
interleaved, exactly as a real agent's change is judged. Any verdict other than INCONCLUSIVE is a false verdict
of the judge; the rate is recorded with the machine's load so a reader can weigh it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from warp_compile.cli import main as cli
from warp_compile.evals.scorer import load_cases


def run(trials: int, pairs: int, cases: list[str]) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory(prefix="warp-compile-aa-") as tmp:
        card_path = Path(tmp) / "card.json"
        argv = ["eval", "--agent", "builtin:null", "--measure-unchanged", "--trials", str(trials), "--pairs",
                str(pairs), "--json", str(card_path)]
        for c in cases:
            argv += ["--case", c]
        t0 = time.monotonic()
        cli(argv)
        return json.loads(card_path.read_text()), time.monotonic() - t0


def installed_from() -> str:
    """Where the judged warp_compile came from: the done-when asks for an installed (non-editable) copy."""
    import warp_compile

    try:
        from importlib.metadata import distribution

        raw = distribution("warp-compile").read_text("direct_url.json") or "{}"
        editable = bool(json.loads(raw).get("dir_info", {}).get("editable"))
    except Exception:
        editable = False
    kind = "editable install" if editable else "installed copy, not editable"
    return f"{Path(warp_compile.__file__).parent} ({kind})"


def render(card: dict, trials: int, pairs: int, elapsed: float, load: tuple[float, float]) -> str:
    verdicts: Counter[str] = Counter()
    raw: Counter[str] = Counter()
    rows = []
    for case in card["cases"]:
        fixes = [t.get("fix") or {} for t in case["trials"]]
        got = [f.get("verdict") or "not measured" for f in fixes]
        compare_said = [f.get("raw_verdict") or f.get("verdict") or "not measured" for f in fixes]
        verdicts.update(got)
        raw.update(compare_said)
        shown = ", ".join("n/a" if f.get("saving_pct") is None else f"{-f['saving_pct']:+.1f}% "
                          f"({f.get('saving_clock') or '?'})" for f in fixes)
        rows.append(f"| {case['id']} | {', '.join(got)} | {', '.join(compare_said)} | {shown} |")
    total = sum(verdicts.values())
    # an app that runs no Warp cannot be verified either way: UNVERIFIED is the right answer there
    no_warp = {c.id for c in load_cases() if c.launches == 0}
    right = sum(1 for case in card["cases"] for t in case["trials"]
                if (t.get("fix") or {}).get("verdict") == "UNVERIFIED" and case["id"] in no_warp)
    raw_right = sum(1 for case in card["cases"] for t in case["trials"]
                    if (t.get("fix") or {}).get("raw_verdict") == "UNVERIFIED" and case["id"] in no_warp)
    # identical trees: INCONCLUSIVE (timed, inside the noise) and NO_EFFECT (the same work compiled) are both right
    false = total - verdicts.get("INCONCLUSIVE", 0) - verdicts.get("NO_EFFECT", 0) - right
    raw_false = total - raw.get("INCONCLUSIVE", 0) - raw.get("NO_EFFECT", 0) - raw_right
    rate = false / total if total else 0.0
    lines = [
        "# A/A control of the eval judge",
        "",
        f"`python bench/eval_aa.py --trials {trials} --pairs {pairs}`: builtin:null (changes nothing) measured "
        "against the original anyway (`--measure-unchanged`), interleaved, on every case.",
        "",
        f"- judgements: {total} ({len(card['cases'])} cases x {trials} trials), {pairs} pairs each after 1 warm-up",
        f"- false verdicts (anything but INCONCLUSIVE, or UNVERIFIED where the app runs no Warp): **{false} of "
        f"{total} ({rate:.0%})**; "
        + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
        f"- the medians' verdicts before compare sets median-only (tentative) ones aside: {raw_false} of {total} "
        "not INCONCLUSIVE; " + ", ".join(f"{k} {v}" for k, v in sorted(raw.items())),
        f"- load average before/after: {load[0]:.2f} / {load[1]:.2f} on {os.cpu_count()} cores; "
        f"wall {elapsed / 60:.1f} min; {platform.machine()}, Python {platform.python_version()}, "
        f"warp {card.get('warp_version') or '?'}",
        f"- warp_compile: {installed_from()}",
        "",
        "| case | eval verdicts | by the medians alone | change per trial (clock) |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=2)
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--case", action="append", default=[])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "EVAL_AA.md")
    ns = p.parse_args(argv)
    before = os.getloadavg()[0]
    card, elapsed = run(ns.trials, ns.pairs, ns.case)
    text = render(card, ns.trials, ns.pairs, elapsed, (before, os.getloadavg()[0]))
    ns.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
