"""Maintainer mode (issue 24): the closure kernel whose generic instances vary per call gets the edit its maintainers
would merge, `module="unique"` on its decorator, proven by `fix` both as the project's own code and, as an upstream
report with that diff, when the same code is an installed library; and no finding contradicts itself in either
ownership.

tests/apps/narrow_phase is a collision pipeline laid out like a physics engine's narrow phase: a factory makes one
kernel per contact writer, generic over the writer's data struct, and each new struct type launched rebuilds the
whole shared module. tests/apps/narrow_phase_app drives the same package installed in a virtual environment.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.golden_render import _load_report
from warp_compile.probe.coherence import contradictions
from warp_compile.probe.diagnose import diagnose, diagnose_sources
from warp_compile.probe.fix.engine import FixOptions, run_fix
from warp_compile.probe.fix.transform.decorators import unique_decorator
from warp_compile.probe.models import FileOwner, Report
from warp_compile.probe.models.diagnosis import Edit, Finding, Location
from warp_compile.probe.scan import scan

ROOT = Path(__file__).resolve().parents[1]
APPS = ROOT / "tests" / "apps"
GOLDEN = ROOT / "tests" / "golden"
FIXTURES = ROOT / "evals" / "fixtures"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "project.report.json").is_file())


# ---------------------------------------------------------------------------------------------- the decorator edit


def _decorated(src: str) -> str:
    tree = ast.parse(src)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    lines = src.splitlines(keepends=True)
    change = unique_decorator(lines, node, {})
    assert change is not None
    out = "".join(lines[: change.start - 1]) + change.new + "".join(lines[change.end :])
    ast.parse(out)  # the edited source still parses
    return out


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("@wp.kernel\ndef k(a: int):\n    pass\n", '@wp.kernel(module="unique")\n'),
        ("@wp.kernel()\ndef k(a: int):\n    pass\n", '@wp.kernel(module="unique")\n'),
        ("@wp.kernel(enable_backward=False)\ndef k(a: int):\n    pass\n",
         '@wp.kernel(enable_backward=False, module="unique")\n'),
        ("@warp.kernel(\n    enable_backward=False,\n)\ndef k(a: int):\n    pass\n",
         '@warp.kernel(\n    enable_backward=False,\n    module="unique",\n)\n'),
        ("@wp.kernel(\n    enable_backward=False\n)\ndef k(a: int):\n    pass\n",
         '@wp.kernel(\n    enable_backward=False,\n    module="unique",\n)\n'),
        ("@wp.kernel(enable_backward=False,)\ndef k(a: int):\n    pass\n",
         '@wp.kernel(enable_backward=False, module="unique")\n'),
        ("@kernel(launch_bounds=64)  # hot\ndef k(a: int):\n    pass\n",
         '@kernel(launch_bounds=64, module="unique")  # hot\n'),
    ],
)
def test_module_unique_goes_into_every_decorator_shape(before: str, after: str) -> None:
    assert _decorated(before).startswith(after)


def test_a_decorator_that_names_a_module_is_left_to_a_person() -> None:
    for src in ('@wp.kernel(module="physics")\ndef k(a: int):\n    pass\n',
                "@wp.kernel(**opts)\ndef k(a: int):\n    pass\n", "@wp.func\ndef k(a: int):\n    pass\n"):
        tree = ast.parse(src)
        node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
        assert unique_decorator(src.splitlines(keepends=True), node, {}) is None


# ---------------------------------------------------------------------------------------------- no contradictions


def _f(**kw: object) -> Finding:
    base: dict[str, object] = {"mechanism": "CS-6", "title": "t", "severity": "low", "confidence": "high", "fix": ""}
    return Finding(**(base | kw))


def test_the_coherence_check_catches_each_kind_of_contradiction() -> None:
    edit = Edit(file="app/k.py", start_line=1, end_line=1, old="x\n", new="y\n")
    dep = Location(file="/v/lib/python3.11/site-packages/lib/k.py", line=3, owner="dependency", distribution="lib")
    cases = [
        _f(applicability="manual", edits=[edit]),
        _f(applicability="review", review="no edit: by hand", edits=[edit]),
        _f(applicability="automatic"),
        _f(fix="the application cannot register its instances. Launches stay as "
                "they are; they resolve to the registered overloads."),
        _f(fix=f"Remove the call at {dep.file}:3", locations=[dep]),
    ]
    for f in cases:
        assert contradictions(f), f
    assert contradictions(_f(applicability="review", edits=[edit])) == []


def _as_installed(case: str, tmp: Path) -> tuple[Report, Path]:
    """The golden case's measurement as if its package were an installed library, run from an empty app folder."""
    site = tmp / "venv" / "lib" / "python3.11" / "site-packages"
    app = tmp / "app"
    shutil.copytree(FIXTURES / case / "project", site)
    app.mkdir()
    text = (GOLDEN / case / "project.report.json").read_text()
    text = text.replace(f"<ROOT>/evals/fixtures/{case}/project", str(site)).replace("<ROOT>", str(ROOT))
    report = Report.model_validate_json(text)
    report.cwd = str(app)
    for f in site.rglob("*.py"):
        report.owners[str(f)] = FileOwner(owner="dependency", distribution="caselib")
    if report.entry is not None:
        report.entry.owner, report.entry.distribution = "dependency", "caselib"
    return report, app


