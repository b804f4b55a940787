"""CS-1's candidate for kernels Warp's `wp.map` makes (array_mapper's shape): every map kernel the run recorded for a
module-level function, made at import with zero-size CPU placeholders (probe/fix/place/map_kernels.py). When it
shows and what refuses it, on synthetic runs against sources written to tmp_path (no Warp run); the real app's
fix, proven, is the slow test at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, interpreters, synth_build
from tests.test_transform import _apply, _write
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.place.map_kernels import map_kernels_at_import
from warp_compile.probe.fix.place.recorded_versions import versions_plan
from warp_compile.probe.models import KernelCreation, Report
from warp_compile.probe.models.report import WarpSite
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

SHAPE = ROOT / "tests" / "shapes" / "array_mapper"

FUNCS = """\
import warp as wp


@wp.func
def soften(x: wp.float32) -> wp.float32:
    return x / (1.0 + wp.abs(x))


@wp.func
def soften(x: wp.float64) -> wp.float64:  # noqa: F811
    return x / (wp.float64(1.0) + wp.abs(x))


def helper():
    return 1
"""
# the function imported under another name and mapped in a method, through a dict: the record names it by its
# definition, so where and how the app calls map does not matter
PIPELINE = """\
import warp as wp

from .funcs import soften as sf

TABLE = {"soft": sf}


class Phase:
    def run(self, a):
        return wp.map(TABLE["soft"], a, device="cpu")
"""


def _arr(dtype: str, ndim: int = 1, ones: list[int] | None = None, family: str = "array") -> dict:
    return {"array": family, "dtype": {"kind": "type", "module": "warp", "name": dtype}, "ndim": ndim,
            "ones": ones or []}


def _made(root: Path, inputs: list[dict], name: str = "soften", module: str = "app.funcs", out: list | None = None,
          t: float = 900.0, recorded: bool = True) -> KernelCreation:
    mapped = {"key": name, "function": {"kind": "function", "module": module, "name": name}, "inputs": inputs,
              "out": out or []}
    return KernelCreation(key="map_kernel", module="map_soften", file=str(root / "app/pipeline.py"), line=10,
                          function="Phase.run", via=WarpSite(file="/v/warp/_src/utils.py", line=1475, function="map"),
                          mapped=mapped if recorded else None, start_ms=t)


def _ctx(root: Path, made: list[KernelCreation]) -> RuleContext:
    report = Report(command=["python"], cwd=str(root), samples=1, kernel_creations=made)
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))


def _project(tmp_path: Path, funcs: str = FUNCS) -> Path:
    return _write(tmp_path / "p", {"app/__init__.py": "", "app/funcs.py": funcs, "app/pipeline.py": PIPELINE})


def test_the_run_s_map_kernels_are_made_after_the_function_s_last_definition(tmp_path: Path) -> None:
    root = _project(tmp_path)
    made = [_made(root, [_arr("float32")], t=100.0), _made(root, [_arr("float32")], t=300.0),  # 1.10: every call
            _made(root, [_arr("float64", 2, [1])], t=900.0)]
    step = map_kernels_at_import(_ctx(root, made), "map_soften", made[2:])
    assert step is not None and step.ok, step and step.why_not
    out = _apply(root, step.edits, tmp_path / "copy")["app/funcs.py"]
    head, tail = out.split("_soften_map_kernels = (", 1)
    assert "def soften(x: wp.float64)" in head and "def helper" in tail  # after the last overload, not the file end
    assert tail.count("wp.map(") == 2  # one per distinct record, in the run's order
    assert 'wp.map(soften, wp.empty(0, dtype=wp.float32, device="cpu"), return_kernel=True, device="cpu")' in tail
    assert 'wp.empty((0, 1), dtype=wp.float64, device="cpu")' in tail  # a size-1 dimension stays 1 (broadcast)
    assert step.review and "initialises Warp" in step.review[0]


def test_kernels_not_made_by_map_are_left_to_the_other_candidates(tmp_path: Path) -> None:
    root = _project(tmp_path)
    own = KernelCreation(key="k", module="map_soften", file=str(root / "app/pipeline.py"), line=3, function="f",
                         start_ms=900.0)
    assert map_kernels_at_import(_ctx(root, [own]), "map_soften", [own]) is None


def test_what_no_call_at_import_can_stand_for_is_refused_with_why(tmp_path: Path) -> None:
    root = _project(tmp_path)

    def why(made: KernelCreation, funcs: str | None = None) -> str:
        r = _project(tmp_path / str(len(list(tmp_path.iterdir()))), funcs) if funcs else root
        made = made.model_copy(update={"file": str(r / "app/pipeline.py")})
        step = map_kernels_at_import(_ctx(r, [made]), "map_soften", [made])
        assert step is not None and not step.ok
        return step.why_not

    assert "a lambda mapped in-line in coarse() has no name" in why(
        _made(root, [_arr("float32")], name="coarse.<locals>.<lambda>", module="app.pipeline"))
    assert "did not record the mapped function" in why(_made(root, [_arr("float32")], recorded=False))
    assert "indexedarray, not a plain wp.array" in why(_made(root, [_arr("float32", family="indexedarray")]))
    assert "not a plain wp.array" in why(_made(root, [_arr("float32")], out=["indexedarray"]))
    assert "not a scanned file of the project" in why(_made(root, [_arr("float32")], module="warp._src.lang"))
    struct = {"array": "array", "dtype": {"kind": "type", "module": "app.funcs", "name": "Late"}, "ndim": 1, "ones": []}
    below = FUNCS + "\n\n@wp.struct\nclass Late:\n    x: float\n"
    assert "cannot name the dtype" in why(_made(root, [struct]), below)  # bound below the definition
    rebound = FUNCS + "\n\nsoften = None\n"
    assert "not bound by a def at module scope" in why(_made(root, [_arr("float32")]), rebound)
    branch = FUNCS + "\n\nif DEBUG:\n    @wp.func\n    def soften(x: int) -> int:\n        return x\n"
    assert "not bound by a def at module scope" in why(_made(root, [_arr("float32")]), branch)  # an overload in an if
    late_config = FUNCS + "\n\ndef main():\n    wp.config.enable_backward = False\n"
    assert "wp.config.enable_backward is set in main()" in why(_made(root, [_arr("float32")]), late_config)


def test_a_lambda_s_late_map_kernels_name_both_candidates_reasons(tmp_path: Path) -> None:
    """A lambda mapped in-line in a function fed run-time arrays: neither the map candidate nor the call that made
    them holds, and the finding's reason says both."""
    root = _project(tmp_path)
    lam = "Phase.run.<locals>.<lambda>"
    made = [_made(root, [_arr("float32")], name=lam, module="app.pipeline", t=100.0),
            _made(root, [_arr("float64")], name=lam, module="app.pipeline", t=900.0)]
    made = [c.model_copy(update={"args": {"a": {"kind": "other", "type": "array"}}}) for c in made]
    ctx = _ctx(root, made)
    ctx.report.builds.append(synth_build(1, "map_soften", "a", ms=100.0, start_ms=500.0))
    step = versions_plan(ctx, "map_soften")
    assert step is not None and not step.ok
    assert step.why_not.startswith("wp.map's kernels at import: a lambda mapped in-line in Phase.run() has no name")
    assert "; the calls that made them: " in step.why_not


