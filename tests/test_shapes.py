"""The corpus of real kernel-creation shapes (issue 28): tests/shapes/ holds small apps, each reproducing in this
project's own code a shape seen in a public Warp project (its docstring names the repository and path), and
`fix --write --unsafe-fixes` is run on each in the heavy tier: it proves and writes an edit with the same output,
or every finding without an edit names the precondition that failed.

bench/SHAPES.md records per shape what was written and the plain-run saving (`python bench/shapes.py`).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from warp_compile.probe.fix.engine import FixOptions, run_fix

SHAPES = Path(__file__).parent / "shapes"
APPS = json.loads((SHAPES / "MANIFEST.json").read_text())
SHAPE_LETTERS = set("abcdefghi")
CITATION = re.compile(r"Seen in [\w.-]+/[\w.-]+, \S+\.py")


def test_the_corpus_holds_at_least_25_apps_each_citing_where_its_shape_was_seen() -> None:
    assert len(APPS) >= 25
    assert {a["name"] for a in APPS} == {p.name for p in SHAPES.iterdir() if p.is_dir()}
    seen_shapes: set[str] = set()
    for app in APPS:
        init = SHAPES / app["name"] / app["name"] / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert CITATION.search(doc), f"{app['name']}: no 'Seen in owner/repo, path' in its docstring"
        assert doc.startswith("Shape "), app["name"]
        seen_shapes |= {c for c in re.findall(r"[a-i]", app["shape"].split("+")[0])}
        assert (SHAPES / app["name"] / app["name"] / "__main__.py").is_file()
        assert app["expected_output"], app["name"]
    # every kind of shape the issue names is in the corpus
    assert SHAPE_LETTERS <= {s[0] for a in APPS for s in a["shape"].split("+")}, seen_shapes


def _copy(name: str, tmp: Path) -> Path:
    dest = tmp / name
    shutil.copytree(SHAPES / name, dest)
    return dest


@pytest.mark.heavy
@pytest.mark.parametrize("app", APPS, ids=[a["name"] for a in APPS])
def test_fix_writes_a_proven_edit_or_names_the_failed_precondition(app: dict, tmp_path: Path) -> None:
    root = _copy(app["name"], tmp_path)
    result, diagnosis = run_fix([sys.executable, "-m", app["name"]], root,
                                FixOptions(write=True, unsafe_fixes=True, timeout_s=900))
    for f in diagnosis.findings:  # a finding without an edit says which precondition failed
        if not f.edits and f.upstream is None:
            assert f.applicability == "manual" and len(f.review) > 20, (f.mechanism, f.review)
    if result.written:
        for rel in result.written:
            compile((root / rel).read_text(), rel, "exec")
        proven = [c for c in [*result.candidates, *([result.combination] if result.combination else []),
                              *result.next_round] if c.key in result.applied or c.key == "+".join(result.applied)]
        assert all(c.improved and c.behaviour is not None and c.behaviour.ok for c in proven), [
            (c.key, c.verdict, c.behaviour) for c in proven]
    else:
        # nothing written: each candidate says why (its verdict, or why it was not measured)
        assert all(c.reason or c.verdict for c in result.candidates), [(c.key, c.status) for c in result.candidates]


def _shapes_bench():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_shapes", Path(__file__).parents[1] / "bench" / "shapes.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_corpus_counts_a_finding_carried_by_a_written_plan_and_nothing_unwritten() -> None:
    bench = _shapes_bench()
    old = {"applied": ["CS-12", "CS-10@CS-12"], "candidates": [
        {"key": "CS-12", "status": "measured", "reason": ""},
        {"key": "CS-4", "status": "skipped", "reason": "one plan with CS-12: the same edits, measured and written as "
                                                       "CS-12"},
        {"key": "CS-9", "status": "skipped", "reason": "one plan with CS-3: the same edits ..."}]}  # CS-3 not written
    assert bench.realised_of(old) == ["CS-10", "CS-12", "CS-4"]
    assert bench.realised_of({"applied": [], "candidates": old["candidates"]}) == []
    assert bench.realised_of({"realised": ["CS-9", "CS-3"], "applied": ["CS-9"]}) == ["CS-9", "CS-3"]
    row = {"fixed": True, "realised": ["CS-12", "CS-4"]}
    assert bench.own(row, {"CS-4"}) and not bench.own({**row, "fixed": False}, {"CS-4"})
    assert not bench.own(row, {"CS-9"})