@pytest.mark.parametrize("case", CASES)
def test_no_finding_contradicts_itself_in_either_ownership(case: str, tmp_path: Path) -> None:
    src = FIXTURES / case / "project"
    own = diagnose(_load_report(GOLDEN / case / "project.report.json"), scan(src), root=src)
    report, app = _as_installed(case, tmp_path)
    installed = diagnose_sources(report, app)
    assert own.findings or installed.findings or case == "ledger_stats"
    for f in [*own.findings, *installed.findings]:
        assert contradictions(f) == [], (case, f.mechanism, f.fix)
    for f in installed.findings:
        if f.owner == "dependency" and f.edits:  # what the application can do: its own files, a launcher of its own
            assert all(not e.file.startswith("/") and "site-packages" not in e.file for e in f.edits), f.edits


# ---------------------------------------------------------------------------------------------- proven by fix


def _cs6(findings: list[Finding]) -> Finding:
    (f,) = [f for f in findings if f.mechanism == "CS-6"]
    return f


def _fix_cs6(command: list[str], cwd: Path):  # type: ignore[no-untyped-def]
    return run_fix(command, cwd, FixOptions(wanted=["CS-6"], max_rounds=4, timeout_s=600, combine=False))


# heavy: minutes each in CI (CI stays under 20 minutes); run with --heavy
@pytest.mark.heavy
def test_the_project_s_own_closure_kernel_gets_module_unique_and_fix_proves_it(tmp_path: Path) -> None:
    project = tmp_path / "narrow_phase"
    shutil.copytree(APPS / "narrow_phase", project)
    result, diagnosis = _fix_cs6([sys.executable, "-m", "contactsim"], project)
    f = _cs6(diagnosis.findings)
    assert f.owner == "project" and f.applicability == "review" and contradictions(f) == []
    (edit,) = f.edits
    assert edit.file == "contactsim/narrow_phase.py" and 'module="unique"' in edit.new
    assert "never receives the instance types" in f.fix  # why a registration does not fit
    assert f.locations[0].line == edit.start_line  # the first place named is where the edit goes
    (c,) = [c for c in result.candidates if c.key == "CS-6"]
    assert c.verdict == "IMPROVED" and c.behaviour is not None and c.behaviour.ok, (c.verdict_reason, c.behaviour)
    assert not c.upstream and c.saving_ms is not None and c.saving_ms > 0
    assert (project / "contactsim/narrow_phase.py").read_text() == (APPS / "narrow_phase/contactsim/narrow_phase.py"
                                                                    ).read_text()  # a dry run writes nothing


