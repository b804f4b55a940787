"""Kernel factories the program calls through a module-scope name that binds them (issue 39, kernel_memo's
where/init_closure variant): a closure an object keeps (`init_accel = _Factory().make`, the closure defined in
`__init__`) or a method (`init_accel = _Kernels().init_accel`). The scan links those calls to the function itself
(probe/scan/bound.py), so CS-9 judges the versions by their calls instead of "no call found", and CS-9's argument
path can pass the captured values at each launch. Scans run on small projects written to tmp_path (Warp is never
imported); the rule tests pair a real scan with a synthetic measurement.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.helpers import write_tree as write
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.models import Build, KernelInfo, Report, RunResult, SampleResult
from warp_compile.probe.rules import unique_modules
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

INIT_QACC = """\
@wp.kernel(module="unique")
def init_qacc(q: wp.array(dtype=float)):
    i = wp.tid()
    if wp.static(warm):
        q[i] = q[i] * 0.5
    else:
        q[i] = q[i] + 1.0

return init_qacc
"""

CLOSURE = """
import warp as wp


class _AccelFactory:
    def __init__(self):
        def init_accel(warm: bool):
{kernel}
        self.make = init_accel


init_accel = _AccelFactory().make
""".replace("{kernel}", textwrap.indent(INIT_QACC, " " * 12))

METHOD = """
import warp as wp


class _AccelKernels:
    def init_accel(self, warm: bool):
        @wp.kernel(module="unique")
        def init_qacc(q: wp.array(dtype=float)):
            i = wp.tid()
            if wp.static(warm):
                q[i] = q[i] * 0.5

        return init_qacc


init_accel = _AccelKernels().init_accel
"""

STEP = """

def step(q, index: int) -> None:
    warm = index >= 3
    wp.launch(init_accel(warm), dim=q.shape[0], inputs=[q], device="cpu")
"""

# the same closure reached through a name that holds what a function returns: not the function itself
RETURNED = CLOSURE.replace("init_accel = _AccelFactory().make", "def _build():\n    return _AccelFactory().make\n\n\n"
                           "init_accel = _build()")


def _calls(root: Path) -> list[tuple[str, str, list[str], bool]]:
    return [(c.factory, c.callee, c.args, c.constant_args) for c in scan(root).factory_calls]


def test_scan_links_calls_through_a_name_binding_a_kept_closure_or_a_method(tmp_path: Path) -> None:
    closure = write(tmp_path / "c", {"p/__init__.py": "", "p/solver.py": CLOSURE + STEP})
    assert _calls(closure) == [("_AccelFactory.__init__.<locals>.init_accel", "init_accel", ["warm"], False)]
    method = write(tmp_path / "m", {"p/__init__.py": "", "p/solver.py": METHOD + STEP})
    assert _calls(method) == [("_AccelKernels.init_accel", "init_accel", ["warm"], False)]
    # from another file (one the scan reads whole), imported by name or called through the module
    other = write(tmp_path / "o", {
        "p/__init__.py": "",
        "p/solver.py": CLOSURE,
        "p/run.py": "import warp as wp\n\nfrom p.solver import init_accel\nfrom p import solver\n\n"
                    "A = init_accel(True)\nB = solver.init_accel(False)\n",
    })
    assert [(c.file, c.args, c.scope) for c in scan(other).factory_calls] == [
        ("p/run.py", ["True"], "module"), ("p/run.py", ["False"], "module")]


def test_scan_does_not_link_a_name_that_holds_what_a_function_returned(tmp_path: Path) -> None:
    """`init_accel = _build()` may hold anything the function returns: its calls are not the closure's."""
    root = write(tmp_path, {"p/__init__.py": "", "p/solver.py": RETURNED + STEP})
    assert _calls(root) == []
    rebound = write(tmp_path / "r", {"p/__init__.py": "", "p/solver.py": CLOSURE + "init_accel = print\n" + STEP})
    assert _calls(rebound) == []  # bound twice at module scope: which one a call reaches is not read


def _report(root: Path, n: int) -> Report:
    key = "_AccelFactory____init____locals__init_accel__locals__init_qacc"
    text = (root / "p/solver.py").read_text().splitlines()
    line = next(i for i, ln in enumerate(text, start=1) if "def init_qacc" in ln)
    builds = []
    for i in range(n):
        h = (f"{i + 1:x}" * 64)[:64]
        builds.append(Build(seq=i + 1, module=f"{key}_{h[:8]}", hash=h, hash_short=h[:7], device="cpu", block_dim=1,
                            status="compiled", ms=110.0, start_ms=300.0 + 100 * i, end_ms=410.0 + 100 * i,
                            kernels=[KernelInfo(key=key, hash=h[:8], file=str(root / "p/solver.py"), line=line)],
                            options={"block_dim": "1"}))
    cold = RunResult(phase="cold", wall_ms=2000, exit_code=0, compiled=n, module_ms=110.0 * n)
    r = Report(command=["python", "-m", "p"], cwd=str(root), samples=1, builds=builds,
               sample_results=[SampleResult(index=0, ok=True, cold=cold)])
    r.modules = n
    return r


