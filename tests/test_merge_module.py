"""CS-12 after the rebuilds are gone (issue 22, findings that compose): a few modules of the project's own, each
built once and all declared before the first loads, pay for the CPU precompiled header only because they are
separate. The finding merges them into the first-loaded module and switches the header off; where a kernel would
join the merged module late, no merge is offered and the ruled-out signal says why.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from warp_compile.probe.composition import PRICED, compose
from warp_compile.probe.diagnose import diagnose_sources
from warp_compile.probe.fix.edits import apply_edits
from warp_compile.probe.measure import measure
from warp_compile.probe.models.diagnosis import Edit, Finding

FILES = {
    "app.py": """\
        # the entry point: three stages, each in a file (and a Warp module) of its own
        import warp as wp

        import stage_a
        import stage_b
        import stage_c

        x = wp.zeros(64, dtype=float, device="cpu")
        wp.launch(stage_a.seed, dim=64, inputs=[x], device="cpu")
        wp.launch(stage_b.KERNEL, dim=64, inputs=[x], device="cpu")
        wp.launch(stage_c.square, dim=64, inputs=[x], device="cpu")
        print("sum", float(x.numpy().sum()))
        """,
    "stage_a.py": """\
        import warp as wp

        wp.set_module_options({"fast_math": True})


        @wp.kernel
        def seed(x: wp.array(dtype=float)):
            x[wp.tid()] = float(wp.tid()) * 0.5
        """,
    "stage_b.py": """\
        import warp as wp


        def make_shift(by: float):
            @wp.kernel
            def shift(x: wp.array(dtype=float)):
                x[wp.tid()] = x[wp.tid()] + by

            return shift


        KERNEL = make_shift(2.0)
        """,
    "stage_c.py": """\
        import warp as wp


        @wp.kernel
        def square(x: wp.array(dtype=float)):
            x[wp.tid()] = x[wp.tid()] * x[wp.tid()]
        """,
}


def _app(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def _plain(cwd: Path) -> str:
    done = subprocess.run([sys.executable, "app.py"], cwd=cwd, capture_output=True, text=True, timeout=600,
                          check=True)
    return "\n".join(ln for ln in done.stdout.splitlines() if ln.startswith("sum"))


def _builds_stage_a_alone(app: Path, f: Finding, fixed: Path) -> None:
    """The finding's edits applied to a copy: it prints the same, builds stage_a alone, and no header."""
    shutil.copytree(app, fixed)
    apply_edits(fixed, f.edits)
    assert _plain(fixed) == _plain(app)
    after = measure([sys.executable, "app.py"], fixed, samples=1)
    assert [b.module for b in after.builds if b.status == "compiled"] == ["stage_a"] and not after.pch


@pytest.mark.slow
def test_three_modules_built_once_are_merged_and_the_header_switched_off(tmp_path: Path) -> None:
    app = _app(tmp_path / "app", FILES)
    report = measure([sys.executable, "app.py"], app, samples=1)
    assert len({b.module for b in report.builds if b.status == "compiled"}) == 3 and report.pch
    d = diagnose_sources(report, app)
    (f,) = [f for f in d.findings if f.mechanism == "CS-12"]
    assert f.applicability == "review" and "3 separate modules" in f.title
    assert "fast_math: False -> True for the kernels of stage_b, stage_c" in f.review
    changed = {e.file: e.new for e in f.edits}
    assert changed["stage_b.py"].strip() == '@wp.kernel(module="stage_a")'
    assert changed["stage_c.py"].strip() == '@wp.kernel(module="stage_a")'
    assert "use_precompiled_headers = False" in changed["app.py"]
    _builds_stage_a_alone(app, f, tmp_path / "fixed")


@pytest.mark.slow
def test_a_kernel_made_when_a_function_runs_gets_no_merge_and_the_reason(tmp_path: Path) -> None:
    """stage_b's module exists from import (a module-scope kernel), but its factory kernel is made when a function
    runs, after stage_a loaded: merged, it would join stage_a late and rebuild it."""
    files = dict(FILES)
    offset = "@wp.kernel\ndef offset(x: wp.array(dtype=float)):\n    x[wp.tid()] = x[wp.tid()] - 1.0\n"
    files["stage_b.py"] = FILES["stage_b.py"].replace("        KERNEL = make_shift(2.0)\n",
                                                      textwrap.indent(offset, " " * 8))
    files["app.py"] = FILES["app.py"].replace(
        "        wp.launch(stage_b.KERNEL, dim=64, inputs=[x], device=\"cpu\")\n",
        "        def shifted(by):\n            return stage_b.make_shift(by)\n\n\n"
        "        wp.launch(shifted(2.0), dim=64, inputs=[x], device=\"cpu\")\n"
        "        wp.launch(stage_b.offset, dim=64, inputs=[x], device=\"cpu\")\n")
    app = _app(tmp_path / "app", files)
    d = diagnose_sources(measure([sys.executable, "app.py"], app, samples=1), app)
    assert not [f for f in d.findings if f.mechanism == "CS-12"]
    (r,) = [r for r in d.ruled_out if r.mechanism == "CS-12"]
    assert "no merge is offered: shift is made by make_shift() when it is called" in r.signal, r.signal


