"""WC-1's maker cache: a factory handed a new wp.func at every call gets one per argument list, so its cache hits.

The records are built by hand as the hook writes them (the factory's argument named by its qualname, with what its
closure captured; the frames above, with their lines), against apps written for this test, not the corpus shape
(tests/shapes/filter_refresh, whose memo is a project decorator): a maker taking a string in a loop with a plain
factory (both get a cache), a memoised factory (only the maker does), and the refusals the step must name: a maker
that reads a run-time array, one given an array, one with side effects, one that returns nothing, one not the
project's, an argument neither written nor recorded. The slow test runs `fix --write` on tests/apps/fresh_maker.
"""

from __future__ import annotations

import ast
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.test_per_call import _ctx, _report
from warp_compile.probe.fix.edits import apply_edits
from warp_compile.probe.fix.transform.cache_factory import cache_factory
from warp_compile.probe.fix.transform.cache_maker import cache_maker
from warp_compile.probe.models import KernelCreation, Site
from warp_compile.probe.models.diagnosis import Edit

APP = ROOT / "tests" / "apps" / "fresh_maker"

LOOP = '''\
import numpy as np
import warp as wp

STYLE = "soft"
GAINS = wp.zeros(2, dtype=float)
SEEN = []


def make_shade(style: str):
    weight = 0.25 if style == "soft" else 1.0

    @wp.func
    def shade(x: float) -> float:
        return x * weight

    return shade


def shade_kernel(shade_fn):
    @wp.kernel(module="unique")
    def apply(y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = shade_fn(y[i])

    return apply


def run(mode, y):
    for _ in range(10):
        kernel = shade_kernel(make_shade(STYLE))
        wp.launch(kernel, dim=4, inputs=[y])
'''

MEMO = '''\
_MEMO = {}


def memo(factory):
    def get(*args):
        key = tuple(hash(a) for a in args)
        if key not in _MEMO:
            _MEMO[key] = factory(*args)
        return _MEMO[key]

    return get


@memo
def shade_kernel(shade_fn):'''


def _project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    (root / "app.py").write_text(textwrap.dedent(text))
    return root


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def _fn(cells: dict, module: str = "app", maker: str = "make_shade") -> dict:
    return {"kind": "function", "module": module, "name": f"{maker}.<locals>.shade", "cells": cells}


SOFT = {"weight": {"kind": "float", "text": "0.25"}}


def _made(root: Path, text: str, value: dict, site: str = "kernel = shade_kernel(", wrapper: int = 0,
          frame_args: dict | None = None) -> list[KernelCreation]:
    """Four creations by shade_kernel, called from run() at `site` (through a memo's wrapper frame at line
    `wrapper` when given), as the hook records them."""
    file = str(root / "app.py")
    line = _line(text, "@wp.kernel(module=")
    call = {"file": file, "line": _line(text, site), "function": "run", "args": frame_args or {}}
    outer = ([{"file": file, "line": wrapper, "function": "memo.<locals>.get", "args": {}}] if wrapper else []) + [call]
    caller = outer[0]
    return [KernelCreation(key="shade_kernel__locals__apply", module="apply", file=file, line=line,
                           function="shade_kernel", args={"shade_fn": value}, outer=outer,
                           caller=Site(file=file, line=caller["line"], function=caller["function"]),
                           start_ms=100.0 + i, made_ms=1.0) for i in range(4)]


def _step(root: Path, text: str, value: dict, **kw):  # type: ignore[no-untyped-def]
    made = _made(root, text, value, **kw)
    ctx = _ctx(_report(root, made), root)
    return ctx, made, cache_maker(ctx, str(root / "app.py"), "shade_kernel", made)


