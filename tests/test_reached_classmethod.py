"""A kernel maker that is a classmethod or staticmethod of a module-level class, called at import (issue 39).

newton's IK solver (tests/shapes/ik_specializer) specialises itself in a classmethod called from `__new__` with a
key tuple, and that classmethod imports the `wp.func` helpers late because their module imports the solver back.
Module scope of the solver's file can call `LMSolver._specialize(key)` after the class statement: no instance is
made and no `__init__` runs. What must still hold: the maker does not launch or do the program's work, and the late
import resolves while the file is half imported (the names its module imports back are bound above the call).
Real scans of small projects in tmp_path, the edited copy imported in a fresh interpreter; Warp never runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.fix.transform.memoize import made_at_import_from_run
from warp_compile.probe.models import KernelCreation, Report
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

SOLVER = '''\
from typing import ClassVar

MADE = []
LIMIT = 2.5


class Solver:
    _specs: ClassVar[dict] = {}

    def __new__(cls, ndof, npoints):
        key = (ndof, npoints)
        spec = cls._specs.get(key)
        if spec is None:
            spec = cls._specs.setdefault(key, cls._specialize(key))
        return super().__new__(spec)

    @classmethod
    def _specialize(cls, key):
        ndof, npoints = key
        from .joints import clamp  # late: joints.py imports LIMIT from here

        MADE.append(key)

        class Spec(cls):
            NDOF = ndof
            step = staticmethod(clamp)

        return Spec

    def __init__(self, ndof, npoints):
        self.npoints = npoints


def run():
    out = []
    for ndof, npoints in ((3, 1), (4, 2)):
        out.append(Solver(ndof, npoints).NDOF)
    return out
'''

JOINTS = '''\
from .solver import LIMIT


def clamp(q):
    return max(-LIMIT, min(LIMIT, q))
'''


def _project(tmp: Path, solver: str = SOLVER, joints: str = JOINTS, extra: dict[str, str] | None = None) -> Path:
    root = tmp / "p"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "solver.py").write_text(textwrap.dedent(solver))
    (root / "app" / "joints.py").write_text(textwrap.dedent(joints))
    for name, text in (extra or {}).items():
        (root / "app" / name).write_text(textwrap.dedent(text))
    return root


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _key(*items: int) -> dict:
    return {"kind": "tuple", "items": [{"kind": "int", "text": str(i)} for i in items]}


def _creations(root: Path, maker: str = "Solver._specialize", made_line: str = "MADE.append(key)",
               cls: str = "Solver", first: str = "cls") -> list[KernelCreation]:
    """What the hook records for the two specialisations: made in the classmethod (its `cls` and `key`), called from
    `__new__`, called from `run()`."""
    f = root / "app" / "solver.py"
    out = []
    for key in ((3, 1), (4, 2)):
        args = {"key": _key(*key)}
        if first:
            args = {first: {"kind": "type", "module": "app.solver", "name": cls}, **args}
        out.append(KernelCreation(
            key=f"step_{key[0]}", module="app.solver", file=str(f), line=_line(f, made_line), function=maker,
            args=args, made_by="kernel",
            outer=[{"file": str(f), "line": _line(f, "._specialize("), "function": "Solver.__new__",
                    "args": {"cls": {"kind": "type", "module": "app.solver", "name": "Solver"}}},
                   {"file": str(f), "line": _line(f, "out.append(Solver("), "function": "run", "args": {}}]))
    return out


def _ctx(root: Path, made: list[KernelCreation]) -> RuleContext:
    report = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))


def _run(root: Path, edits: list, dst: Path, code: str) -> str:
    shutil.copytree(root, dst)
    apply_edits(dst, edits)
    done = subprocess.run([sys.executable, "-c", code], cwd=dst, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_classmethod_maker_is_called_at_import_through_its_class(tmp_path: Path) -> None:
    root = _project(tmp_path)
    made = _creations(root)
    step = made_at_import_from_run(_ctx(root, made), made)
    assert step.ok, step.why_not
    text = "".join(e.new for e in step.edits)
    assert "Solver._specialize((3, 1))\nSolver._specialize((4, 2))" in text
    f = root / "app" / "solver.py"
    assert step.edits[-1].start_line > _line(f, "    def __init__(self, ndof, npoints)")  # after the class
    assert any("imports app.joints inside, which imports LIMIT back" in r for r in step.review), step.review
    # the cache wraps the function inside @classmethod (a classmethod object is not callable)
    fixed = _run(root, step.edits, tmp_path / "copy", "import app.solver as s; print(s.MADE); print(s.run()); "
                                                      "print(s.MADE)")
    assert fixed.splitlines() == ["[(3, 1), (4, 2)]", "[3, 4]", "[(3, 1), (4, 2)]"], fixed
    patched = (tmp_path / "copy" / "app" / "solver.py").read_text()
    assert "    @classmethod\n    @functools.lru_cache(maxsize=None)\n    def _specialize" in patched


def test_the_calls_go_below_the_names_the_late_import_takes_back(tmp_path: Path) -> None:
    """LIMIT bound at the end of the file: the calls go below it, or the late import of joints would fail."""
    root = _project(tmp_path, SOLVER.replace("LIMIT = 2.5\n", "") + "\n\nLIMIT = 2.5\n")
    made = _creations(root)
    step = made_at_import_from_run(_ctx(root, made), made)
    assert step.ok, step.why_not
    assert step.edits[-1].start_line > _line(root / "app" / "solver.py", "LIMIT = 2.5")
    assert _run(root, step.edits, tmp_path / "copy", "import app.solver as s; print(s.MADE)") == "[(3, 1), (4, 2)]"


def test_a_late_import_that_takes_back_a_name_the_file_never_binds_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, joints=JOINTS.replace("from .solver import LIMIT", "from .solver import LIMIT, GAIN"))
    made = _creations(root)
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok and not step.edits
    assert "imports app.joints late, which imports GAIN back from app/solver.py" in step.why_not, step.why_not


def test_a_cycle_module_another_module_imports_first_is_refused(tmp_path: Path) -> None:
    """`app.tools` imports joints at module scope: imported before the solver, joints would import the solver, whose
    call at import would import joints half run. The order is the program's, so the call is not written."""
    root = _project(tmp_path, extra={"tools.py": "from .joints import clamp\n"})
    made = _creations(root)
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok and "app.tools imports app.joints at module scope" in step.why_not, step.why_not


