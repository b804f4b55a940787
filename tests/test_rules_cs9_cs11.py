"""CS-9 on kernel factories (fixed versions vs. versions from run-time data) and CS-11 on nested unrolled loops.

Scans run on small projects written to tmp_path (Warp is never imported for them); the rule tests pair a real scan
with a synthetic measurement; the slow tests compile the projects with Warp on the CPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import write_tree as write
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import Build, KernelInfo, ModuleCreation, Report, RunResult, SampleResult, Site
from warp_compile.probe.models.scan import ScanFacts
from warp_compile.probe.rules import unique_modules, unroll_budget
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan


def line_of(root: Path, rel: str, needle: str) -> int:
    text = (root / rel).read_text().splitlines()
    return next(i for i, ln in enumerate(text, start=1) if needle in ln)


def build(seq: int, module: str, key: str, *, file: str, line: int, ms: float = 110.0, start: float = 0.0, **kw):  # type: ignore[no-untyped-def]
    h = (f"{seq:x}" * 64)[:64]
    return Build(
        seq=seq,
        module=module,
        hash=h,
        hash_short=h[:7],
        device="cpu",
        block_dim=1,
        status=kw.pop("status", "compiled"),
        ms=ms,
        kernels=[KernelInfo(key=key, hash=h[:8], file=file, line=line)],
        options={"block_dim": "1", "max_unroll": kw.pop("max_unroll", "16")},
        start_ms=start,
        end_ms=start + ms,
        **kw,
    )


def report(root: Path, builds: list[Build], creations: list[ModuleCreation] | None = None) -> Report:
    cold = RunResult(phase="cold", wall_ms=2000, exit_code=0, compiled=len(builds), module_ms=sum(b.ms for b in builds))
    r = Report(
        command=["python", "-m", "proj"],
        cwd=str(root),
        samples=1,
        builds=builds,
        module_creations=creations or [],
        sample_results=[SampleResult(index=0, ok=True, cold=cold)],
    )
    r.cold_module_ms.median = sum(b.ms for b in builds)
    r.modules = len({b.module for b in builds})
    return r


def ctx_of(root: Path, r: Report, facts: ScanFacts | None) -> RuleContext:
    ctx = RuleContext(report=r, scan=facts, root=root)
    ctx.changes = explain_changes(r, rel=ctx.rel)
    return ctx


# ---------------------------------------------------------------------------------------------- projects

FACTORY = """
import warp as wp


def make_gain(gain: float, module: str = "unique"):
    def gain_kernel(x: wp.array(dtype=wp.float32)):
        i = wp.tid()
        x[i] = x[i] * wp.static(gain)

    return wp.kernel(gain_kernel, module=module)
"""

# three versions fixed by the source, made at import
AT_IMPORT = {
    "proj/__init__.py": "",
    "proj/kernels.py": FACTORY
    + """

LOUD = make_gain(2.0)
SOFT = make_gain(0.5)
MUTE = make_gain(0.0)
""",
    "proj/__main__.py": """
import warp as wp

from proj import kernels

x = wp.ones(64, dtype=wp.float32, device="cpu")
for k in (kernels.LOUD, kernels.SOFT, kernels.MUTE):
    wp.launch(k, dim=64, inputs=[x], device="cpu")
print(float(x.numpy().sum()))
""",
}

# the same factory fed with values read at run time, one kernel per value, each launched as it is made
FROM_RUNTIME = {
    "proj/__init__.py": "",
    "proj/kernels.py": FACTORY,
    "proj/__main__.py": """
import json
import os

import warp as wp

from proj.kernels import make_gain


def run(gains):
    x = wp.ones(64, dtype=wp.float32, device="cpu")
    for g in gains:
        k = make_gain(g)
        wp.launch(k, dim=64, inputs=[x], device="cpu")
    return float(x.numpy().sum())


