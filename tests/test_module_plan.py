"""The module plan (issue 39): where kernels that leave module="unique" go, and how each comes to exist at import.

tests/apps/effect_chain has the shape of NVIDIA's c01 task, written here: filter factories defaulting to
module="unique" and called between launches, an option call that targets a Python module none of the kernels is in,
and a frozen dataclass whose method makes an effect kernel per branch, reached from `main()` through
`Chain.process()`. Its frame chain is the one that once made a plan insert `main()` at import.
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import synth_build
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.fix.module_plan import shared_target
from warp_compile.probe.fix.transform.memoize import made_at_import_from_run
from warp_compile.probe.models import KernelCreation, KernelInfo, Report
from warp_compile.probe.models.scan import ModuleOptionsFact
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

APP = Path(__file__).parent / "apps" / "effect_chain"
OPTS = {"fast_math": "False", "enable_backward": "True", "mode": "release"}


def _copy(tmp: Path) -> Path:
    dest = tmp / "effect_chain"
    shutil.copytree(APP, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _ctx(root: Path, report: Report | None = None) -> RuleContext:
    report = report or Report(command=["python"], cwd=str(root), samples=1)
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))


def _line(root: Path, rel: str, text: str) -> int:
    return next(i for i, ln in enumerate((root / rel).read_text().splitlines(), 1) if text in ln)


def _effect_creation(root: Path, main_line: str = "print(") -> KernelCreation:
    """The run's record of the effect kernel: made in Effect.kernel(), called from Chain.process(), from main()."""
    pkg = root / "effect_chain"
    return KernelCreation(
        key="Effect__kernel__locals__shift_effect", module="shift_effect",
        file=str(pkg / "effects.py"), line=_line(pkg, "effects.py", "def shift_effect"), function="Effect.kernel",
        args={"self": {"kind": "other", "type": "Effect"}}, at_import=False,
        outer=[
            {"file": str(pkg / "chain.py"), "line": _line(pkg, "chain.py", "effect.kernel()"),
             "function": "Chain.process", "args": {"self": {"kind": "other", "type": "Chain"},
                                                   "signal": {"kind": "other", "type": "ndarray"}}},
            {"file": str(pkg / "__main__.py"), "line": _line(pkg, "__main__.py", main_line), "function": "main",
             "args": {}},
        ],
    )


def test_no_plan_runs_the_programs_own_work_at_import(tmp_path: Path) -> None:
    """c01's frame chain: the innermost module-level frame is main(), and calling it at import runs the pipeline."""
    root = _copy(tmp_path)
    step = made_at_import_from_run(_ctx(root), [_effect_creation(root)])
    assert not step.edits and "main() calls print()" in step.why_not, step.why_not
    # the same chain without the print: what refuses main() is the work Chain.process() does on the way
    main = root / "effect_chain" / "__main__.py"
    main.write_text(main.read_text().replace("    print(np.round(chain.process(signal), 5))",
                                             "    out = chain.process(signal)\n    return out"))
    creation = _effect_creation(root, main_line="chain.process(signal)")
    step = made_at_import_from_run(_ctx(root), [creation])
    assert not step.edits and "through Chain.process()" in step.why_not, step.why_not


def test_a_thin_chain_to_the_maker_is_still_called_at_import(tmp_path: Path) -> None:
    """The guard is about work, not about depth: a module-level helper that only leads to the maker is called."""
    root = _copy(tmp_path)
    pkg = root / "effect_chain"
    (pkg / "effects.py").write_text((pkg / "effects.py").read_text() + (
        "\n\ndef effect_kernel(name: str):\n    return Effect(name).kernel()\n"))
    creation = _effect_creation(root)
    creation.outer = [{"file": str(pkg / "effects.py"), "line": _line(pkg, "effects.py", "return Effect(name)"),
                       "function": "effect_kernel", "args": {"name": {"kind": "str", "text": "'shift'"}}},
                      *creation.outer]
    step = made_at_import_from_run(_ctx(root), [creation])
    assert step.ok, step.why_not
    assert any("effect_kernel('shift')" in e.new for e in step.edits)
    assert all("main()" not in e.new and "process(" not in e.new for e in step.edits)


def _unique_builds(root: Path, names: list[str], options: dict[str, str]) -> list:
    f = str(root / "effect_chain" / "filters.py")
    return [synth_build(i + 1, f"{n}_{i:08x}", "abcdef"[i], ms=200.0, options=dict(options),
                        kernels=[KernelInfo(key=n, hash=n, file=f, line=5)]) for i, n in enumerate(names)]


