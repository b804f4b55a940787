"""CS-4's merge on modules created late, made at import first (fix/place/late_modules.py), for generated kernels.

A factory that generates a kernel per specialisation with `wp.Kernel(..., module=wp.get_module(f"...{key}"))` (one
module each, warp.fem's integrands) is realised from the run's record: its recorded calls run at import (the
integrand argument named by its module-level binding, which the hook records), and the making call names the
merged module. The call edit is refused where it would change what the program does: the same line also made
kernels of a module outside the merge (they would join it late), or made two kernels of one key (in one module
the later would replace the earlier). The late-import and cycle cases are in test_fix_edits_structure.py.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import types
from pathlib import Path

from tests.helpers import ROOT
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.place.late_modules import call_module_edit
from warp_compile.probe.models import Build, KernelCreation, Report
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

GEN = """\
import warp as wp


def make(name, scalar):
    key = f"integrate_{name}_{scalar}"
    ns = {}
    exec(f"def {key}(a: wp.array(dtype=float)):\\n    a[wp.tid()] = 1.0\\n", {"wp": wp}, ns)
    return wp.Kernel(func=ns[key], key=key, module=wp.get_module(f"gen.dyn.{key}"))
"""


def _hook_kernels():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_wc_hook_kernels_cs4", ROOT / "probe" / "hook_kernels.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_hook_names_an_argument_bound_at_module_level_of_the_apps_package() -> None:
    hk = _hook_kernels()
    pkg, problems, maker = (types.ModuleType(n) for n in ("apppkg", "apppkg.problems", "apppkg.integrate"))

    class Integrand:  # an object no literal writes
        pass

    problems.__dict__["energy"] = Integrand()
    problems.__dict__["_private"] = Integrand()
    exec("import sys\ndef make(itg, other):\n    return sys._getframe()\n", maker.__dict__)
    saved = {n: sys.modules.get(n) for n in ("apppkg", "apppkg.problems", "apppkg.integrate")}
    sys.modules.update({"apppkg": pkg, "apppkg.problems": problems, "apppkg.integrate": maker})
    try:
        frame = maker.make(problems.energy, problems._private)
        args = hk._arguments(frame)
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m
    assert args["itg"] == {"kind": "global", "module": "apppkg.problems", "name": "energy"}
    assert args["other"]["kind"] == "other"  # a private name is no name a file imports


def _ctx(root: Path, made: list[tuple[str, str]]) -> RuleContext:
    """The run made each (key, module) at gen/gen.py:8 (the wp.Kernel call)."""
    (root / "gen").mkdir(parents=True, exist_ok=True)
    (root / "gen/__init__.py").write_text("")
    (root / "gen/gen.py").write_text(textwrap.dedent(GEN))
    creations = [KernelCreation(key=k, module=m, file=str(root / "gen/gen.py"), line=8, function="make",
                                start_ms=10.0 * i) for i, (k, m) in enumerate(made)]
    r = Report(command=["python", "-m", "gen"], cwd=str(root), samples=1, kernel_creations=creations)
    return RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))


def _build(module: str) -> Build:
    return Build(seq=1, module=module, hash="h", hash_short="h", device="cpu", status="compiled", ms=1.0)


def test_the_making_call_names_the_merged_module(tmp_path: Path) -> None:
    mods = [f"gen.dyn.integrate_{n}" for n in ("a_f32", "b_f32", "a_f64")]
    ctx = _ctx(tmp_path, [(m.rsplit(".", 1)[1], m) for m in mods])
    edits, why = call_module_edit(ctx, _build(mods[1]), "gen.dyn.kernels", set(mods))
    assert not why
    (e,) = edits
    assert e.file == "gen/gen.py" and e.start_line == 8
    assert e.new.strip() == 'return wp.Kernel(func=ns[key], key=key, module=wp.get_module("gen.dyn.kernels"))'


def test_the_making_call_is_left_when_it_would_change_what_runs(tmp_path: Path) -> None:
    mods = [f"gen.dyn.integrate_{n}" for n in ("a_f32", "b_f32", "a_f64")]
    outside = "gen.dyn.integrate_c_f32"  # made by the same line, not in the merge: it would join late
    ctx = _ctx(tmp_path / "a", [(m.rsplit(".", 1)[1], m) for m in [*mods, outside]])
    edits, why = call_module_edit(ctx, _build(mods[0]), "gen.dyn.kernels", set(mods))
    assert not edits and outside in why and "join the merged module late" in why
    # two kernels of one key in two modules: in one module the later would replace the earlier
    ctx = _ctx(tmp_path / "b", [("k", mods[0]), ("k", mods[1]), ("j", mods[2])])
    edits, why = call_module_edit(ctx, _build(mods[0]), "gen.dyn.kernels", set(mods))
    assert not edits and "one key in several modules" in why