print(run(json.loads(os.environ.get("GAINS", "[2.0, 0.5, 3.0]"))))
""",
}


def _family_builds(root: Path, n: int, *, start_step: float = 100.0) -> list[Build]:
    key = "make_gain__locals__gain_kernel"
    file = str(root / "proj" / "kernels.py")
    line = line_of(root, "proj/kernels.py", "def gain_kernel")
    return [
        build(i + 1, f"{key}_{'abcdef12'[i] * 8}", key, file=file, line=line, start=300.0 + i * start_step)
        for i in range(n)
    ]


# ---------------------------------------------------------------------------------------------- scan


def test_scan_records_factory_calls_and_whether_their_arguments_are_fixed(tmp_path):
    root = write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/k.py": FACTORY
            + """

import sys

GAIN = 1.5
TABLE = {"a": 0.25}
GAINS = (0.1, 0.2)

A = make_gain(2.0)
B = make_gain(GAIN, module="unique")
C = make_gain(TABLE["a"] * 2)
D = [make_gain(g) for g in GAINS]
for g in (3.0, 4.0):
    E = make_gain(g)
F = make_gain(float(sys.argv[1]))


def per_request(value, values):
    yield make_gain(value)
    for v in values:
        yield make_gain(v)
    yield make_gain(0.75)
