"""Golden outputs: the same diagnoses, comparisons and texts on every bundled fixture's saved reports.

The reports in tests/golden/<case>/ were measured once (scripts/golden.py measure); what is rendered from them must
not change unless a change of behaviour is intended, and then `python scripts/golden.py render` records it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_render import render_case

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p for p in GOLDEN.iterdir() if p.is_dir() and (p / "project.report.json").is_file())


def test_every_fixture_has_a_golden_case() -> None:
    fixtures = {p.parent.name for p in (GOLDEN.parent.parent / "evals" / "fixtures").glob("*/case.json")}
    assert fixtures and fixtures <= {c.name for c in CASES}


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_outputs_unchanged(case_dir: Path) -> None:
    rendered = render_case(case_dir)
    expected = {p.name: p.read_text() for p in case_dir.iterdir() if not p.name.endswith(".report.json")}
    assert set(rendered) == set(expected), "outputs added or lost"
    for name, text in rendered.items():
        assert text == expected[name], f"{case_dir.name}/{name} changed"