def test_the_target_keeps_every_kernels_options(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    facts = scan(root)
    defs = [k for k in facts.kernels if k.python_module == "effect_chain.filters"]
    report = Report(command=["python"], cwd=str(root), samples=1)
    builds = _unique_builds(root, [k.name for k in defs], OPTS)
    # tune_filters() sets fast_math on effect_chain.filters, which none of these kernels compiled with
    target = shared_target(report, facts, defs, builds)
    assert target.named == "effect_chain.kernels" and target.reached == {"fast_math": "True"}
    assert "effect_chain.filters gets fast_math=True" in target.why
    # without that call, one Python module and nothing reaching it: the kernels join it
    facts.module_options = []
    assert shared_target(report, facts, defs, builds).named is None
    # kernels that compiled with fast_math on would keep it there: no difference, no named module
    facts.module_options = [ModuleOptionsFact(file="effect_chain/filters.py", line=40, target="effect_chain.filters",
                                              options={"fast_math": "True"})]
    assert shared_target(report, facts, defs, _unique_builds(root, [k.name for k in defs],
                                                             {**OPTS, "fast_math": "True"})).named is None
    # kernels of two Python modules: one named module builds them once
    both = [k for k in facts.kernels if k.python_module in ("effect_chain.filters", "effect_chain.effects")]
    facts.module_options = []
    target = shared_target(report, facts, both, _unique_builds(root, [k.name for k in both], OPTS))
    assert target.named == "effect_chain.kernels" and "2 Python modules" in target.why


def _diagnosed(tmp_path_factory: pytest.TempPathFactory, name: str):  # type: ignore[no-untyped-def]
    """(a scratch copy of tests/apps/NAME, its diagnosis from one real measured run)."""
    from warp_compile.probe.diagnose import diagnose_sources
    from warp_compile.probe.measure import measure

    root = tmp_path_factory.mktemp(name) / name
    shutil.copytree(APP.parent / name, root, ignore=shutil.ignore_patterns("__pycache__"))
    report = measure([sys.executable, "-m", name], root, samples=1, timeout_s=300)
    return root, diagnose_sources(report, root)


@pytest.fixture(scope="module")
def effect_chain_diagnosis(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return _diagnosed(tmp_path_factory, "effect_chain")


@pytest.mark.slow
def test_the_c01_shape_gets_one_plan_that_keeps_options_and_runs_nothing_at_import(effect_chain_diagnosis) -> None:  # type: ignore[no-untyped-def]
    root, d = effect_chain_diagnosis
    (cs9,) = [f for f in d.findings if f.mechanism == "CS-9"]
    assert cs9.edits and cs9.applicability in ("automatic", "review"), cs9.review
    # one named module, written on the factories' defaults and on the moved effect kernels
    assert all("unique" not in e.new for e in cs9.edits)
    assert any('module="effect_chain.kernels"' in e.new for e in cs9.edits if e.file.endswith("effects.py"))
    assert any('module="effect_chain.kernels"' in e.new for e in cs9.edits if e.file.endswith("filters.py"))
    # nothing of the program's own work at import, nothing in the entry point, fast_math reaches no kernel
    assert not any(e.file.endswith("__main__.py") or "main()" in e.new or "process(" in e.new for e in cs9.edits)
    assert "fast_math" not in cs9.review
    fixed = root.parent / "applied"
    shutil.copytree(root, fixed)
    apply_edits(fixed, cs9.edits)
    for p in (fixed / "effect_chain").glob("*.py"):
        ast.parse(p.read_text())
    effects = (fixed / "effect_chain" / "effects.py").read_text()
    assert effects.index("def shift_effect") < effects.index("class Effect")  # made at import, before the class


@pytest.fixture(scope="module")
def relax_objects_diagnosis(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return _diagnosed(tmp_path_factory, "relax_objects")


@pytest.mark.slow
def test_objects_built_on_first_use_are_built_at_import_not_isolated(relax_objects_diagnosis) -> None:  # type: ignore[no-untyped-def]
    """tests/apps/relax_objects: a pass object builds its kernel in __init__ through a method closing over its sweep
    count (used in wp.static, so it cannot become an argument), and the objects are made on first use after the first
    launch. Constructing them up front, through the registry function the run recorded, builds the module once; a
    module of its own per version (what CS-1 once wrote) is the last resort."""
    root, d = relax_objects_diagnosis
    (cs1,) = [f for f in d.findings if f.mechanism == "CS-1"]
    assert cs1.edits, cs1.review
    added = "".join(e.new for e in cs1.edits)
    assert "smoothing(2)" in added and "smoothing(3)" in added, added
    assert "unique" not in added and "main()" not in added


@pytest.fixture(scope="module")
def solver_step_diagnosis(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return _diagnosed(tmp_path_factory, "solver_step")


@pytest.mark.slow
def test_a_methods_kernels_that_late_import_their_helpers_are_hoisted_with_the_import(solver_step_diagnosis) -> None:  # type: ignore[no-untyped-def]
    """tests/apps/solver_step: two module="unique" kernels defined in Solver.step(), which imports the wp.func helpers
    they call when it runs. They capture nothing, so the plan moves them to module scope with that import; they join
    their file's module (nothing sets an option on it)."""
    root, d = solver_step_diagnosis
    (cs9,) = [f for f in d.findings if f.mechanism == "CS-9"]
    assert cs9.edits and cs9.applicability == "review", cs9.review
    fixed = root.parent / "applied"
    shutil.copytree(root, fixed)
    apply_edits(fixed, cs9.edits)
    text = (fixed / "solver_step" / "solver.py").read_text()
    tree = ast.parse(text)
    top = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    assert {f.name for f in top} == {"relax", "settle"} and "unique" not in text
    assert any(isinstance(s, ast.ImportFrom) and s.module == "physics" and s.level == 1 for s in tree.body)
    assert "late import" in cs9.review and "The edit does it in order" in cs9.fix
