"""Edits, applicability and "already in effect" for the settings mechanisms: CS-2, CS-3, CS-10, CS-11, CS-12.

Each fast test writes a small project, scans it for real and hands the rule a Report made in code, then applies the
finding's edits to a copy (`apply_edits`) and compiles the result. The slow tests run real Warp: a forward-only
generation of one module checks the adjoint byte count, and the two test apps (tests/apps/cache_keeper, a library
that sets enable_backward False at import) are measured once.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, write_tree
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.models import (
    ApiCall,
    Build,
    CacheFacts,
    EntryPoint,
    KernelInfo,
    PchBuild,
    Report,
    Site,
    Stat,
)
from warp_compile.probe.models.diagnosis import Finding
from warp_compile.probe.rules import cache_reuse, precompiled_header, unroll_budget, unused_backward
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

PY = sys.executable


def _build(seq: int, module: str, **kw) -> Build:  # type: ignore[no-untyped-def]
    fields = {
        "device": "cpu",
        "block_dim": 1,
        "status": "compiled",
        "ms": 400.0,
        "native_ms": 300.0,
        "codegen_ms": 20.0,
        "source_bytes": 40_000,
        "kernels": [KernelInfo(key="k", name="k")],
        "options": {"enable_backward": "True"},
    } | kw
    h = (f"{seq:x}" * 64)[:64]
    return Build(seq=seq, module=module, hash=h, hash_short=h[:7], **fields)


def _ctx(root: Path, rep: Report) -> RuleContext:
    return RuleContext(report=rep, scan=scan(root), changes=[], root=root, sources=SourceView(root))


def _report(root: Path, builds: list[Build], entry: str | None = "app/__main__.py", **kw) -> Report:  # type: ignore[no-untyped-def]
    kw.setdefault("command", [PY, "-m", "app"])
    kw.setdefault("samples", 1)
    kw.setdefault("warp_version", "1.19.0")
    ep = EntryPoint(kind="module", name="app", file=str(root / entry), owner="project") if entry else None
    return Report(builds=builds, cwd=str(root), entry=ep, **kw)


def _applied(root: Path, tmp: Path, f: Finding) -> Path:
    """The finding's edits applied to a copy of the project; every changed Python file still compiles."""
    copy = tmp / "copy"
    shutil.copytree(root, copy)
    for rel in apply_edits(copy, f.edits):
        compile((copy / rel).read_text(), rel, "exec")
    return copy


# ---------------------------------------------------------------------------------------------- CS-10

APP_KERNELS = """
    import warp as wp

    @wp.kernel
    def k(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0
"""


def test_cs10_no_finding_where_the_builds_options_already_have_backward_off(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {
        "app/__init__.py": "",
        "app/__main__.py": "from .kernels import k\n",
        "app/kernels.py": APP_KERNELS,
    })
    # Warp still emits adjoint stubs with backward off: the byte count alone must not make it a finding
    b = _build(1, "app.kernels", options={"enable_backward": "False"}, backward_in_source=True,
               backward_source_bytes=900)
    res = unused_backward.evaluate(_ctx(root, _report(root, [b])))
    assert res.findings == []
    assert "already in effect" in res.ruled_out[0].signal
    on = _build(1, "app.kernels", backward_in_source=True, backward_source_bytes=20_000)
    (f,) = unused_backward.evaluate(_ctx(root, _report(root, [on]))).findings
    assert f.mechanism == "CS-10"


def test_cs10_entry_edit_sets_backward_off_before_the_kernel_import_automatic(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {
        "app/__init__.py": "",
        "app/__main__.py": '"""Run it."""\nfrom .kernels import k\n\nprint(k)\n',
        "app/kernels.py": APP_KERNELS,
    })
    b = _build(1, "app.kernels", backward_in_source=True, backward_source_bytes=20_000)
    (f,) = unused_backward.evaluate(_ctx(root, _report(root, [b]))).findings
    assert f.applicability == "automatic" and f.experiment == {"enable_backward": False}
    assert [e.file for e in f.edits] == ["app/__main__.py"]  # the entry point, never a package's __init__.py
    text = (_applied(root, tmp_path, f) / "app/__main__.py").read_text()
    assert text.index("wp.config.enable_backward = False") < text.index("from .kernels import k")
    assert text.startswith('"""Run it."""\n')