""",
        },
    )
    facts = scan(root)
    got = [(c.line, c.constant_args, c.runtime_args, c.scope, c.in_loop) for c in facts.calls_of_factory("make_gain")]
    line = lambda needle: line_of(root, "app/k.py", needle)  # noqa: E731
    assert got == [
        (line("A = make_gain"), True, [], "module", False),
        (line("B = make_gain"), True, [], "module", False),
        (line("C = make_gain"), True, [], "module", False),
        (line("D = [make_gain"), True, [], "module", True),
        (line("E = make_gain"), True, [], "module", True),
        (line("F = make_gain"), False, ["float(sys.argv[1])"], "module", False),
        (line("yield make_gain(value)"), False, ["value"], "function", False),
        (line("yield make_gain(v)"), False, ["v"], "function", True),
        (line("yield make_gain(0.75)"), True, [], "function", False),
    ]
    assert {c.factory_file for c in facts.factory_calls} == {"app/k.py"}
    (k,) = facts.kernels
    assert k.module_from_default and k.module_default_line == line('module: str = "unique"')


def test_scan_resolves_factory_calls_across_files_and_decorators(tmp_path):
    root = write(tmp_path, FROM_RUNTIME)
    facts = scan(root)
    (call,) = facts.factory_calls
    assert (call.file, call.factory, call.factory_file) == ("proj/__main__.py", "make_gain", "proj/kernels.py")
    assert call.runtime_args == ["g"] and call.in_loop and call.function == "run"

    root = write(
        tmp_path / "deco",
        {
            "fx/__init__.py": "",
            "fx/reg.py": """
                import warp as wp

                REG = {}

                def register(name, module="unique"):
                    def wrap(fn):
                        REG[name] = wp.kernel(fn, module=module)
                        return REG[name]
                    return wrap

                @register("gain")
                def gain(x: wp.array(dtype=float)):
                    x[wp.tid()] = 2.0 * x[wp.tid()]

                print(len(REG))  # a builtin: never a factory call
            """,
        },
    )
    facts = scan(root)
    (call,) = facts.factory_calls
    assert call.decorator and call.factory == "register" and call.args == ["'gain'"] and call.constant_args


def test_scan_records_loop_nesting_and_forced_unroll(tmp_path):
    root = write(
        tmp_path,
        {
            "k.py": """
                import warp as wp

                N = 32

                @wp.kernel
                def nested(x: wp.array(dtype=float)):
                    for t in range(8):
                        for i in range(x.shape[0]):
                            for k in range(48):
                                x[k] = x[k] + float(t)

                @wp.kernel
                def bound_only(x: wp.array(dtype=float)):
                    for k in range(wp.static(N)):
                        x[k] = 1.0

                @wp.kernel
                def body_static(x: wp.array(dtype=float)):
                    for t in range(20):
                        for k in range(4):
                            x[k] = x[k] * float(wp.static(k))
            """
        },
    )
    facts = scan(root)
    loops = {(lp.kernel, lp.bound): lp for lp in facts.loops}
    assert sorted(loops) == [("body_static", 4), ("body_static", 20), ("bound_only", 32), ("nested", 8), ("nested", 48)]
    outer, inner = loops[("nested", 8)], loops[("nested", 48)]
    assert inner.outer_loop_lines == [outer.line] and outer.outer_loop_lines == []  # the dynamic loop is skipped
    assert facts.loop_at(inner.file, outer.line, "nested") == outer
    assert loops[("bound_only", 32)].static and not loops[("bound_only", 32)].forced_unroll
    assert loops[("body_static", 20)].forced_unroll and loops[("body_static", 4)].forced_unroll
    assert not outer.forced_unroll and not inner.forced_unroll


# ------------------------------------------------------------------------------- CS-9 (scan + synthetic run)


def test_cs9_factory_versions_from_constant_calls_fire_at_the_default(tmp_path):
    root = write(tmp_path, AT_IMPORT)
    facts = scan(root)
    builds = _family_builds(root, 3)
    creations = [
        ModuleCreation(module="gain_kernel", site=Site(file=str(root / "proj/kernels.py"), line=9), start_ms=50.0 + i)
        for i in range(3)
    ]
    res = unique_modules.evaluate(ctx_of(root, report(root, builds, creations), facts))
    (f,) = res.findings
    default = line_of(root, "proj/kernels.py", 'module: str = "unique"')
    assert (f.locations[0].file, f.locations[0].line) == ("proj/kernels.py", default)
    assert f.estimated_saving_ms == 220.0 and f.confidence == "high"
    assert f"proj/kernels.py:{default}" in f.fix and "to None" in f.fix and "the 3 versions of" in f.fix
    text = " ".join(e.fact for e in f.evidence)
    assert "at import with arguments fixed in the source" in text and "make_gain(2.0)" in text
    assert "created before the first of them loaded" in text


def test_cs9_factory_versions_from_runtime_args_stay_unique(tmp_path):
    root = write(tmp_path, FROM_RUNTIME)
    facts = scan(root)
    res = unique_modules.evaluate(ctx_of(root, report(root, _family_builds(root, 3)), facts))
    assert res.findings == []
    (ro,) = res.ruled_out
    assert "varies at run time" in ro.signal and "run-time arguments (g)" in ro.signal
    assert f"proj/__main__.py:{line_of(root, 'proj/__main__.py', 'k = make_gain(g)')}" in ro.signal


def test_cs9_fixed_versions_created_between_loads_get_a_plan_not_a_gate(tmp_path):
    """Versions fixed by the source but created between loads (issue 39): once a gate checked on the program as it
    is ("create them all before the first launch"); now a finding whose plan's first step makes that hold, and
    where no candidate can (here the context holds no sources to edit) the finding names every one it tried."""
    root = write(tmp_path, AT_IMPORT)
    facts = scan(root)
    builds = _family_builds(root, 3)
    site = Site(file=str(root / "proj/kernels.py"), line=9)
    creations = [ModuleCreation(module="gain_kernel", site=site, start_ms=b.start_ms - 5.0) for b in builds]
    res = unique_modules.evaluate(ctx_of(root, report(root, builds, creations), facts))
    (f,) = res.findings
    assert f.applicability == "manual" and not f.edits
    assert all(c in f.review for c in ("create at import", "memoize:", "hoist:", "from the run's record:")), f.review


def test_cs9_without_a_scan_several_versions_still_count_as_varying(tmp_path):
    root = write(tmp_path, AT_IMPORT)
    res = unique_modules.evaluate(ctx_of(root, report(root, _family_builds(root, 3)), None))
    assert res.findings == [] and "vary at run time" in res.ruled_out[0].signal


def test_cs9_single_kernels_with_runtime_args_are_not_counted_stable(tmp_path):
    """Two factories, one version each: the one fed from the command line keeps its unique module."""
    root = write(
        tmp_path,
        {
            "proj/__init__.py": "",
            "proj/kernels.py": FACTORY.replace("make_gain", "make_a").replace("gain_kernel", "ka")
            + FACTORY.replace("make_gain", "make_b").replace("gain_kernel", "kb")
            + """

