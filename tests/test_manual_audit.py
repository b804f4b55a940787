"""bench/manual_audit.py's judgement (issue 39): a manual finding whose failed placement does not name every
candidate realise.py has is a defect; one that names them all, or that has no placement step, is not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.helpers import write_tree as write
from tests.test_realise_candidates import SRC, _cs9

ROOT = Path(__file__).resolve().parents[1]


def _audit():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("manual_audit", ROOT / "bench" / "manual_audit.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_refused_placement_that_names_every_candidate_is_no_defect(tmp_path: Path) -> None:
    late = SRC.replace("\nSHIFT_TYPE = wp.float32\n", "\n") + "\n\nSHIFT_TYPE = wp.float32\n"
    f = _cs9(write(tmp_path, {"p/__init__.py": "", "p/k.py": late})).model_dump()
    row = _audit().judge(f)
    assert row["kind"] == "every candidate tried" and not row["missing"], row


def test_a_placement_that_skipped_a_candidate_is_a_defect() -> None:
    f = {"mechanism": "CS-9", "applicability": "manual", "fix": "",
         "review": "not proposed as an edit: create at import: _template is made inside LMSolver._specialize(), "
                   "not by a module-level factory that can be called at import"}
    row = _audit().judge(f)
    assert row["kind"] == "DEFECT" and row["missing"] == ["memoize", "hoist", "from the run's record"], row
    merge = _audit().judge({"mechanism": "CS-4", "applicability": "manual", "fix": "",
                            "review": "pkg.b is imported only after the first of these modules loads: a merged "
                                      "module would be rebuilt when its kernels join (CS-1)"})
    assert merge["kind"] == "DEFECT" and merge["missing"] == ["memoize", "hoist", "from the run's record"], merge
    other = _audit().judge({"mechanism": "CS-3", "applicability": "manual", "fix": "",
                            "review": "no edit: fast_math never reached a kernel in this run"})
    assert other["kind"] == "no placement step"
