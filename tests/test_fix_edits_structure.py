"""Structured fixes for CS-1, CS-4, CS-6 and CS-9: edits on project files that apply, compile and do what the prose
says; no edit (manual, with the reason) where the safe edit does not exist; an upstream report, never an edit or a
site-packages path, where the construct is a dependency's.

Fast tests diagnose the bundled fixtures' saved measurements (tests/golden) against their sources, or synthetic
reports over sources written to tmp_path; the slow one measures an app over an installed-looking library.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.golden_render import _load_report
from tests.helpers import synth_build
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import EntryPoint, FileOwner, KernelInfo, Launch, ModuleCreation, Report, Site, Trigger
from warp_compile.probe.models.diagnosis import Diagnosis, Finding
from warp_compile.probe.rules import late_kernels, late_overloads, module_granularity, unique_modules
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "evals" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
OPTS = {"fast_math": "False", "mode": "release", "enable_backward": "False"}


def _golden(case: str) -> tuple[Diagnosis, Path]:
    src = FIXTURES / case / "project"
    report = _load_report(GOLDEN / case / "project.report.json")
    return diagnose(report, scan(src), root=src, sources=SourceView(src)), src


def _applied(tmp_path: Path, src: Path, findings: list[Finding]) -> Path:
    """The project copied to tmp_path with the findings' edits applied; every touched file must still compile."""
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    touched = apply_edits(dst, [e for f in findings for e in f.edits])
    assert touched
    for rel in touched:
        compile((dst / rel).read_text(), rel, "exec")
    return dst


def _of(d: Diagnosis, mech: str) -> list[Finding]:
    return [f for f in d.findings if f.mechanism == mech]


def _no_installed_path(f: Finding) -> None:
    texts = [f.fix, f.review, *(e.file for e in f.edits), *(e.new for e in f.edits)]
    assert not any("site-packages" in t or "dist-packages" in t for t in texts), f.fix


# ---------------------------------------------------------------------------------------------- bundled fixtures


def test_cs1_moves_the_late_nested_kernels_to_module_scope(tmp_path: Path) -> None:
    d, src = _golden("stencil_bank")
    (f,) = _of(d, "CS-1")
    assert f.applicability == "automatic" and f.edits
    out = _applied(tmp_path, src, [f])
    tree = ast.parse((out / "stencil_bank/stencils.py").read_text())
    top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"sharpen_pass", "edge_magnitude", "make_sharpen", "make_edges"} <= top
    nested = {n.name for fn in tree.body if isinstance(fn, ast.FunctionDef) for n in ast.walk(fn) if n is not fn
              and isinstance(n, ast.FunctionDef)}
    assert "sharpen_pass" not in nested and "edge_magnitude" not in nested


def test_cs1_cs4_cs6_on_one_app_apply_together(tmp_path: Path) -> None:
    d, src = _golden("lidar_mapping")
    fs = _of(d, "CS-1") + _of(d, "CS-4") + _of(d, "CS-6")
    assert sorted(f.mechanism for f in fs) == ["CS-1", "CS-4", "CS-6"]
    assert all(f.applicability == "automatic" and f.edits for f in fs)
    out = _applied(tmp_path, src, fs)
    occ = (out / "scan_mapper/occupancy.py").read_text()
    assert "weighted_total_float64 = wp.overload(" in occ and "\n@wp.kernel\ndef mark_frontier(" in occ
    for name in ("sensor", "voxel", "surface"):
        assert '@wp.kernel(module="scan_mapper.kernels")' in (out / f"scan_mapper/{name}.py").read_text()


def test_cs6_registers_after_the_definition_and_cs9_removes_the_declaration(tmp_path: Path) -> None:
    d, src = _golden("image_pyramid")
    fs = _of(d, "CS-6")
    assert len(fs) == 2 and all(f.applicability == "automatic" for f in fs)
    out = _applied(tmp_path / "a", src, fs)
    text = (out / "image_pyramid/pyramid.py").read_text()
    assert "reduce_float64 = wp.overload(\n    reduce," in text and "detail_float32 = wp.overload(\n    detail," in text
    d, src = _golden("hopper_dem")
    (f,) = _of(d, "CS-9")
    assert f.applicability == "automatic"
    out = _applied(tmp_path / "b", src, [f])
    assert 'module="unique"' not in (out / "hopper_dem/stats.py").read_text()


