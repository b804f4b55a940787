"""The newton history cases reproduce: one cold run of each driver on the release before the fix and on the
reference (the release with it, or 0.1.3 with the maintainers' #849 patched into the case's own venv), read from
the hook's build records. Heavy tier: each cold run compiles newton's modules on the CPU for half a minute to a
minute of CPU time (minutes of wall time on a shared machine), and the venvs are installed from the registry once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from warp_compile.evals.history import history_root, interpreters
from warp_compile.evals.scorer import load_cases
from warp_compile.probe.fix.behaviour import app_lines
from warp_compile.probe.measure import _run_data
from warp_compile.probe.sandbox import Sandbox


def _cold(case_id: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    case = next(c for c in load_cases(history_root()) if c.id == case_id)
    before, after = interpreters(case)
    project = tmp_path / "project"  # a copy, as the eval runs it
    shutil.copytree(Path(case.path) / "project", project)
    runs = {}
    for name, python in (("before", before), ("after", after)):
        with Sandbox() as box:
            out = box.run([python if c == "python" else c for c in case.command], project, 1800)
            assert out.exit_code == 0, out.stderr[-2000:]
            runs[name] = _run_data("cold", out)
        assert app_lines(runs[name].stdout) == case.expected_output
    return runs["before"].events.builds, runs["after"].events.builds


def _compiled(builds, module: str) -> list:  # type: ignore[no-untyped-def]
    return [b for b in builds if b.module == module and b.status == "compiled"]


@pytest.mark.heavy
def test_newton_849_the_patched_reference_moves_the_narrow_phase_out_forward_only(tmp_path):
    before, after = _cold("newton-849-contact-backward", tmp_path)
    (old,) = _compiled(before, "newton._src.geometry.kernels")
    assert old.backward_in_source and "handle_contact_pairs" in {k.key for k in old.kernels}
    (new,) = _compiled(after, "newton._src.geometry.kernels")
    assert "handle_contact_pairs" not in {k.key for k in new.kernels} and new.source_bytes < old.source_bytes
    own = [b for b in after if b.status == "compiled" and "handle_contact_pairs" in {k.key for k in b.kernels}]
    assert len(own) == 1 and own[0].module != new.module and not own[0].backward_in_source


@pytest.mark.heavy
def test_newton_3031_padmm_kernels_built_three_times_before_and_once_after(tmp_path):
    before, after = _cold("newton-3031-kamino-unique", tmp_path)
    padmm = "newton._src.solvers.kamino._src.solvers.padmm.kernels"
    assert len(_compiled(before, padmm)) == 3
    assert len(_compiled(after, padmm)) == 1


@pytest.mark.heavy
def test_newton_3564_conversions_built_with_backward_before_and_without_after(tmp_path):
    before, after = _cold("newton-3564-kamino-backward", tmp_path)
    conv = "newton._src.solvers.kamino._src.core.conversions"
    (old,) = _compiled(before, conv)
    (new,) = _compiled(after, conv)
    assert old.backward_in_source and not new.backward_in_source and new.source_bytes < old.source_bytes
