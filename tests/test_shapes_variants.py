"""Generated variants of the corpus shapes (issue 39, item 4): tests/shapes_variants/mutate.py rewrites each app's
kernel-creation shape (where, when, how cached, how module= is passed, late or module-level imports, dataclass or
plain class, under branches or in a loop) and `fix` is judged on the result.

The default tier checks the transformations on the syntax tree (no Warp run); the slow tier runs two variants beside
their originals; the heavy tier runs `fix --write --unsafe-fixes` on a sample and wants a proven edit written with
the same output. bench/variants.py records reach per family (bench/VARIANTS.md).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.shapes_variants.mutate import (
    TRANSFORMS,
    App,
    NotApplicable,
    Variant,
    check,
    generate,
    is_kernel_def,
    plain_lines,
)

SHAPES = Path(__file__).parent / "shapes"
APPS = {a["name"]: a for a in json.loads((SHAPES / "MANIFEST.json").read_text())}
FEW = ["kernel_memo", "grad_import", "tile_config_shared", "reset_worlds", "energy_zoo", "ik_specializer"]


@functools.cache
def _variants(name: str) -> tuple[App, dict[str, Variant], dict[str, str]]:
    app = App.load(name)
    made, skipped = generate(app)
    return app, {f"{v.family}/{v.transform}": v for v in made}, skipped


def _tree(v: Variant, path: str) -> ast.Module:
    return ast.parse(v.changed[path])


def _only(v: Variant) -> tuple[str, ast.Module]:
    """The variant's one changed file of the package (a transformation that changed one)."""
    (path,) = [p for p in v.changed if not p.endswith("_kernel_memo.py")]
    return path, _tree(v, path)


@pytest.mark.parametrize("name", FEW)
def test_every_variant_parses_and_differs_from_the_original_only_in_the_files_it_names(name: str) -> None:
    app, variants, skipped = _variants(name)
    assert variants, skipped
    for key, v in variants.items():
        assert v.sites, key
        for path, text in v.changed.items():
            new = ast.parse(text)  # it parses
            if path in app.files:  # and it is not the original written out again
                assert ast.dump(new) != ast.dump(ast.parse(app.files[path])), (key, path)
        # every transformation either made a variant or named the precondition that failed
    assert set(variants) | set(skipped) == {f"{f}/{t}" for f, ts in TRANSFORMS.items() for t in ts}
    assert all(len(why) > 15 for why in skipped.values())


def test_where_a_factory_is_made_a_method_and_a_closure_in_init_and_a_method_a_module_function() -> None:
    _, variants, _ = _variants("kernel_memo")
    path, tree = _only(variants["where/method"])
    holders = [c for c in tree.body if isinstance(c, ast.ClassDef)]
    methods = {m.name: m for c in holders for m in c.body if isinstance(m, ast.FunctionDef)}
    assert {"init_accel", "project_contacts"} <= set(methods)
    assert methods["init_accel"].args.args[0].arg == "self"
    assert any(is_kernel_def(n) for n in ast.walk(methods["init_accel"]))
    assert "init_accel = _InitAccelKernels().init_accel" in ast.unparse(tree)
    assert not any(isinstance(n, ast.FunctionDef) and n.name == "init_accel" for n in tree.body)

    _, tree = _only(variants["where/init_closure"])
    init = next(m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body
                if isinstance(m, ast.FunctionDef) and m.name == "__init__")
    assert any(isinstance(n, ast.FunctionDef) and n.name == "init_accel" for n in init.body)

    _, variants, _ = _variants("ik_specializer")
    v = variants["where/module_function"]
    tree = _tree(v, "ik_specializer/solver.py")
    moved = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("_LMSolver_")]
    assert moved and any(is_kernel_def(n) for m in moved for n in ast.walk(m))


