"""diagnose's last guards on what a finding offers."""

from __future__ import annotations

from pathlib import Path


def test_an_edit_that_would_not_parse_is_withdrawn_and_said(tmp_path: Path) -> None:
    """The last guard before a finding is shown: edits whose result no longer parses (a rule's defect) are not
    offered, and the review names the line."""
    from warp_compile.probe.diagnose import _guard_parse
    from warp_compile.probe.fix.edits import SourceView, insert_before
    from warp_compile.probe.models.diagnosis import Finding

    (tmp_path / "k.py").write_text("import warp as wp\nif True:\n    x = 1\nelse:\n    x = 2\n")
    src = SourceView(tmp_path)
    bad = insert_before(src, "k.py", 4, "y = 3\n")  # column 0 between `if` and `else`
    good = insert_before(src, "k.py", 6, "y = 3\n")
    assert bad is not None and good is not None
    f = Finding(mechanism="CS-6", title="t", severity="low", confidence="low", fix="", edits=[bad],
                applicability="automatic")
    _guard_parse(f, src)
    assert f.edits == [] and f.applicability == "manual"
    assert "k.py:5: SyntaxError" in f.review and "withdrawn" in f.review
    g = Finding(mechanism="CS-6", title="t", severity="low", confidence="low", fix="", edits=[good],
                applicability="automatic")
    _guard_parse(g, src)
    assert g.edits == [good] and g.applicability == "automatic"
