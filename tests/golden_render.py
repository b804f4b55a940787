"""What tests/test_golden.py pins: every output the CLI, the MCP summary and the scorer derive from a saved report.

One function, `render_case`, renders a golden case folder (its saved `project.report.json` and, where the fixture
has a reference fix, `fixed.report.json`) with the same calls the front ends make. The restructure may move these
functions; only the imports below may change, never what they print.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "evals" / "fixtures"
PLACEHOLDER = "<ROOT>"


def _load_report(path: Path):  # type: ignore[no-untyped-def]
    from warp_compile.probe.models import Report

    return Report.model_validate_json(path.read_text().replace(PLACEHOLDER, str(ROOT)))


def _norm(text: str) -> str:
    return text.replace(str(ROOT), PLACEHOLDER)


def _dump(model) -> str:  # type: ignore[no-untyped-def]
    return _norm(json.dumps(model.model_dump(mode="json"), indent=1, sort_keys=True)) + "\n"


def render_case(case_dir: Path) -> dict[str, str]:
    from warp_compile.probe.compare import compare
    from warp_compile.probe.diagnose import diagnose
    from warp_compile.probe.render.comparison import render_comparison as compare_text
    from warp_compile.probe.render.diagnosis import render_text as diagnosis_text
    from warp_compile.probe.render.report import render_report
    from warp_compile.probe.render.summary import render_summary
    from warp_compile.probe.scan import scan
    from warp_compile.probe.summary import summarize

    out: dict[str, str] = {}
    source = FIXTURES / case_dir.name / "project"
    project = _load_report(case_dir / "project.report.json")
    out["measure.txt"] = _norm(render_report(project))
    summary = summarize(project, report_id="golden")
    out["summary.json"] = _dump(summary)
    out["summary.txt"] = _norm(render_summary(summary))
    facts = scan(source)
    d = diagnose(project, facts, root=source)
    out["diagnosis.json"] = _dump(d)
    out["diagnosis.txt"] = _norm(diagnosis_text(d))
    fixed_path = case_dir / "fixed.report.json"
    if fixed_path.is_file():
        fixed = _load_report(fixed_path)
        c = compare(project, fixed, before_label="project", after_label="fixed")
        out["compare.json"] = _dump(c)
        out["compare.txt"] = _norm(compare_text(c))
    return out
