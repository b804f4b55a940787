"""CS-6 on a generic kernel made inside a function into a module of its own (issue 39, tests/shapes/dot_tiles): the
definition found through the run's record when the function is renamed before `wp.kernel`, and its instances
registered right after the line that makes it, or every candidate named with why it cannot hold.

Synthetic runs against sources written to tmp_path; the patched source is imported with real Warp (no compile) to
check the registrations land on the kernel the factory returns.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path

from tests.helpers import synth_build
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import KernelCreation, KernelInfo, Launch, Report, Trigger
from warp_compile.probe.models.diagnosis import Finding
from warp_compile.probe.rules import late_overloads
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

OPTS = {"fast_math": "False", "mode": "release", "block_dim": "1"}
F32, F64 = "array[float32;1d]", "array[float64;1d]"

FACTORY = """\
    import functools
    from typing import Any

    import warp as wp


    @functools.cache
    def scaled_kernels(factor: int):
        def scale(a: wp.array(dtype=Any), out: wp.array(dtype=Any)):
            i = wp.tid()
            s = a[i]
            for _k in range(1, wp.static(factor)):
                s += a[i]
            out[i] = s

        scale.__name__ = scale.__qualname__ = f"scale_{factor}"
        {made}
"""
RETURN = 'return wp.kernel(module="unique")(scale)'
ALIAS = 'fn = scale\n    made = wp.kernel(module="unique")(fn)\n    return made'


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _project(root: Path, made: str) -> Path:
    (root / "scaler").mkdir(parents=True)
    (root / "scaler" / "__init__.py").write_text("")
    (root / "scaler" / "kernels.py").write_text(textwrap.dedent(FACTORY).replace("{made}", made))
    return root / "scaler" / "kernels.py"


def _run(root: Path, file: Path, types: dict[int, list[str]], made_ms: dict[int, float]) -> RuleContext:
    """Each factor's kernel in a unique module built at its first launch, rebuilt when its next type arrived."""
    defined = _line(file, "def scale(")
    making = _line(file, "wp.kernel(")
    builds, launches, made, seq = [], [], [], 0
    for n, (factor, dts) in enumerate(types.items()):
        key, module = f"scale_{factor}", f"scale_{factor}_{'ab'[n] * 8}"
        sigs = ["a1f4_a1f4" if d == F32 else "a1f8_a1f8" for d in dts]
        trig = Trigger(file=str(root / "scaler" / "run.py"), line=9, function="run", api="launch")
        for i in range(len(sigs)):
            seq += 1
            kernels = [KernelInfo(key=key, hash=s, file=str(file), line=defined, signature=s, generic_parent=key)
                       for s in sigs[: i + 1]]
            builds.append(synth_build(seq, module, "cdef"[seq % 4] + str(n), ms=200.0, kernels=kernels,
                                      options=dict(OPTS), trigger=trig, start_ms=100.0 * seq + 100 * n))
        launches += [Launch(kernel=key, module=module, dtypes=[d, d]) for d in dts]
        made.append(KernelCreation(key=key, module=key, file=str(file), line=making, function="scaled_kernels",
                                   args={"factor": {"kind": "int", "text": str(factor)}}, start_ms=made_ms[factor]))
    r = Report(command=["python", "-m", "scaler"], cwd=str(root), samples=1, builds=builds, launches=launches,
               kernel_creations=made)
    r.hook.mode = "wrap"
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(r, rel=ctx.rel)
    return ctx


def _findings(ctx: RuleContext) -> list[Finding]:
    return sorted(late_overloads.evaluate(ctx).findings, key=lambda f: f.title)


def _import(root: Path, name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(root))
    try:
        for m in [m for m in sys.modules if m == "scaler" or m.startswith("scaler.")]:
            del sys.modules[m]
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


