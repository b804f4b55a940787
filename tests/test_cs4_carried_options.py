"""CS-4's merge when the small modules carry options of their own (issue 39, env_partition's `manual`).

Every kernel must compile with exactly the options it compiled with before. When every module of the group compiled
with the same options of its own, the kernels join the first-loaded module (merge_module.py's plan, shared with
CS-12's merge): it already carries those options and loads where the first of them loaded. Refused when the options
differ, or when an option call in a function may reach that module after it loaded (the merged module loads again
later and would rebuild, CS-3).

Fast tests pair the real scanner (sources in tmp_path) with synthetic reports; the heavy one applies the edits the
rule writes on a real Warp run and checks the merged build's options and the output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.helpers import interpreters as _interpreters
from tests.test_rules_cs3_cs4 import SPLIT, bld, ctx_of, line_of, report, write
from warp_compile.probe.diagnose import diagnose_command
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.measure import measure
from warp_compile.probe.models import ModuleCreation, Report
from warp_compile.probe.rules import module_granularity
from warp_compile.probe.scan import scan

CREATED = {"enable_backward": "True", "fast_math": "False", "mode": "None", "block_dim": "256"}


def _report(root: Path, fast_math: dict[str, str] | None = None) -> Report:
    """Three one-kernel modules, each file imported (its module created) before the first of them loads."""
    builds = []
    for i, (mod, kernel) in enumerate((("runoff", "runoff"), ("routing", "route"), ("report", "peak"))):
        opts = {"enable_backward": "False", "fast_math": (fast_math or {}).get(mod, "False")}
        b = bld(i + 1, f"hyd.{mod}", root, [(kernel, f"hyd/{mod}.py", 6)], ("hyd/__main__.py", 10 + i, "main"),
                options=opts, h="abc"[i], ms=100.0 + i)
        b.start_ms = 1000.0 + 200.0 * i
        builds.append(b)
    r = report(root, builds)
    r.module_creations = [ModuleCreation(module=b.module, options=CREATED, start_ms=50.0 + i)
                          for i, b in enumerate(builds)]
    return r


def _finding(root: Path, files: dict[str, str], r: Report | None = None):  # type: ignore[no-untyped-def]
    write(root, "hyd", files)
    ctx = ctx_of(r or _report(root), scan(root), root)
    ctx.sources = SourceView(root)
    found = module_granularity.evaluate(ctx).findings
    return [f for f in found if f.mechanism == "CS-4"]


def test_equal_own_options_merge_into_the_first_loaded_module(tmp_path: Path) -> None:
    (f,) = _finding(tmp_path, SPLIT)
    assert f.applicability == "review" and f.edits, f.review
    changed = {e.file: e.new.strip() for e in f.edits}
    assert changed == {"hyd/routing.py": '@wp.kernel(module="hyd.runoff")',
                       "hyd/report.py": '@wp.kernel(module="hyd.runoff")'}
    assert '@wp.kernel(module="hyd.runoff")' in f.fix and '{"enable_backward": False}' in f.fix
    # the option calls of the merged-away files stay, setting the same values on modules left without kernels
    assert "hyd/routing.py:3" in f.review and "hyd/report.py:3" in f.review and "hyd/runoff.py:3" not in f.review


def test_options_that_differ_are_not_merged(tmp_path: Path) -> None:
    """routing compiled with fast_math on: one module has one option set, so it is never merged with the others."""
    r = _report(tmp_path, fast_math={"routing": "True"})
    assert not any(f.edits for f in _finding(tmp_path, SPLIT, r))
    # the precondition itself, given a group whose compiled options differ
    ctx = ctx_of(r, scan(tmp_path), tmp_path)
    carried = module_granularity._carried_options(ctx, r.builds)
    edits, applicability, review, _ = module_granularity._merge_into_carrier(ctx, r.builds, carried)
    assert (edits, applicability) == ([], "manual") and "different values" in review


def test_a_late_option_call_on_the_target_refuses(tmp_path: Path) -> None:
    """A helper sets fast_math on the first-loaded module from a function (its build never carried it): after the
    merge, the module loads again for the others' kernels and that value would rebuild it (CS-3)."""
    files = dict(SPLIT)
    files["runoff.py"] = textwrap.dedent(SPLIT["runoff.py"]) + (
        '\n\ndef tune():\n    wp.set_module_options({"fast_math": True})\n'
    )
    (f,) = _finding(tmp_path, files)
    assert f.edits == [] and f.applicability == "manual"
    assert f"hyd/runoff.py:{line_of(files['runoff.py'], 'fast_math')}" in f.review and "CS-3" in f.review
    # at import of another file, naming the module: its value never reached the build either
    named = dict(SPLIT)
    named["report.py"] = textwrap.dedent(SPLIT["report.py"]) + (
        '\nwp.set_module_options({"fast_math": True}, module="hyd.runoff")\n'
    )
    (n,) = _finding(tmp_path / "named", named)
    where = f"hyd/report.py:{line_of(named['report.py'], 'fast_math')}"
    assert n.edits == [] and where in n.review and "CS-3" in n.review
    # the same call setting what the module compiled with changes nothing: the merge stands
    same = dict(files)
    same["runoff.py"] = files["runoff.py"].replace('{"fast_math": True}', '{"fast_math": False}')
    (g,) = _finding(tmp_path / "same", same)
    assert g.edits


def test_a_group_created_late_still_names_why(tmp_path: Path) -> None:
    """Modules made only after the first of them loaded (env_partition): the plan's reason is the finding's."""
    r = _report(tmp_path)
    for c in r.module_creations[1:]:
        c.start_ms = 5000.0
    (f,) = _finding(tmp_path, SPLIT, r)
    assert f.edits == [] and "the merge target is hyd.runoff" in f.review and "created only after" in f.review
    # the carrier's merge tries the late modules' candidates in order and names each (late_modules.py)
    assert all(c in f.review for c in ("move the late import up:", "hoist:", "from the run's record:")), f.review


def _printed(python: str, root: Path, cache: Path) -> list[str]:
    """What the app prints, cold in a private kernel cache (emptied after), without Warp's own load lines."""
    env = {**os.environ, "WARP_CACHE_PATH": str(cache)}
    run = subprocess.run([python, "-m", "hyd"], cwd=root, capture_output=True, text=True, check=True, env=env)
    shutil.rmtree(cache, ignore_errors=True)
    return [ln for ln in run.stdout.splitlines() if not ln.startswith(("Warp ", "Module "))]


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("python", _interpreters())
def test_real_merge_keeps_the_options_and_the_output(python: str, tmp_path: Path) -> None:
    """On both Warp versions: a kernel given module="<the first file's Python module>" builds with that module's
    options (set_module_options at the top of its file), once, and prints the same."""
    root = write(tmp_path / "app", "hyd", SPLIT)
    before = _printed(python, root, tmp_path / "cache")
    _, d = diagnose_command([python, "-m", "hyd"], root, samples=1)
    (f,) = [x for x in d.findings if x.mechanism == "CS-4"]
    assert f.edits, f.review
    apply_edits(root, f.edits)
    after = measure([python, "-m", "hyd"], root, samples=1)
    assert [(b.module, b.options["enable_backward"]) for b in after.builds] == [("hyd.runoff", "False")]
    assert _printed(python, root, tmp_path / "cache") == before
