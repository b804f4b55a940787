"""The docs cannot drift: the schema page is what the models print, and every relative link resolves."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _schema_docs():
    spec = importlib.util.spec_from_file_location("schema_docs", ROOT / "scripts" / "schema_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_report_page_is_generated_from_the_models() -> None:
    page = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    fresh = _schema_docs().render()
    assert page == fresh, "docs/report.md is stale: run `python scripts/schema_docs.py > docs/report.md`"
    for root in ("## Report", "## Comparison", "## Diagnosis"):
        assert root in page


def test_schema_page_sees_a_new_field(monkeypatch) -> None:
    """The generator reads the models, not a copy: a field added to a model shows up in the page."""
    from warp_compile.probe.models import Report

    mod = _schema_docs()
    rows = dict((n, c) for n, _, c in mod._fields(Report))
    assert "identities" in rows and "distinct" in rows["identities"]


def test_relative_links_resolve() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
