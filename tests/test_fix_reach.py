"""Fixes that reach real code (issue 22), end to end on real Warp CPU compiles.

tests/apps/particle_kit has the shape of a particle-preprocessing package written by others: a license comment,
a docstring and `from __future__` in its entry point, four kernel factories each building a module="unique" module
(called with constants at run time), a plugin class whose method makes a kernel capturing the plugin's gain, and a
fast_math option switched on after the first launch. tests/apps/cache_keeper destroys its kernel cache four ways
and documents a `--rebuild` switch that must keep clearing it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from warp_compile.probe.fix import FixOptions, run_fix

APPS = Path(__file__).parent / "apps"


def _copy(name: str, tmp: Path) -> Path:
    dest = tmp / name
    shutil.copytree(APPS / name, dest)
    return dest


@pytest.mark.heavy
def test_the_particle_package_shape_gets_a_combination_proven_and_written_with_unsafe_fixes(tmp_path: Path) -> None:
    root = _copy("particle_kit", tmp_path)
    result, diagnosis = run_fix([sys.executable, "-m", "particlekit"], root,
                                FixOptions(write=True, unsafe_fixes=True, timeout_s=600))
    by = {c.key: c for c in result.candidates}
    # every pattern got an edit: the factories, the plugin closure, the late option, the entry-point setting
    assert {"CS-9", "CS-1", "CS-3", "CS-10"} <= set(by), sorted(by)
    assert all(by[k].edits for k in ("CS-9", "CS-1", "CS-3", "CS-10"))
    assert by["CS-10"].status == "measured" and by["CS-10"].verdict != "INVALID"  # the edit parses in this shape
    combo = result.combination
    assert combo is not None and combo.improved and combo.behaviour is not None and combo.behaviour.ok
    assert combo.behaviour.topology == "equivalent"  # same launches
    assert combo.saving_pct is not None and combo.saving_pct >= 25, combo.saving_pct
    assert by["CS-1"].behaviour is not None and by["CS-1"].behaviour.topology == "equivalent"  # gain as an argument
    # findings that compose: with the rebuilds gone three modules remain, each built once, and the header pays only
    # for them; the next round merges them into one and turns the header off, measured against the original
    (merged,) = [c for c in result.next_round if c.key.startswith("CS-12@")]
    assert merged.improved and merged.behaviour is not None and merged.behaviour.ok, merged.verdict_reason
    assert merged.behaviour.topology == "equivalent"
    assert merged.saving_pct is not None and merged.saving_pct >= 40, merged.saving_pct
    elapsed = next(s for s in merged.savings if s.name == "compile_elapsed")
    assert elapsed.outcome == "improved"
    assert set(result.applied) >= {"CS-9", "CS-10", "CS-3", "CS-1", merged.key}
    main = (root / "particlekit" / "__main__.py").read_text()
    assert main.index("from __future__ import annotations") < main.index("wp.config.enable_backward = False")
    assert "wp.config.use_precompiled_headers = False" in main
    compile(main, "__main__.py", "exec")
    assert '@wp.kernel(module="particlekit.stages")' in (root / "particlekit" / "plugins.py").read_text()


@pytest.mark.slow
def test_the_cache_shape_keeps_the_cache_keeps_rebuild_and_offers_no_header_fix(tmp_path: Path) -> None:
    root = _copy("cache_keeper", tmp_path)
    before = (root / "keeper" / "maintenance.py").read_text()
    result, diagnosis = run_fix([sys.executable, "-m", "keeper"], root,
                                FixOptions(write=True, unsafe_fixes=True, max_rounds=4, timeout_s=600))
    assert [f.mechanism for f in diagnosis.findings] == ["CS-2"]
    assert any(r.mechanism == "CS-12" and "priced in the state CS-2" in r.signal for r in diagnosis.ruled_out)
    assert all("CS-12" not in c.key for c in result.next_round)  # not offered on the kept tree either
    (cs2,) = result.candidates
    assert cs2.improved and cs2.behaviour is not None and cs2.behaviour.kept, (cs2.verdict, cs2.verdict_reason)
    assert all(k.ok for k in cs2.behaviour.kept) and cs2.behaviour.kept[0].argv == ["--rebuild"]
    assert result.applied == ["CS-2"]
    assert (root / "keeper" / "maintenance.py").read_text() == before  # --rebuild still clears the cache
    runtime = (root / "keeper" / "runtime.py").read_text()
    assert "cache_kernels = False" not in runtime and "kernel_cache_dir = scratch" not in runtime
    assert "wp.clear_kernel_cache()" not in (root / "keeper" / "kernels.py").read_text()


def test_write_without_the_flag_holds_a_review_fix_back() -> None:
    """--write alone takes automatic fixes only (ruff's --unsafe-fixes convention); a proven review fix is named."""
    from warp_compile.probe.fix_plan import held_back, to_write
    from warp_compile.probe.models.fix import Behaviour, CandidateFix, FixResult

    def cand(key: str, applicability: str, saving: float) -> CandidateFix:
        return CandidateFix(key=key, mechanisms=[key], applicability=applicability, status="measured",
                            verdict="IMPROVED", saving_ms=saving, improved=True, behaviour=Behaviour(ok=True),
                            edits=[{"file": "a.py", "start_line": 1, "end_line": 1, "old": "x\n", "new": "y\n"}])

    r = FixResult(write=True, candidates=[cand("CS-2", "review", 900.0), cand("CS-10", "automatic", 100.0)])
    assert to_write(r) == (["CS-10"], r.candidates[1].edits)
    assert [h.key for h in held_back(r)] == ["CS-2"] and "--unsafe-fixes" in held_back(r)[0].reason
    assert to_write(r, unsafe_fixes=True)[0] == ["CS-2"]