def test_a_maker_taking_a_string_in_a_loop_is_cached_and_the_plain_factory_too(tmp_path: Path) -> None:
    root = _project(tmp_path, LOOP)
    ctx, made, step = _step(root, LOOP, _fn(SOFT))
    assert step.ok, step.why_not
    apply_edits(root, step.edits)
    tree = ast.parse((root / "app.py").read_text())
    cached = {s.name for s in tree.body if isinstance(s, ast.FunctionDef)
              and any("lru_cache" in ast.unparse(d) for d in s.decorator_list)}
    assert cached == {"make_shade", "shade_kernel"}
    assert "import functools" in (root / "app.py").read_text()
    assert "make_shade()" in step.done and "a cache on shade_kernel() (added) hits" in step.done
    assert step.review and "share one object per argument list" in step.review[0]
    # a cache on the factory alone is refused with why: its argument is a new object at every call
    alone = cache_factory(ctx, str(root / "app.py"), "shade_kernel", made)
    assert not alone.ok and "new function at every call" in alone.why_not and "make_shade()" in alone.why_not


def test_a_factory_memoised_by_a_project_decorator_keeps_its_memo_and_only_the_maker_is_cached(
        tmp_path: Path) -> None:
    text = LOOP.replace("def shade_kernel(shade_fn):", MEMO)
    root = _project(tmp_path, text)
    _ctx_, _m, step = _step(root, text, _fn(SOFT), wrapper=_line(text, "_MEMO[key] = factory(*args)"))
    assert step.ok, step.why_not
    assert [e.new.strip() for e in step.edits if "lru_cache" in e.new] == ["@functools.lru_cache(maxsize=None)"]
    assert "memo @memo hits" in step.done
    apply_edits(root, step.edits)
    tree = ast.parse((root / "app.py").read_text())
    maker = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "make_shade")
    assert any("lru_cache" in ast.unparse(d) for d in maker.decorator_list)


def test_an_argument_passed_through_a_local_name_and_recorded_by_the_frame_is_followed(tmp_path: Path) -> None:
    text = LOOP.replace("        kernel = shade_kernel(make_shade(STYLE))",
                        "        fn = make_shade(mode)\n        kernel = shade_kernel(fn)")
    root = _project(tmp_path, text)
    _c, _m, step = _step(root, text, _fn(SOFT), frame_args={"mode": {"kind": "str", "text": "'soft'"}})
    assert step.ok, step.why_not
    _c, _m, step = _step(root, text, _fn(SOFT), frame_args={"mode": {"kind": "other", "type": "array"}})
    assert not step.ok and "a run-time array (array)" in step.why_not


def test_a_maker_that_reads_a_run_time_array_is_refused_with_it(tmp_path: Path) -> None:
    text = LOOP.replace('    weight = 0.25 if style == "soft" else 1.0',
                        '    weight = float(GAINS.numpy()[0 if style == "soft" else 1])')
    root = _project(tmp_path, text)
    _c, _m, step = _step(root, text, _fn(SOFT))
    assert not step.ok
    assert "reads GAINS" in step.why_not and "bound at module scope to a value the run makes" in step.why_not


def test_a_maker_given_a_run_time_array_is_refused_with_its_type(tmp_path: Path) -> None:
    text = LOOP.replace("def make_shade(style: str):", "def make_shade(style):").replace(
        "make_shade(STYLE)", "make_shade(y)")
    root = _project(tmp_path, text)
    _c, _m, step = _step(root, text, _fn({"style": {"kind": "other", "type": "array"}}))
    assert not step.ok and "takes y as style, a run-time array (array)" in step.why_not


def test_side_effects_and_no_result_are_refused(tmp_path: Path) -> None:
    noisy = LOOP.replace("    return shade\n", "    SEEN.append(style)\n    return shade\n", 1)
    root = _project(tmp_path / "a", noisy)
    _c, _m, step = _step(root, noisy, _fn(SOFT))
    assert not step.ok and "changes SEEN with SEEN.append()" in step.why_not
    printing = LOOP.replace("    return shade\n", "    print(style)\n    return shade\n", 1)
    root = _project(tmp_path / "b", printing)
    _c, _m, step = _step(root, printing, _fn(SOFT))
    assert not step.ok and "print()" in step.why_not
    registers = LOOP.replace("    return shade\n", "    REGISTRY[style] = shade\n", 1) + "\nREGISTRY = {}\n"
    root = _project(tmp_path / "c", registers)
    _c, _m, step = _step(root, registers, _fn(SOFT))
    assert not step.ok and "returns nothing" in step.why_not