def test_cs10_late_assignment_moves_above_the_import_it_missed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {
        "app/__init__.py": "",
        "app/__main__.py": "import warp as wp\n\nfrom .kernels import k\n\nwp.config.enable_backward = False\n",
        "app/kernels.py": APP_KERNELS,
    })
    b = _build(1, "app.kernels", backward_in_source=True, backward_source_bytes=20_000,
               config_shadow={"enable_backward": ["True", "False"]})
    (f,) = unused_backward.evaluate(_ctx(root, _report(root, [b]))).findings
    lines = (_applied(root, tmp_path, f) / "app/__main__.py").read_text().splitlines()
    assert lines.count("wp.config.enable_backward = False") == 1
    assert lines.index("wp.config.enable_backward = False") < lines.index("from .kernels import k")


def test_cs10_a_tape_behind_a_switch_makes_it_review_and_keeps_the_switch(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {
        "app/__init__.py": "",
        "app/__main__.py": """
            import argparse

            import warp as wp

            from .kernels import k


            def grad_check(a):
                tape = wp.Tape()
                with tape:
                    wp.launch(k, dim=4, inputs=[a])
                tape.backward()


            def main():
                p = argparse.ArgumentParser()
                p.add_argument("--grad-check", action="store_true")
                args = p.parse_args()
                a = wp.zeros(4, dtype=float, requires_grad=True)
                wp.launch(k, dim=4, inputs=[a])
                if args.grad_check:
                    grad_check(a)


            main()
        """,
        "app/kernels.py": APP_KERNELS,
    })
    b = _build(1, "app.kernels", backward_in_source=True, backward_source_bytes=20_000,
               kernels=[KernelInfo(key="k", name="k", file=str(root / "app/kernels.py"), line=3)])
    rep = _report(root, [b], imported_files=[str(root / "app/kernels.py")])
    (f,) = unused_backward.evaluate(_ctx(root, rep)).findings
    assert f.applicability == "review" and "wp.Tape at app/__main__.py" in f.review
    assert f.must_keep == [["--grad-check"]]


# ---------------------------------------------------------------------------------------------- CS-2

KEEPER = {
    "app/__init__.py": "",
    "app/__main__.py": """
        import argparse

        from . import maintenance, runtime
        from .kernels import run

        runtime.prepare()


        def main():
            p = argparse.ArgumentParser()
            p.add_argument("--rebuild", action="store_true", help="must actually clear the cache")
            if p.parse_args().rebuild:
                maintenance.clear()
            run()


        main()
    """,
    "app/runtime.py": """
        import atexit
        import shutil
        import tempfile

        import warp as wp


        def prepare():
            scratch = tempfile.mkdtemp()
            wp.config.kernel_cache_dir = scratch
            atexit.register(shutil.rmtree, scratch, ignore_errors=True)
            wp.config.cache_kernels = False
    """,
    "app/maintenance.py": """
        import warp as wp


        def clear():
            wp.clear_kernel_cache()
            wp.clear_lto_cache()
    """,
    "app/kernels.py": APP_KERNELS + """

    def run():
        wp.clear_kernel_cache()
        wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])
    """,
}


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.strip() == text)


def _keeper_report(root: Path) -> Report:
    from warp_compile.probe.models import RunResult, SampleResult

    line = _line_of(root / "app/kernels.py", "wp.clear_kernel_cache()")
    clear = ApiCall(api="clear_kernel_cache", seq=3, site=Site(file=str(root / "app/kernels.py"), line=line))
    cache = CacheFacts(cache_kernels=False, kernel_cache_dir="/tmp/x", sandbox_cache_dir="/sb", left_sandbox=True,
                       calls=[clear])
    warm = RunResult(phase="warm", wall_ms=3000.0, exit_code=0, compiled=1, module_ms=400.0, pch_ms=1500.0)
    cold = RunResult(phase="cold", wall_ms=3000.0, exit_code=0, compiled=1)
    sample = SampleResult(index=0, ok=True, cold=cold, warm=warm)
    rep = _report(root, [_build(1, "app.kernels")], cache=cache, sample_results=[sample])
    rep.warm_builds = [_build(2, "app.kernels")]
    return rep