@pytest.mark.slow
def test_fix_writes_the_map_kernels_at_import_proven_on_the_real_app(tmp_path: Path) -> None:
    """Real Warp CPU runs of tests/shapes/array_mapper: CS-1's edit makes soften's three map kernels in funcs.py at
    import; `fix --write --unsafe-fixes` proves it IMPROVED with the same output and writes it (review: it
    initialises Warp at import); map_soften then builds once, with the unfixed run's final hash."""
    from warp_compile.probe.fix.engine import FixOptions, run_fix

    root = tmp_path / "app"
    shutil.copytree(SHAPE, root)
    cmd = [sys.executable, "-m", "array_mapper"]
    options = FixOptions(wanted=["CS-1"], write=True, unsafe_fixes=True, compose=False, min_rounds=3, max_rounds=8)
    result, _ = run_fix(cmd, root, options)
    (c,) = [c for c in result.candidates if c.key == "CS-1"]
    assert c.behaviour is not None and c.behaviour.ok, c.behaviour
    assert c.verdict == "IMPROVED", c.verdict_reason
    text = (root / "array_mapper" / "funcs.py").read_text()
    assert text.count("return_kernel=True, device=\"cpu\")") == 3 and "_soften_map_kernels = (" in text
    run = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "WARP_CACHE_PATH": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr
    assert sum("Module map_soften " in ln for ln in (run.stdout + run.stderr).splitlines()) == 1


def _releases() -> list:
    """The newest warp (this interpreter), 1.10.1 and every `.venv-warp-X.Y.Z` release made in the project root."""
    params = list(interpreters())
    for venv in sorted(ROOT.glob(".venv-warp-*")):
        if (venv / "bin" / "python").exists():
            params.append(pytest.param(str(venv / "bin" / "python"), id=venv.name.removeprefix(".venv-")))
    return params


@pytest.mark.slow
@pytest.mark.parametrize("python", _releases())
def test_each_release_records_the_map_and_the_edit_makes_one_build(python: str, tmp_path: Path) -> None:
    """On every supported release the hook describes each wp.map creation (function, dtypes), and the edit written
    from that record leaves map_soften one build with the same printed output: nothing launched at import."""
    from warp_compile.probe.measure import measure

    root = tmp_path / "app"
    shutil.copytree(SHAPE, root)
    cmd = [python, "-m", "array_mapper"]
    report = measure(cmd, root, samples=1)
    made = [c for c in report.kernel_creations if c.module == "map_soften"]
    assert made and all(c.mapped and c.mapped["function"]["name"] == "soften" for c in made)
    assert {c.mapped["inputs"][0]["dtype"]["name"] for c in made} == {"float32", "vec3f", "float64"}  # type: ignore[index]
    assert len([b for b in report.builds if b.module == "map_soften" and b.status == "compiled"]) >= 3
    ctx = RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))
    late = [c for c in made if c.start_ms > min(b.start_ms for b in report.builds if b.module == "map_soften")]
    step = map_kernels_at_import(ctx, "map_soften", late)
    assert step is not None and step.ok, step and step.why_not
    fixed = tmp_path / "fixed"
    _apply(root, step.edits, fixed)
    after = measure(cmd, fixed, samples=1)
    assert [b.status for b in after.builds if b.module == "map_soften"] == ["compiled"]  # the cold run's
    assert after.launch_count == report.launch_count
    env = {**os.environ, "WARP_CACHE_PATH": str(tmp_path / "cache")}
    outs = [subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600, env=env).stdout
            for d in (root, fixed)]
    assert outs[0].splitlines()[-2:] == outs[1].splitlines()[-2:]
