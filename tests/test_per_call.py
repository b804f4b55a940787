"""WC-1, kernels re-created per call: the pass clock, the rule, its edit, the hook's records and the real apps.

The unit tests build the hook's records by hand (every kernel creation with its line, caller, time and the time it
took to make) against the two apps in tests/apps/per_call: `project` asks two factories for its kernels at every
step, `once` makes them at import. The slow test measures the real `project` app; the heavy one the `once` app.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import ROOT
from warp_compile.probe import knowledge
from warp_compile.probe.events import parse_lines
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.fix.transform.cache_factory import cache_factory
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import KernelCreation, Launch, Report, Site
from warp_compile.probe.per_call import per_call
from warp_compile.probe.rules import per_call as rule
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

APPS = ROOT / "tests" / "apps" / "per_call"
PROJECT, ONCE = APPS / "project", APPS / "once"
ARGS_INT = {"damping": {"kind": "float", "text": "0.995"}}
ARGS_BOUNCE = {"floor": {"kind": "float", "text": "0.0"}, "restitution": {"kind": "float", "text": "0.5"}}


def _made(app: Path, key: str, line: int, function: str, at: float, ms: float | None, args: dict,
          caller_line: int = 43, at_import: bool = False, init_ms: float | None = None) -> KernelCreation:
    return KernelCreation(
        key=key, module=key.split("__locals__")[-1], file=str(app / "app.py"), line=line, function=function,
        args=args, at_import=at_import, caller=Site(file=str(app / "app.py"), line=caller_line, function="step"),
        start_ms=at, made_ms=ms, init_ms=init_ms if init_ms is not None else (ms / 3 if ms is not None else None),
    )


def _report(app: Path, made: list[KernelCreation], first_launch: float = 100.0) -> Report:
    r = Report(command=[sys.executable, "app.py"], cwd=str(app), samples=1)
    r.launches = [Launch(kernel="integrate", module="integrate", first_ms=first_launch)]
    r.kernel_creations = made
    r.hook.mode = "wrap"
    return r


def _per_step(app: Path, steps: int, pass_ms: float, made_ms: float, spread: tuple[float, ...] = (0.0,)
              ) -> list[KernelCreation]:
    """What `project` records: make_integrate and make_bounce each make a kernel at every step (passes of pass_ms
    plus each of `spread` in turn)."""
    out = [_made(app, "make_integrate__locals__integrate", 16, "make_integrate", 90.0, made_ms, ARGS_INT)]
    t = 100.0
    for i in range(steps):
        t += pass_ms + spread[i % len(spread)]
        out.append(_made(app, "make_integrate__locals__integrate", 16, "make_integrate", t, made_ms, ARGS_INT))
        out.append(_made(app, "make_bounce__locals__bounce", 30, "make_bounce", t + made_ms, made_ms, ARGS_BOUNCE, 44))
    return out


def _ctx(report: Report, root: Path) -> RuleContext:
    ctx = RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(report, rel=ctx.rel)
    return ctx


# ---------------------------------------------------------------------------------------------- the pass clock


def test_passes_are_cut_at_the_place_that_makes_fewest_and_sum_what_was_made_in_them() -> None:
    pc = per_call(_report(PROJECT, _per_step(PROJECT, 20, pass_ms=4.0, made_ms=1.5)))
    assert [(p.function, len(p.made)) for p in pc.places] == [("make_integrate", 20), ("make_bounce", 20)]
    assert pc.anchor is not None and pc.anchor.function == "make_integrate"  # ties go to the earliest
    assert pc.passes == 19 and pc.pass_ms == pytest.approx(4.0)
    assert pc.made_ms == pytest.approx(3.0)  # both kernels of a pass
    assert pc.share == pytest.approx(0.75)
    assert pc.places[0].again == 19  # the same arguments every time: what a cache returns


def test_a_pass_that_built_a_module_is_a_first_call_and_is_left_out() -> None:
    from tests.helpers import synth_build

    r = _report(PROJECT, _per_step(PROJECT, 10, pass_ms=4.0, made_ms=1.5))
    r.builds = [synth_build(1, "bounce", "a", device="cpu", block_dim=1, status="compiled", ms=900.0,
                            start_ms=104.5, end_ms=1004.0)]
    for c in r.kernel_creations[3:]:
        c.start_ms += 900.0  # the first pass waited for the build
    pc = per_call(r)
    assert pc.building == 1 and pc.passes == 8 and pc.pass_ms == pytest.approx(4.0)
    assert pc.share == pytest.approx(0.75)  # the 900 ms of compile is no part of the passes' time


def test_the_first_creation_before_the_first_launch_is_not_a_re_creation() -> None:
    made = _per_step(PROJECT, 5, pass_ms=4.0, made_ms=1.0)
    pc = per_call(_report(PROJECT, made, first_launch=100.0))
    assert pc.made == 10  # the integrate made at 90 ms, before the first launch, is left out


def test_the_old_hooks_record_without_the_decorators_time_falls_back_to_kernel_init() -> None:
    made = _per_step(PROJECT, 6, pass_ms=4.0, made_ms=1.2)
    for c in made:
        c.made_ms = None
    pc = per_call(_report(PROJECT, made))
    assert pc.made_ms == pytest.approx(0.8)  # 2 x init_ms (made_ms / 3 in these records)


# ---------------------------------------------------------------------------------------------- the rule


def test_fires_on_the_per_step_factories_with_their_lines_callers_and_the_cache_edit(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    (f,) = rule.evaluate(_ctx(_report(root, _per_step(root, 20, pass_ms=4.0, made_ms=1.5)), root)).findings
    assert f.mechanism == "WC-1" and f.saving_clock == "steady"
    assert [(loc.file, loc.line) for loc in f.locations] == [("app.py", 16), ("app.py", 30)]
    assert "step() at app.py:43" in f.locations[0].note and "20 kernel objects" in f.locations[0].note
    assert f.estimated_saving_ms == pytest.approx(19 * 3.0, abs=0.1)
    assert f.severity == "high" and f.applicability == "review"
    assert apply_edits(root, f.edits) == ["app.py"]
    text = (root / "app.py").read_text()
    tree = ast.parse(text)
    cached = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
              and any("lru_cache" in ast.unparse(d) for d in n.decorator_list)}
    assert cached == {"make_integrate", "make_bounce"}
    assert text.count("import functools") == 1


def test_the_app_that_makes_its_kernels_once_is_not_found() -> None:
    made = [_made(ONCE, "make_integrate__locals__integrate", 16, "make_integrate", 50.0, 1.5, ARGS_INT,
                  caller_line=40, at_import=True),
            _made(ONCE, "make_bounce__locals__bounce", 30, "make_bounce", 52.0, 1.5, ARGS_BOUNCE,
                  caller_line=41, at_import=True)]
    res = rule.evaluate(_ctx(_report(ONCE, made), ONCE))
    assert res.findings == [] and "no place made kernel objects" in res.ruled_out[0].signal


def test_a_construction_cost_small_against_the_pass_is_ruled_out_with_its_figures() -> None:
    res = rule.evaluate(_ctx(_report(PROJECT, _per_step(PROJECT, 20, pass_ms=40.0, made_ms=0.5)), PROJECT))
    assert res.findings == []
    assert "1.0 ms of a 40 ms pass (2.5%" in res.ruled_out[0].signal and "under 5%" in res.ruled_out[0].signal


def test_a_construction_cost_inside_the_passes_noise_is_ruled_out() -> None:
    # passes of 5 to 25 ms: the median pass (15 ms) is known to about ±2.3 ms; 1.8 ms of making (12%) is inside that
    made = _per_step(PROJECT, 20, pass_ms=15.0, made_ms=0.9, spread=(-10.0, -5.0, 0.0, 5.0, 10.0))
    res = rule.evaluate(_ctx(_report(PROJECT, made), PROJECT))
    assert res.findings == [] and "within the noise band" in res.ruled_out[0].signal
    # the same making cost in steady passes is found
    steady = _per_step(PROJECT, 20, pass_ms=15.0, made_ms=0.9)
    assert rule.evaluate(_ctx(_report(PROJECT, steady), PROJECT)).findings


def test_a_method_whose_kernel_reads_nothing_of_it_is_moved_to_module_scope(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent('''\
        import warp as wp


        class Stepper:
            def step(self, x):
                @wp.kernel
                def relax(x: wp.array(dtype=float)):
                    i = wp.tid()
                    x[i] = x[i] * 0.5

                wp.launch(relax, dim=x.shape[0], inputs=[x])
        '''))
    made = [KernelCreation(key="Stepper.step__locals__relax", module="app", file=str(app), line=6,
                           function="Stepper.step", args={"self": {"kind": "other", "type": "Stepper"}},
                           caller=Site(file=str(app), line=20, function="main"), start_ms=100.0 + 3.0 * i,
                           made_ms=2.0) for i in range(1, 12)]
    (f,) = rule.evaluate(_ctx(_report(tmp_path, made), tmp_path)).findings
    assert f.edits and "define relax once at module scope" in f.fix
    assert apply_edits(tmp_path, f.edits) == ["app.py"]
    text = app.read_text()
    assert ast.parse(text).body[1].name == "relax"  # type: ignore[attr-defined]


def test_the_cache_is_refused_where_it_would_not_hold_one_kernel_per_place(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    ctx = _ctx(_report(root, []), root)
    varying = [_made(root, "k", 16, "make_integrate", 100.0 + i, 1.0, {"damping": {"kind": "float", "text": str(i)}})
               for i in range(4)]
    assert "different argument lists" in cache_factory(ctx, str(root / "app.py"), "make_integrate", varying).why_not
    objects = [_made(root, "k", 16, "make_integrate", 100.0 + i, 1.0, {"damping": {"kind": "other", "type": "Box"}})
               for i in range(4)]
    assert "by identity" in cache_factory(ctx, str(root / "app.py"), "make_integrate", objects).why_not
    assert "module-level factory" in cache_factory(ctx, str(root / "app.py"), "Stepper.step", objects).why_not


def test_a_librarys_re_creations_are_its_maintainers_with_an_upstream_report(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from warp_compile.probe.rules import helpers

    monkeypatch.setattr(helpers, "dependency_of", lambda ctx, file: "mujoco-warp")
    (f,) = rule.evaluate(_ctx(_report(PROJECT, _per_step(PROJECT, 20, pass_ms=4.0, made_ms=1.5)), PROJECT)).findings
    assert f.edits == [] and f.applicability == "manual" and f.upstream is not None
    assert f.upstream.distribution == "mujoco-warp" and "cache the factories" in f.upstream.change
    assert "release of mujoco-warp" in f.fix


# ---------------------------------------------------------------------------------------------- records and ids


def test_the_decorators_time_pairs_with_its_creation_and_the_steady_clock_ends_at_the_apps_end() -> None:
    ev = [
        {"kind": "hook_installed", "seq": 1, "pid": 7, "t_ms": 0.0},
        {"kind": "load", "seq": 2, "pid": 7, "t_ms": 50.0, "module": "m", "status": "compiled", "end_ms": 50.0,
         "start_ms": 10.0, "hash": "ab", "device": "cpu"},
        {"kind": "kernel_created", "seq": 3, "pid": 7, "t_ms": 60.0, "key": "make__locals__k", "file": "/a.py",
         "line": 3, "function": "make", "init_ms": 0.2},
        {"kind": "kernel_made", "seq": 4, "pid": 7, "t_ms": 61.0, "of_seq": 3, "ms": 1.1},
        {"kind": "exit", "seq": 5, "pid": 7, "t_ms": 300.0},
        {"kind": "exit_work", "seq": 6, "pid": 7, "t_ms": 400.0, "wall_ms": 120.0},
    ]
    run = parse_lines([json.dumps(e) for e in ev])
    (c,) = run.kernel_creations
    assert (c.init_ms, c.made_ms, c.cost_ms) == (0.2, 1.1, 1.1)
    assert run.steady_ms == pytest.approx(230.0)  # app end (400 - 120) minus the last load's end (50)


def test_wc_ids_are_read_listed_and_found() -> None:
    assert knowledge.normalize_id("wc1") == "WC-1" and knowledge.normalize_id("3") == "CS-3"
    m = knowledge.get("WC-1")
    assert m.title == "Kernels re-created per call" and m.id == knowledge.list_mechanisms()[-1].id
    assert knowledge.search("kernel factory called every step")[0][0].id == "WC-1"


# ---------------------------------------------------------------------------------------------- the real apps


def _diagnose(app: Path):  # type: ignore[no-untyped-def]
    from warp_compile.probe.diagnose import diagnose_command

    return diagnose_command([sys.executable, "app.py"], app, samples=1, timeout_s=600, rebuild_limit_s=0)


@pytest.mark.slow
def test_real_app_re_creating_per_step_is_found_on_its_lines() -> None:
    _report_, d = _diagnose(PROJECT)
    (f,) = [f for f in d.findings if f.mechanism == "WC-1"]
    assert {(loc.file, loc.line) for loc in f.locations} == {("app.py", 16), ("app.py", 30)}
    assert all("called from step()" in loc.note for loc in f.locations)
    assert f.edits and f.saving_clock == "steady" and f.excerpt


@pytest.mark.heavy
def test_real_app_making_its_kernels_once_is_not_found() -> None:
    _report_, d = _diagnose(ONCE)
    assert "WC-1" not in {f.mechanism for f in d.findings}


def test_the_cache_is_refused_on_a_function_that_is_no_factory(tmp_path: Path) -> None:
    """warp-1108's shape: main() reaches a library's kernel maker (wp.map) at every pass; caching main() would hand
    back nothing and skip the program. A function that launches what it made is refused too; a real factory not."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text(textwrap.dedent('''\
        import warp as wp

        @wp.func
        def soft(x: float):
            return x / (1.0 + wp.abs(x))

        def main():
            a = wp.zeros(8, dtype=float)
            for _ in range(10):
                a = wp.map(soft, a)
            print(a.numpy().sum())

        def make_and_run(n: int, a):
            @wp.kernel
            def k(x: wp.array(dtype=float)):
                x[wp.tid()] = float(n)
            wp.launch(k, dim=8, inputs=[a])
            return k

        def make(n: int):
            @wp.kernel
            def k(x: wp.array(dtype=float)):
                x[wp.tid()] = float(n)
            return k
        '''))
    ctx = _ctx(_report(root, []), root)
    app = str(root / "app.py")
    per_pass = [_made(root, "map_kernel", 10, "main", 100.0 + i, 1.0, {}) for i in range(4)]
    assert "returns nothing" in cache_factory(ctx, app, "main", per_pass).why_not
    n = {"n": {"kind": "int", "text": "3"}}
    launching = [_made(root, "k", 14, "make_and_run", 100.0 + i, 1.0, n) for i in range(4)]
    assert "launches kernels itself (line 17)" in cache_factory(ctx, app, "make_and_run", launching).why_not
    made = [_made(root, "k", 21, "make", 100.0 + i, 1.0, n) for i in range(4)]
    step = cache_factory(ctx, app, "make", made)
    assert not step.why_not and any("lru_cache" in e.new for e in step.edits)


# ---------------------------------------------------------------------------------------------- made inside Warp


def _via_per_step(app: Path, steps: int, warp_file: str) -> list[KernelCreation]:
    """warp-1108's record: the app's soften() calls wp.map at every pass, and map() makes the kernel at its line."""
    from warp_compile.probe.models import WarpSite

    out = []
    for i in range(steps + 1):
        out.append(KernelCreation(key="map_kernel", module="map_kernel", file=str(app / "app.py"), line=18,
                                  function="soften", caller=Site(file=str(app / "app.py"), line=30, function="main"),
                                  via=WarpSite(file=warp_file, line=1058, function="map"),
                                  start_ms=100.0 + 5.0 * i + 1.0, made_ms=2.0, init_ms=1.5))
    return out


def test_kernels_a_warp_function_makes_are_placed_at_its_line_and_called_from_the_apps(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from warp_compile.probe.rules import helpers

    warp_file = "/venv/lib/python3.11/site-packages/warp/_src/utils.py"
    monkeypatch.setattr(helpers, "dependency_of", lambda ctx, file: "warp-lang" if file == warp_file else None)
    pc = per_call(_report(PROJECT, _via_per_step(PROJECT, 20, warp_file)))
    (p,) = pc.places
    assert (p.file, p.line, p.function, p.via) == (warp_file, 1058, "map", True)
    assert p.callers[0] == (str(PROJECT / "app.py"), 18, "soften")  # the app's line that called wp.map
    (f,) = rule.evaluate(_ctx(_report(PROJECT, _via_per_step(PROJECT, 20, warp_file)), PROJECT)).findings
    assert f.edits == [] and f.upstream is not None and f.upstream.distribution == "warp-lang"
    assert [(loc.file, loc.line) for loc in f.upstream.places] == [("warp/_src/utils.py", 1058)]
    (loc,) = f.locations  # the user is pointed at their own line, never into the installed warp
    assert (loc.file, loc.line) == ("app.py", 18) and "Warp's map()" in loc.note


def test_a_kernel_the_app_makes_through_wp_kernel_is_its_own_not_warps(tmp_path: Path) -> None:
    """The hook's `_made_via` on real frames: the decorator's own file is the app making the kernel; a Warp function
    between the app and the Kernel (simulated by a module under Warp's directory) made it for the app."""
    import importlib.util

    warp_dir = tmp_path / "warp"
    warp_dir.mkdir()
    (warp_dir / "context.py").write_text(
        "import sys\nclass Kernel:\n    def __init__(self, seen):\n        seen.append(sys._getframe(1))\n"
        "def kernel(seen):\n    return Kernel(seen)\n")
    (warp_dir / "utils.py").write_text("from warp.context import kernel\ndef map(seen):\n    return kernel(seen)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        for name in ("warp.context", "warp.utils"):
            spec = importlib.util.spec_from_file_location(name, warp_dir / (name.split(".")[1] + ".py"))
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        hk = _hook_kernels()
        seen: list = []
        made = sys.modules["warp.context"].kernel(seen)  # the app makes a kernel through the decorator
        assert hk._made_via(seen[-1], str(warp_dir), made) is None
        made = sys.modules["warp.utils"].map(seen)  # a Warp function makes it for the app
        via = hk._made_via(seen[-1], str(warp_dir), made)
        assert via is not None and via["file"] == str(warp_dir / "utils.py") and via["line"] == 3
        assert via["function"] == "map"
        assert hk._made_via(seen[-1], "", made) is None  # Warp's directory unknown: nothing guessed
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("warp.context", "warp.utils"):
            sys.modules.pop(name, None)


def _hook_kernels():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("_wc_hook_kernels", ROOT / "probe" / "hook_kernels.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_real_wp_map_on_warp_1_10_1_is_warps_with_its_line(tmp_path: Path) -> None:
    """warp-lang 1.10.1's wp.map makes its kernel again at every call (NVIDIA/warp #1108): the hook records the
    line in warp's map() that made it, and the app's line that called wp.map."""
    from tests.helpers import warp110_python
    from warp_compile.probe.measure import measure

    py = warp110_python()
    if py is None:
        pytest.skip("no warp-lang 1.10.1 interpreter: run scripts/venv-warp110.sh")
    (tmp_path / "app.py").write_text(textwrap.dedent("""\
        import warp as wp

        wp.config.quiet = True

        @wp.func
        def halve(x: float):
            return x * 0.5

        a = wp.ones(8, dtype=float, device="cpu")
        for _ in range(6):
            a = wp.map(halve, a)
        print(float(a.numpy()[0]))
        """))
    r = measure([py, "app.py"], tmp_path, samples=1)
    made = [c for c in r.kernel_creations if c.made_by == "kernel" and c.key.startswith("map_kernel")]
    assert len(made) >= 5, r.kernel_creations
    assert all(c.via is not None and c.via.function == "map" and c.via.file.endswith("utils.py") for c in made)
    assert {(Path(c.file).name, c.line) for c in made} == {("app.py", 11)}