def test_cs2_removes_what_ran_unconditionally_and_keeps_the_rebuild_contract(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", KEEPER)
    (f,) = cache_reuse.evaluate(_ctx(root, _keeper_report(root))).findings
    assert f.applicability == "review" and f.must_keep == [["--rebuild"]]
    assert {(e.file, e.old.strip()) for e in f.edits} == {
        ("app/kernels.py", "wp.clear_kernel_cache()"),
        ("app/runtime.py", "wp.config.kernel_cache_dir = scratch"),
        ("app/runtime.py", "wp.config.cache_kernels = False"),
    }
    copy = _applied(root, tmp_path, f)
    assert "wp.clear_kernel_cache()\n    wp.clear_lto_cache()" in (copy / "app/maintenance.py").read_text()
    # the scratch directory is still removed at exit (it no longer holds the cache, and nothing is left behind)
    assert "atexit.register(shutil.rmtree, scratch" in (copy / "app/runtime.py").read_text()
    kept = _line_of(root / "app/maintenance.py", "wp.clear_kernel_cache()")
    assert f"maintenance.py:{kept}: it runs behind --rebuild" in f.fix and "Remove wp.clear_kernel_cache()" in f.fix


def test_cs2_never_removes_a_clear_that_did_not_run(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", KEEPER)
    rep = _keeper_report(root)
    rep.cache.calls = []  # the hook saw no clear run: the unconditional-looking one in run() did not run either
    (f,) = cache_reuse.evaluate(_ctx(root, rep)).findings
    assert all("clear_" not in e.old for e in f.edits)
    line = _line_of(root / "app/kernels.py", "wp.clear_kernel_cache()")
    assert f"app/kernels.py:{line}: it did not run in this command" in f.fix


# ---------------------------------------------------------------------------------------------- CS-12

ONE = {"app/__init__.py": "", "app/__main__.py": "from .kernels import k\n", "app/kernels.py": APP_KERNELS}


def _pch_report(root: Path, n: int, header_ms: float = 1600.0, noise: list[float] | None = None) -> Report:
    builds = [_build(i + 1, f"app.m{i}", ms=300.0, native_ms=120.0) for i in range(n)]
    pch = [PchBuild(ms=header_ms, file="builtin_bd1.pch", thread=0, during_seq=1)]
    kw = {"compile_elapsed_ms": Stat(values=noise, median=sorted(noise)[len(noise) // 2])} if noise else {}
    return _report(root, builds, pch=pch, **kw)


def test_cs12_few_modules_header_on_is_a_finding_with_the_setting_experiment(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", ONE)
    rep = _pch_report(root, 1)
    (f,) = precompiled_header.evaluate(_ctx(root, rep)).findings
    assert f.experiment == {"use_precompiled_headers": False} and f.applicability == "review"
    assert f.estimated_saving_ms and 0 < f.estimated_saving_ms < 1600
    text = (_applied(root, tmp_path, f) / "app/__main__.py").read_text()
    assert text.startswith("import warp as wp\nwp.config.use_precompiled_headers = False")
    # the same report gives the same answer, word for word
    assert precompiled_header.evaluate(_ctx(root, rep)).findings[0] == f


def test_cs12_many_modules_is_ruled_out_with_the_figures(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", ONE)
    res = precompiled_header.evaluate(_ctx(root, _pch_report(root, 4)))
    assert res.findings == []
    assert "pays for the 4 module build(s)" in res.ruled_out[0].signal and "would cost" in res.ruled_out[0].signal


def test_cs12_header_already_off_and_cheaper_is_not_a_finding(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {**ONE, "app/__main__.py": (
        "import warp as wp\n\nwp.config.use_precompiled_headers = False\n\nfrom .kernels import k\n")})
    off = {"use_precompiled_headers": "False", "enable_backward": "True"}
    rep = _report(root, [_build(1, "app.kernels", native_ms=900.0, options=off)])
    res = precompiled_header.evaluate(_ctx(root, rep))
    assert res.findings == [] and "already off" in res.ruled_out[0].signal


def test_cs12_header_off_for_many_modules_removes_the_assignment(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {**ONE, "app/__main__.py": (
        "import warp as wp\n\nwp.config.use_precompiled_headers = False  # lean\n\nfrom .kernels import k\n")})
    off = {"use_precompiled_headers": "False", "enable_backward": "True"}
    rep = _report(root, [_build(i + 1, f"app.m{i}", native_ms=1000.0, options=off) for i in range(5)])
    (f,) = precompiled_header.evaluate(_ctx(root, rep)).findings
    assert f.experiment == {"use_precompiled_headers": True} and f.applicability == "automatic"
    assert "use_precompiled_headers" not in (_applied(root, tmp_path, f) / "app/__main__.py").read_text()


# ---------------------------------------------------------------------------------------------- CS-11


def test_cs11_edit_removes_only_the_raised_budget(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {
        "app/__init__.py": "",
        "app/__main__.py": "from .kernels import k\n",
        "app/kernels.py": """
            import warp as wp

            wp.set_module_options({"enable_backward": False})
            wp.set_module_options({"max_unroll": 256})


            @wp.kernel
            def k(a: wp.array(dtype=float)):
                i = wp.tid()
                s = float(0.0)
                for j in range(64):
                    s += a[i] * float(j)
                a[i] = s
        """,
    })
    b = _build(1, "app.kernels", source_bytes=90_000, options={"max_unroll": "256", "enable_backward": "False"})
    (f,) = unroll_budget.evaluate(_ctx(root, _report(root, [b]))).findings
    assert f.applicability == "review" and "throughput" in f.review
    text = (_applied(root, tmp_path, f) / "app/kernels.py").read_text()
    assert "max_unroll" not in text and 'wp.set_module_options({"enable_backward": False})' in text


# ---------------------------------------------------------------------------------------------- CS-3


def test_cs3_reorder_refused_when_the_moved_call_reads_what_the_skipped_line_makes(tmp_path: Path) -> None:
    from warp_compile.probe.fix.transform.statements import move_statement_up_edits

    root = write_tree(tmp_path / "p", {"app/run.py": """
        def go(p):
            s = make(p)
            configure(s)
            t = make(p)
            configure(p)
    """})
    ctx = _ctx(root, _report(root, [], entry=None))
    assert move_statement_up_edits(ctx.sources, "app/run.py", 3, 2) == []  # configure(s) needs s
    edits = move_statement_up_edits(ctx.sources, "app/run.py", 5, 4)  # configure(p) may go before t = make(p)
    assert [e.old for e in edits] == ["", "    configure(p)\n"] and edits[0].new == "    configure(p)\n"


# ---------------------------------------------------------------------------------------------- slow: real Warp


@pytest.mark.slow
def test_backward_bytes_match_a_forward_only_generation_of_the_same_module(tmp_path: Path) -> None:
    script = tmp_path / "gen.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT.parent)!r})\n"
        "import warp as wp\n"
        "from warp._src.context import ModuleBuilder\n"
        "from warp_compile.probe import hook_reach\n"
        "@wp.func\n"
        "def spring(x: wp.vec3, k: float):\n"
        "    return -k * x * wp.length(x)\n"
        "@wp.kernel\n"
        "def step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), k: float, dt: float):\n"
        "    i = wp.tid()\n"
        "    v[i] = v[i] + spring(x[i], k) * dt\n"
        "    x[i] = x[i] + v[i] * dt\n"
        "m = step.module\n"
        "src = {}\n"
        "for eb in (True, False):\n"
        "    opts = m.options | {'enable_backward': eb, 'block_dim': 1}\n"
        "    src[eb] = ModuleBuilder(m, opts, hasher=m.hashers.get(1), target='cpu').codegen('cpu')\n"
        "print(len(src[True]) - len(src[False]), hook_reach.backward_bytes(src[True]),"
        " hook_reach.backward_bytes(src[False]))\n"
    )
    out = subprocess.run([PY, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    if "No module named 'warp._src'" in out.stderr:
        pytest.skip("this warp has no warp._src.context.ModuleBuilder")
    removed, counted, counted_off = map(int, out.stdout.split()[-3:])
    assert removed > 0 and abs(counted - removed) <= 0.05 * removed, (removed, counted)
    assert counted_off <= 0.05 * removed  # what stays with backward off is (almost) never counted


LIB_APP = {
    "fwdlib/__init__.py": """
        import warp as wp

        wp.config.enable_backward = False  # the library is forward-only by design

        from .ops import scale  # noqa: E402
    """,
    "fwdlib/ops.py": """
        import warp as wp


        @wp.kernel
        def scale_kernel(a: wp.array(dtype=float), s: float):
            i = wp.tid()
            a[i] = a[i] * s


        def scale(n, s):
            a = wp.full(n, 2.0, dtype=float, device="cpu")
            wp.launch(scale_kernel, dim=n, inputs=[a, s], device="cpu")
            return float(a.numpy().sum())
    """,
}


@pytest.mark.slow
def test_cs10_no_finding_for_a_library_that_sets_backward_off_at_import(tmp_path: Path) -> None:
    from warp_compile.probe.diagnose import diagnose_sources
    from warp_compile.probe.measure import measure

    site = write_tree(tmp_path / "venv" / "lib" / "site-packages", LIB_APP)
    app = write_tree(tmp_path / "app", {"main.py": "import fwdlib\n\nprint(fwdlib.scale(64, 3.0))\n"})
    import os

    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(site) + (os.pathsep + env_path if env_path else "")
    try:
        rep = measure([PY, "main.py"], app, samples=1, timeout_s=600)
    finally:
        os.environ["PYTHONPATH"] = env_path
    assert rep.builds and all(b.options.get("enable_backward") == "False" for b in rep.builds if b.status == "compiled")
    d = diagnose_sources(rep, app)
    assert "CS-10" not in {f.mechanism for f in d.findings}
    assert any(r.mechanism == "CS-10" and "already in effect" in r.signal for r in d.ruled_out)
    assert not any("site-packages" in (e.file or "") for f in d.findings for e in f.edits)
    assert any(la.kernel.endswith("scale_kernel") for la in rep.launches)  # the app launched the library's kernel


# ---------------------------------------------------------------------------------------------- placement (issue 22)

LICENSED_MAIN = (
    "# Copyright (c) 2026 Example Authors\n# SPDX-License-Identifier: Apache-2.0\n\n"
    '"""Run the app."""\n\nfrom __future__ import annotations\n\nimport argparse\n\nfrom .kernels import k\n'
)


def test_cs12_and_cs10_on_a_licensed_entry_point_parse_and_point_at_the_line_they_edit(tmp_path: Path) -> None:
    """A license comment above the docstring and `from __future__`: the edits used to go to line 1 (a SyntaxError)
    and the finding's location said line 1; the post-pass (`add_settings_edits`) points it at the edit's line."""
    from warp_compile.probe.fix.settings import add_settings_edits

    root = write_tree(tmp_path / "p", {**ONE, "app/__main__.py": LICENSED_MAIN})
    (cs12,) = precompiled_header.evaluate(_ctx(root, _pch_report(root, 1))).findings
    b = _build(1, "app.kernels", backward_in_source=True, backward_source_bytes=20_000)
    (cs10,) = unused_backward.evaluate(_ctx(root, _report(root, [b]))).findings
    add_settings_edits([cs12, cs10], SourceView(root), _report(root, []).entry)
    for f in (cs12, cs10):
        assert f.edits and f.applicability in ("automatic", "review")
        text = (_applied(root, tmp_path / f.mechanism, f) / "app/__main__.py").read_text()
        assert text.startswith("# Copyright") and text.index("from __future__") < text.index("import warp as wp")
        assert text.count("import warp as wp") == 1
        edit = f.edits[0]
        assert (f.locations[0].file, f.locations[0].line) == ("app/__main__.py", edit.start_line) == (
            "app/__main__.py", 7)


def test_a_manual_finding_gets_no_settings_edit_and_keeps_saying_why(tmp_path: Path) -> None:
    from warp_compile.probe.fix.settings import add_settings_edits

    root = write_tree(tmp_path / "p", ONE)
    f = Finding(mechanism="CS-11", title="t", severity="low", confidence="high", fix="f",
                experiment={"max_unroll": 4}, applicability="manual", review="no edit: set with other options")
    add_settings_edits([f], SourceView(root), _report(root, []).entry)
    assert f.edits == [] and f.applicability == "manual"


def test_entry_line_fix_names_the_place_and_reuses_the_files_import(tmp_path: Path) -> None:
    from warp_compile.probe.fix.place.entry_fix import entry_line_fix

    main = '"""Run."""\nimport numpy as np\nimport warp as W\nfrom .kernels import k\n'
    root = write_tree(tmp_path / "p", {**ONE, "app/__main__.py": main})
    fix, where = entry_line_fix(_ctx(root, _report(root, [])), "why")
    assert where is not None and (where.file, where.line) == ("app/__main__.py", 4)
    assert "right after `import warp as W` (line 3)" in fix and "W.config.enable_backward = False" in fix
    assert "import warp as wp" not in fix
