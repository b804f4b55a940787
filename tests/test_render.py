"""The render layer: one number formatter, and every text output printing the same figure the same way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.golden_render import FIXTURES, _load_report
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.fmt import (
    fmt_ms,
    fmt_span,
    pch_count,
    plural,
    short_path,
    stat_text,
    trigger_text,
    warp_text,
)
from warp_compile.probe.models import Build, Trigger
from warp_compile.probe.render.diagnosis import render_text
from warp_compile.probe.render.report import render_report
from warp_compile.probe.render.summary import render_summary
from warp_compile.probe.scan import scan
from warp_compile.probe.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (None, "-"),
        (0.0, "0.0 ms"),
        (3.25, "3.2 ms"),
        (9.94, "9.9 ms"),
        (9.96, "10 ms"),  # decided on the rounded value: never "10.0 ms"
        (10.0, "10 ms"),
        (146.4, "146 ms"),
        (2247.3, "2,247 ms"),
        (-35.4, "-35 ms"),  # the threshold is on the magnitude
        (-4.56, "-4.6 ms"),
    ],
)
def test_fmt_ms(x: float | None, text: str) -> None:
    assert fmt_ms(x) == text


def test_fmt_ms_sign_marks_positive_deltas_only() -> None:
    assert [fmt_ms(x, sign=True) for x in (12.0, -12.0, 0.5, None)] == ["+12 ms", "-12 ms", "+0.5 ms", "-"]


def test_fmt_span() -> None:
    assert fmt_span(202.4, 1462.0) == "202-1,462 ms"
    assert fmt_span(0.25, 3.0) == "0.2-3.0 ms"


def test_stat_text_shows_spread_only_with_two_samples() -> None:
    assert stat_text(None, None, 0) == "-"
    assert stat_text(1234.0, None, 1) == "1,234 ms (n=1, no spread)"
    assert stat_text(1234.0, 5.04, 3) == "1,234 ms ± 5.0 ms (n=3)"


def test_counts_and_versions() -> None:
    assert [plural(n, "sample") for n in (0, 1, 2)] == ["0 samples", "1 sample", "2 samples"]
    assert pch_count(2, 1) == "sum of 2 header builds on 1 thread"
    assert pch_count(3, 2) == "sum of 3 header builds on 2 threads"
    assert warp_text("1.19.0") == "warp 1.19.0" and warp_text(None) == "warp not imported"


def test_short_path_only_shortens_inside_cwd() -> None:
    assert short_path("/proj/app/k.py", "/proj") == "app/k.py"
    assert short_path("/elsewhere/k.py", "/proj") == "/elsewhere/k.py"
    assert short_path("app/k.py", "/proj") == "app/k.py"  # already relative: as recorded
    assert short_path("/proj/app/k.py", "") == "/proj/app/k.py"


def _build(trigger: Trigger | None) -> Build:
    return Build(
        seq=1, module="app.k", hash="abcdef0123", hash_short="abcdef0", device="cpu", status="compiled", ms=1.0,
        trigger=trigger,
    )  # fmt: skip


def test_trigger_text() -> None:
    rel = lambda f: short_path(f, "/proj")  # noqa: E731
    assert trigger_text(_build(None), rel) == ""
    t = Trigger(file="/proj/app/main.py", line=12, api="wp.launch")
    assert trigger_text(_build(t), rel) == "app/main.py:12 (wp.launch)"
    t = Trigger(file="/proj/app/main.py", line=12, api="wp.launch", via="app.run")
    assert trigger_text(_build(t), rel) == "app/main.py:12 (wp.launch via app.run)"
    assert trigger_text(_build(Trigger(file="/proj/a.py", line=3)), rel) == "a.py:3 (?)"


def _figures(text: str) -> set[str]:
    return set(re.findall(r"-?[\d,]+(?:\.\d)? ms", text))


@pytest.mark.parametrize("case", ["particle_prep", "terrain_tiles", "signal_monitor"])
def test_every_output_prints_a_figure_the_same_way(case: str) -> None:
    """Measure text, the summary and the diagnosis state the same cold module work in the same words."""
    report = _load_report(GOLDEN / case / "project.report.json")
    cold = report.cold_module_ms.median
    assert cold is not None
    measured, summary = render_report(report), render_summary(summarize(report))
    d = diagnose(report, scan(FIXTURES / case / "project"), root=FIXTURES / case / "project")
    diagnosed = render_text(d)
    assert d.totals.cold_module_ms == pytest.approx(cold)
    want = fmt_ms(cold)
    for text in (measured, summary, diagnosed):
        assert want in _figures(text), (want, text)
    # the figures the rules wrote into findings and signals read the same way: `2,247 ms`, never `2247 ms`
    unformatted = [f for f in _figures(diagnosed) if re.fullmatch(r"-?\d{4,}(?:\.\d)? ms", f)]
    assert unformatted == []


def test_no_other_millisecond_formatter_under_probe() -> None:
    """One formatter: a new `def ..._ms(x) -> str` or `def fmt_...` elsewhere in probe/ is a second one."""
    pending: set[str] = set()
    found = []
    for path in sorted((ROOT / "probe").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "probe/fmt.py" or rel in pending:
            continue
        for m in re.finditer(r"^\s*def (\w*(?:fmt\w*|_ms))\(.*\)\s*->\s*str\s*:", path.read_text(), re.MULTILINE):
            found.append(f"{rel}: {m.group(1)}")
    assert found == []