import sys

A = make_a(2.0)
B = make_b(float(sys.argv[1]))
""",
        },
    )
    facts = scan(root)
    file = str(root / "proj/kernels.py")
    builds = [
        build(1, "make_a__locals__ka_11111111", "make_a__locals__ka", file=file, line=5),
        build(2, "make_b__locals__kb_22222222", "make_b__locals__kb", file=file, line=16),
    ]
    res = unique_modules.evaluate(ctx_of(root, report(root, builds), facts))
    assert res.findings == []
    assert "make_b__locals__kb (1 version) varies at run time" in res.ruled_out[0].signal


# ------------------------------------------------------------------------------ CS-11 (scan + synthetic run)

NESTED = {
    "proj/__init__.py": "",
    "proj/filters.py": """
import warp as wp

wp.set_module_options({"max_unroll": 64, "enable_backward": False})

TAPS = 48
TRACES = 8


@wp.kernel
def fir_bank(x: wp.array2d(dtype=wp.float32), h: wp.array(dtype=wp.float32), y: wp.array2d(dtype=wp.float32)):
    s = wp.tid()
    for t in range(TRACES):
        acc = float(0.0)
        for k in range(TAPS):
            acc += h[k] * x[t, wp.max(s - k, 0)]
        y[t, s] = acc
""",
    "proj/__main__.py": """
import numpy as np
import warp as wp

from proj import filters