def _venv_with_contactsim(where: Path) -> str:
    """A virtual environment whose site-packages holds contactsim with its dist-info (warp and numpy come from this
    interpreter through a .pth file): to the app's interpreter the narrow phase is an installed distribution."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300)
    python = str(where / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "base_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    shutil.copytree(APPS / "narrow_phase" / "contactsim", site / "contactsim")
    info = site / "contactsim-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: contactsim\nVersion: 0.1.0\n")
    (info / "top_level.txt").write_text("contactsim\n")
    files = sorted(p.relative_to(site).as_posix() for p in (site / "contactsim").rglob("*.py"))
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    return python


@pytest.mark.heavy  # a minute and more of fix rounds: the heavy tier (CI keeps the cheaper end-to-end fixes)
def test_an_installed_closure_kernel_gets_an_upstream_diff_that_fix_proves_on_a_patched_copy(tmp_path: Path) -> None:
    python = _venv_with_contactsim(tmp_path / "venv")
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(APPS / "narrow_phase_app" / "main.py", app / "main.py")
    where = "import contactsim, os; print(os.path.dirname(contactsim.__file__))"
    installed = Path(subprocess.run([python, "-c", where], capture_output=True, text=True, check=True).stdout.strip())
    before = (installed / "narrow_phase.py").read_text()
    result, diagnosis = _fix_cs6([python, "main.py"], app)
    f = _cs6(diagnosis.findings)
    assert f.owner in ("dependency", "mixed") and not f.edits and contradictions(f) == []  # mixed: main.py calls
    up = f.upstream
    assert up is not None and up.distribution == "contactsim"
    assert up.diff.startswith("--- a/contactsim/narrow_phase.py")
    assert '+    @wp.kernel(enable_backward=False, module="unique")' in up.diff
    assert up.estimated_ms and up.samples == 1 and "one sample" in up.text
    assert "site-packages" not in f.fix and "site-packages" not in up.text
    (c,) = [c for c in result.candidates if c.key == "CS-6"]
    assert c.upstream and c.verdict == "IMPROVED" and c.behaviour is not None and c.behaviour.ok, c.verdict_reason
    assert result.written == [] and (installed / "narrow_phase.py").read_text() == before  # only read, never written


# ---------------------------------------------------------------------------------------------- a library's own tapes


def test_a_library_s_tape_in_code_the_run_did_not_reach_is_named(tmp_path: Path) -> None:
    """Issue 22 item 5: a forward-only setting is never called safe for every use of a library that differentiates
    its own kernels elsewhere; its tests are not such a use, and a tape the run did create is not 'unreached'."""
    from tests.helpers import synth_build
    from warp_compile.probe.fix.edits import SourceView
    from warp_compile.probe.models import KernelInfo, Site
    from warp_compile.probe.rules.backward_paths import differentiation
    from warp_compile.probe.rules.context import RuleContext

    pkg = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "gradlib"
    (pkg / "tests").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text("import warp as wp\n\n@wp.kernel\ndef loss(a: wp.array(dtype=float)):\n    pass\n")
    (pkg / "fit.py").write_text("import warp as wp\n\n\ndef fit(a):\n    with wp.Tape() as tape:\n        pass\n"
                                "    tape.backward()  # the optimiser's gradient\n\n\n# wp.Tape() in a comment\n")
    (pkg / "tests" / "test_fit.py").write_text("import warp as wp\n\ntape = wp.Tape()\n")
    build = synth_build(1, "gradlib.kernels", "a", ms=900.0,
                        kernels=[KernelInfo(key="loss", file=str(pkg / "kernels.py"))])
    owners = {str(p): FileOwner(owner="dependency", distribution="gradlib") for p in pkg.rglob("*.py")}
    report = Report(command=["python", "app.py"], cwd=str(tmp_path), samples=1, builds=[build], owners=owners)
    ctx = RuleContext(report=report, scan=None, root=tmp_path, sources=SourceView(tmp_path))
    paths, keep = differentiation(ctx, [([], [], [build])])
    assert paths == [
        "the installed gradlib's wp.Tape / backward at gradlib/fit.py:5 (code this run did not reach)",
        "the installed gradlib's wp.Tape / backward at gradlib/fit.py:7 (code this run did not reach)",
    ] and keep == []
    report.tapes = [Site(file=str(pkg / "fit.py"), line=5)]  # the run created that one: it was reached
    paths, _ = differentiation(RuleContext(report=report, scan=None, root=tmp_path, sources=SourceView(tmp_path)),
                               [([], [], [build])])
    assert [p.split(" at ")[1].split(" ")[0] for p in paths] == ["gradlib/fit.py:7"]