def test_when_a_module_level_kernel_is_made_on_first_use_and_launches_call_the_getter() -> None:
    _, variants, _ = _variants("kernel_memo")
    _, tree = _only(variants["when/first_use"])
    assert not any(is_kernel_def(n) for n in tree.body)  # `integrate` is no longer made at import
    getter = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_get_integrate")
    assert ast.unparse(getter.decorator_list[0]) == "functools.cache"
    assert any(is_kernel_def(n) and n.name == "integrate" for n in getter.body)
    launches = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "wp.launch"]
    assert "_get_integrate()" in {ast.unparse(c.args[0]) for c in launches}

    _, tree = _only(variants["when/first_use_global"])
    assert "global _integrate_made" in ast.unparse(tree)


def test_how_cached_swaps_the_decorator_for_another_cache_and_a_dict_registry() -> None:
    _, variants, skipped = _variants("tile_config_shared")
    _, tree = _only(variants["cache/lru_cache"])
    fac = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "block_kernels")
    assert [ast.unparse(d) for d in fac.decorator_list] == ["functools.lru_cache(maxsize=None)"]
    _, tree = _only(variants["cache/dict_registry"])
    assert "_BLOCK_KERNELS_REGISTRY" in ast.unparse(tree)
    fac = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "block_kernels")
    assert not fac.decorator_list
    v = variants["cache/project_decorator"]
    assert "tile_config_shared/_kernel_memo.py" in v.changed
    assert "from ._kernel_memo import memo_kernels" in v.changed["tile_config_shared/blocks.py"]
    # a factory already on functools.cache is not "changed" to it: the precondition says so
    _, variants, skipped = _variants("dtype_module_bank")
    assert "already uses functools.cache" in skipped["cache/functools_cache"]
    # no caching decorator at all: named
    _, _, skipped = _variants("reset_worlds")
    assert "caching decorator" in skipped["cache/lru_cache"]


def test_how_module_is_passed_positional_keyword_and_keyword_only_with_a_default() -> None:
    _, variants, skipped = _variants("reset_worlds")
    _, tree = _only(variants["module/kwonly_default"])
    reset = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reset")
    assert [a.arg for a in reset.args.kwonlyargs] == ["module"]
    assert ast.unparse(reset.args.kw_defaults[0]) == "'unique'"
    assert "kernel(module='unique'" not in ast.unparse(reset)
    assert "kernel(module=module" in ast.unparse(reset)
    _, variants, skipped = _variants("kernel_memo")
    v = variants["module/positional"]
    text = v.changed["kernel_memo/solver.py"]
    assert "init_accel(warm, model['sparse'], 'unique')" in text
    # keyword: the project memo forwards *args only, so the precondition names the decorator
    assert "@memo_kernel" in skipped["module/keyword"]


def test_late_and_module_level_imports_and_the_cycle_that_keeps_one_late() -> None:
    _, variants, skipped = _variants("grad_import")
    tree = _tree(variants["import/module_level"], "grad_import/checks.py")
    assert any(isinstance(n, ast.ImportFrom) and n.module == "customs" for n in tree.body)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert not any(isinstance(s, ast.ImportFrom) for f in fns for s in f.body)
    # ik_specializer's late import is late because joints.py imports solver.py back
    _, variants, skipped = _variants("ik_specializer")
    assert "imports this file back (a cycle)" in skipped["import/module_level"]
    # index_dispatch's late import is its mechanism: joints.py registers generic instances while it is imported
    # (IndexDispatch(...) at module level), after their module loaded; at module level there would be no CS-6 left
    _, variants, skipped = _variants("index_dispatch")
    assert "import/module_level" not in variants
    assert "index_dispatch/joints.py makes kernels or kernel instances while it is imported" in \
        skipped["import/module_level"], skipped
    _, variants, _ = _variants("kernel_memo")
    tree = _tree(variants["import/late"], "kernel_memo/__main__.py")
    assert not any(isinstance(n, ast.ImportFrom) and n.module == "solver" for n in tree.body)
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert ast.unparse(main.body[0]) == "from .solver import simulate"
    # the memo decorator is read at module level (it decorates), so solver.py keeps its import: not in the variant
    assert "kernel_memo/solver.py" not in variants["import/late"].changed


