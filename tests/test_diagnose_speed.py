"""Materiality does not depend on the machine's speed: the same run on a machine twice as slow (every time in the
saved report doubled) gets the same findings, the same severities and the same ruled-out mechanisms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.golden_render import FIXTURES, _load_report
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.models import Report
from warp_compile.probe.scan import scan

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "project.report.json").is_file())


def _slower(value: Any, factor: float, timed: bool = False) -> Any:
    """Every time in a dumped report times `factor`: fields named `ms` / `*_ms`, the Stats under them, and the
    per-phase times of a CUDA build (`phases`)."""
    if isinstance(value, dict):
        return {k: _slower(v, factor, timed or k in ("ms", "phases") or k.endswith("_ms")) for k, v in value.items()}
    if isinstance(value, list):
        return [_slower(v, factor, timed) for v in value]
    if timed and isinstance(value, float | int) and not isinstance(value, bool):
        return value * factor
    return value


def _outcome(report: Report, source: Path) -> tuple:
    d = diagnose(report, scan(source), root=source)
    findings = sorted((f.mechanism, f.severity, f.confidence, tuple(f.modules)) for f in d.findings)
    return (
        findings,
        sorted({r.mechanism for r in d.ruled_out}),
        sorted({r.mechanism for r in d.not_reached}),
        {f.mechanism: f.estimated_saving_ms for f in d.findings},
    )


@pytest.mark.parametrize("case", CASES)
def test_a_twice_slower_machine_gets_the_same_diagnosis(case: str) -> None:
    report = _load_report(GOLDEN / case / "project.report.json")
    slow = Report.model_validate(_slower(report.model_dump(mode="json"), 2.0))
    assert slow.cold_module_ms.median == pytest.approx(2 * (report.cold_module_ms.median or 0.0))
    source = FIXTURES / case / "project"
    fast_findings, fast_ruled, fast_unreached, fast_saving = _outcome(report, source)
    slow_findings, slow_ruled, slow_unreached, slow_saving = _outcome(slow, source)
    assert slow_findings == fast_findings
    assert (slow_ruled, slow_unreached) == (fast_ruled, fast_unreached)
    for mech, ms in fast_saving.items():
        if ms is not None:
            assert slow_saving[mech] is not None and slow_saving[mech] >= 1.5 * ms, (mech, ms, slow_saving[mech])