def test_a_maker_not_the_projects_own_and_an_unrecorded_argument_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "a", LOOP)
    _c, _m, step = _step(root, LOOP, _fn(SOFT, module="somelib.filters"))
    assert not step.ok and "not the project's own" in step.why_not
    text = LOOP.replace("make_shade(STYLE)", "make_shade(cfg.style)").replace("def run(mode, y):", "def run(cfg, y):")
    root = _project(tmp_path / "b", text)
    _c, _m, step = _step(root, text, _fn(SOFT))
    assert not step.ok and "neither a constant in the source nor a value the run recorded" in step.why_not
    _c, _m, step = _step(root, text, _fn({"style": {"kind": "str", "text": "'soft'"}, **SOFT}))
    assert step.ok, step.why_not  # the closure captured it: the run says what it was


def test_a_function_made_once_and_passed_at_every_call_is_no_fresh_argument(tmp_path: Path) -> None:
    text = LOOP.replace("    for _ in range(10):\n        kernel = shade_kernel(make_shade(STYLE))",
                        "    fn = make_shade(STYLE)\n    for _ in range(10):\n        kernel = shade_kernel(fn)")
    root = _project(tmp_path, text)
    ctx, made, step = _step(root, text, _fn(SOFT))
    assert not step.ok and "no argument of shade_kernel()" in step.why_not
    assert cache_factory(ctx, str(root / "app.py"), "shade_kernel", made).ok  # the factory's cache hits there


def test_the_hook_records_what_a_nested_function_captured() -> None:
    from warp_compile.probe.hook_kernels import encode

    def make(style: str, gain: float):
        def shade(x: float) -> float:
            return x * gain if style else x

        return shade

    got = encode(make("soft", 0.5))
    assert got["kind"] == "function" and ".<locals>.shade" in got["name"]
    assert got["cells"] == {"gain": {"kind": "float", "text": "0.5"}, "style": {"kind": "str", "text": "'soft'"}}
    assert "cells" not in encode(encode)  # a module-level function captures nothing


@pytest.mark.slow
def test_fix_writes_the_maker_cache_proven_on_the_per_call_clock(tmp_path: Path) -> None:
    """Real Warp CPU runs of tests/apps/fresh_maker: the diagnosis offers the maker's cache, `fix --write
    --unsafe-fixes` proves it on the steady clock with the same output and writes it; the array-reading maker of the
    same app is refused with its reason."""
    from warp_compile.probe.fix.engine import FixOptions, run_fix

    root = tmp_path / "app"
    shutil.copytree(APP, root)
    cmd = [sys.executable, "app.py"]
    options = FixOptions(wanted=["WC-1"], write=True, unsafe_fixes=True, compose=False, min_rounds=3, max_rounds=10)
    result, _ = run_fix(cmd, root, options)
    (c,) = [c for c in result.candidates if c.key == "WC-1"]
    assert c.clock == "steady_cpu" and c.behaviour is not None and c.behaviour.ok  # the per-call clock, on CPU time
    assert c.verdict == "IMPROVED", c.verdict_reason
    text = (root / "app.py").read_text()
    assert "@functools.lru_cache(maxsize=None)\ndef make_shade(" in text
    assert "@functools.lru_cache(maxsize=None)\ndef shade_kernel(" in text
    assert "@functools.lru_cache(maxsize=None)\ndef make_shade_from(" not in text