def test_dataclass_written_out_as_a_plain_class_and_kernels_under_a_branch() -> None:
    _, variants, _ = _variants("reset_worlds")
    tree = _tree(variants["class/plain"], "reset_worlds/model.py")
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    assert not model.decorator_list
    assert {m.name for m in model.body if isinstance(m, ast.FunctionDef)} >= {"__init__", "__eq__", "__repr__"}
    tree = _tree(variants["control/branch"], "reset_worlds/io.py")
    branches = [n for n in ast.walk(tree) if isinstance(n, ast.If) and n.body and is_kernel_def(n.body[0])]
    assert len(branches) == 4
    assert all(ast.dump(b.body[0]) == ast.dump(b.orelse[0]) for b in branches)


def test_a_failed_precondition_makes_nothing() -> None:
    from tests.shapes_variants.mutate import class_dataclass

    with pytest.raises(NotApplicable, match="plain class"):
        class_dataclass(App.load("kernel_memo"))


@pytest.mark.slow  # no Warp run, but every shape's every transformation: seconds of CPU, more on a loaded machine
def test_every_shape_of_the_corpus_gets_variants() -> None:
    for name in APPS:
        made, skipped = generate(App.load(name))
        assert made, (name, skipped)


@pytest.mark.slow
@pytest.mark.parametrize("name,key", [("kernel_memo", "where/method"), ("grad_import", "import/module_level")])
def test_a_variant_prints_what_the_original_prints(name: str, key: str) -> None:
    app, variants, _ = _variants(name)
    code, lines, err = plain_lines(app.folder, name)
    assert code == 0, err
    assert lines == APPS[name]["expected_output"]
    assert check(app, [variants[key]], lines) == [variants[key]], variants[key].checked


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("bench_variants", Path(__file__).parents[1] / "bench" / "variants.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# a sample the engine reached in the first bench/variants.py run (bench/VARIANTS.md), and the kept closure called
# through a module-scope name (bench/VARIANTS-2026-12-07-reach2.md: missed before the scan followed that name)
HEAVY_SAMPLE = [("kernel_memo", "cache/functools_cache"), ("grad_import", "control/branch"),
                ("kernel_memo", "where/init_closure"), ("reset_worlds", "control/branch")]


@pytest.mark.heavy
@pytest.mark.parametrize("name,key", HEAVY_SAMPLE)
def test_fix_proves_and_writes_an_edit_on_a_variant_with_the_same_output(name: str, key: str) -> None:
    bench = _bench()
    app, variants, _ = _variants(name)
    v = variants[key]
    _, original, err = plain_lines(app.folder, name)
    assert check(app, [v], original) == [v], v.checked
    tool = str(Path(sys.executable).parent / "warp-compile")
    row = bench.run_fix(app, v, APPS[name]["mechanism_expected"], original, 0, sys.executable, tool)  # type: ignore[attr-defined]
    assert row["written"], row.get("why")
    assert row["written_same_output"], row
    assert row["reached"] and row["own"], row  # and what was written is the shape's own mechanism


def test_the_bench_spreads_a_sample_over_transformations_and_reads_mechanisms_from_keys() -> None:
    bench = _bench()
    apps = [_variants(n)[0] for n in FEW]
    made = {n: list(_variants(n)[1].values()) for n in FEW}
    chosen = bench.select(apps, made, 1, None)  # type: ignore[attr-defined]
    assert [v.shape for v in chosen] == FEW
    assert len({(v.family, v.transform) for v in chosen}) == len(chosen)  # no transformation twice while others wait
    assert bench.mechanisms_of("CS-12@CS-9+CS-10") == {"CS-12", "CS-9", "CS-10"}  # type: ignore[attr-defined]
    assert bench.mechanisms_of("CS-1#2") == {"CS-1"}  # type: ignore[attr-defined]


def test_the_bench_headline_counts_own_mechanism_also_against_the_originals_that_reach_it() -> None:
    bench = _bench()
    rows = [{"expected": ["CS-9"], "original_applied": ["CS-9"], "reached": True, "own": True},
            {"expected": ["CS-6"], "original_applied": ["CS-10", "CS-6"], "reached": True, "own": False},
            {"expected": ["CS-9"], "original_applied": ["CS-10"], "reached": True, "own": False}]
    line = bench._headline(rows)[0]  # type: ignore[attr-defined]
    assert "Reached 3 of 3; the shape's own mechanism written on 1 of 3; on 1 of the 2 whose original" in line


def _diagnosed(tmp_path: Path, name: str, key: str) -> tuple[object, Path]:
    from warp_compile.probe.diagnose import diagnose_sources
    from warp_compile.probe.measure import measure

    app, variants, _ = _variants(name)
    root = variants[key].write(app, tmp_path / key.replace("/", "-"))
    return diagnose_sources(measure([sys.executable, "-m", name], root, samples=1), root), root


@pytest.mark.slow
def test_variants_get_the_edit_their_original_gets(tmp_path: Path) -> None:
    """Misses of this session's variant samples, each a precondition that matched syntax only:
    - index_dispatch where/module_factory (a generic kernel made by a factory called once at import): CS-6 gave each
      closure a module of its own; the run shows one kernel made at import, so the original's edit comes first (the
      late import that registers the instances moved up);
    - reset_worlds module/keyword and module/constant (`module=module`, every call passing "unique"; a constant
      reading "unique"): CS-9 moves the kernels with the captured flag as an argument and no module= left on them."""
    d, _ = _diagnosed(tmp_path, "index_dispatch", "where/module_factory")
    (f,) = [f for f in d.findings if f.mechanism == "CS-6"]
    assert [e.file for e in f.edits] == ["index_dispatch/scene.py"] and "from . import joints" in f.edits[0].new
    assert 'module="unique"' not in "".join(e.new for e in f.edits)
    for key in ("module/keyword", "module/constant"):
        d, _ = _diagnosed(tmp_path, "reset_worlds", key)
        (f,) = [f for f in d.findings if f.mechanism == "CS-9"]
        moved = "".join(e.new for e in f.edits)
        assert moved.count("@wp.kernel(enable_backward=False)") == 4 and "module=" not in moved, (key, moved)


@pytest.mark.slow
def test_a_registration_after_a_definition_under_a_branch_goes_after_the_whole_statement(tmp_path: Path) -> None:
    """field_tiler control/branch (this session's second variant sample: `invalid edit`, SyntaxError): the generic
    kernel is defined in both branches of a module-scope `if`; CS-6's registrations were inserted at column 0 right
    after the first branch's definition, which breaks the `else`. They now follow the whole `if` statement."""
    d, root = _diagnosed(tmp_path, "field_tiler", "control/branch")
    (f,) = [f for f in d.findings if f.mechanism == "CS-6"]
    assert f.edits and f.applicability != "manual", f.review
    from warp_compile.probe.fix.edits import apply_edits

    apply_edits(root, f.edits)
    text = (root / "field_tiler" / "kernels.py").read_text()
    ast.parse(text)
    assert text.index("else:") < text.index("= wp.overload(")


@pytest.mark.slow
def test_kernels_renamed_by_a_move_take_their_arguments_under_the_new_name(tmp_path: Path) -> None:
    """reset_worlds control/branch (this session's third sample): each kernel is defined in both branches, so the move
    names it `clear_forces_2`; the parameter for the captured flag was cut into the annotation on the renamed def line
    (`dtype=floa, masked: boolt`, withdrawn as invalid), and once fixed, the behaviour check did not set the added
    argument aside because the edits named the old kernel (INVALID: the workload changed)."""
    d, root = _diagnosed(tmp_path, "reset_worlds", "control/branch")
    (f,) = [f for f in d.findings if f.mechanism == "CS-9"]
    assert f.edits and f.applicability != "manual", f.review
    assert {k for e in f.edits for k in e.launch_args} == {"clear_forces_2", "restore_positions_2",
                                                           "zero_velocities_2", "reset_counters_2"}
    from warp_compile.probe.fix.edits import apply_edits

    apply_edits(root, f.edits)
    text = (root / "reset_worlds" / "io.py").read_text()
    ast.parse(text)
    assert "force: wp.array2d(dtype=float), masked: bool):" in text