def test_a_renamed_unique_generic_gets_its_instances_registered_where_it_is_made(tmp_path: Path) -> None:
    """Both forms of making it (the kernel returned as made, or bound to a name first, through an alias of the
    function): found through the record, registered right after the line, the patched file imports and the kernel
    the factory returns carries both instances."""
    for form, made in (("return", RETURN), ("alias", ALIAS)):
        root = tmp_path / form
        file = _project(root, made)
        ctx = _run(root, file, {16: [F32, F64], 32: [F32, F64]}, {16: 50.0, 32: 150.0})
        found = _findings(ctx)
        assert len(found) == 2 and all(f.edits and f.applicability == "review" for f in found), [
            f.review for f in found]
        assert "scale_16" in found[0].title and "not found" not in found[0].review
        assert found[0].edits[0].model_dump() == found[1].edits[0].model_dump()  # one line makes both: one edit
        out = tmp_path / f"{form}-patched"
        shutil.copytree(root, out)
        apply_edits(out, found[0].edits)
        text = (out / "scaler" / "kernels.py").read_text()
        assert text.count("wp.overload(") == 2 and "wp.float64" in text
        kernel = _import(out, "scaler.kernels").scaled_kernels(16)
        assert kernel.key == "scale_16" and len(kernel.overloads) == 2


def test_kernels_of_one_line_launched_with_other_types_keep_the_manual_text_naming_each_candidate(
    tmp_path: Path,
) -> None:
    """The registration goes to every kernel the line makes: when one of them was only launched with float32 the
    edit would compile an instance it never uses, so no edit, and the text names every candidate tried."""
    file = _project(tmp_path / "p", RETURN)
    ctx = _run(tmp_path / "p", file, {16: [F32, F64], 32: [F32]}, {16: 50.0, 32: 150.0})
    (f,) = _findings(ctx)
    assert not f.edits and f.applicability == "manual"
    assert "register where it is made: scale_32, also made at scaler/kernels.py" in f.review
    for candidate in ("memoize:", "hoist:", "from the run's record:"):
        assert candidate in f.review


def test_a_kernel_made_after_its_module_first_loaded_is_not_registered_where_it_is_made(tmp_path: Path) -> None:
    file = _project(tmp_path / "p", RETURN)
    ctx = _run(tmp_path / "p", file, {16: [F32, F64], 32: [F32, F64]}, {16: 50.0, 32: 1000.0})
    found = _findings(ctx)
    assert all(not f.edits for f in found)
    assert "scale_32 was made after its module first loaded" in found[0].review


def test_a_kernel_made_inside_an_expression_names_why_and_no_edit(tmp_path: Path) -> None:
    file = _project(tmp_path / "p", 'return (wp.kernel(module="unique")(scale), factor)')
    ctx = _run(tmp_path / "p", file, {16: [F32, F64], 32: [F32, F64]}, {16: 50.0, 32: 150.0})
    found = _findings(ctx)
    assert all(not f.edits for f in found)
    assert "inside the expression of a return statement" in found[0].review


def test_a_record_that_names_no_scanned_creation_leaves_the_kernel_unplaced_and_names_each_candidate(
    tmp_path: Path,
) -> None:
    """The record's line must hold the scanned creation: one line off (another statement), nothing is matched by
    name, so no edit, and the text says what hoist, memoize and the run's record had to work with."""
    file = _project(tmp_path / "p", RETURN)
    ctx = _run(tmp_path / "p", file, {16: [F32, F64], 32: [F32, F64]}, {16: 50.0, 32: 150.0})
    for c in ctx.report.kernel_creations:
        c.line -= 1  # the rename statement above it
    found = _findings(ctx)
    assert all(not f.edits and f.applicability == "manual" for f in found)
    for candidate in ("hoist:", "memoize:", "from the run's record:"):
        assert candidate in found[0].review