def test_a_staticmethod_maker_is_called_with_all_its_arguments(tmp_path: Path) -> None:
    src = (SOLVER.replace("cls._specialize(key)", "Solver._specialize(cls, key)")
           .replace("    @classmethod\n    def _specialize(cls, key):",
                    "    @staticmethod\n    def _specialize(base, key):")
           .replace("class Spec(cls):", "class Spec(base):"))
    root = _project(tmp_path, src)
    made = _creations(root, first="base")
    step = made_at_import_from_run(_ctx(root, made), made)
    assert step.ok, step.why_not
    assert "Solver._specialize(Solver, (3, 1))" in "".join(e.new for e in step.edits)
    assert _run(root, step.edits, tmp_path / "copy", "import app.solver as s; s.run(); print(s.MADE)") == \
        "[(3, 1), (4, 2)]"


def test_a_classmethod_that_launches_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, SOLVER.replace("        MADE.append(key)\n",
                                             "        MADE.append(key)\n        wp.launch(None, dim=1)\n"))
    made = _creations(root)
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok and not step.edits
    assert "_specialize() launches kernels itself" in step.why_not, step.why_not


def test_a_classmethod_called_on_a_subclass_is_refused(tmp_path: Path) -> None:
    """The run passed a subclass as `cls`: `Solver._specialize(key)` would pass Solver, another call."""
    root = _project(tmp_path, SOLVER + "\n\nclass Fast(Solver):\n    pass\n")
    made = _creations(root, cls="Fast")
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok
    assert "classmethod the run called on app.solver.Fast, not on Solver" in step.why_not, step.why_not


def test_a_classmethod_of_a_class_nested_in_a_function_is_refused(tmp_path: Path) -> None:
    """The class exists only inside `build()`: module scope has no name for it."""
    body = textwrap.indent(SOLVER.split("class Solver:", 1)[1].split("\n\ndef run", 1)[0], "    ")
    src = ("from typing import ClassVar\n\nMADE = []\nLIMIT = 2.5\n\n\ndef build():\n    class Solver:"
           + body + "\n    return Solver\n\n\ndef run():\n    Solver = build()\n    out = []\n"
           "    for ndof, npoints in ((3, 1), (4, 2)):\n"
           "        out.append(Solver(ndof, npoints).NDOF)\n    return out\n")
    root = _project(tmp_path, src)
    made = _creations(root, maker="build.<locals>.Solver._specialize")
    for c in made:
        c.outer[0]["function"] = "build.<locals>.Solver.__new__"
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok and not step.edits
    assert "build.<locals>.Solver._specialize() is not a module-level function" in step.why_not, step.why_not
