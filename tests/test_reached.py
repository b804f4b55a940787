"""A kernel factory that is a method or a closure kept by an object, called at import by the name the program used.

Generated variants of the corpus (tests/shapes_variants/mutate.py, where/method and where/init_closure) turn a
module-level factory into `family = _Factory().make` (a closure defined in `__init__`) or `make = _Kernels().make`
(a bound method). The run's record names the frame's function by its qualname (`_Factory.__init__.<locals>.family`);
the line of the frame that called it says by which module-scope name (probe/fix/transform/reached.py).
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

ENERGIES = '''\
import functools

import warp as wp

MADE = []


class _FamilyFactory:
    def __init__(self):
        @functools.cache
        def family(dtype):
            MADE.append(dtype.__name__)
            return {"dtype": dtype}

        self.make = family


family = _FamilyFactory().make


class _KernelsFor:
    def kernels_for(self, dtype):
        return family(dtype)


kernels_for = _KernelsFor().kernels_for


def total(x):
    k = kernels_for(wp.float64)
    return (k, x)
'''


def _project(tmp: Path, text: str = ENERGIES) -> Path:
    root = tmp / "p"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "energies.py").write_text(textwrap.dedent(text))
    return root


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _creation(root: Path, call: str = "return family(dtype)") -> KernelCreation:
    """An instance the run added late: made in the closure `family`, called from the method `kernels_for`, called
    from `total()`."""
    f = root / "app" / "energies.py"
    return KernelCreation(
        key="stretch", module="app.energies", file=str(f), line=_line(f, "MADE.append"),
        function="_FamilyFactory.__init__.<locals>.family",
        args={"dtype": {"kind": "type", "module": "warp", "name": "float64"}}, made_by="overload",
        outer=[{"file": str(f), "line": _line(f, call), "function": "_KernelsFor.kernels_for",
                "args": {"self": {"kind": "other", "type": "_KernelsFor"},
                         "dtype": {"kind": "type", "module": "warp", "name": "float64"}}},
               {"file": str(f), "line": _line(f, "k = kernels_for("), "function": "total",
                "args": {"x": {"kind": "other", "type": "ndarray"}}}])


def _ctx(root: Path, made: list[KernelCreation]) -> RuleContext:
    report = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))


def _run_import(root: Path, edits: list, dst: Path) -> str:
    """The edited copy imported in a fresh interpreter: what MADE holds once the import ends."""
    shutil.copytree(root, dst)
    apply_edits(dst, edits)
    done = subprocess.run([sys.executable, "-c", "import app.energies as e; print(e.MADE)"], cwd=dst,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_closure_kept_by_an_object_is_called_at_import_by_its_module_name(tmp_path: Path) -> None:
    root = _project(tmp_path)
    made = [_creation(root)]
    step = made_at_import_from_run(_ctx(root, made), made)
    assert step.ok, step.why_not
    text = "".join(e.new for e in step.edits)
    assert "family(wp.float64)" in text and "functools.lru_cache" not in text  # it caches already
    # written after the statement that binds `family`, and run there: the version exists once the import ends
    assert step.edits[-1].start_line > _line(root / "app" / "energies.py", "family = _FamilyFactory().make")
    assert _run_import(root, step.edits, tmp_path / "copy") == "['float64']"


def test_a_method_reached_through_an_instance_is_called_without_self(tmp_path: Path) -> None:
    """The method itself made the kernel (its frame is the innermost): it is cached, with its own indentation, and
    called through the bound name with the recorded arguments but the instance."""
    root = _project(tmp_path, ENERGIES.replace("        return family(dtype)",
                                               "        MADE.append('method')\n        return family(dtype)"))
    f = root / "app" / "energies.py"
    c = _creation(root)
    c.function, c.line, c.made_by = "_KernelsFor.kernels_for", _line(f, "MADE.append('method')"), "kernel"
    c.args = c.outer[0]["args"]
    c.outer = c.outer[1:]
    step = made_at_import_from_run(_ctx(root, [c]), [c])
    assert step.ok, step.why_not
    text = "".join(e.new for e in step.edits)
    assert "kernels_for(wp.float64)" in text and "    @functools.lru_cache(maxsize=None)\n" in text
    assert _run_import(root, step.edits, tmp_path / "copy") == "['method', 'float64']"


def test_a_closure_reached_only_through_a_local_name_is_refused(tmp_path: Path) -> None:
    """The caller called it through its own local (`make = self.make`): no module-scope name calls the same object,
    so nothing is written and the reason says so."""
    root = _project(tmp_path, ENERGIES.replace("        return family(dtype)",
                                               "        make = family\n        return make(dtype)"))
    c = _creation(root, call="return make(dtype)")
    step = made_at_import_from_run(_ctx(root, [c]), [c])
    assert not step.ok and not step.edits, step.edits
    # the closure's own reason is the first frame's; the method that called it is refused for its call line
    assert "kernels_for() calls make() on the line that leads to the kernel" in step.why_not, step.why_not


def test_a_closure_that_launches_is_still_refused(tmp_path: Path) -> None:
    """Reached by name or not, a function whose call at import would launch kernels runs the program's own work:
    the closure is refused, and so is the method that called it (calling it at import runs the closure whole)."""
    root = _project(tmp_path, ENERGIES.replace("            return {\"dtype\": dtype}",
                                               "            wp.launch(None, dim=1)\n            return {}"))
    made = [_creation(root)]
    step = made_at_import_from_run(_ctx(root, made), made)
    assert not step.ok and "family() launches kernels itself" in step.why_not, step.why_not
    assert "kernels_for() reaches the kernel through _FamilyFactory.__init__.<locals>.family()" in step.why_not


NAMING = '''\
MADE = []


class _Naming:
    def __init__(self):
        def named(name):
            def wrap(fn):
                MADE.append(name)
                return fn

            return wrap

        self.make = named


named = _Naming().make


def build(n):
    @named(f"k{n}")
    def k():
        pass

    return k
'''


def test_a_decorator_returned_by_a_module_name_is_not_that_name(tmp_path: Path) -> None:
    """`@named(...)` calls `named`, and the decorator it returns (`wrap`) made the kernel: calling `named` at import
    with `wrap`'s arguments would call another function, so `wrap` is not reached through it. `named` itself is."""
    from warp_compile.probe.fix.transform.reached import def_by_path, reached_as

    root = _project(tmp_path, NAMING)
    f = root / "app" / "energies.py"
    wrap_name = "_Naming.__init__.<locals>.named.<locals>.wrap"
    frames = [{"file": str(f), "line": _line(f, "MADE.append"), "function": wrap_name},
              {"file": str(f), "line": _line(f, "@named("), "function": "build"}]
    ctx = _ctx(root, [])
    tree = ctx.sources.tree("app/energies.py")
    wrap = def_by_path(tree, frames[0]["function"], frames[0]["line"])
    assert wrap is not None and wrap.name == "wrap"
    assert isinstance(reached_as(ctx, frames, 0, "app/energies.py", tree, wrap), str)
    named = def_by_path(tree, "_Naming.__init__.<locals>.named")
    got = reached_as(ctx, [{**frames[0], "function": "_Naming.__init__.<locals>.named"}, frames[1]], 0,
                     "app/energies.py", tree, named)
    assert not isinstance(got, str) and got.name == "named" and not got.bound_first
