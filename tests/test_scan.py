"""The static scan: small realistic projects written to tmp_path, scanned with `ast` only (Warp is never imported)."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import synth_build
from tests.helpers import write_tree as write
from warp_compile.probe.errors import UsageError
from warp_compile.probe.models import KernelInfo, Report
from warp_compile.probe.models.scan import (
    FACT_LISTS,
    CallFact,
    ConfigSetFact,
    ImportFact,
    ImportRef,
    KernelDef,
    ModuleInfo,
    ScanFacts,
)
from warp_compile.probe.rules import late_options
from warp_compile.probe.rules.context import RuleContext, call_sites
from warp_compile.probe.scan import module_name_for, scan


def line_of(root: Path, rel: str, needle: str, nth: int = 0) -> int:
    hits = [i for i, text in enumerate((root / rel).read_text().splitlines(), 1) if needle in text]
    return hits[nth]


# ---- a src-layout package run as `python -m particle_prep` ------------------------------------------------------

SRC_PKG = {
    "pyproject.toml": """
        [project]
        name = "particle-prep"
    """,
    "src/particle_prep/__init__.py": """
        from .pipeline import run
    """,
    "src/particle_prep/__main__.py": """
        import warp as wp

        wp.config.enable_backward = False  # EB-EARLY
        from particle_prep import stages
        wp.config.max_unroll = 4  # UNROLL-LATE
        from . import pipeline


        def main():
            wp.config.mode = "debug"  # MODE-IN-MAIN
            pipeline.run()


        if __name__ == "__main__":
            main()
    """,
    "src/particle_prep/stages.py": """
        from typing import Any

        import warp as wp


        @wp.kernel
        def scale(x: wp.array(dtype=float), s: float):
            i = wp.tid()
            x[i] = x[i] * s


        @wp.kernel(enable_backward=False, module_options={"fast_math": True})
        def shift(x: wp.array(dtype=Any)):
            pass


        @wp.func
        def helper(a: float) -> float:
            return a


        wp.set_module_options({"enable_backward": False, "max_unroll": 2})  # SMO-STAGES


        def make_kernel(offset: float, module="unique"):
            @wp.kernel(module=module)
            def add(x: wp.array(dtype=float)):
                x[wp.tid()] += offset

            return add


        shift_f32 = wp.overload(shift, [wp.array(dtype=wp.float32)])
        wp.overload(shift, {"x": wp.array(dtype=wp.float64)})


        @wp.overload
        def shift(x: wp.array(dtype=wp.float16)):
            ...
    """,
    "src/particle_prep/pipeline.py": """
        import warp
        from warp import config as wcfg
        from warp import launch

        from .stages import make_kernel, scale


        def run(n=16, bd=128):
            x = warp.zeros(n)
            launch(scale, dim=n, inputs=[x, 2.0])  # FIRST-LAUNCH
            warp.set_module_options({"fast_math": True})  # SMO-LATE
            k = make_kernel(1.0)
            warp.launch(k, dim=n, inputs=[x], block_dim=64, device="cuda:0")
            warp.launch_tiled(scale, dim=[n], inputs=[x, 1.0], block_dim=bd)
            with warp.Tape() as tape:
                warp.launch(scale, dim=n, inputs=[x, 1.0])
                forward(x)
            tape.backward()
            wcfg.fast_math = True


        def forward(x):
            warp.launch(kernel=scale, dim=x.shape, inputs=[x, 3.0], adjoint=True)
    """,
}


@pytest.fixture()
def src_pkg(tmp_path: Path) -> tuple[Path, ScanFacts]:
    root = write(tmp_path / "proj", SRC_PKG)
    return root, scan(root)


def test_module_names_src_layout(src_pkg):
    _, facts = src_pkg
    names = {m.file: (m.name, m.main_alias, m.is_package) for m in facts.modules}
    assert names == {
        "src/particle_prep/__init__.py": ("particle_prep", None, True),
        "src/particle_prep/__main__.py": ("particle_prep.__main__", "__main__", False),
        "src/particle_prep/stages.py": ("particle_prep.stages", None, False),
        "src/particle_prep/pipeline.py": ("particle_prep.pipeline", None, False),
    }
    assert facts.files_scanned == 4
    assert facts.uses_warp is True
    assert facts.python_modules_with_kernels == {"particle_prep.stages": "src/particle_prep/stages.py"}
    assert facts.module_info("particle_prep.__main__").has_main_guard
    assert facts.module_of_file("src/particle_prep/stages.py").kernel_count == 3


def test_module_name_for():
    assert module_name_for("src/pkg/__init__.py") == ("pkg", True)
    assert module_name_for("pkg/sub/mod.py") == ("pkg.sub.mod", False)
    assert module_name_for("pkg/__main__.py") == ("pkg.__main__", False)
    assert module_name_for("run.py") == ("run", False)
    assert module_name_for("src.py") == ("src", False)
    assert module_name_for("__init__.py", "pkg", True) == ("pkg", True)
    assert module_name_for("sub/mod.py", "pkg", True) == ("pkg.sub.mod", False)


def test_root_that_is_a_package(tmp_path: Path):
    root = write(
        tmp_path / "src" / "particle_prep",
        {k[len("src/particle_prep/") :]: v for k, v in SRC_PKG.items() if k.startswith("src/")},
    )
    facts = scan(root)
    assert facts.python_modules_with_kernels == {"particle_prep.stages": "stages.py"}
    stages_imp = next(i for i in facts.imports_in("pipeline.py") if i.level == 1)
    assert stages_imp.project_module == "particle_prep.stages" and stages_imp.defines_kernels


def test_kernels_and_functions(src_pkg):
    root, facts = src_pkg
    scale, shift, add = facts.kernels
    assert (scale.name, scale.file, scale.line) == ("scale", "src/particle_prep/stages.py", 7)
    assert scale.line == line_of(root, scale.file, "def scale")
    assert (scale.function, scale.scope, scale.nested, scale.enclosing_function) == ("<module>", "module", False, None)
    assert scale.python_module == scale.warp_module == "particle_prep.stages"
    assert not scale.generic and scale.module_arg is None and scale.enable_backward is None

    assert shift.generic and shift.generic_params == ["x"]
    assert shift.enable_backward is False and shift.enable_backward_text == "False"
    assert shift.module_options and shift.module_options_dict == {"fast_math": "True"}

    assert add.nested and add.enclosing_function == "make_kernel"
    assert (add.function, add.scope, add.qualname) == ("make_kernel", "function", "make_kernel.<locals>.add")
    assert add.module_arg == "unique" and add.module_from_default and add.module_arg_text == "module"
    assert add.warp_module is None

    (helper,) = facts.functions
    assert (helper.kind, helper.name, helper.nested) == ("func", "helper", False)
    assert facts.kernel_by_name("shift") == [shift]
    assert {k.name for k in facts.kernels_in_module("particle_prep.stages")} == {"scale", "shift", "add"}
    assert facts.factory_kernels("make_kernel") == [add]


def test_overloads(src_pkg):
    _, facts = src_pkg
    call_kept, call_dropped, deco = facts.overloads_of("shift")
    assert (call_kept.form, call_kept.types, call_kept.retained) == ("call", "[wp.array(dtype=wp.float32)]", True)
    assert call_dropped.types == "{'x': wp.array(dtype=wp.float64)}" and call_dropped.retained is False
    assert deco.form == "decorator" and deco.types == "x: wp.array(dtype=wp.float16)" and deco.scope == "module"


def test_launches(src_pkg):
    root, facts = src_pkg
    by_line = {la.line: la for la in facts.launches}
    first = by_line[line_of(root, "src/particle_prep/pipeline.py", "FIRST-LAUNCH")]
    assert (first.api, first.kernel, first.kernel_name, first.dim, first.function) == (
        "launch",
        "scale",
        "scale",
        "n",
        "run",
    )
    assert first.block_dim is None and first.device is None and first.adjoint is False

    factory = next(la for la in facts.launches if la.kernel == "k")
    assert factory.kernel_factory == "make_kernel" and factory.kernel_name == "add"
    assert factory.block_dim == 64 and factory.device == "'cuda:0'"

    tiled = next(la for la in facts.launches if la.api == "launch_tiled")
    assert tiled.block_dim == "bd" and tiled.dim == "[n]"

    adj = next(la for la in facts.launches if la.function == "forward")
    assert adj.adjoint is True and adj.kernel == "scale" and adj.dim == "x.shape"
    assert len(facts.launches_of("scale")) == 4
    assert facts.launches_in("src/particle_prep/pipeline.py", "forward") == [adj]


def test_module_options(src_pkg):
    root, facts = src_pkg
    stages, late = sorted(facts.module_options, key=lambda m: m.file, reverse=True)
    assert stages.file == "src/particle_prep/stages.py" and stages.scope == "module"
    assert stages.options == {"enable_backward": "False", "max_unroll": "2"}
    assert stages.target == "particle_prep.stages" and stages.target_has_kernels is True
    assert stages.before_launch_in_file is None  # no launch at stages' module scope

    assert late.line == line_of(root, late.file, "SMO-LATE")
    assert late.target == "particle_prep.pipeline" and late.target_has_kernels is False  # pipeline defines none
    assert late.before_launch_in_file is False  # the run() body launched first


def test_config_sets_and_import_order(src_pkg):
    root, facts = src_pkg
    main = "src/particle_prep/__main__.py"
    early, late, in_main = (
        facts.config_sets_named("enable_backward")
        + facts.config_sets_named("max_unroll")
        + facts.config_sets_named("mode")
    )
    assert early.line == line_of(root, main, "EB-EARLY") and early.copied_at_module_creation
    assert early.after_kernel_imports == [] and early.after_kernel_imports_transitive == []
    # ... but `python -m particle_prep` ran particle_prep/__init__.py first, which imports pipeline -> stages
    assert [(r.module, r.kernel_modules) for r in early.after_package_imports] == [
        ("particle_prep", ["particle_prep.stages"])
    ]

    assert late.line == line_of(root, main, "UNROLL-LATE")
    (ref,) = late.after_kernel_imports
    assert (ref.module, ref.line, ref.created_at_import) == ("particle_prep.stages", 4, True)

    assert in_main.scope == "function" and in_main.function == "main" and in_main.value == "'debug'"
    assert [r.module for r in in_main.after_kernel_imports] == ["particle_prep.stages"]
    trans = {r.module: r.kernel_modules for r in in_main.after_kernel_imports_transitive}
    assert trans == {
        "particle_prep.stages": ["particle_prep.stages"],
        "particle_prep.pipeline": ["particle_prep.stages"],
    }

    (alias_set,) = facts.config_sets_named("fast_math")  # `from warp import config as wcfg`
    assert alias_set.file == "src/particle_prep/pipeline.py" and alias_set.function == "run"
    assert alias_set.after_package_imports == []  # particle_prep/__init__ imports pipeline before anything else


def test_imports_recorded(src_pkg):
    _, facts = src_pkg
    rel = {(i.module, i.level, i.project_module) for i in facts.imports_in("src/particle_prep/pipeline.py")}
    assert ("particle_prep.stages", 1, "particle_prep.stages") in rel
    assert ("warp", 0, None) in rel
    stages_imp = next(i for i in facts.imports if i.project_module == "particle_prep.stages")
    assert stages_imp.defines_kernels and stages_imp.reaches_kernels and stages_imp.scope == "module"
    init_imp = facts.imports_in("src/particle_prep/__init__.py")[0]
    assert init_imp.project_module == "particle_prep.pipeline"
    assert not init_imp.defines_kernels and init_imp.reaches_kernels


def test_settings(src_pkg):
    _, facts = src_pkg
    got = {(s.name, s.via, s.target) for s in facts.settings}
    assert ("enable_backward", "config", None) in got
    assert ("enable_backward", "kernel_kwarg", "shift") in got
    assert ("fast_math", "kernel_kwarg", "shift") in got
    assert ("max_unroll", "module_options", "particle_prep.stages") in got
    assert ("fast_math", "module_options", "particle_prep.pipeline") in got
    assert ("mode", "config", None) in got


def test_tapes(src_pkg):
    _, facts = src_pkg
    (tape,) = facts.tapes
    assert tape.with_block and tape.var == "tape" and tape.function == "run"
    assert tape.launched_kernels == ["scale"] and tape.calls == ["forward"] and tape.indirect_kernels == ["scale"]
    assert tape.backward_lines == [tape.end_line + 1]
    (bw,) = facts.tape_backward_calls
    assert bw.var == "tape" and bw.line == tape.end_line + 1
    assert facts.tapes_launching("scale") == [tape]


# ---- a flat project with a top-level script: cache handling, loading, tiles, loops ------------------------------

FLAT = {
    "run.py": """
        import atexit
        import os
        import shutil
        import tempfile
        import time

        import warp as wp
        import warp.config as cfg

        import solver.kernels

        cache = tempfile.mkdtemp(prefix="warp")
        wp.config.kernel_cache_dir = cache
        os.environ["WARP_CACHE_PATH"] = f"/srv/cache/{time.time()}"
        os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
        atexit.register(shutil.rmtree, cache)
        wp.config.cache_kernels = False
        cfg.enable_backward = False
        setattr(wp.config, "use_precompiled_headers", False)
        wp.config.load_module_max_workers = 4
        wp.clear_kernel_cache()
        wp.clear_lto_cache()
        wp.get_module("solver.kernels").unload()
        wp.get_module("solver.kernels").options["fast_math"] = True
        grouped = wp.get_module("named_group")
        grouped.options.update({"enable_backward": False})
        wp.force_load(max_workers=4)
        wp.load_module("solver.kernels", device="cuda:0", max_workers=2)
        wp.force_load(device=["cuda:0", "cpu"], modules=[solver.kernels], max_workers=8, block_dim=64)
        try:
            wp.load_module("solver.typo", device="cpu")
        except RuntimeError:
            pass


        def cleanup(d):
            shutil.rmtree(d)


        def wipe():
            shutil.rmtree(os.environ["WARP_CACHE_PATH"])


        def stamped():
            stamp = time.strftime("%Y%m%d-%H%M%S")
            path = os.path.join("/var/cache", stamp)
            wp.config.kernel_cache_dir = path


        if __name__ == "__main__":
            tape = wp.Tape()
            tape.backward()
    """,
    "solver/__init__.py": "",
    "solver/config.py": """
        import warp as wp

        wp.set_module_options({"enable_backward": False})
    """,
    "solver/kernels.py": """
        import warp as wp

        N = 8
        M = wp.constant(3)


        @wp.kernel
        def unrolled(x: wp.array(dtype=float)):
            for i in range(4):
                x[i] = 0.0
            for j in range(wp.static(N)):
                x[j] = 1.0
            for k in range(0, 16, 2):
                x[k] = 2.0
            for m in range(M * 2):
                x[m] = 3.0
            for n in range(x.shape[0]):
                x[n] = 4.0
            t = wp.tile_load(x, shape=8)
            c = wp.tile_matmul(t, t)


        @wp.kernel(module="named_group")
        def grouped(x: wp.array(dtype=float)):
            pass


        def not_a_kernel():
            for i in range(4):
                wp.tile_matmul(1, 2)
    """,
}


@pytest.fixture()
def flat(tmp_path: Path) -> tuple[Path, ScanFacts]:
    root = write(tmp_path / "flat", FLAT)
    return root, scan(root)


def test_flat_module_names(flat):
    _, facts = flat
    run = facts.module_of_file("run.py")
    assert (run.name, run.main_alias, run.has_main_guard) == ("run", "__main__", True)
    assert facts.module_of_file("solver/kernels.py").name == "solver.kernels"
    assert facts.module_of_file("solver/__init__.py").name == "solver"


def test_cache_ops(flat):
    root, facts = flat
    kinds = [c.kind for c in facts.cache_ops]
    assert kinds.count("clear_kernel_cache") == 1 and kinds.count("clear_lto_cache") == 1

    (no_cache,) = facts.cache_ops_of("cache_kernels_false")
    assert no_cache.file == "run.py" and no_cache.value == "False"

    config_dir, env_dir, stamped = facts.cache_ops_of("kernel_cache_dir")
    assert (config_dir.via, config_dir.value, config_dir.temporary, config_dir.timestamped) == (
        "config",
        "cache",
        True,
        False,
    )
    assert env_dir.via == "env" and env_dir.timestamped and not env_dir.temporary
    assert stamped.function == "stamped" and stamped.timestamped and not stamped.temporary

    removed = facts.cache_ops_of("cache_dir_removed")
    assert {(r.value, r.atexit, r.mentions_cache) for r in removed} == {
        ("cache", True, True),
        ("os.environ['WARP_CACHE_PATH']", False, True),
    }  # cleanup(d) removes a directory unrelated to any cache: not reported

    (disable,) = facts.cache_ops_of("cuda_cache_disable")
    assert disable.value == "'1'" and disable.line == line_of(root, "run.py", "CUDA_CACHE_DISABLE")

    (unload,) = facts.cache_ops_of("unload")
    assert unload.target == "solver.kernels" and unload.certain


def test_config_sets_flat(flat):
    _, facts = flat
    (eb,) = facts.config_sets_named("enable_backward")  # via `import warp.config as cfg`
    assert [r.module for r in eb.after_kernel_imports] == ["solver.kernels"]
    (pch,) = facts.config_sets_named("use_precompiled_headers")  # setattr(wp.config, ...)
    assert pch.value == "False"
    assert {s.name for s in facts.settings_named("use_precompiled_headers")} == {"use_precompiled_headers"}
    assert facts.settings_named("load_module_max_workers")[0].value == "4"


def test_get_module_options(flat):
    _, facts = flat
    opts = {(m.api, m.target, tuple(m.options.items()), m.target_has_kernels) for m in facts.module_options}
    assert ("get_module_options", "solver.kernels", (("fast_math", "True"),), True) in opts
    assert ("get_module_options", "named_group", (("enable_backward", "False"),), True) in opts  # module="named_group"
    cfg_mod = next(m for m in facts.module_options if m.file == "solver/config.py")
    assert cfg_mod.api == "set_module_options" and cfg_mod.target == "solver.config"
    assert cfg_mod.target_has_kernels is False  # a bare set_module_options in a file without kernels
    assert cfg_mod.before_launch_in_file is None


def test_load_calls(flat):
    _, facts = flat
    bare, cuda_only, mixed, swallowed = facts.load_calls
    assert (bare.api, bare.modules_none, bare.max_workers, bare.device, bare.cpu_possible) == (
        "force_load",
        True,
        4,
        None,
        True,
    )
    assert (cuda_only.api, cuda_only.modules, cuda_only.device, cuda_only.cpu_possible) == (
        "load_module",
        "'solver.kernels'",
        "'cuda:0'",
        False,
    )
    assert cuda_only.max_workers == 2 and not cuda_only.modules_none
    assert mixed.cpu_possible and mixed.modules_list == ["solver.kernels"] and mixed.block_dim == "64"
    assert not mixed.modules_none and mixed.max_workers == 8
    assert swallowed.swallowed and swallowed.cpu_possible and not bare.swallowed


def test_tiles_and_loops(flat):
    _, facts = flat
    ops = [(t.op, t.kernel, t.mathdx) for t in facts.tile_ops]
    assert ops == [("tile_load", "unrolled", False), ("tile_matmul", "unrolled", True)]  # not from not_a_kernel
    loops = [(lp.kernel, lp.bound, lp.static, lp.from_constant) for lp in facts.loops]
    assert loops == [
        ("unrolled", 4, False, False),
        ("unrolled", 8, True, True),
        ("unrolled", 8, False, False),
        ("unrolled", 6, False, True),
    ]
    assert all(lp.function == "unrolled" and lp.scope == "function" for lp in facts.loops)


def test_bare_tape_and_named_module(flat):
    _, facts = flat
    (tape,) = facts.tapes
    assert tape.var == "tape" and not tape.with_block and tape.backward_lines
    grouped = facts.kernel_by_name("grouped")[0]
    assert grouped.module_arg == "named_group" and grouped.warp_module == "named_group"
    assert facts.kernels_in_module("named_group") == [grouped]


# ---- aliases, relative imports, nested definitions ---------------------------------------------------------------


def test_aliases_star_and_relative_imports(tmp_path: Path):
    root = write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/core/__init__.py": "",
            "app/core/ops.py": """
                from warp import *

                @kernel
                def k1(a: array(dtype=float)):
                    pass
            """,
            "app/core/direct.py": """
                import warp
                from warp import kernel as K, launch as L

                @K
                def k2(a: warp.array(dtype=float)):
                    pass

                def go():
                    L(k2, dim=1)
                    warp.launch(k2, dim=2)
            """,
            "app/main.py": """
                from typing import TYPE_CHECKING

                import warp as wp

                if TYPE_CHECKING:
                    from .core import ops as _ops_for_typing
                wp.config.lineinfo = True
                from .core import ops
                from .core.direct import go
                from .. import outside
                wp.config.enable_backward = False
            """,
        },
    )
    facts = scan(root)
    assert {k.name: k.python_module for k in facts.kernels} == {"k1": "app.core.ops", "k2": "app.core.direct"}
    assert [la.kernel_name for la in facts.launches] == ["k2", "k2"]
    imps = {(i.module, i.project_module, i.type_checking) for i in facts.imports_in("app/main.py")}
    assert ("app.core.ops", "app.core.ops", True) in imps
    assert ("app.core.ops", "app.core.ops", False) in imps
    assert ("app.core.direct", "app.core.direct", False) in imps
    lineinfo = facts.config_sets_named("lineinfo")[0]
    assert lineinfo.after_kernel_imports == []  # the TYPE_CHECKING import never runs
    eb = facts.config_sets_named("enable_backward")[0]
    assert [r.module for r in eb.after_kernel_imports] == ["app.core.ops", "app.core.direct"]


def test_kernel_call_form_and_factory_default(tmp_path: Path):
    root = write(
        tmp_path,
        {
            "factory.py": """
                import warp as wp

                UNIQUE = "unique"


                def make(scale, *, module="unique"):
                    def body(x: wp.array(dtype=float)):
                        x[0] = scale

                    k = wp.kernel(body, module=module)
                    return k


                def named():
                    def body2(x: wp.array(dtype=wp.Float)):
                        pass

                    return wp.kernel(module=UNIQUE)(body2)


                def run(x):
                    k = make(2.0)
                    wp.launch(k, dim=1, inputs=[x])
            """,
        },
    )
    facts = scan(root)
    made, named = facts.kernels
    assert (made.name, made.form, made.nested, made.enclosing_function) == ("body", "call", True, "make")
    assert made.module_arg == "unique" and made.module_from_default
    assert (named.name, named.module_arg, named.module_from_default) == ("body2", "unique", False)
    assert named.generic and named.generic_params == ["x"]  # wp.Float is a generic annotation
    (launch,) = facts.launches
    assert launch.kernel_factory == "make" and launch.kernel_name == "body"


def test_a_module_parameter_takes_the_literal_every_call_passes(tmp_path: Path):
    """`module=` bound to a parameter with no default: the callers decide it. One literal from every call (by keyword
    or by position) is the kernel's module; calls that differ, pass a variable, or unpack arguments leave it unknown,
    and a method's positional calls are not matched (self is implicit)."""
    root = write(
        tmp_path,
        {
            "app.py": """
                import warp as wp


                def reset(data, mask=None, *, module):
                    @wp.kernel(module=module)
                    def clear(x: wp.array(dtype=float)):
                        x[0] = 0.0

                    wp.launch(clear, dim=1, inputs=[data])


                def scale(data, module):
                    @wp.kernel(module=module)
                    def twice(x: wp.array(dtype=float)):
                        x[0] = 2.0 * x[0]

                    wp.launch(twice, dim=1, inputs=[data])


                def mixed(data, module):
                    @wp.kernel(module=module)
                    def half(x: wp.array(dtype=float)):
                        x[0] = 0.5 * x[0]

                    wp.launch(half, dim=1, inputs=[data])


                def zero(data, *, module="unique"):
                    @wp.kernel(module=module)
                    def nil(x: wp.array(dtype=float)):
                        x[0] = 0.0

                    wp.launch(nil, dim=1, inputs=[data])


                def run(d, where, args):
                    zero(d)
                    zero(d, module="unique")
                    reset(d, module="unique")
                    reset(d, mask=None, module="unique")
                    scale(d, "app.shared")
                    mixed(d, "unique")
                    mixed(d, where)
                    mixed(*args)
            """,
        },
    )
    facts = scan(root)
    by_name = {k.name: k for k in facts.kernels}
    clear, twice, half = by_name["clear"], by_name["twice"], by_name["half"]
    assert (clear.module_arg, clear.module_from_callers, clear.warp_module) == ("unique", True, None)
    assert (clear.module_param, clear.module_param_index) == ("module", None)  # keyword-only
    assert (twice.module_arg, twice.module_from_callers, twice.warp_module) == ("app.shared", True, "app.shared")
    assert twice.module_param_index == 1
    assert (half.module_arg, half.module_from_callers, half.warp_module) == (None, False, None)
    assert not clear.module_from_default
    nil = by_name["nil"]  # a literal default every call leaves or repeats
    assert (nil.module_arg, nil.module_from_default, nil.module_from_callers, nil.module_param) == (
        "unique", True, True, "module")