SHARED = """\
    from typing import Any

    import warp as wp


    @wp.kernel
    def fill(out: wp.array(dtype=float), v: float):
        out[wp.tid()] = v


    class Scaler:
        def __init__(self, factor: int):
            self.factor = factor
            self.kernel = self._construct()

        def _construct(self):
            factor = self.factor

            @wp.kernel
            def scale(a: wp.array(dtype=Any), out: wp.array(dtype=Any)):
                i = wp.tid()
                out[i] = a[i] * a.dtype(factor)

            return scale
"""


def _shared_run(root: Path, made_ms: float) -> tuple[RuleContext, Path]:
    """A closure kernel in the file's shared module (with `fill`): built with its float32 instance, rebuilt when the
    float64 one arrived with a launch; made at `made_ms` (the module first loads at 200 ms)."""
    (root / "scaler").mkdir(parents=True)
    (root / "scaler" / "__init__.py").write_text("")
    file = root / "scaler" / "kernels.py"
    file.write_text(textwrap.dedent(SHARED))
    key, module = "Scaler__construct__locals__scale", "scaler.kernels"
    defined = _line(file, "def scale(")
    trig = Trigger(file=str(root / "scaler" / "run.py"), line=9, function="run", api="launch")
    fill = KernelInfo(key="fill", hash="f0", file=str(file), line=_line(file, "def fill("), signature="")
    sigs = ["a1f4_a1f4", "a1f8_a1f8"]
    builds = [
        synth_build(i + 1, module, "ab"[i] * 7, ms=300.0, options=dict(OPTS), trigger=trig, start_ms=200.0 + 400 * i,
                    kernels=[fill, *(KernelInfo(key=key, hash=s, file=str(file), line=defined, signature=s,
                                                generic_parent=key) for s in sigs[: i + 1])])
        for i in range(2)
    ]
    launches = [Launch(kernel=key, module=module, dtypes=[d, d]) for d in (F32, F64)]
    made = [KernelCreation(key=key, module=module, file=str(file), line=defined - 1, function="_construct",
                           start_ms=made_ms)]  # the decorator's line, as the hook records a decorated closure
    r = Report(command=["python", "-m", "scaler"], cwd=str(root), samples=1, builds=builds, launches=launches,
               kernel_creations=made)
    r.hook.mode = "wrap"
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(r, rel=ctx.rel)
    return ctx, file


def test_a_closure_in_a_shared_module_is_registered_where_it_is_made_with_its_own_module_measured_beside(
    tmp_path: Path,
) -> None:
    """Made before its shared module first loaded (in __init__) and launched with float32 then float64: the edit
    registers both right after the definition, so the module builds once; module="unique" is the alternative
    `fix` measures beside it. The patched file imports and a Scaler's kernel carries both instances."""
    ctx, _file = _shared_run(tmp_path / "p", made_ms=50.0)
    (f,) = _findings(ctx)
    assert f.edits and f.applicability == "review", f.review
    assert "wp.overload(scale" in f.edits[0].new and "module=" not in f.edits[0].new
    (alt,) = f.alternatives
    assert 'module="unique"' in alt.label and any('module="unique"' in e.new for e in alt.edits)
    assert not any("wp.overload(" in e.new for e in alt.edits)
    out = tmp_path / "patched"
    shutil.copytree(tmp_path / "p", out)
    apply_edits(out, f.edits)
    kernel = _import(out, "scaler.kernels").Scaler(3).kernel
    assert len(kernel.overloads) == 2


def test_a_closure_made_after_its_shared_module_loaded_keeps_a_module_of_its_own(tmp_path: Path) -> None:
    """Made after the module first loaded: a registration where it is made comes late, so the edit is the module of
    its own, no alternative, and the review says why the registration was not written."""
    ctx, _file = _shared_run(tmp_path / "p", made_ms=900.0)
    (f,) = _findings(ctx)
    assert f.edits and 'module="unique"' in f.edits[0].new and not f.alternatives
    assert "was made after its module first loaded" in f.review
