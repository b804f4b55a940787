"""CS-2 when a module is named anew in every process (NVIDIA/warp #1696: 1.16's wp.map names a lambda's generated
function after Python's salted hash()): the warm run compiles, at the cold run's line, a module the cold run never
built. The rule pairs the two by line, names the dependency line that calls hash(), and names the lambdas."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import synth_build
from warp_compile.probe.dependency_source import builtin_calls
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.transform.named_lambda import name_lambdas
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import KernelInfo, Report, RunResult, SampleResult, Trigger
from warp_compile.probe.models.report import FileOwner, KernelCreation, WarpSite
from warp_compile.probe.rules import cache_reuse
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.rules.process_names import renamed_modules

ROOT_DIR = Path(__file__).resolve().parents[1]

APP = textwrap.dedent("""\
    import warp as wp


    def main():
        raw = wp.ones(8, dtype=float)
        centred = wp.map(lambda v: v * 2.0 - 1.0, raw)
        shaped = wp.map(lambda v: v * v + 0.5 * v, centred)
        return shaped
    """)


def _named(text: str, line: int):  # type: ignore[no-untyped-def]
    return name_lambdas(text.splitlines(keepends=True), ast.parse(text), line)


def test_a_mapped_lambda_becomes_a_def_in_the_same_block() -> None:
    n = _named(APP, 6)
    assert (n.start, n.end, n.names) == (6, 6, ["_centred_fn"])
    assert n.new == "    def _centred_fn(v):\n        return v * 2.0 - 1.0\n    centred = wp.map(_centred_fn, raw)\n"
    ast.parse(APP.replace(APP.splitlines(keepends=True)[5], n.new))


def test_lambdas_whose_scope_is_not_the_block_are_left_alone() -> None:
    comp = "def f(xs):\n    return [g(lambda v: v + i, xs) for i in range(3)]\n"
    assert "no lambda" in _named(comp, 2).why_not  # the lambda reads i, the comprehension's own variable
    klass = "class C:\n    k = g(lambda v: v)\n"
    assert "class body" in _named(klass, 2).why_not
    two = "def f(x):\n    a = 1; b = g(lambda v: v, x)\n"
    assert "more than one statement" in _named(two, 2).why_not


def test_keyword_lambdas_and_a_multiline_body_are_named() -> None:
    text = "def f(x):\n    y = g(x, fn=lambda v: (v +\n        1.0))\n"
    n = _named(text, 2)
    assert n.names == ["_y_fn"] and not n.why_not
    tree = ast.parse(text.replace("".join(text.splitlines(keepends=True)[1:3]), n.new))
    assert any(isinstance(d, ast.FunctionDef) and d.name == "_y_fn" for d in ast.walk(tree))


def test_a_lambda_bound_to_a_name_before_the_call_becomes_a_def_of_that_name() -> None:
    """`soft = lambda ...` then `wp.map(soft, raw)`: the assignment becomes `def soft(...)` (its comment kept), also
    the file's when the function never binds the name; a name bound twice, or a parameter, is left alone."""
    text = ("import warp as wp\n\n\ndef main(raw):\n    soft = lambda v: v / (1.0 + abs(v))  # noqa: E731\n"
            "    out = wp.map(soft, raw)\n    return out\n")
    n = _named(text, 6)
    assert (n.start, n.end, n.names, n.why_not) == (5, 5, ["soft"], "")
    assert n.new == "    def soft(v):  # noqa: E731\n        return v / (1.0 + abs(v))\n"
    patched = text.replace(text.splitlines(keepends=True)[4], n.new)
    assert "lambda" not in patched and ast.parse(patched)
    twice = text.replace("    out = wp.map", "    soft = soft if raw else None\n    out = wp.map")
    assert "nor bound once" in _named(twice, 7).why_not
    outer = "soft = lambda v: v\n\n\ndef main(raw):\n    out = wp.map(soft, raw)\n    return out\n"
    assert _named(outer, 5).new == "def soft(v):\n    return v\n"  # main() never binds it: the file's is followed
    param = "soft = lambda v: v\n\n\ndef main(raw, soft):\n    out = wp.map(soft, raw)\n    return out\n"
    assert "nor bound once" in _named(param, 5).why_not  # main()'s parameter, not the file's lambda


