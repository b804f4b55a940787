"""CS-3 (options that never arrive) and CS-4 (merging modules that set their own options): fixes from an audit.

1. A write to `wp.get_module(name).options[...]` (or `.options.update`) in a helper that runs after the module's
   first load never reaches the build: Warp re-hashes only when something marks the module modified. "After the
   load" comes from the measurement (the first build's trigger stack) and the scan (who calls the helper, from where).
2. CS-4's named-module alternative must carry the options the small modules set for themselves; and CS-3's "holds
   no kernels" finding, for files whose kernels join a named module, must point at the named module, not at the top
   of the file (where the call already is).

Fast tests pair the real scanner (on sources written to tmp_path) with synthetic Reports; slow ones compile with
Warp, on 1.19 and, where the fix relies on Warp behaviour, on 1.10.1 too.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import interpreters as _interpreters
from tests.helpers import synth_build
from warp_compile.probe.diagnose import diagnose_command
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.measure import measure
from warp_compile.probe.models import Build, KernelInfo, Launch, ModuleCreation, Report, Site, Trigger
from warp_compile.probe.models.scan import ModuleOptionsFact, ScanFacts
from warp_compile.probe.rules import late_options, module_granularity
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------- projects

TUNED = {
    "__init__.py": "",
    "conduction.py": """\
        import warp as wp


        @wp.kernel
        def smooth(t: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = 0.5 * (t[i] + wp.sqrt(wp.abs(t[i])))
        """,
    "tuning.py": """\
        import warp as wp


        def enable_fast_path():
            wp.get_module("heat.conduction").options["fast_math"] = True
        """,
    "__main__.py": """\
        import warp as wp

        from . import tuning
        from .conduction import smooth


        def main():
            t = wp.full(32, 2.0, dtype=float, device="cpu")
            out = wp.zeros_like(t)
            wp.launch(smooth, dim=32, inputs=[t, out], device="cpu")
            tuning.enable_fast_path()
            for _ in range(3):
                wp.launch(smooth, dim=32, inputs=[out, t], device="cpu")
            print(float(t.numpy()[0]))


        main()
        """,
}

SPLIT = {
    "__init__.py": "",
    "runoff.py": """\
        import warp as wp

        wp.set_module_options({"enable_backward": False})


        @wp.kernel
        def runoff(a: wp.array(dtype=float), b: wp.array(dtype=float)):
            i = wp.tid()
            b[i] = wp.max(a[i] - 0.2, 0.0) * 0.7
        """,
    "routing.py": """\
        import warp as wp

        wp.set_module_options({"enable_backward": False})


        @wp.kernel
        def route(a: wp.array(dtype=float), b: wp.array(dtype=float)):
            i = wp.tid()
            b[i] = 0.3 * a[i] + 0.7 * b[i]
        """,
    "report.py": """\
        import warp as wp

        wp.set_module_options({"enable_backward": False})


        @wp.kernel
        def peak(a: wp.array(dtype=float), s: wp.array(dtype=float)):
            i = wp.tid()
            wp.atomic_max(s, 0, a[i])
        """,
    "__main__.py": """\
        import warp as wp

        from . import report, routing, runoff


        def main():
            a = wp.full(16, 1.5, dtype=float, device="cpu")
            b = wp.zeros_like(a)
            s = wp.zeros(1, dtype=float, device="cpu")
            wp.launch(runoff.runoff, dim=16, inputs=[a, b], device="cpu")
            wp.launch(routing.route, dim=16, inputs=[b, a], device="cpu")
            wp.launch(report.peak, dim=16, inputs=[a, s], device="cpu")
            print(float(s.numpy()[0]))


        main()
        """,
}


def write(root: Path, pkg: str, files: dict[str, str]) -> Path:
    (root / pkg).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / pkg / name).write_text(textwrap.dedent(text))
    return root


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(text).splitlines(), start=1) if needle in ln)


def named_variant(files: dict[str, str], module: str, *, options_on_named: bool) -> dict[str, str]:
    """The CS-4 alternative applied: every kernel joins `module`; option calls stay or move onto the named one."""
    out = {}
    for name, text in files.items():
        text = text.replace("@wp.kernel\n", f'@wp.kernel(module="{module}")\n')
        if options_on_named:
            text = text.replace("wp.set_module_options(", f'wp.get_module("{module}").options.update(')
        out[name] = text
    return out


# ---------------------------------------------------------------------------------------------- synthetic reports


def bld(
    seq: int,
    module: str,
    root: Path,
    kernels: list[tuple[str, str, int]],
    trigger: tuple[str, int, str],
    *,
    stack: list[tuple[str, int, str]] | None = None,
    options: dict[str, str] | None = None,
    h: str = "a",
    ms: float = 100.0,
) -> Build:
    t = Trigger(file=str(root / trigger[0]), line=trigger[1], function=trigger[2], api="launch")
    t.stack = [Site(file=str(root / f), line=ln, function=fn) for f, ln, fn in (stack or [trigger])]
    return synth_build(
        seq,
        module,
        h,
        device="cpu",
        block_dim=1,
        status="compiled",
        ms=ms,
        kernels=[KernelInfo(key=k, hash="k", file=str(root / f), line=ln) for k, f, ln in kernels],
        options={"fast_math": "False", "enable_backward": "True", "block_dim": "1", **(options or {})},
        trigger=t,
    )


def report(root: Path, builds: list[Build], **kw) -> Report:  # type: ignore[no-untyped-def]
    r = Report(command=["python", "-m", "x"], cwd=str(root), samples=1, builds=builds, **kw)
    r.modules = len({b.module for b in builds})
    r.hook.mode = "wrap"
    return r


def ctx_of(r: Report, facts: ScanFacts, root: Path) -> RuleContext:
    ctx = RuleContext(report=r, scan=facts, root=root)
    ctx.changes = explain_changes(r, rel=ctx.rel)
    return ctx


def _tuned_report(root: Path, *, fast_math: str = "False", call_line: int | None = None) -> Report:
    main = textwrap.dedent(TUNED["__main__.py"])
    first = line_of(main, "wp.launch(smooth, dim=32, inputs=[t, out]")
    module_line = len(main.splitlines())  # `main()` at file level
    b = bld(
        1,
        "heat.conduction",
        root,
        [("smooth", "heat/conduction.py", 4)],
        ("heat/__main__.py", first, "main"),
        stack=[("heat/__main__.py", first, "main"), ("heat/__main__.py", module_line, "<module>")],
        options={"fast_math": fast_math},
    )
    later = line_of(main, "wp.launch(smooth, dim=32, inputs=[out, t]")
    launches = [
        Launch(kernel="smooth", module="heat.conduction", site=Site(file=str(root / "heat/__main__.py"), line=ln,
                                                                       function="main"), count=n)
        for ln, n in ((first, 1), (later, 3))
    ]
    return report(root, [b], launches=launches)


def _cs3(findings, word: str):  # type: ignore[no-untyped-def]
    return [f for f in findings if f.mechanism == "CS-3" and word in f.title]


# ---------------------------------------------------------------------------------------------- scan


def test_scan_records_who_calls_an_option_write_and_resolves_a_string_module(tmp_path: Path) -> None:
    files = dict(TUNED)
    files["tuning.py"] = """\
        import sys
        import warp as wp


        def enable_fast_path():
            wp.get_module("heat.conduction").options["fast_math"] = True


        def set_many():
            wp.get_module("heat.conduction").options.update({"fast_math": True, "mode": "debug"})


        def by_name():
            wp.set_module_options({"fast_math": True}, module="heat.conduction")


        def by_object():
            wp.set_module_options({"fast_math": True}, module=sys.modules["heat.conduction"])


        def bare():
            wp.set_module_options({"fast_math": True})


        def configure():
            enable_fast_path()
        """
    write(tmp_path, "heat", files)
    facts = scan(tmp_path)
    by_fn = {m.function: m for m in facts.module_options}
    direct = by_fn["enable_fast_path"]
    assert direct.api == "get_module_options" and direct.target == "heat.conduction" and direct.target_has_kernels
    main_call = line_of(TUNED["__main__.py"], "tuning.enable_fast_path()")
    got = {(c.file, c.line, c.function, c.depth) for c in direct.callers}
    assert ("heat/__main__.py", main_call, "main", 1) in got  # `from . import tuning; tuning.enable_fast_path()`
    assert ("heat/tuning.py", line_of(files["tuning.py"], "    enable_fast_path()"), "configure", 1) in got
    assert any(c.function == "<module>" and c.depth == 2 for c in direct.callers)  # main() at file level
    assert by_fn["set_many"].options == {"fast_math": "True", "mode": "'debug'"} and by_fn["set_many"].callers == []
    # module="name": Warp looks the module up by that name (1.19); the target is the name, resolved
    named = by_fn["by_name"]
    assert (named.target, named.target_resolved, named.target_has_kernels) == ("heat.conduction", True, True)
    assert by_fn["by_object"].target == "heat.conduction"
    assert (by_fn["bare"].target, by_fn["bare"].target_has_kernels) == ("heat.tuning", False)
    assert all(m.callers == [] for m in facts.module_options if m.scope == "module")


# ---------------------------------------------------------------------------------------------- CS-3: never arrives


def test_cs3_write_in_a_helper_called_after_the_first_load_never_arrives(tmp_path: Path) -> None:
    write(tmp_path, "heat", TUNED)
    facts = scan(tmp_path)
    res = late_options.evaluate(ctx_of(_tuned_report(tmp_path), facts, tmp_path))
    (f,) = _cs3(res.findings, "never arrive")
    call = line_of(TUNED["__main__.py"], "tuning.enable_fast_path()")
    first = line_of(TUNED["__main__.py"], "inputs=[t, out]")
    locs = [(loc.file, loc.line) for loc in f.locations]
    assert locs[0] == ("heat/tuning.py", line_of(TUNED["tuning.py"], '.options["fast_math"]'))
    assert locs[1:] == [("heat/__main__.py", call)]  # the write, then the call that runs it late
    assert f"first load at heat/__main__.py:{first}" in f.fix
    assert f.modules == ["heat.conduction"] and f.estimated_saving_ms is None and f.confidence == "high"
    assert "fast_math" in f.title
    # the fix: before the first load (move the call, or set it where the kernels are), or a call that marks it
    assert f"call enable_fast_path() before heat/__main__.py:{first}" in f.fix
    assert '`wp.set_module_options({"fast_math": True})` at the top of heat/conduction.py' in f.fix
    assert 'module=sys.modules["heat.conduction"]' in f.fix and "1.10.1" in f.fix
    facts_text = " ".join(e.fact for e in f.evidence)
    assert "fast_math=False" in facts_text and "3 launch(es)" in facts_text


def test_cs3_write_called_before_the_first_load_or_never_matched_is_silent(tmp_path: Path) -> None:
    write(tmp_path, "heat", TUNED)
    facts = scan(tmp_path)
    # the write arrived: the build carries it
    arrived = late_options.evaluate(ctx_of(_tuned_report(tmp_path, fast_math="True"), facts, tmp_path))
    assert _cs3(arrived.findings, "never arrive") == []
    # the helper is called before the line that loaded the module: the write ran first, so it cannot be "late"
    early = facts.model_copy(deep=True)
    (mo,) = early.module_options
    first = line_of(TUNED["__main__.py"], "inputs=[t, out]")
    for c in mo.callers:
        if c.function == "main":
            c.line = first - 1
    assert _cs3(late_options.evaluate(ctx_of(_tuned_report(tmp_path), early, tmp_path)).findings, "never") == []
    # nobody is seen calling the helper: no order against the load, no claim
    unknown = facts.model_copy(deep=True)
    unknown.module_options[0].callers = []
    res = late_options.evaluate(ctx_of(_tuned_report(tmp_path), unknown, tmp_path))
    assert res.findings == [] and res.ruled_out[0].mechanism == "CS-3"


def test_cs3_same_body_write_after_a_launch_still_reported() -> None:
    """The earlier, scan-only order (a write after a launch in the same function) keeps firing."""
    root = Path("/proj")
    b = bld(1, "solver_core", root, [("relax", "app/__main__.py", 5)], ("app/__main__.py", 14, "main"),
            options={"mode": "release"})
    fact = ModuleOptionsFact(file="app/__main__.py", line=15, function="main", scope="function",
                             api="get_module_options", options={"mode": "'debug'"}, target="solver_core",
                             before_launch_in_file=False, target_has_kernels=True)
    res = late_options.evaluate(ctx_of(report(root, [b]), ScanFacts(module_options=[fact]), root))
    (f,) = res.findings
    assert "never arrive" in f.title and f.locations[0].line == 15
    assert 'wp.get_module("solver_core").options.update({"mode": "debug"})' in f.fix
    assert 'module="solver_core"' in f.fix and "mark_modified()" in f.fix  # a named module: no sys.modules form


# ---------------------------------------------------------------------------------------------- CS-3: no kernels


def test_cs3_bare_call_in_a_file_whose_kernels_join_a_named_module(tmp_path: Path) -> None:
    files = named_variant(SPLIT, "hyd.kernels", options_on_named=False)
    write(tmp_path, "hyd", files)
    facts = scan(tmp_path)
    b = bld(1, "hyd.kernels", tmp_path, [("runoff", "hyd/runoff.py", 6), ("route", "hyd/routing.py", 6),
                                          ("peak", "hyd/report.py", 6)], ("hyd/__main__.py", 10, "main"))
    res = late_options.evaluate(ctx_of(report(tmp_path, [b]), facts, tmp_path))
    found = _cs3(res.findings, "holds no kernels")
    assert sorted(f.locations[0].file for f in found) == ["hyd/report.py", "hyd/routing.py", "hyd/runoff.py"]
    f = next(x for x in found if x.locations[0].file == "hyd/report.py")
    assert f.modules == ["hyd.kernels"]
    assert "at the top of the Python file that defines the kernels" not in f.fix
    assert 'Replace the call at hyd/report.py:3 with `wp.get_module("hyd.kernels").options.update(' in f.fix
    assert '{"enable_backward": False})`' in f.fix and 'module="hyd.kernels"' in f.fix
    assert "hyd/routing.py:3" in f.fix and "hyd/runoff.py:3" in f.fix  # the other files need the same change
    assert any("ran with enable_backward=True" in e.fact for e in f.evidence)  # measured: it never arrived


def test_cs3_bare_call_beside_plain_kernels_keeps_the_file_advice(tmp_path: Path) -> None:
    """A settings file next to kernels that live in their own file's module: the old advice still holds."""
    files = {
        "__init__.py": "",
        "kernels.py": "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n",
        "settings.py": 'import warp as wp\n\nfrom . import kernels\n\nwp.set_module_options({"fast_math": True})\n',
    }
    write(tmp_path, "app", files)
    facts = scan(tmp_path)
    b = bld(1, "app.kernels", tmp_path, [("k", "app/kernels.py", 4)], ("app/__main__.py", 5, "main"))
    (f,) = late_options.evaluate(ctx_of(report(tmp_path, [b]), facts, tmp_path)).findings
    assert "holds no kernels" in f.title and f.modules == ["app.kernels"]
    assert "at the top of the Python file that defines the kernels" in f.fix
    assert 'wp.get_module("app.kernels").options.update({"fast_math": True})' in f.fix
    assert "Replace the call" not in f.fix



UNIQUE_FACTORIES = """\
import warp as wp

wp.set_module_options({"enable_backward": False})


def make_scale(factor: float):
    @wp.kernel(module="unique", enable_backward=False)
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * factor

    return scale


def make_shift(offset: float):
    @wp.kernel(module="unique", OPTION)
    def shift(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] + offset

    return shift
"""


@pytest.mark.parametrize(("option", "reported"), [
    ("enable_backward=False", False),  # every unique kernel already has it: the call is dead, nothing is missing
    ('module_options={"enable_backward": False}', False),
    ("enable_backward=True", True),  # one kernel says otherwise: the call's intent does not reach it
    ("max_unroll=4", True),  # one kernel has no such option on its decorator
])
def test_cs3_a_dead_call_whose_options_every_unique_decorator_has_is_not_reported(tmp_path: Path, option: str,
                                                                                   reported: bool) -> None:
    """mujoco_warp 3.8 sets enable_backward=False at file level in files whose kernels are all module="unique" and
    carry enable_backward=False themselves: telling it to put the option on the decorators repeats what is there."""
    files = {"__init__.py": "", "factories.py": UNIQUE_FACTORIES.replace("OPTION", option),
             "__main__.py": "from .factories import make_scale\n\nmake_scale(2.0)\n"}
    write(tmp_path, "app", files)
    facts = scan(tmp_path)
    b = bld(1, "make_scale__locals__scale_1a2b3c4d", tmp_path, [("scale", "app/factories.py", 7)],
            ("app/__main__.py", 3, "<module>"))
    found = _cs3(late_options.evaluate(ctx_of(report(tmp_path, [b]), facts, tmp_path)).findings, "holds no kernels")
    assert bool(found) is reported


# ---------------------------------------------------------------------------------------------- CS-4


def _split_report(root: Path, **opts: str) -> Report:
    builds = []
    for i, (mod, kernel) in enumerate((("runoff", "runoff"), ("routing", "route"), ("report", "peak"))):
        builds.append(
            bld(i + 1, f"hyd.{mod}", root, [(kernel, f"hyd/{mod}.py", 6)], ("hyd/__main__.py", 10 + i, "main"),
                options={"enable_backward": "False", **opts}, h="abc"[i], ms=100.0 + i)
        )
    return report(root, builds)


def test_cs4_named_module_alternative_carries_the_files_options(tmp_path: Path) -> None:
    write(tmp_path, "hyd", SPLIT)
    facts = scan(tmp_path)
    (f,) = module_granularity.evaluate(ctx_of(_split_report(tmp_path), facts, tmp_path)).findings
    sites = "hyd/report.py:3, hyd/routing.py:3, hyd/runoff.py:3"
    assert 'move them into hyd/kernels.py with `wp.set_module_options({"enable_backward": False})` at its top' in f.fix
    assert '@wp.kernel(module="hyd.kernels")' in f.fix
    assert f'replace each of {sites} with `wp.get_module("hyd.kernels").options.update({{"enable_backward": False}})`' \
        in f.fix
    assert "a shared named module." not in f.fix  # the bare alternative, without the options, is gone
    assert any('{"enable_backward": False}' in e.fact and sites in e.fact for e in f.evidence)


def test_cs4_options_from_the_measurement_when_no_call_is_scanned(tmp_path: Path) -> None:
    """Options set through a variable (no literal dict): the builds still show what each module set for itself."""
    files = {k: v.replace('wp.set_module_options({"enable_backward": False})', "wp.set_module_options(OPTS)")
             for k, v in SPLIT.items()}
    write(tmp_path, "hyd", files)
    facts = scan(tmp_path)
    r = _split_report(tmp_path)
    created = {"enable_backward": "True", "mode": "None", "block_dim": "256", "fast_math": "False"}
    r.module_creations = [ModuleCreation(module=b.module, options=created) for b in r.builds]
    (f,) = module_granularity.evaluate(ctx_of(r, facts, tmp_path)).findings
    assert 'add, at file level of a file imported before the first launch, `wp.get_module("hyd.kernels")' in f.fix
    assert '.options.update({"enable_backward": False})' in f.fix


def test_cs4_without_own_options_the_text_is_unchanged_and_conflicts_drop_the_named_module(tmp_path: Path) -> None:
    plain = {k: v.replace('wp.set_module_options({"enable_backward": False})\n', "") for k, v in SPLIT.items()}
    write(tmp_path / "a", "hyd", plain)
    (f,) = module_granularity.evaluate(ctx_of(_split_report(tmp_path / "a"), scan(tmp_path / "a"), tmp_path / "a"))\
        .findings
    assert 'or give each @wp.kernel(module="hyd.kernels") a shared named module. One build instead of 3.' in f.fix
    assert "options.update" not in f.fix and not any("set their own options" in e.fact for e in f.evidence)
    # the files' option calls disagree (only possible when the builds hide it): no named module offered
    clash = dict(SPLIT)
    clash["report.py"] = clash["report.py"].replace('{"enable_backward": False}', '{"enable_backward": False, '
                                                    '"fast_math": False}')
    clash["routing.py"] = clash["routing.py"].replace('{"enable_backward": False}', '{"enable_backward": False, '
                                                      '"fast_math": True}')
    write(tmp_path / "b", "hyd", clash)
    r = _split_report(tmp_path / "b")
    for b in r.builds:  # the builds show each file's own value arrived
        b.options["fast_math"] = "True" if b.module == "hyd.routing" else "False"
    facts = scan(tmp_path / "b")
    ctx = ctx_of(r, facts, tmp_path / "b")
    carried = module_granularity._carried_options(ctx, r.builds)
    assert carried.conflicts == ["fast_math"]


# ---------------------------------------------------------------------------------------------- real Warp runs




@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_real_option_written_after_load_never_arrives_and_both_fixes_work(python: str, tmp_path: Path) -> None:
    root = write(tmp_path / "late", "heat", TUNED)
    rep, d = diagnose_command([python, "-m", "heat"], root, samples=1)
    (f,) = _cs3(d.findings, "never arrive")
    locs = {(loc.file, loc.line) for loc in f.locations}
    assert ("heat/tuning.py", line_of(TUNED["tuning.py"], ".options[")) in locs
    assert ("heat/__main__.py", line_of(TUNED["__main__.py"], "tuning.enable_fast_path()")) in locs
    assert [b.options["fast_math"] for b in rep.builds] == ["False"]
    late_hash = rep.builds[0].hash
    # fix 1: the helper called before the first launch: the option arrives, the hash moves, nothing fires
    early = dict(TUNED)
    main = textwrap.dedent(TUNED["__main__.py"]).replace("    tuning.enable_fast_path()\n", "")
    early["__main__.py"] = main.replace("def main():\n", "def main():\n    tuning.enable_fast_path()\n")
    rep1, d1 = diagnose_command([python, "-m", "heat"], write(tmp_path / "early", "heat", early), samples=1)
    assert [b.options["fast_math"] for b in rep1.builds] == ["True"] and rep1.builds[0].hash != late_hash
    assert [x for x in d1.findings if x.mechanism == "CS-3"] == []
    # fix 2: a call that marks the module modified (the portable form): the value arrives with a second build
    marked = dict(TUNED)
    marked["tuning.py"] = (
        "import sys\n\nimport warp as wp\n\n\ndef enable_fast_path():\n"
        '    wp.set_module_options({"fast_math": True}, module=sys.modules["heat.conduction"])\n'
    )
    rep2, d2 = diagnose_command([python, "-m", "heat"], write(tmp_path / "marked", "heat", marked), samples=1)
    assert [b.options["fast_math"] for b in rep2.builds] == ["False", "True"]
    assert rep2.builds[1].hash == rep1.builds[0].hash  # the same identity as set before the first load
    assert [x.title for x in d2.findings if x.mechanism == "CS-3"] and not _cs3(d2.findings, "never arrive")


@pytest.mark.slow
def test_real_split_modules_cs4_fix_carries_the_options_and_cs3_names_the_named_module(tmp_path: Path) -> None:
    root = write(tmp_path / "split", "hyd", SPLIT)
    _, d = diagnose_command([sys.executable, "-m", "hyd"], root, samples=1)
    (f,) = [x for x in d.findings if x.mechanism == "CS-4"]
    assert 'wp.get_module("hyd.kernels").options.update({"enable_backward": False})' in f.fix
    # the named-module copy with the bare calls left in place: CS-3 points at the named module, from each file
    _, dn = diagnose_command(
        [sys.executable, "-m", "hyd"], write(tmp_path / "named", "hyd", named_variant(SPLIT, "hyd.kernels",
                                                                                     options_on_named=False)),
        samples=1,
    )
    found = _cs3(dn.findings, "holds no kernels")
    assert len(found) == 3 and all(x.modules == ["hyd.kernels"] for x in found)
    assert all("options.update" in x.fix and "Replace the call" in x.fix for x in found)


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_real_named_module_gets_the_options_only_through_get_module(python: str, tmp_path: Path) -> None:
    """What the CS-4 and CS-3 texts rely on, on both Warp versions: a bare call misses the named module (backward
    code is generated), `wp.get_module(name).options.update` at file level reaches it (the hash and source move)."""
    bare = measure([python, "-m", "hyd"], write(tmp_path / "bare", "hyd",
                                                named_variant(SPLIT, "hyd.kernels", options_on_named=False)),
                   samples=1)
    fixed_root = write(tmp_path / "fixed", "hyd", named_variant(SPLIT, "hyd.kernels", options_on_named=True))
    fixed, d = diagnose_command([python, "-m", "hyd"], fixed_root, samples=1)
    assert [(b.module, b.options["enable_backward"]) for b in bare.builds] == [("hyd.kernels", "True")]
    assert [(b.module, b.options["enable_backward"]) for b in fixed.builds] == [("hyd.kernels", "False")]
    assert fixed.builds[0].source_bytes < bare.builds[0].source_bytes
    assert [x for x in d.findings if x.mechanism in ("CS-3", "CS-4")] == []


VERSIONED = {
    "__init__.py": "",
    "__main__.py": "from .run import main\n\nmain()\n",
    "contacts.py": '''import warp as wp


def make_kernel(mode: int):
    modname = f"contacts_mode_{mode}"

    @wp.kernel(enable_backward=False, module=modname)
    def scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * float(wp.static(mode + 1))

    return scale


KERNELS = [make_kernel(m) for m in range(4)]
''',
    "run.py": '''import numpy as np
import warp as wp

from .contacts import KERNELS


def main():
    x = wp.array(np.arange(8, dtype=np.float32), dtype=float, device="cpu")
    out = []
    for k in KERNELS:
        y = wp.zeros(8, dtype=float, device="cpu")
        wp.launch(k, dim=8, inputs=[x, y], device="cpu")
        out.append(float(y.numpy().sum()))
    print("sums", " ".join(f"{v:.1f}" for v in out))
''',
}


@pytest.mark.slow
def test_real_versions_of_one_definition_in_hand_named_modules_merge_with_one_edit(tmp_path: Path) -> None:
    """Four versions of one closure, each in a module named by hand: CS-4 edits their one decorator once (several
    edits of one line would conflict), naming a module of the files' own package (not a bare "kernels")."""
    import subprocess

    from warp_compile.probe.fix.edits import apply_edits

    root = write(tmp_path / "vers", "vers", VERSIONED)
    _, d = diagnose_command([sys.executable, "-m", "vers"], root, samples=1)
    (f,) = [x for x in d.findings if x.mechanism == "CS-4"]
    assert len(f.edits) == 1 and 'module="vers.kernels"' in f.edits[0].new, f.edits
    before = subprocess.run([sys.executable, "-m", "vers"], cwd=root, capture_output=True, text=True).stdout
    apply_edits(root, f.edits)
    after = subprocess.run([sys.executable, "-m", "vers"], cwd=root, capture_output=True, text=True).stdout
    assert [ln for ln in after.splitlines() if ln.startswith("sums")] == \
        [ln for ln in before.splitlines() if ln.startswith("sums")] == ["sums 28.0 56.0 84.0 112.0"]


def test_cs3_a_bare_call_with_no_kernel_in_reach_or_whose_kernels_have_its_options_is_not_reported(
    tmp_path: Path,
) -> None:
    """newton's Kamino sets enable_backward=False at the top of every file: in a file of types (no kernel defined,
    imported or named) the call configures nothing and nothing says what it was meant for; in a builder that imports
    kernel files whose own calls already gave their modules the option, nothing is missing. Neither is a finding,
    nor is enable_backward alone (CS-10 measures whether the kernels need it); a settings file whose imported kernels
    compiled without another option still is."""
    setting = 'wp.set_module_options({"enable_backward": False})\n'
    files = {
        "__init__.py": "",
        "types.py": "import warp as wp\n\n" + setting + "\nSCALE = 2.0\n",
        "bodies.py": "import warp as wp\n\n" + setting + "\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                     "    a[wp.tid()] = 1.0\n",
        "builder.py": "import warp as wp\n\nfrom . import bodies, types\n\n" + setting,
    }
    write(tmp_path, "app", files)
    facts = scan(tmp_path)
    b = bld(1, "app.bodies", tmp_path, [("k", "app/bodies.py", 6)], ("app/__main__.py", 5, "main"))
    b.options["enable_backward"] = "False"
    assert _cs3(late_options.evaluate(ctx_of(report(tmp_path, [b]), facts, tmp_path)).findings,
                "holds no kernels") == []
    b.options["enable_backward"] = "True"  # the kernels' file did not give it: whether they need backward is CS-10's
    assert _cs3(late_options.evaluate(ctx_of(report(tmp_path, [b]), facts, tmp_path)).findings,
                "holds no kernels") == []
    # an option CS-10 does not own: the builder's call was meant for the kernels it imports, which never got it
    write(tmp_path, "app", {**files, "builder.py": files["builder.py"].replace('"enable_backward": False',
                                                                              '"fast_math": True')})
    found = _cs3(late_options.evaluate(ctx_of(report(tmp_path, [b]), scan(tmp_path), tmp_path)).findings,
                 "holds no kernels")
    assert [f.locations[0].file for f in found] == ["app/builder.py"]