@pytest.mark.slow
def test_real_run_refuses_the_maker_that_reads_a_run_time_array_with_its_reason(tmp_path: Path) -> None:
    """tests/apps/fresh_maker with --gain-array: its maker reads GAINS, a module-level wp.array, so caching it would
    keep the first call's value; the finding stays manual and says so, from the run's own record."""
    from warp_compile.probe.diagnose import diagnose_command

    root = tmp_path / "app"
    shutil.copytree(APP, root)
    _report_, d = diagnose_command([sys.executable, "app.py", "--gain-array"], root, samples=1, timeout_s=600,
                                   rebuild_limit_s=0)
    (f,) = [f for f in d.findings if f.mechanism == "WC-1"]
    assert f.applicability == "manual" and not f.edits
    assert "make_shade_from() reads GAINS" in f.review and "a value the run makes" in f.review
    assert "a cache on shade_kernel() keys on that object and never hits" in f.review


def test_the_per_call_cpu_clock_spans_the_last_loads_end_to_the_apps_end_in_the_first_process_only() -> None:
    import json

    from warp_compile.probe.events import parse_lines

    def load(seq: int, pid: int, end: float, cpu: float) -> dict:
        return {"kind": "load", "seq": seq, "pid": pid, "t_ms": end, "module": f"m{seq}", "status": "compiled",
                "start_ms": end - 10.0, "end_ms": end, "hash": "ab", "device": "cpu", "proc_cpu_end_ms": cpu}

    first = [{"kind": "hello", "seq": 1, "pid": 7, "t_ms": 0.0}, load(2, 7, 50.0, 900.0)]
    end = [{"kind": "exit_work", "seq": 9, "pid": 7, "t_ms": 400.0, "wall_ms": 120.0, "cpu_ms": 30.0,
            "cpu_at_start_ms": 1025.5}]
    run = parse_lines([json.dumps(e) for e in first + end])
    assert run.steady_ms == pytest.approx(230.0) and run.steady_cpu_ms == pytest.approx(125.5)
    child = parse_lines([json.dumps(e) for e in [*first, load(3, 8, 60.0, 10.0), *end]])
    assert child.steady_cpu_ms is None  # the last load was another process's: its CPU clock is not the first's
    old = parse_lines([json.dumps(e) for e in first + [{**end[0], "cpu_at_start_ms": None}]])
    assert old.steady_cpu_ms is None  # an older hook: the wall clock alone


def test_an_undecided_per_call_fix_is_never_written_through_a_compile_judged_combination() -> None:
    """CS-10 proven on compile CPU, WC-1 undecided on its per-call clock: a combination of the two is judged on the
    compile clock, where WC-1 saves nothing, so however much it reads there it cannot earn WC-1's part."""
    from warp_compile.probe.fix.policy import to_write
    from warp_compile.probe.models.fix import CandidateFix, FixResult

    a = Edit(file="main.py", start_line=1, end_line=0, old="", new="import warp as wp\n")
    b = Edit(file="lib.py", start_line=1, end_line=0, old="", new="@functools.lru_cache(maxsize=None)\n")
    cs10 = CandidateFix(key="CS-10", mechanisms=["CS-10"], status="measured", verdict="IMPROVED", improved=True,
                        clock="compile_cpu", saving_ms=200.0, edits=[a], applicability="automatic")
    wc1 = CandidateFix(key="WC-1", mechanisms=["WC-1"], status="measured", verdict="INCONCLUSIVE", improved=False,
                       clock="steady_cpu", saving_ms=9.0, edits=[b], applicability="review")
    combo = CandidateFix(key="CS-10+WC-1", mechanisms=["CS-10", "WC-1"], status="measured", verdict="IMPROVED",
                         improved=True, clock="compile_cpu", saving_ms=260.0, edits=[a, b], applicability="review")
    result = FixResult(candidates=[cs10, wc1], combination=combo)
    assert to_write(result, unsafe_fixes=True) == (["CS-10"], [a])
    wc1.improved, wc1.verdict = True, "IMPROVED"  # proven on its own clock: the combination may carry it
    assert to_write(result, unsafe_fixes=True)[0] == ["CS-10", "WC-1"]
