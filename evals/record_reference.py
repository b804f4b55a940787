"""Store what the reference fix measured (from a builtin:oracle scorecard) in each case.json as `reference`.

    python -m warp_compile.evals.record_reference ORACLE_CARD.json [--root evals/fixtures]

The scorer uses it twice: the saving an agent's fix is credited against, and whether an INCONCLUSIVE verdict
can earn nothing (the reference reliably improves) or cannot be judged here (the reference itself is within
noise). With several trials the reference is IMPROVED only when every trial was. Regenerate MANIFEST.json after.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from statistics import median

from .models import Scorecard
from .record_outputs import _set_key


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m warp_compile.evals.record_reference", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("card", type=Path)
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent / "fixtures")
    ns = p.parse_args(argv)
    card = Scorecard.model_validate(json.loads(ns.card.read_text(encoding="utf-8")))
    if card.agent != "builtin:oracle":
        print(f"not an oracle scorecard (agent {card.agent!r})", file=sys.stderr)
        return 2
    for case in card.cases:
        fixes = [t.fix for t in case.trials if t.fix is not None and t.fix.verdict]
        if case.kind != "fix" or not fixes:
            continue
        verdicts = {f.verdict for f in fixes}
        clock = Counter(f.saving_clock for f in fixes).most_common(1)[0][0]
        savings = [f.saving_pct for f in fixes if f.saving_pct is not None and f.saving_clock == clock]
        ref = {
            "verdict": "IMPROVED" if verdicts == {"IMPROVED"} else sorted(verdicts - {"IMPROVED"})[0],
            "saving_pct": round(median(savings), 2) if savings else None,
            "clock": clock,
            "runs": len(fixes),
            "measured": f"warp {card.warp_version}, {fixes[0].pairs} interleaved pairs x {len(fixes)}, "
                        f"{date.today().isoformat()}: " + ", ".join(sorted(f.verdict or "" for f in fixes)),
        }
        meta = ns.root / case.id / "case.json"
        text = meta.read_text(encoding="utf-8")
        text = _set_key(text, "reference", ref)
        json.loads(text)
        meta.write_text(re.sub(r"\n{3,}", "\n\n", text), encoding="utf-8")
        print(f"{case.id}: {ref['verdict']} {ref['saving_pct']}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