def test_cs9_factory_default_is_a_review_edit(tmp_path: Path) -> None:
    d, src = _golden("plugin_filters")
    (f,) = _of(d, "CS-9")
    assert f.applicability == "review" and "plugin contract" in f.review
    out = _applied(tmp_path, src, [f])
    assert "def register_filter(name: str, module=None):" in (out / "filter_rack/filters.py").read_text()


@pytest.mark.parametrize(("case", "absent"), [("image_pyramid", "CS-1"), ("stencil_bank", "CS-6"),
                                              ("stencil_bank", "CS-4"), ("lidar_mapping", "CS-9")])
def test_a_fixture_without_the_mechanism_gets_no_finding(case: str, absent: str) -> None:
    d, _src = _golden(case)
    assert not _of(d, absent)


# ---------------------------------------------------------------------------------------------- synthetic


def _report(root: Path, builds, **kw) -> Report:  # type: ignore[no-untyped-def]
    r = Report(command=["python", "app.py"], cwd=str(root), samples=1, builds=builds, **kw)
    r.hook.mode = "wrap"
    return r


def _ctx(report: Report, root: Path) -> RuleContext:
    ctx = RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(report, rel=ctx.rel)
    return ctx


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def _late_kernel_report(root: Path, key: str, line: int) -> Report:
    f = str(root / "app.py")
    first = KernelInfo(key="base", hash="b", file=f, line=4)
    late = KernelInfo(key=key, hash="l", file=f, line=line)
    trig = Trigger(file=str(root / "app.py"), line=30, function="main", api="launch")
    return _report(root, [
        synth_build(1, "app", "a", ms=300.0, kernels=[first], options=dict(OPTS), trigger=trig),
        synth_build(2, "app", "c", ms=320.0, kernels=[first, late], options=dict(OPTS), trigger=trig),
    ])


CAPTURE = """\
import warp as wp


@wp.kernel
def base(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


def make(scale: float):
    @wp.kernel
    def scaled(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * scale

    return scaled
"""


def test_cs1_a_kernel_that_captures_its_function_s_values_gets_a_module_of_its_own(tmp_path: Path) -> None:
    """A closure that reads a value of its call cannot move to module scope; each version isolated in a module of
    its own (module="unique" on its decorator) stops rebuilding the shared one (issue 22: per-call closures)."""
    _write(tmp_path, {"app.py": CAPTURE})
    (f,) = late_kernels.evaluate(_ctx(_late_kernel_report(tmp_path, "make__locals__scaled", 11), tmp_path)).findings
    assert f.applicability == "review"
    (e,) = f.edits
    assert e.file == "app.py" and e.new.strip() == '@wp.kernel(module="unique")' and e.old.strip() == "@wp.kernel"
    assert "captured per call" in f.fix and "no longer reaches it" in f.review
    _applied(tmp_path / "work", tmp_path, [f])  # applies, and the edited file compiles


def test_cs1_a_dependency_s_late_kernel_gets_an_upstream_report(tmp_path: Path) -> None:
    lib = tmp_path / "venv" / "lib" / "site-packages" / "lib" / "filters.py"
    lib.parent.mkdir(parents=True)
    lib.write_text(CAPTURE)
    app = tmp_path / "app"
    _write(app, {"main.py": "import lib.filters\n"})
    r = _late_kernel_report(app, "make__locals__scaled", 11)
    for b in r.builds:
        b.module = "lib.filters"
        for k in b.kernels:
            k.file = str(lib)
    r.owners = {str(lib): FileOwner(owner="dependency", distribution="libdist", version="1.0")}
    (f,) = late_kernels.evaluate(_ctx(r, app)).findings
    assert f.applicability == "manual" and not f.edits and f.upstream is not None
    assert f.upstream.distribution == "libdist" and "lib/filters.py:11" in f.upstream.text
    assert "scaled" in f.upstream.change
    _no_installed_path(f)
    assert "site-packages" not in f.upstream.text