@pytest.mark.slow
def test_a_module_created_after_the_first_load_is_made_at_import_first(tmp_path: Path) -> None:
    """stage_b's module is created only when app.py calls make_shift(2.0), after stage_a loaded. The gate is checked
    on the composed result (fix/place/late_modules.py, CS-4's candidates in order): the source's call is fixed, so
    memoize makes that version at import of stage_b (the factory cached) and the merge goes ahead; the merged copy
    builds one module and prints the same. With the argument computed at run time, the version made at import is
    the one the run recorded, and the review says a run with other values builds late as before."""
    files = dict(FILES)
    files["stage_b.py"] = FILES["stage_b.py"].replace("        KERNEL = make_shift(2.0)\n", "")
    files["app.py"] = FILES["app.py"].replace("stage_b.KERNEL", "stage_b.make_shift(2.0)")
    app = _app(tmp_path / "late", files)
    d = diagnose_sources(measure([sys.executable, "app.py"], app, samples=1), app)
    (f,) = [f for f in d.findings if f.mechanism == "CS-12"]
    assert "made before the merged module loads: create make_shift(2.0) at import" in f.review, f.review
    new = "".join(e.new for e in f.edits if e.file == "stage_b.py")
    assert "functools.lru_cache" in new and "\nmake_shift(2.0)\n" in new and 'module="stage_a"' in new
    _builds_stage_a_alone(app, f, tmp_path / "fixed")
    assert "the ones this run made" not in f.review
    files["app.py"] = files["app.py"].replace("make_shift(2.0)", "make_shift(float(len(sys.argv)) + 1.0)").replace(
        "import warp as wp\n", "import sys\n\n        import warp as wp\n", 1)
    app = _app(tmp_path / "runtime", files)
    d = diagnose_sources(measure([sys.executable, "app.py"], app, samples=1), app)
    (f,) = [f for f in d.findings if f.mechanism == "CS-12"]
    assert "versions are the ones this run made (2.0)" in f.review and "make_shift(2.0)" in f.review, f.review


def _finding(mechanism: str, modules: list[str], edits: bool = True) -> Finding:
    edit = [Edit(file="a.py", start_line=1, end_line=1, old="@wp.kernel\n", new='@wp.kernel(module="m")\n')]
    return Finding(mechanism=mechanism, title=f"{mechanism} on {', '.join(modules)}", severity="medium",
                   confidence="medium", modules=modules, fix="", edits=edit if edits else [])


def test_a_header_priced_on_modules_a_merge_changes_waits_for_the_next_round() -> None:
    # a merge with no edit will not happen: the header's own finding is not deferred to it
    kept, out = compose([_finding("CS-4", ["a", "b", "c"], edits=False), _finding("CS-12", ["a", "b"])])
    assert [f.mechanism for f in kept] == ["CS-4", "CS-12"] and not out
    kept, out = compose([_finding("CS-4", ["a", "b", "c"]), _finding("CS-12", ["a", "b", "c", "d"])])
    assert [f.mechanism for f in kept] == ["CS-4"]
    (r,) = out
    assert r.mechanism == "CS-12" and "next round judges it again" in r.signal
    assert PRICED not in r.signal  # deferred, not priced out: the next round may offer it on the merged module
    kept, out = compose([_finding("CS-4", ["a", "b", "c"]), _finding("CS-12", ["x"])])
    assert len(kept) == 2 and not out


def _made(key: str, at_ms: float):
    from warp_compile.probe.models.report import KernelCreation

    return KernelCreation(key=key, module="app.kernels", start_ms=at_ms)


@pytest.mark.parametrize(
    ("creations", "exists"),
    [
        ([10.0], True),  # made at import, before the merged module's first load (100 ms)
        ([150.0], False),  # made only after it: it would join the merged module late
        ([10.0, 900.0], True),  # made again after its own module loaded (500 ms) without a rebuild: harmless
        ([10.0, 300.0], False),  # made again between the merged load and its own: the run cannot say it is the same
    ],
)
def test_a_kernel_made_again_later_exists_at_the_merged_load_only_where_the_run_shows_it_harmless(
    creations: list[float], exists: bool
) -> None:
    """curobo's pose cost (tests/shapes/goal_kernel_swap) calls its factory on every request: once CS-9's edit makes
    the versions at import, each request makes the same kernel again after its module loaded, with no rebuild."""
    from types import SimpleNamespace

    from warp_compile.probe.fix.place.merge_module import _made_before

    ctx = SimpleNamespace(report=SimpleNamespace(kernel_creations=[_made("dist_3", t) for t in creations]))
    assert _made_before(ctx, "dist_3", 100.0, 500.0) is exists  # type: ignore[arg-type]