# ---- negative cases, robustness -----------------------------------------------------------------------------------


def test_project_without_warp(tmp_path: Path):
    root = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/util.py": """
                import os
                import shutil

                config = object()


                def launch(kernel, dim):
                    return kernel


                def clean(d):
                    shutil.rmtree(d)
                    os.environ["OTHER"] = "1"


                launch(print, dim=3)
            """,
        },
    )
    facts = scan(root)
    assert facts.files_scanned == 2 and facts.uses_warp is False
    for name in FACT_LISTS:
        if name != "imports":  # the stdlib imports are still recorded
            assert getattr(facts, name) == [], name
    assert facts.python_modules_with_kernels == {}


def test_syntax_error_does_not_stop_scan_and_nothing_executes(tmp_path: Path):
    marker = tmp_path / "IMPORTED"
    root = write(
        tmp_path / "proj",
        {
            "broken.py": "def f(:\n    pass\n",
            "nul.py": "x = 1\n",
            "side_effects.py": f"""
                import pathlib
                import sys

                import warp as wp

                pathlib.Path({str(marker)!r}).write_text("ran")
                sys.exit("scan must never run this")
                raise RuntimeError("never")


                @wp.kernel
                def k(x: wp.array(dtype=float)):
                    pass
            """,
        },
    )
    (root / "nul.py").write_bytes(b"x = 1\x00\n")
    before = set(sys.modules)
    facts = scan(root)
    assert not marker.exists()
    assert "side_effects" not in sys.modules and "broken" not in sys.modules
    assert "warp" not in set(sys.modules) - before  # scanning never imports warp either
    errors = {e.file: e.reason for e in facts.parse_errors}
    assert set(errors) == {"broken.py", "nul.py"}
    assert errors["broken.py"].startswith("SyntaxError") and "line 1" in errors["broken.py"]
    assert "\n" not in errors["nul.py"]
    assert [k.name for k in facts.kernels] == ["k"] and facts.files_scanned == 1


def test_skipped_directories_and_limits(tmp_path: Path):
    kernel_src = """
        import warp as wp

        @wp.kernel
        def k(x: wp.array(dtype=float)):
            pass
    """
    root = write(
        tmp_path,
        {
            "app.py": kernel_src,
            ".hidden/h.py": kernel_src,
            "venv/lib/v.py": kernel_src,
            "venv/pyvenv.cfg": "home = /usr\n",
            "lib/site-packages/s.py": kernel_src,
            "build/b.py": kernel_src,
            "dist/d.py": kernel_src,
            "node_modules/n.py": kernel_src,
            "pkg/__pycache__/c.py": kernel_src,
            "big.py": "x = 1\n" * 100,
        },
    )
    facts = scan(root)
    assert [k.file for k in facts.kernels] == ["app.py"]
    assert facts.skipped_files == [] and not facts.truncated

    small = scan(root, max_bytes=300)
    assert [s.file for s in small.skipped_files] == ["big.py"]
    limited = scan(root, max_files=1)
    assert limited.truncated and limited.files_scanned == 1


def test_missing_root_and_single_file(tmp_path: Path):
    with pytest.raises(UsageError):
        scan(tmp_path / "nope")
    f = write(tmp_path, {"one.py": "import warp as wp\nwp.config.mode = 'debug'\n"}) / "one.py"
    facts = scan(f)
    assert facts.files_scanned == 1 and facts.config_sets[0].file == "one.py"


def test_main_guard_scripts_and_module_arg_set_module_options(tmp_path: Path):
    root = write(
        tmp_path,
        {
            "scripts/bench.py": """
                import sys

                import warp as wp
                from solver import kernels

                wp.set_module_options({"block_dim": 64}, module=kernels)
                wp.set_module_options({"fast_math": True}, module=sys.modules[__name__])
                wp.set_module_options({"mode": "debug"}, module=wp.get_module("solver.kernels"))
                THIS = sys.modules[__name__]
                wp.set_module_options({"max_unroll": 1}, module=THIS)
                kernels.k.module.options["lineinfo"] = True

                if __name__ == "__main__":
                    pass
            """,
            "src/solver/__init__.py": "",
            "src/solver/kernels.py": """
                import warp as wp

                @wp.kernel
                def k(x: wp.array(dtype=float)):
                    pass
            """,
        },
    )
    facts = scan(root)
    bench = facts.module_of_file("scripts/bench.py")
    assert bench.name == "scripts.bench" and bench.main_alias == "__main__"
    mod_arg, self_mod, gm, via_var, via_kernel = facts.module_options
    assert via_var.target == "scripts.bench" and via_var.target_resolved
    assert (via_kernel.api, via_kernel.target, via_kernel.options) == (
        "get_module_options",
        "solver.kernels",
        {"lineinfo": "True"},
    )
    assert via_kernel.target_resolved and via_kernel.target_has_kernels
    assert (mod_arg.target, mod_arg.module_arg, mod_arg.target_has_kernels) == ("solver.kernels", "kernels", True)
    assert self_mod.target == "scripts.bench" and not self_mod.target_has_kernels
    assert gm.module_arg_is_get_module and gm.target == "solver.kernels"
    assert facts.settings_named("block_dim")[0].via == "module_options"


def test_cache_variants(tmp_path: Path):
    root = write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/cache.py": """
                import atexit
                import datetime
                import os
                import shutil
                import subprocess
                import tempfile
                import uuid
                from os import environ

                import warp as wp

                CACHE_DIR = os.path.expanduser("~/.cache/app")


                @atexit.register
                def _cleanup():
                    shutil.rmtree(CACHE_DIR, ignore_errors=True)


                def per_run():
                    with tempfile.TemporaryDirectory() as d:
                        wp.config.kernel_cache_dir = d
                    environ.update({"WARP_CACHE_PATH": f"/data/{uuid.uuid4().hex}"})
                    os.environ.update(CUDA_CACHE_PATH=f"/data/{datetime.datetime.now():%s}")
                    wp.build.init_kernel_cache("/tmp/warp")


                def child():
                    env = {**os.environ, "CUDA_CACHE_DISABLE": "1"}
                    subprocess.run(["python", "x.py"], env=env)


                def test_it(monkeypatch, kernel, thing):
                    monkeypatch.setenv("CUDA_CACHE_DISABLE", "1")
                    kernel.module.unload()
                    thing.unload()
            """,
        },
    )
    facts = scan(root)
    dirs = facts.cache_ops_of("kernel_cache_dir")
    assert [(c.via, c.temporary, c.timestamped) for c in dirs] == [
        ("config", True, False),
        ("env", False, True),
        ("init_kernel_cache", True, False),
    ]
    (cuda_path,) = facts.cache_ops_of("cuda_cache_path")
    assert cuda_path.timestamped and cuda_path.via == "env"
    disable = facts.cache_ops_of("cuda_cache_disable")
    assert [(c.via, c.function) for c in disable] == [("env_dict", "child"), ("env", "test_it")]
    (removed,) = facts.cache_ops_of("cache_dir_removed")
    assert removed.atexit and removed.mentions_cache and removed.function == "_cleanup"
    certain, uncertain = facts.cache_ops_of("unload")
    assert certain.value == "kernel.module" and certain.certain and certain.target is None
    assert uncertain.value == "thing" and not uncertain.certain


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_named_py_is_skipped_not_read(tmp_path):
    """Reading a FIFO blocks until a writer comes: the scan must never open one."""
    (tmp_path / "app.py").write_text("import warp as wp\n")
    os.mkfifo(tmp_path / "pipe.py")
    facts = scan(tmp_path)
    assert [(s.file, s.reason) for s in facts.skipped_files] == [("pipe.py", "not a regular file")]


def test_a_directory_that_cannot_be_inspected_is_left_out(tmp_path, monkeypatch):
    (tmp_path / "app.py").write_text("import warp as wp\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "inner.py").write_text("import warp as wp\n")
    real_exists = Path.exists

    def exists(self, *args, **kwargs):
        if self.parent.name == "locked":
            raise PermissionError(13, "Permission denied")
        return real_exists(self, *args, **kwargs)

    monkeypatch.setattr(Path, "exists", exists)
    facts = scan(tmp_path)
    assert facts.files_scanned == 1  # app.py only: the directory that raised was skipped, not fatal


# ---- facts the rules read instead of the files ------------------------------------------------------------------

CALLS_TREE = {
    "app/__init__.py": "",
    "app/__main__.py": """
        import warp as wp
        from app import helpers


        class Runner:
            def go(self):
                self.step(helpers.prepare(len([1])))

            def step(self, n):
                print(n)


        def main():
            Runner().go()


        if __name__ == "__main__":
            main()
    """,
    "app/helpers.py": """
        from app import setup


        def prepare(n):
            def inner():
                return setup.register(n)
            return inner()
    """,
    "app/setup.py": """
        from typing import Any

        import warp as wp


        @wp.kernel
        def scale(x: wp.array(dtype=Any), s: float):
            i = wp.tid()


        def register(n):
            wp.overload(scale, {"x": wp.array(dtype=wp.float32)})
            return n
    """,
}


def test_call_facts_lead_to_late_overload_registrations(tmp_path):
    """register() holds a function-scope wp.overload: its calls, its callers' calls and theirs, three names deep, in
    every file (helpers.py never mentions warp, so the scan only skims it). Calls that lead nowhere near a
    registration (step, main, and go: a fourth level) are not kept."""
    facts = scan(write(tmp_path, CALLS_TREE))
    got = [(c.file, c.line, c.function, c.scope, c.name) for c in facts.calls]
    assert got == [
        ("app/__main__.py", 7, "Runner.go", "function", "prepare"),
        ("app/helpers.py", 6, "prepare.<locals>.inner", "function", "register"),
        ("app/helpers.py", 7, "prepare", "function", "inner"),
    ]
    assert [c.function_name for c in facts.calls_named("prepare")] == ["go"]


def test_import_facts_carry_their_source_line(tmp_path):
    write(
        tmp_path,
        {
            "app.py": """
                import os, sys  # two at once
                from json import (
                    dumps,
                    loads,
                )
            """
        },
    )
    facts = scan(tmp_path)
    assert {i.module: i.source_line for i in facts.imports} == {
        "os": "import os, sys  # two at once",
        "sys": "import os, sys  # two at once",
        "json": "from json import (",  # a multi-line import: its first line
    }
    assert facts.source_line("app.py", 2) == "from json import (" and facts.source_line("app.py", 3) is None


FS_CALLS = frozenset(
    {"open", "read_text", "read_bytes", "exists", "is_file", "is_dir", "stat", "lstat", "walk", "listdir", "scandir"}
    | {"glob", "rglob", "iterdir", "getline", "getlines", "parse", "samefile", "resolve", "realpath", "access"}
)
FS_MODULES = frozenset({"ast", "linecache", "tokenize", "io", "glob", "shutil", "tempfile"})


def file_system_uses(source: str, allow_ast: bool = False) -> list[str]:
    """Calls that read or probe files (`open(`, `.read_text(`, `ast.parse(`, `.exists(` ...) and imports of modules
    for reading or parsing sources, by line. `allow_ast`: `ast.parse` / `ast.walk` over text are not file access
    (rules parse the lines `ctx.sources` hands them, to find the exact text an edit replaces)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            on_ast = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ast"
            if allow_ast and on_ast:
                continue
            if name in FS_CALLS:
                found.append((node.lineno, f"{name}()"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [
                (node.lineno, f"import {m}") for m in mods
                if m.split(".")[0] in FS_MODULES and not (allow_ast and m == "ast")
            ]
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_the_check_below_sees_file_access():
    """The static check must be able to fail: the old ways the rules read sources are all caught."""
    old = (
        "import ast\nfrom pathlib import Path\n"
        "def f(p, ctx):\n"
        "    tree = ast.parse(Path(p).read_text(encoding='utf-8'))\n"
        "    if (ctx.root / p).exists() and Path(p).is_file():\n"
        "        return open(p).read(), Path(p).stat().st_mtime_ns\n"
    )
    assert file_system_uses(old) == [
        "1: import ast",
        "4: parse()",
        "4: read_text()",
        "5: exists()",
        "5: is_file()",
        "6: open()",
        "6: stat()",
    ]


def test_rules_never_touch_the_file_system():
    """Rules are functions of (report, scan facts): nothing under probe/rules/ opens, reads, parses or probes a file,
    so a saved report and scan diagnose the same wherever and whenever they are read."""
    rules_dir = Path(__file__).resolve().parents[1] / "probe" / "rules"
    sources = sorted(rules_dir.glob("*.py"))
    assert len(sources) >= 14  # every rule module plus context and the registry
    offenders = {p.name: hits for p in sources if (hits := file_system_uses(p.read_text(), allow_ast=True))}
    assert offenders == {}
    assert file_system_uses("import ast\nast.parse(open(p).read())\n", allow_ast=True) == ["2: open()"]


def _deadline_report(cwd: str) -> Report:
    """One build of app.kernels that kept max_unroll=16 while wp.config said 4: the late assignment never arrived."""
    build = synth_build(
        1,
        "app.kernels",
        "a",
        ms=420.0,
        options={"max_unroll": "16"},
        config_shadow={"max_unroll": ["16", "4"]},
        kernels=[KernelInfo(key="step", file=f"{cwd}/app/kernels.py", line=4)],
    )
    return Report(builds=[build], warp_version="1.19.0", command=["python", "-m", "app"], cwd=cwd, samples=1)


def _deadline_findings(ctx: RuleContext) -> list:
    return [f for f in late_options.evaluate(ctx).findings if "max_unroll" in f.title]


def test_late_options_finding_from_facts_built_in_memory():
    """No tree anywhere: the scan facts are written by hand, and the fix quotes the import line they carry."""
    line = "from app import kernels as sk, plots  # the solver's kernels"
    facts = ScanFacts(
        root="/nowhere/proj",
        modules=[
            ModuleInfo(file="app/__main__.py", name="app.__main__", main_alias="__main__"),
            ModuleInfo(file="app/kernels.py", name="app.kernels", kernel_count=1, module_scope_kernel_count=1),
        ],
        imports=[
            ImportFact(
                file="app/__main__.py",
                line=2,
                module="app.kernels",
                names=["sk"],
                project_module="app.kernels",
                defines_kernels=True,
                reaches_kernels=True,
                source_line=line,
            )
        ],
        kernels=[KernelDef(file="app/kernels.py", line=4, name="step", qualname="step", python_module="app.kernels")],
        config_sets=[
            ConfigSetFact(
                file="app/__main__.py",
                line=4,
                name="max_unroll",
                value="4",
                copied_at_module_creation=True,
                after_kernel_imports=[
                    ImportRef(module="app.kernels", line=2, kernel_modules=["app.kernels"], created_at_import=True)
                ],
            )
        ],
        calls=[CallFact(file="app/__main__.py", line=9, function="main", scope="function", name="run")],
    )
    ctx = RuleContext(report=_deadline_report("/nowhere/proj"), scan=facts, root=None)
    (finding,) = _deadline_findings(ctx)
    assert finding.mechanism == "CS-3" and finding.modules == ["app.kernels"]
    assert "above `from app import kernels as sk, plots` (line 2 of app/__main__.py)" in finding.fix
    assert [(c.file, c.line, c.function_name) for c in call_sites(ctx, "run")] == [("app/__main__.py", 9, "main")]


DEADLINE_TREE = {
    "app/__init__.py": "",
    "app/plots.py": "",
    "app/kernels.py": """
        import warp as wp

        @wp.kernel
        def step(x: wp.array(dtype=float)):
            i = wp.tid()
    """,
    "app/__main__.py": """
        import warp as wp
        from app import kernels as sk, plots  # the solver's kernels

        wp.config.max_unroll = 4
    """,
}


def test_a_saved_scan_diagnoses_the_same_after_the_sources_change(tmp_path):
    """The fix quotes the import as it was when scanned; editing or deleting the sources afterwards changes nothing."""
    root = write(tmp_path, DEADLINE_TREE)
    saved = scan(root).model_dump_json()
    report = _deadline_report(str(root))

    def fix() -> str:
        facts = ScanFacts.model_validate_json(saved)
        (finding,) = _deadline_findings(RuleContext(report=report, scan=facts, root=root))
        return finding.fix

    before = fix()
    assert "above `from app import kernels as sk, plots` (line 2 of app/__main__.py)" in before
    main = root / "app" / "__main__.py"
    main.write_text(main.read_text().replace("kernels as sk, plots", "kernels as renamed"))
    assert fix() == before
    main.unlink()
    assert fix() == before