def _generic_report(root: Path, lib: Path, module: str, key: str) -> Report:
    f = str(lib)
    def inst(sig: str) -> KernelInfo:
        return KernelInfo(key=f"{key}_{sig}", signature=sig, generic_parent=key, hash=sig, file=f, line=9)
    main = str(root / "main.py")
    stack = [Site(file=f, line=20, function="accumulate"), Site(file=main, line=12, function="main"),
             Site(file=main, line=16, function="<module>")]
    trig = Trigger(file=f, line=20, function="accumulate", api="launch", stack=stack)
    r = _report(root, [
        synth_build(1, module, "a", ms=300.0, kernels=[inst("a1f4_a1f4_a1f4")], options=dict(OPTS), trigger=trig),
        synth_build(2, module, "b", ms=320.0, kernels=[inst("a1f4_a1f4_a1f4"), inst("a1f8_a1f8_a1f8")],
                    options=dict(OPTS), trigger=trig),
    ])
    r.launches = [Launch(kernel=key, module=module, dtypes=[f"array[float{n};1d]"] * 3) for n in (32, 64)]
    r.owners = {f: FileOwner(owner="dependency", distribution="libdist", version="1.0")}
    r.entry = EntryPoint(kind="script", name="main.py", file=main, owner="project")
    r.module_creations = [ModuleCreation(module=module, options={"enable_backward": "False"})]
    r.config_at_import = {"enable_backward": "False"}
    return r


MAIN = """\
import numpy as np
import warp as wp

import lib.ops


def main():
    x = wp.array(np.ones(4), dtype=wp.float32)
    lib.ops.accumulate(x, x)


if __name__ == "__main__":
    main()
"""


def test_cs6_a_dependency_s_generic_kernel_is_registered_from_the_entry_point(tmp_path: Path) -> None:
    lib = tmp_path / "venv" / "lib" / "site-packages" / "lib" / "ops.py"
    app = tmp_path / "app"
    _write(app, {"main.py": MAIN})
    (f,) = late_overloads.evaluate(_ctx(_generic_report(app, lib, "lib.ops", "weighted_add"), app)).findings
    assert f.applicability == "automatic" and [e.file for e in f.edits] == ["main.py"]
    (e,) = f.edits
    assert e.start_line == 5  # after the imports, before main()
    assert "import lib.ops as _lib_ops" in e.new and "wp.overload(\n    _lib_ops.weighted_add," in e.new
    assert "wp.array(dtype=wp.float64)" in e.new
    _no_installed_path(f)
    out = tmp_path / "copy"
    shutil.copytree(app, out)
    apply_edits(out, f.edits)
    compile((out / "main.py").read_text(), "main.py", "exec")


def test_cs6_a_kernel_made_inside_a_library_function_gets_an_upstream_report(tmp_path: Path) -> None:
    lib = tmp_path / "venv" / "lib" / "site-packages" / "lib" / "ops.py"
    app = tmp_path / "app"
    _write(app, {"main.py": MAIN})
    r = _generic_report(app, lib, "lib.ops", "_create_kernels__locals__k")
    (f,) = late_overloads.evaluate(_ctx(r, app)).findings
    assert f.applicability == "manual" and not f.edits and f.upstream is not None
    assert "no module-scope name reaches it" in f.review
    _no_installed_path(f)
    assert "_create_kernels__locals__k" not in f.fix.split("wp.overload(")[-1] or "wp.overload(" not in f.fix


def _unique_report(root: Path, created_late: bool = False) -> Report:
    f = str(root / "app.py")
    builds = []
    creations = []
    for i, name in enumerate(("alpha", "beta", "gamma")):
        k = KernelInfo(key=name, hash=name, file=f, line=5 + 6 * i)
        trig = Trigger(file=f, line=40, function="main", api="launch")
        builds.append(synth_build(i + 1, f"{name}_{'%08x' % (i + 1)}", "abc"[i], ms=200.0, kernels=[k],
                                  options=dict(OPTS), trigger=trig, start_ms=100.0 + 300 * i))
        creations.append(ModuleCreation(module=name, start_ms=50.0 + (400.0 * i if created_late else i)))
    return _report(root, builds, module_creations=creations)


UNIQUE = """\
import warp as wp


@wp.kernel(module="unique")
def alpha(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


@wp.kernel(module="unique")
def beta(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0


@wp.kernel(module="unique")
def gamma(a: wp.array(dtype=float)):
    a[wp.tid()] = 3.0
"""