x = wp.array(np.ones((filters.TRACES, 256), dtype=np.float32), device="cpu")
h = wp.array(np.full(filters.TAPS, 1.0 / filters.TAPS, dtype=np.float32), device="cpu")
y = wp.zeros((filters.TRACES, 256), dtype=wp.float32, device="cpu")
wp.launch(filters.fir_bank, dim=256, inputs=[x, h, y], device="cpu")
print(float(y.numpy().sum()))
""",
}


def _cs11(root: Path, facts: ScanFacts, kernel: str, max_unroll: str, source_bytes: int = 200_000):  # type: ignore[no-untyped-def]
    b = build(1, "proj.filters", kernel, file=str(root / "proj/filters.py"), line=10, max_unroll=max_unroll)
    b.source_bytes = source_bytes
    return unroll_budget.evaluate(ctx_of(root, report(root, [b]), facts))


def _loop_note(f, line: int) -> str:  # type: ignore[no-untyped-def]
    """What the finding's evidence says about the loop at `line` (loops are evidence; the budget setting is the
    line to change)."""
    fact = next(e.fact for e in f.evidence if f"filters.py:{line}: " in e.fact)
    return fact.split(f"filters.py:{line}: ", 1)[1].rstrip(".")


def test_cs11_nested_loops_report_the_product_of_both_unrolled_loops(tmp_path):
    root = write(tmp_path, NESTED)
    facts = scan(root)
    (f,) = _cs11(root, facts, "fir_bank", "64").findings
    outer = line_of(root, "proj/filters.py", "for t in range(TRACES)")
    inner = line_of(root, "proj/filters.py", "for k in range(TAPS)")
    note = _loop_note(f, inner)
    assert "8 x 48 = 384 copies" in note and f"line {outer}" in note
    assert "unrolled 48x" not in note
    assert all(x.line != inner for x in f.locations)  # the raised budget is what to change, not the loop
    text = " ".join(e.fact for e in f.evidence)
    assert "at the default budget of 16 it stays a loop, written out 8 times" in text


def test_cs11_loop_inside_a_loop_that_stays_a_loop_is_not_multiplied(tmp_path):
    src = dict(NESTED)
    src["proj/filters.py"] = NESTED["proj/filters.py"].replace("TRACES = 8", "TRACES = 80")  # 80 > 64: stays a loop
    root = write(tmp_path, src)
    (f,) = _cs11(root, scan(root), "fir_bank", "64").findings
    inner = line_of(root, "proj/filters.py", "for k in range(TAPS)")
    note = _loop_note(f, inner)
    assert note.startswith("48-step loop unrolled: 48 copies of its body") and " x " not in note.split(";")[0]


def test_cs11_static_bound_obeys_the_budget_but_static_on_the_loop_variable_forces_it(tmp_path):
    root = write(
        tmp_path,
        {
            "proj/__init__.py": "",
            "proj/filters.py": """
                import warp as wp

                N = 32

                @wp.kernel
                def bound_only(x: wp.array(dtype=float)):
                    for k in range(wp.static(N)):
                        x[k] = 1.0

                @wp.kernel
                def body_static(x: wp.array(dtype=float)):
                    for k in range(N):
                        x[k] = x[k] * float(wp.static(k))
            """,
        },
    )
    facts = scan(root)
    res = _cs11(root, facts, "bound_only", "16")
    assert res.findings == [] and "forced by a wp.static" in res.ruled_out[0].signal
    (f,) = _cs11(root, facts, "body_static", "16").findings
    assert any("forced" in x.note and "32 copies" in x.note for x in f.locations)
    assert "whatever max_unroll says" in f.fix


# ---------------------------------------------------------------------------------------------- real Warp runs


def _diagnose(root: Path):  # type: ignore[no-untyped-def]
    from warp_compile.probe.diagnose import diagnose_command

    _, d = diagnose_command([sys.executable, "-m", "proj"], root, samples=1, timeout_s=300)
    return d


@pytest.mark.slow
def test_real_factory_called_at_import_with_literals_is_cs9(tmp_path):
    root = write(tmp_path, AT_IMPORT)
    d = _diagnose(root)
    f = next((f for f in d.findings if f.mechanism == "CS-9"), None)
    assert f is not None, d.summary
    default = line_of(root, "proj/kernels.py", 'module: str = "unique"')
    assert (f.locations[0].file, f.locations[0].line) == ("proj/kernels.py", default)
    assert len(f.modules) == 3 and "to None" in f.fix


@pytest.mark.slow
def test_real_factory_fed_runtime_data_keeps_its_unique_modules(tmp_path):
    root = write(tmp_path, FROM_RUNTIME)
    d = _diagnose(root)
    assert "CS-9" not in {f.mechanism for f in d.findings}, d.summary
    ro = next(r for r in d.ruled_out if r.mechanism == "CS-9")
    assert "varies at run time" in ro.signal


@pytest.mark.slow
def test_real_nested_unroll_names_both_loops(tmp_path):
    root = write(tmp_path, NESTED)
    d = _diagnose(root)
    f = next((f for f in d.findings if f.mechanism == "CS-11"), None)
    assert f is not None, d.summary
    inner = line_of(root, "proj/filters.py", "for k in range(TAPS)")
    assert "8 x 48 = 384" in _loop_note(f, inner)
    assert f.locations and all(x.line != inner for x in f.locations)  # the raised max_unroll is the line to change


@pytest.mark.slow
def test_real_static_bound_at_the_default_budget_is_not_cs11(tmp_path):
    root = write(
        tmp_path,
        {
            "proj/__init__.py": "",
            "proj/__main__.py": """
                import warp as wp

                N = 64

                @wp.kernel
                def smooth(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
                    i = wp.tid()
                    acc = float(0.0)
                    for k in range(wp.static(N)):
                        acc += wp.sin(x[(i + k) % x.shape[0]]) * wp.cos(float(k))
                    y[i] = acc

                x = wp.ones(128, dtype=wp.float32, device="cpu")
                y = wp.zeros(128, dtype=wp.float32, device="cpu")
                wp.launch(smooth, dim=128, inputs=[x, y], device="cpu")
                print(float(y.numpy().sum()))
            """,
        },
    )
    d = _diagnose(root)
    assert "CS-11" not in {f.mechanism for f in d.findings}, d.summary