def test_builtin_calls_skip_a_file_that_binds_the_name(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def key(s):\n    return 'f_' + hex(hash(s))[-8:]\n\nx = obj.hash(3)\n")
    assert builtin_calls(str(f), "hash") == [2]
    g = tmp_path / "n.py"
    g.write_text("from h import hash\n\ndef key(s):\n    return hash(s)\n")
    assert builtin_calls(str(g), "hash") == []
    assert builtin_calls(str(tmp_path / "missing.py"), "hash") == []


def _report(root: Path, warm_names: list[str], warp_file: str) -> Report:
    app = f"{root}/readings.py"
    def build(seq: int, name: str, fill: str, line: int):  # type: ignore[no-untyped-def]
        return synth_build(seq, name, fill, ms=150.0, kernels=[KernelInfo(key="map_kernel", hash="h", file="<string>",
                                                                           line=1)],
                           trigger=Trigger(file=app, line=line, function="main", api="launch"))

    cold = [build(i + 1, f"map_func_c{i}", "a", 6 + i) for i in range(2)]
    warm = [build(i + 1, name, "b", 6 + i) for i, name in enumerate(warm_names)]
    made = [KernelCreation(key="map_kernel", module=b.module, file=app, line=6 + i, function="main",
                           via=WarpSite(file=warp_file, line=1293, function="map")) for i, b in enumerate(cold)]
    rr = [RunResult(phase=p, wall_ms=900, exit_code=0, compiled=2, module_ms=290.0, pch_ms=0.0)
          for p in ("cold", "warm")]
    return Report(command=["python", "readings.py"], cwd=str(root), samples=1, builds=cold, warm_builds=warm,
                  kernel_creations=made, sample_results=[SampleResult(index=0, ok=True, cold=rr[0], warm=rr[1])],
                  owners={warp_file: FileOwner(owner="dependency", distribution="warp-lang", version="1.16.0")})


def _ctx(root: Path, report: Report) -> RuleContext:
    ctx = RuleContext(report=report, scan=None, root=root, sources=SourceView(root))
    ctx.changes = explain_changes(report, rel=ctx.rel)
    return ctx


def test_cs2_names_the_renamed_modules_the_salting_line_and_the_lambdas(tmp_path: Path) -> None:
    (tmp_path / "readings.py").write_text(APP)
    dep = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "warp" / "_src"
    dep.mkdir(parents=True)
    (dep / "utils.py").write_text("def unique_name(code):\n    return 'func_' + hex(hash(code))[-8:]\n")
    r = _report(tmp_path, ["map_func_w0", "map_func_w1"], str(dep / "utils.py"))
    assert [(p.line, p.cold, p.warm) for p in renamed_modules(r)] == [(6, "map_func_c0", "map_func_w0"),
                                                                      (7, "map_func_c1", "map_func_w1")]
    (f,) = cache_reuse.evaluate(_ctx(tmp_path, r)).findings
    assert [(loc.file, loc.line) for loc in f.locations] == [("readings.py", 6), ("readings.py", 7)]
    assert f.applicability == "review" and len(f.edits) == 2
    assert "_centred_fn" in f.edits[0].new and "_shaped_fn" in f.edits[1].new
    assert any("map_func_w0 at readings.py:6" in e.fact and "map_func_c0" in e.fact for e in f.evidence)
    assert f.upstream is not None and f.upstream.distribution == "warp-lang"
    assert [(p.file, p.line) for p in f.upstream.places] == [("warp/_src/utils.py", 2)]


def test_cs2_renamed_modules_without_a_lambda_at_the_line_say_why_no_edit(tmp_path: Path) -> None:
    (tmp_path / "readings.py").write_text(APP.replace("lambda v: v * 2.0 - 1.0", "centre").replace(
        "lambda v: v * v + 0.5 * v", "shape"))
    r = _report(tmp_path, ["map_func_w0", "map_func_w1"], "/nowhere/utils.py")
    (f,) = cache_reuse.evaluate(_ctx(tmp_path, r)).findings
    assert f.edits == [] and f.applicability == "manual"
    assert "readings.py:6: no lambda is passed to a call in the statement at line 6" in f.review
    assert "make the name depend only on the code" in f.fix


def test_cs2_same_names_in_both_runs_are_not_renamed(tmp_path: Path) -> None:
    (tmp_path / "readings.py").write_text(APP)
    r = _report(tmp_path, ["map_func_c0", "map_func_c1"], "/nowhere/utils.py")
    assert renamed_modules(r) == []
    (f,) = cache_reuse.evaluate(_ctx(tmp_path, r)).findings  # the cache still missed: no lambda is blamed
    assert f.edits == [] and not any("new name" in e.fact for e in f.evidence)


@pytest.mark.slow
def test_real_lambda_names_on_warp_1_15_are_named_and_the_cache_then_hits(tmp_path: Path) -> None:
    """warp-lang 1.15.0 names a mapped lambda's function after hash(); fix writes the defs and proves it on the
    repeat run's clock (the second process loads both modules from the first one's cache)."""
    py = ROOT_DIR / ".venv-warp-1.15.0" / "bin" / "python"
    if not py.exists():
        pytest.skip("no warp-lang 1.15.0 interpreter: run scripts/venv-warp.sh 1.15.0")
    app = APP.replace("raw = wp.ones(8, dtype=float)", "raw = wp.ones(4096, dtype=float, device='cpu')")
    app += "\n\nprint(float(main().numpy().sum()))\n"
    (tmp_path / "readings.py").write_text(app)
    env = {**os.environ, "PATH": f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONHASHSEED", None)
    out = subprocess.run([sys.executable, "-m", "warp_compile", "fix", "--write", "--unsafe-fixes", "--json",
                          str(tmp_path / "fix.json"), "--", "python", "readings.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads((tmp_path / "fix.json").read_text())
    assert "CS-2" in record["applied"] and record["written"] == ["readings.py"], out.stdout[-2000:]
    text = (tmp_path / "readings.py").read_text()
    assert "def _centred_fn(v):" in text and "lambda" not in text