def test_cs9_declared_unique_is_removed_and_the_traps_stop_the_edit(tmp_path: Path) -> None:
    _write(tmp_path / "a", {"app.py": UNIQUE})
    (f,) = unique_modules.evaluate(_ctx(_unique_report(tmp_path / "a"), tmp_path / "a")).findings
    assert f.applicability == "automatic" and len(f.edits) == 3
    assert all(e.new == "@wp.kernel\n" for e in f.edits)
    # created after the first of them loads: sharing one module would rebuild it (CS-1)
    (f,) = unique_modules.evaluate(_ctx(_unique_report(tmp_path / "a", created_late=True), tmp_path / "a")).findings
    assert f.applicability == "manual" and not f.edits and "CS-1" in f.review
    # an option call on the shared module that never reached the unique kernels
    fast = 'import warp as wp\n\nwp.set_module_options({"fast_math": True})\n'
    _write(tmp_path / "b", {"app.py": UNIQUE.replace("import warp as wp\n", fast)})
    # (the module plan: each kernel keeps the options it compiled with, so they share a named module that no option
    # call names instead of the file's module, where fast_math would start to apply)
    (f,) = unique_modules.evaluate(_ctx(_unique_report(tmp_path / "b"), tmp_path / "b")).findings
    assert f.applicability == "automatic" and len(f.edits) == 3 and "fast_math" not in f.review
    assert all(e.new == '@wp.kernel(module="app.kernels")\n' for e in f.edits), [e.new for e in f.edits]
    assert "no option call names" in f.fix


SPLIT = {
    f"pkg/{m}.py": f"import warp as wp\n\n\n@wp.kernel\ndef {m}_k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"
    for m in ("one", "two", "three")
}


def _split_report(root: Path, ms: list[float], created: list[float] | None = None, owners=None) -> Report:  # type: ignore[no-untyped-def]
    builds = []
    for i, m in enumerate(("one", "two", "three")):
        k = KernelInfo(key=f"{m}_k", hash=m, file=str(root / f"pkg/{m}.py"), line=5)
        trig = Trigger(file=str(root / "pkg/run.py"), line=10 + i, function="main", api="launch")
        builds.append(synth_build(i + 1, f"pkg.{m}", "abc"[i], ms=ms[i], kernels=[k], options=dict(OPTS),
                                  trigger=trig, start_ms=100.0 + 1000 * i, source_bytes=[4000, 5000, 90000][i]))
    starts = created if created is not None else [10.0, 11.0, 12.0]
    r = _report(root, builds, module_creations=[ModuleCreation(module=f"pkg.{m}", start_ms=s)
                                               for m, s in zip(("one", "two", "three"), starts, strict=True)])
    r.owners = owners or {}
    return r


def test_cs4_merge_edit_and_its_guards(tmp_path: Path) -> None:
    _write(tmp_path, SPLIT)
    (f,) = module_granularity.evaluate(_ctx(_split_report(tmp_path, [100.0, 110.0, 120.0]), tmp_path)).findings
    assert f.applicability == "automatic" and len(f.edits) == 3
    assert all(e.new == '@wp.kernel(module="pkg.kernels")\n' for e in f.edits)
    # a file imported only after the first of them loaded: the merged module would be rebuilt (CS-1)
    late = _split_report(tmp_path, [100.0, 110.0, 120.0], created=[10.0, 11.0, 2000.0])
    (f,) = module_granularity.evaluate(_ctx(late, tmp_path)).findings
    assert f.applicability == "manual" and not f.edits and "CS-1" in f.review
    # one module's own compile dwarfs the fixed cost the merge saves: no finding
    big = _split_report(tmp_path, [100.0, 110.0, 3600.0])
    assert module_granularity.evaluate(_ctx(big, tmp_path)).findings == []
    # never grouped with a dependency's module
    owners = {str(tmp_path / "pkg/three.py"): FileOwner(owner="dependency", distribution="libdist")}
    mixed = _split_report(tmp_path, [100.0, 110.0, 120.0], owners=owners)
    assert module_granularity.evaluate(_ctx(mixed, tmp_path)).findings == []


LATE_IMPORT = {
    **SPLIT,
    "pkg/__init__.py": "",
    "pkg/__main__.py": "from .run import main\n\nmain()\n",
    "pkg/run.py": "from . import one, two\n\n\ndef main():\n    from . import three\n\n    return one, two, three\n",
}


def _late_import_ctx(root: Path, files: dict[str, str]) -> RuleContext:
    """pkg.three's file is first imported inside main() (pkg/run.py:5), after pkg.one first loaded."""
    _write(root, files)
    r = _split_report(root, [100.0, 110.0, 120.0], created=[10.0, 11.0, 2000.0])
    r.command = ["python", "-m", "pkg"]
    return _ctx(r, root)