def _judged(root: Path, n: int = 2) -> str:
    res = unique_modules.evaluate(RuleContext(report=_report(root, n), scan=scan(root), root=root))
    return " ".join([*(f.title + " " + f.fix for f in res.findings), *(r.signal for r in res.ruled_out)])


def test_cs9_judges_a_kept_closure_by_its_calls(tmp_path: Path) -> None:
    """Called with a value computed at run time: the versions vary, by that call (no more "no call of
    _AccelFactory.__init__() found", which read the outermost function's name)."""
    root = write(tmp_path, {"p/__init__.py": "", "p/solver.py": CLOSURE + STEP})
    text = _judged(root)
    assert "run-time arguments (warm)" in text and "no call of" not in text, text


def test_cs9_without_the_binding_still_says_no_call_was_found(tmp_path: Path) -> None:
    """The cautious reading stays where the call cannot be followed to the function."""
    root = write(tmp_path, {"p/__init__.py": "", "p/solver.py": RETURNED + STEP})
    assert "no call of" in _judged(root)


def _with_closures(root: Path) -> RuleContext:
    r = _report(root, 2)
    for b in r.builds:
        for k in b.kernels:
            k.closure = {"warm": "bool"}  # what the hook records of the captured cell
    return RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root=root))


def test_cs9_passes_a_kept_closure_s_captured_number_at_its_launch(tmp_path: Path) -> None:
    """The argument path now sees the call through the binding: the kernel moves to module scope with `warm` as an
    argument, and the one launch passes it."""
    root = write(tmp_path, {"p/__init__.py": "", "p/solver.py": CLOSURE + STEP})
    (f,) = unique_modules.evaluate(_with_closures(root)).findings
    assert f.applicability == "review" and "init_qacc takes warm: bool" in f.fix, f.fix
    launch = [e.new for e in f.edits if "wp.launch" in e.new]
    assert launch == ['    wp.launch(init_accel(warm), dim=q.shape[0], inputs=[q, warm], device="cpu")\n'], launch


def test_cs9_keeps_a_kept_closure_unique_when_one_call_is_no_launch(tmp_path: Path) -> None:
    """A kernel the program stores (`k = init_accel(warm)`) may be launched where the edit cannot pass the value:
    the behaviour-protecting precondition still refuses, and says so."""
    stored = STEP.replace("wp.launch(init_accel(warm),", "k = init_accel(warm)\n    wp.launch(k,")
    root = write(tmp_path, {"p/__init__.py": "", "p/solver.py": CLOSURE + stored})
    res = unique_modules.evaluate(_with_closures(root))
    assert res.findings == []
    assert "other than as a launch's kernel" in res.ruled_out[0].signal, res.ruled_out[0].signal


REGISTRY = """
import warp as wp

_REGISTRY: dict = {}


def _init_accel_uncached(warm: bool):
{kernel}

def init_accel(warm):
    key = (warm,)
    if key not in _REGISTRY:
        _REGISTRY[key] = _init_accel_uncached(warm)
    return _REGISTRY[key]
""".replace("{kernel}", textwrap.indent(INIT_QACC, " " * 4))


def _registry_ctx(root: Path) -> RuleContext:
    ctx = _with_closures(root)
    key = "_init_accel_uncached__locals__init_qacc"
    for b in ctx.report.builds:
        b.module = b.module.replace("_AccelFactory____init____locals__init_accel__locals__init_qacc", key)
        for k in b.kernels:
            k.key = key
    return ctx


def test_cs9_follows_a_registry_wrapper_that_hands_its_parameters_on_to_its_launches(tmp_path: Path) -> None:
    """kernel_memo's cache/dict_registry variant: the factory is called inside `init_accel`, which passes its own
    parameter on and returns what the registry holds; `init_accel` is called as a launch's kernel. The captured
    number goes to that launch; a wrapper that computes what it passes on is still refused."""
    root = write(tmp_path / "ok", {"p/__init__.py": "", "p/solver.py": REGISTRY + STEP})
    (f,) = unique_modules.evaluate(_registry_ctx(root)).findings
    launch = [e.new for e in f.edits if "wp.launch" in e.new]
    assert launch == ['    wp.launch(init_accel(warm), dim=q.shape[0], inputs=[q, warm], device="cpu")\n'], launch
    computed = REGISTRY.replace("_init_accel_uncached(warm)\n    return", "_init_accel_uncached(not warm)\n    return")
    root = write(tmp_path / "no", {"p/__init__.py": "", "p/solver.py": computed + STEP})
    res = unique_modules.evaluate(_registry_ctx(root))
    assert res.findings == [] and "does not pass its own parameters" in res.ruled_out[0].signal, res.ruled_out