def test_cs4_late_import_moved_up_lets_the_merge_happen(tmp_path: Path) -> None:
    """The gate is checked on the composed result: with the late import at module scope of run.py (no cycle, the
    imported file only defines a kernel), every module exists before the first load, so the merge holds."""
    ctx = _late_import_ctx(tmp_path, LATE_IMPORT)
    (f,) = module_granularity.evaluate(ctx).findings
    assert f.applicability == "review", f.review
    assert "pkg.three was created only after" in f.review and "from . import three" in f.review
    run = [e for e in f.edits if e.file == "pkg/run.py"]
    assert len(run) == 1 and run[0].new.startswith("from . import three")
    assert sorted(e.file for e in f.edits if e.file != "pkg/run.py") == ["pkg/one.py", "pkg/three.py", "pkg/two.py"]
    written = tmp_path / "written"
    shutil.copytree(tmp_path / "pkg", written / "pkg")
    apply_edits(written, f.edits)
    tree = ast.parse((written / "pkg/run.py").read_text())
    top = [ast.unparse(n) for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert "from . import three" in top  # now imported with run.py, before main() launches anything
    assert 'module="pkg.kernels"' in (written / "pkg/three.py").read_text()


@pytest.mark.parametrize(("change", "reason"), [
    # three.py imports run.py back at module scope: the import is late on purpose
    ({"pkg/three.py": "from . import run\n" + SPLIT["pkg/three.py"]}, "imports pkg/run.py back"),
    # three.py does more than define at its import: moving the import up would run that earlier
    ({"pkg/three.py": SPLIT["pkg/three.py"] + "\nprint('three loaded')\n"}, "runs `print('three loaded')`"),
])
def test_cs4_late_import_that_must_stay_late_refuses_naming_every_candidate(tmp_path: Path, change: dict[str, str],
                                                                          reason: str) -> None:
    ctx = _late_import_ctx(tmp_path, {**LATE_IMPORT, **change})
    (f,) = module_granularity.evaluate(ctx).findings
    assert f.applicability == "manual" and not f.edits
    assert "pkg.three is created only after the first of these modules loads" in f.review and "CS-1" in f.review
    assert "move the late import up: " in f.review and reason in f.review, f.review
    assert "hoist: " in f.review and "from the run's record: " in f.review  # the other candidates, each named


# ---------------------------------------------------------------------------------------------- a real library


def _venv_with_deplib(where: Path) -> str:
    """A real virtual environment whose site-packages holds deplib (with its dist-info) and sees this interpreter's
    packages (warp, numpy) through a .pth file: to the app's interpreter deplib is an installed distribution."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300)
    python = str(where / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "base_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for item in (ROOT / "tests/apps/deplib_app/site-packages").iterdir():
        shutil.copytree(item, site / item.name)
    return python


@pytest.mark.slow
def test_an_app_over_an_installed_library_gets_app_side_edits_or_upstream_reports(tmp_path: Path) -> None:
    """tests/apps/deplib_app: `deplib`, installed in the app's venv, launches a generic kernel with a late float64
    instance and defines kernels inside a method. The CS-6 fix is a wp.overload of the library's kernel at the app's
    entry point, which applies and leaves the output unchanged; CS-1 is an upstream report; nothing names a
    site-packages path."""
    from warp_compile.probe.diagnose import diagnose_command

    python = _venv_with_deplib(tmp_path / "venv")
    app = tmp_path / "app"
    shutil.copytree(ROOT / "tests/apps/deplib_app/app", app)
    _report, d = diagnose_command([python, "main.py"], app, timeout_s=600)
    (cs6,) = _of(d, "CS-6")
    (cs1,) = _of(d, "CS-1")
    assert cs6.applicability in ("automatic", "review") and [e.file for e in cs6.edits] == ["main.py"]
    assert "wp.overload(\n    _deplib_ops.weighted_add," in cs6.edits[0].new
    assert cs1.applicability == "manual" and not cs1.edits and cs1.upstream is not None
    assert cs1.upstream.distribution == "deplib"
    for f in d.findings:
        _no_installed_path(f)
    fixed = tmp_path / "fixed"
    shutil.copytree(app, fixed)
    apply_edits(fixed, cs6.edits)
    env = dict(os.environ, WARP_CACHE_PATH=str(tmp_path / "cache"))

    def out(cwd: Path) -> list[str]:
        r = subprocess.run([python, "main.py"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        return [ln for ln in r.stdout.splitlines() if not ln.startswith(("Module ", "Warp ", " "))]

    assert out(fixed) == out(app)
