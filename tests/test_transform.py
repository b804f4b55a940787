"""The transformation layer (probe/fix/transform/) on the shapes public Warp code has (issue 28): each transformation's
edit applied to a real file and parsed back, and each precondition that fails named.

Synthetic runs against sources written to tmp_path (no Warp run): the slow and heavy tiers run the corpus apps in
tests/shapes/ through `fix --write`.
"""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

from tests.helpers import synth_build
from warp_compile.probe.composition import join_plans
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.fix.transform.hoist import hoist
from warp_compile.probe.fix.transform.plan import Plan, Step, failed
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import KernelInfo, ModuleCreation, Report, Trigger
from warp_compile.probe.models.diagnosis import Edit, Finding, Location
from warp_compile.probe.rules import late_kernels, unique_modules
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

OPTS = {"fast_math": "False", "mode": "release", "enable_backward": "True"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _late(root: Path, file: str, first: tuple[str, str], late: list[tuple[str, str]], module: str,
          closure: dict[str, dict[str, str]] | None = None) -> Finding:
    """CS-1 on a synthetic run: `module` built with `first` (key, def name), then rebuilt once per late kernel."""
    f = str(root / file)
    k0 = KernelInfo(key=first[0], hash="0", file=f, line=_line(root / file, f"def {first[1]}") - 1)
    trig = Trigger(file=f, line=1, function="main", api="launch")
    builds = [synth_build(1, module, "a", ms=300.0, kernels=[k0], options=dict(OPTS), trigger=trig)]
    kernels = [k0]
    for i, (key, name) in enumerate(late, 2):
        kernels = [*kernels, KernelInfo(key=key, hash=str(i), file=f, line=_line(root / file, f"def {name}") - 1,
                                        closure=(closure or {}).get(name))]
        builds.append(synth_build(i, module, "abcdefg"[i], ms=320.0, kernels=list(kernels), options=dict(OPTS),
                                  trigger=trig))
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, builds=builds)
    r.hook.mode = "wrap"
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(r, rel=ctx.rel)
    (finding,) = late_kernels.evaluate(ctx).findings
    return finding


def _apply(root: Path, edits: list[Edit], dst: Path) -> dict[str, str]:
    shutil.copytree(root, dst)
    out = {}
    for rel in apply_edits(dst, edits):
        out[rel] = (dst / rel).read_text()
        ast.parse(out[rel])
    return out


BRANCHES = """\
from dataclasses import dataclass

import warp as wp


@wp.kernel
def seed(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


@dataclass(frozen=True)
class Exporter:
    kind: str

    def kernel(self):
        if self.kind == "sum":

            @wp.kernel
            def apply(a: wp.array(dtype=float), gain: float):
                a[wp.tid()] = a[wp.tid()] * gain

            return apply
        elif self.kind == "abs":

            @wp.kernel
            def apply(a: wp.array(dtype=float), gain: float):
                a[wp.tid()] = wp.abs(a[wp.tid()]) * gain

            return apply

        @wp.kernel
        def root_of(a: wp.array(dtype=float), gain: float):
            a[wp.tid()] = wp.sqrt(wp.abs(a[wp.tid()])) * gain

        return root_of
"""


def test_one_kernel_per_branch_moves_out_with_its_siblings_and_same_names_keep_their_paths(tmp_path: Path) -> None:
    """Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/support.py:36 (mul_m, 37b32aad) and NVIDIA/warp,
    warp/_src/fem/space/partition.py:168 (NodePartition.rebuild): a method defines one kernel per branch."""
    root = _write(tmp_path / "p", {"app/__init__.py": "", "app/plugins.py": BRANCHES})
    f = _late(root, "app/plugins.py", ("seed", "seed"), [("Exporter_kernel__locals__root_of", "root_of")],
              "app.plugins")
    assert f.edits, f.review
    out = _apply(root, f.edits, tmp_path / "copy")["app/plugins.py"]
    tree = ast.parse(out)
    top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    # every kernel of the method is now defined once at import; the two `apply`s get numbered names and each branch
    # keeps returning its own kernel through an alias
    assert {"seed", "root_of"} <= set(top) and len([n for n in top if n.startswith("apply")]) == 2, top
    assert "apply = apply_2" in out and "apply = apply_3" in out
    method = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "kernel")
    assert not any(isinstance(n, ast.FunctionDef) for n in ast.walk(method) if n is not method)
    assert f.applicability == "review" and "becomes apply_2" in f.review  # a renamed kernel changes its key


LATE_IMPORT = {
    "app/__init__.py": "",
    "app/geometry.py": """\
        import warp as wp


        @wp.func
        def closest(x: float):
            return wp.clamp(x, 0.0, 1.0)
    """,
    "app/solver.py": """\
        import warp as wp


        @wp.kernel
        def seed(a: wp.array(dtype=float)):
            a[wp.tid()] = 2.0


        def build():
            from .geometry import closest

            @wp.kernel
            def project(a: wp.array(dtype=float)):
                a[wp.tid()] = closest(a[wp.tid()])

            return project
    """,
}


def test_a_late_import_moves_along_unless_the_module_imports_this_file_back(tmp_path: Path) -> None:
    """Seen in newton-physics/newton, newton/_src/sim/ik/ik_lm_optimizer.py:741-1035 (_build_specialized): the kernel
    is built next to a late import of the wp.func it calls."""
    root = _write(tmp_path / "p", LATE_IMPORT)
    f = _late(root, "app/solver.py", ("seed", "seed"), [("build__locals__project", "project")], "app.solver")
    out = _apply(root, f.edits, tmp_path / "copy")["app/solver.py"]
    head = out[: out.index("def build")]
    assert "from .geometry import closest\n" in head and "def project(" in head
    assert "late import" in f.review
    # geometry imports the solver back: the import was late on purpose, and the move is refused with the reason
    cyc = dict(LATE_IMPORT)
    cyc["app/geometry.py"] = "from . import solver  # noqa: F401\n" + textwrap.dedent(LATE_IMPORT["app/geometry.py"])
    root2 = _write(tmp_path / "c", cyc)
    f2 = _late(root2, "app/solver.py", ("seed", "seed"), [("build__locals__project", "project")], "app.solver")
    assert not f2.edits and f2.applicability == "manual" and "a cycle" in f2.review


DTYPES = {
    "app/__init__.py": "",
    "app/kernels.py": """\
        import warp as wp


        @wp.kernel
        def seed(a: wp.array(dtype=float)):
            a[wp.tid()] = 1.0


        def make_scale(dtype):
            @wp.kernel
            def scale(a: wp.array(dtype=dtype), s: dtype):
                a[wp.tid()] = a[wp.tid()] * s

            return scale
    """,
    "app/run.py": """\
        import warp as W

        from . import kernels


        def main(a, b):
            W.launch(kernels.seed, dim=4, inputs=[a], device="cpu")
            for dt in (W.float32, W.float64):
                k = kernels.make_scale(dt)
                W.launch(k, dim=4, inputs=[a if dt is W.float32 else b, dt(2.0)], device="cpu")
    """,
}


def test_a_factory_keyed_on_a_dtype_has_its_versions_made_at_import_under_its_own_alias(tmp_path: Path) -> None:
    """Seen in newton-physics/newton, kamino/_src/linalg/blas.py:122-145 (@functools.cache on a dtype factory) and
    NVIDIA/physicsnemo, .../deform/_warp_impl/energy_kernels.py (one kernel per precision): the loop over the dtypes
    is literal, so both versions are known; the caller names warp `W`, the factory's file `wp`."""
    root = _write(tmp_path / "p", DTYPES)
    f = _late(root, "app/kernels.py", ("seed", "seed"), [("make_scale__locals__scale", "scale")], "app.kernels",
              closure={"scale": {"dtype": "type"}})
    assert f.edits, f.review
    out = _apply(root, f.edits, tmp_path / "copy")["app/kernels.py"]
    assert "@functools.lru_cache(maxsize=None)\ndef make_scale(dtype):" in out
    assert "make_scale(wp.float32)\nmake_scale(wp.float64)\n" in out
    assert "made at import" in f.review


def test_a_type_every_call_passes_the_same_is_written_into_one_module_scope_kernel(tmp_path: Path) -> None:
    """Seen in Autodesk/XLB, xlb/operator/stream/stream.py:53-100 (a closure over the lattice's vector type) and
    NVIDIA/warp, warp/_src/fem/quadrature/pic_quadrature.py:331: the captured type is the same at every call."""
    files = dict(DTYPES)
    files["app/run.py"] = """\
        import warp as wp

        from . import kernels


        def main(a):
            wp.launch(kernels.seed, dim=4, inputs=[a], device="cpu")
            wp.launch(kernels.make_scale(wp.float32), dim=4, inputs=[a, 2.0], device="cpu")
            wp.launch(kernels.make_scale(wp.float32), dim=4, inputs=[a, 3.0], device="cpu")
    """
    root = _write(tmp_path / "p", files)
    f = _late(root, "app/kernels.py", ("seed", "seed"), [("make_scale__locals__scale", "scale")], "app.kernels",
              closure={"scale": {"dtype": "type"}})
    out = _apply(root, f.edits, tmp_path / "copy")["app/kernels.py"]
    assert "def scale(a: wp.array(dtype=wp.float32), s: wp.float32):" in out
    assert out.index("def scale(") < out.index("def make_scale(")
    assert "every call gave it (dtype = wp.float32)" in f.review and f.applicability == "review"


UNIQUE_LATE = {
    "app/__init__.py": "",
    "app/stages.py": """\
        import warp as wp


        def make_push(*, module="unique"):
            @wp.kernel(module=module)
            def push(a: wp.array(dtype=float)):
                a[wp.tid()] = a[wp.tid()] + 1.0

            return push


        def make_pull(*, module="unique"):
            @wp.kernel(module=module)
            def pull(a: wp.array(dtype=float)):
                a[wp.tid()] = a[wp.tid()] - 0.5

            return pull


        def configure():
            wp.set_module_options({"fast_math": True})
    """,
    "app/run.py": """\
        import warp as wp

        from . import stages


        def main(a):
            wp.launch(stages.make_push(), dim=4, inputs=[a], device="cpu")
            stages.configure()
            wp.launch(stages.make_pull(), dim=4, inputs=[a], device="cpu")
    """,
}


def _unique_run(root: Path) -> RuleContext:
    f = str(root / "app/stages.py")
    trig = Trigger(file=str(root / "app/run.py"), line=7, function="main", api="launch")
    builds, creations = [], []
    for i, (name, factory) in enumerate((("push", "make_push"), ("pull", "make_pull")), 1):
        k = KernelInfo(key=f"{factory}__locals__{name}", hash=str(i), file=f, line=_line(root / "app/stages.py",
                                                                                       f"def {name}") - 1)
        builds.append(synth_build(i, f"{factory}__locals__{name}_1234abc{i}", "xy"[i - 1], ms=150.0, kernels=[k],
                                  options=dict(OPTS), trigger=trig, start_ms=1000.0 * i))
        creations.append(ModuleCreation(module=name, start_ms=1000.0 * i - 10.0))
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, builds=builds, module_creations=creations)
    r.hook.mode = "wrap"
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(r, rel=ctx.rel)
    return ctx


def test_unique_factories_created_between_launches_become_one_plan(tmp_path: Path) -> None:
    """The particle task as its authors ship it (issue 28): keyword-only `module="unique"` factories called between
    launches, and an option call on the module those kernels would share. One plan in order: the factories cached
    and called at import, their default a named module (issue 39: the option call never reached these kernels, so
    they keep compiling without it; the call stays where it is); what changes is named for review."""
    root = _write(tmp_path / "p", UNIQUE_LATE)
    (f,) = unique_modules.evaluate(_unique_run(root)).findings
    assert f.applicability == "review", f.review
    out = _apply(root, f.edits, tmp_path / "copy")["app/stages.py"]
    assert out.count("@functools.lru_cache(maxsize=None)") == 2 and 'module="unique"' not in out
    assert out.count('module="app.kernels"') == 2
    assert "make_push()\n" in out and "make_pull()\n" in out
    tree = ast.parse(out)
    configure = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "configure")
    assert "set_module_options" in ast.unparse(configure)  # untouched: it reaches app.stages, which holds no kernel
    assert "fast_math" not in f.review and "The edit does it in order" in f.fix and "app.kernels" in f.fix
    # the same shape with a factory called through an alias the scan cannot follow: its versions are not known, so
    # there is no plan, and the failed step is named
    files = dict(UNIQUE_LATE)
    files["app/run.py"] = UNIQUE_LATE["app/run.py"].replace("stages.make_pull()", "pull()").replace(
        "    stages.configure()\n", "    stages.configure()\n    pull = stages.make_pull\n")
    root2 = _write(tmp_path / "r", files)
    (f2,) = unique_modules.evaluate(_unique_run(root2)).findings
    assert f2.applicability == "manual" and not f2.edits and "create at import:" in f2.review


def test_a_finding_whose_line_another_plan_changes_joins_that_plan() -> None:
    plan_edit = Edit(file="a.py", start_line=10, end_line=10, old="    wp.set_module_options({})\n", new="")
    kw = {"severity": "low", "confidence": "high"}
    g = Finding(mechanism="CS-9", title="g", fix="share", edits=[plan_edit], applicability="review", review="r", **kw)
    f = Finding(mechanism="CS-3", title="f", fix="move it", applicability="manual", review="decide",
                locations=[Location(file="a.py", line=10)], **kw)
    other = Finding(mechanism="CS-2", title="o", fix="x", applicability="manual",
                    locations=[Location(file="a.py", line=3)], **kw)
    join_plans([g, f, other])
    assert f.edits == g.edits and f.plan_with == "CS-9" and f.applicability == "review"
    assert "one plan with CS-9" in f.review and "decide" in f.review
    assert not other.edits and other.plan_with is None


def test_a_plan_names_its_failed_step_and_orders_its_edits() -> None:
    a = Edit(file="a.py", start_line=5, end_line=4, new="x\n")
    b = Edit(file="a.py", start_line=1, end_line=0, new="y\n")
    plan = Plan().add(Step(what="module", edits=[a], done="share")).add(Step(what="create at import", edits=[b],
                                                                            done="create", review=["check"]))
    assert plan.edits == [b, a] and plan.applicability == "review" and plan.summary == "create; then share"
    plan.add(failed("option", "the call computes its options"))
    assert plan.edits == [] and plan.applicability == "manual" and plan.why_not.startswith("option: ")


def test_a_kernel_reading_what_its_loop_changes_is_not_hoisted(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"app.py": """\
        import warp as wp


        def build_all():
            out = []
            for g in (1.0, 2.0):
                @wp.kernel
                def k(a: wp.array(dtype=float)):
                    a[wp.tid()] = g

                out.append(k)
            return out
    """})
    s = scan(root)
    (kdef,) = s.kernels
    ctx = RuleContext(report=Report(command=["python", "app.py"], cwd=str(root), samples=1), scan=s, root=root,
                      sources=SourceView(root))
    h = hoist(ctx, kdef)
    assert h.why_not and h.captures


def _creation(key: str, module: str, file: Path, function: str, line: int, args: dict, outer: list[dict],
              at_import: bool = False, start_ms: float = 5000.0, made_by: str = "kernel"):  # type: ignore[no-untyped-def]
    from warp_compile.probe.models import KernelCreation

    return KernelCreation(key=key, module=module, file=str(file), line=line, function=function, args=args,
                          at_import=at_import, outer=outer, start_ms=start_ms, made_by=made_by)


WRAPPED = {
    "app/__init__.py": "",
    "app/naming.py": """\
        import warp as wp


        def named(name):
            def wrap(fn):
                fn.__name__ = fn.__qualname__ = name
                return wp.kernel(fn)

            return wrap
    """,
    "app/kernels.py": """\
        import warp as wp

        from .naming import named


        def build(count: int, mode: str = "l2"):
            @named(f"dist_{count}_{mode}")
            def dist(a: wp.array(dtype=float)):
                a[wp.tid()] = float(count)

            return dist
    """,
}


def test_the_versions_the_run_made_are_made_at_import_by_the_function_that_made_them(tmp_path: Path) -> None:
    """Seen in NVlabs/curobo, curobo/_src/util/warp.py:24-56 (kernels renamed by a helper before decoration): the
    scan cannot place the kernel, the hook's record names the app frames that made it; the innermost module-level
    function whose arguments source can write (`build`, not the helper's `wrap`) is called at import."""
    from warp_compile.probe.fix.transform.memoize import made_at_import_from_run

    root = _write(tmp_path / "p", WRAPPED)
    naming, kernels = root / "app/naming.py", root / "app/kernels.py"
    made = [_creation(f"dist_{n}_l2", "app.kernels", naming, "named.<locals>.wrap", 6,
                      {"fn": {"kind": "function", "module": "app.kernels", "name": "build.<locals>.dist"}},
                      [{"file": str(kernels), "line": 7, "function": "build", "at_import": False,
                        "args": {"count": {"kind": "int", "text": str(n)}, "mode": {"kind": "str", "text": "'l2'"}}}])
            for n in (1, 3)]
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert step.ok, step.why_not
    out = _apply(root, step.edits, tmp_path / "copy")["app/kernels.py"]
    assert "build(1)\nbuild(3)\n" in out  # the default left out, as the calls in the source write it
    # set-up before the kernel (curobo's builder computes its constants there, tests/shapes/mapper_constants) is
    # the builder's own; work after the kernel exists is not
    src = kernels.read_text()
    head = "def build(count: int, mode: str = \"l2\"):\n"
    kernels.write_text(src.replace(head, head + "    tag = str(sorted({count}))\n    print(tag)\n")
                       .replace("\n    return dist\n", "\n    print(dist)\n    return dist\n"))
    for m in made:
        m.outer[0]["line"] = 9
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "build() goes on to its own work besides making the kernel (line 13" in step.why_not
    kernels.write_text(kernels.read_text().replace("    print(dist)\n", ""))
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    assert made_at_import_from_run(ctx, made).ok
    kernels.write_text(src)
    # an argument no source can write (a NumPy array) names the precondition that failed
    made[0].outer[0]["args"]["count"] = {"kind": "other", "type": "ndarray"}
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "count = a ndarray" in step.why_not


def test_a_late_import_whose_module_made_the_instances_runs_at_module_scope_too(tmp_path: Path) -> None:
    """Seen in isaac-sim/IsaacLab, isaaclab/utils/warp/index_kernel.py (overloads registered when a module is
    imported) with a late `from . import joints` inside a method: the import runs at module scope too."""
    from warp_compile.probe.fix.place.recorded_versions import versions_plan

    root = _write(tmp_path / "p", {
        "app/__init__.py": "",
        "app/kernels.py": "import warp as wp\n",
        "app/joints.py": "from . import kernels\n",
        "app/scene.py": """\
            import warp as wp


            class Scene:
                def add(self):
                    from . import joints  # loaded when the first joint appears
                    self.j = joints
        """,
    })
    scene, joints = root / "app/scene.py", root / "app/joints.py"
    c = _creation("write_values", "app.kernels", joints, "<module>", 1, {}, [
        {"file": str(scene), "line": 6, "function": "Scene.add", "at_import": False, "args": {}}],
        at_import=True, made_by="overload")
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=[c],
               builds=[synth_build(1, "app.kernels", "a", ms=100.0, kernels=[], options=dict(OPTS), start_ms=100.0)])
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = versions_plan(ctx, "app.kernels", kind="overload")
    assert step is not None and step.ok, step and step.why_not
    out = _apply(root, step.edits, tmp_path / "copy")["app/scene.py"]
    assert out.index("from . import joints") < out.index("class Scene")
    # the imported module imports the file back: the import was late on purpose, and stays so
    (root / "app/joints.py").write_text("from . import kernels, scene  # noqa: F401\n")
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = versions_plan(ctx, "app.kernels", kind="overload")
    assert step is not None and not step.ok and "a cycle" in step.why_not


def test_numbers_a_kernel_captures_become_arguments_before_its_outputs(tmp_path: Path) -> None:
    """Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/io.py:2435 (reset_data: kernels made per call with
    `wp.static(mask is not None)`): the captured flag becomes an argument placed before the outputs, the
    `wp.static(...)` of it a plain branch, and each launch in the function passes it."""
    root = _write(tmp_path / "p", {"app.py": """\
        import warp as wp


        def reset(data, mask=None):
            masked = mask is not None

            @wp.kernel(module="unique")
            def clear(mask: wp.array(dtype=bool), force: wp.array(dtype=float)):
                i = wp.tid()
                if wp.static(masked):
                    if not mask[i]:
                        return
                force[i] = 0.0

            wp.launch(clear, dim=4, inputs=[mask], outputs=[data], device="cpu")
    """})
    s = scan(root)
    (kdef,) = s.kernels
    info = KernelInfo(key="reset__locals__clear", hash="h", file=str(root / "app.py"), line=7,
                      closure={"masked": "bool"})
    ctx = RuleContext(report=Report(command=["python", "app.py"], cwd=str(root), samples=1), scan=s, root=root,
                      sources=SourceView(root))
    h = hoist(ctx, kdef, info, as_params=True)
    assert not h.why_not and h.params is not None and h.params.position == 1
    from warp_compile.probe.fix.transform.hoist import hoist_edits

    out = _apply(root, hoist_edits(ctx, [h]) + h.params.edits, tmp_path / "copy")["app.py"]
    assert "def clear(mask: wp.array(dtype=bool), masked: bool, force: wp.array(dtype=float)):" in out
    assert "if masked:" in out and "wp.static" not in out
    assert "inputs=[mask, masked], outputs=[data]" in out
    assert h.params.edits[0].launch_args == {"clear": ["bool"]} and h.params.edits[0].launch_args_at == {"clear": 1}


def test_a_module_parameter_every_caller_sets_is_written_in_when_the_kernel_moves(tmp_path: Path) -> None:
    """A generated variant of reset_worlds (tests/shapes_variants, module/keyword): `module=module`, a keyword-only
    parameter every call passes as "unique". The scan resolves it from the callers; the move writes that literal
    where the parameter was read (the name does not exist at module scope), and CS-9's plan then drops it."""
    root = _write(tmp_path / "p", {"app.py": """\
        import warp as wp


        def reset(data, mask=None, *, module):
            masked = mask is not None

            @wp.kernel(module=module, enable_backward=False)
            def clear(mask: wp.array(dtype=bool), force: wp.array(dtype=float)):
                i = wp.tid()
                if wp.static(masked):
                    if not mask[i]:
                        return
                force[i] = 0.0

            wp.launch(clear, dim=4, inputs=[mask], outputs=[data], device="cpu")


        def run(data, mask):
            reset(data, module="unique")
            reset(data, mask, module="unique")
    """})
    s = scan(root)
    (kdef,) = s.kernels
    assert kdef.module_arg == "unique" and kdef.module_from_callers
    info = KernelInfo(key="reset__locals__clear", hash="h", file=str(root / "app.py"), line=7,
                      closure={"masked": "bool"})
    ctx = RuleContext(report=Report(command=["python", "app.py"], cwd=str(root), samples=1), scan=s, root=root,
                      sources=SourceView(root))
    h = hoist(ctx, kdef, info, as_params=True)
    assert not h.why_not, h.why_not
    assert any('@wp.kernel(module="unique", enable_backward=False)' in t for t in h.text)
    from warp_compile.probe.fix.transform.decorators import moved_to

    assert any(t.startswith("@wp.kernel(enable_backward=False)") for t in moved_to(h.text, "None"))
    # the kernel also reads the parameter in its body: it is the call's choice, and the move is refused
    src = (root / "app.py").read_text().replace("force[i] = 0.0", "force[i] = float(len(module))")
    (root / "app.py").write_text(src)
    s = scan(root)
    (kdef,) = s.kernels
    ctx = RuleContext(report=Report(command=["python", "app.py"], cwd=str(root), samples=1), scan=s, root=root,
                      sources=SourceView(root))
    assert hoist(ctx, kdef, info, as_params=True).why_not


REGISTERED = {
    "app/__init__.py": "",
    "app/registry.py": """\
        import warp as wp

        _KERNELS = {}


        def get_kernel(fn, suffix):
            key = f"{fn.__name__}_{suffix}"
            if key not in _KERNELS:
                _KERNELS[key] = wp.Kernel(func=fn, key=key)
            return _KERNELS[key]
    """,
    "app/checks.py": """\
        import numpy as np
        import warp as wp

        from .registry import get_kernel


        def check(dtype, values, register_only=False):
            T = wp.dtype_from_numpy(np.dtype(dtype))

            def twice(a: wp.array(dtype=T)):
                a[wp.tid()] = a[wp.tid()] * T(2)

            kernel = get_kernel(twice, np.dtype(dtype).name)
            if register_only:
                return None
            a = wp.array(values, dtype=T, device="cpu")
            wp.launch(kernel, dim=a.shape[0], inputs=[a], device="cpu")
            return a.numpy()
    """,
}


def _registered(root: Path, key: str, dtype: str) -> object:
    registry, checks = root / "app/registry.py", root / "app/checks.py"
    return _creation(key, "app.checks", registry, "get_kernel", 9,
                     {"fn": {"kind": "function", "module": "app.checks", "name": "check.<locals>.twice"},
                      "suffix": {"kind": "str", "text": repr(dtype)}},
                     [{"file": str(checks), "line": 13, "function": "check", "at_import": False,
                       "args": {"dtype": {"kind": "type", "module": "numpy", "name": dtype},
                                "values": {"kind": "other", "type": "ndarray"},
                                "register_only": {"kind": "bool", "text": "False"}}}])


def test_a_register_switch_makes_the_versions_at_import_without_the_data_no_source_can_write(tmp_path: Path) -> None:
    """Seen in NVIDIA/warp, warp/tests/unittest_utils.py (add_function_test_register_kernel calls each test with
    register_kernels=True before any launch) and tests/shapes/typed_checks: the kernel's maker (a registry keyed on
    a closure) cannot be called at import, its caller takes an array no source can write, but returns right after
    the kernel exists when its switch is set, before anything reads the array."""
    from warp_compile.probe.fix.transform.memoize import made_at_import_from_run

    root = _write(tmp_path / "p", REGISTERED)
    made = [_registered(root, f"twice_{d}", d) for d in ("float32", "float64")]
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert step.ok, step.why_not
    out = _apply(root, step.edits, tmp_path / "copy")["app/checks.py"]
    assert "check(np.float32, values=None, register_only=True)\ncheck(np.float64, values=None, register_only=True)" \
        in out
    assert "functools" not in out  # the caller is not the maker: caching it would keep its arrays
    # the array read before the switch returns: the precondition that failed is named
    src = (root / "app/checks.py").read_text()
    first = "    T = wp.dtype_from_numpy(np.dtype(dtype))\n"
    (root / "app/checks.py").write_text(src.replace(first, first + "    n = len(values)\n"))
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "values = a ndarray" in step.why_not and "returns only after values is read" in step.why_not
    # no switch at all: the caller goes on to launch, and is never called at import (mujoco_warp's shape in
    # tests/shapes/qualname_stages would have run the whole simulation there)
    (root / "app/checks.py").write_text(src.replace("    if register_only:\n        return None\n", ""))
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "check() launches kernels itself (line 15)" in step.why_not


SOLVER = {
    "app/__init__.py": "",
    "app/solver.py": """\
        import warp as wp


        @wp.kernel
        def cost(a: wp.array(dtype=float)):
            a[wp.tid()] = a[wp.tid()] * 2.0


        class Solver:
            _specs = {}

            def __new__(cls, n: int):
                if n not in cls._specs:
                    cls._specs[n] = cls._specialize(n)
                return super().__new__(cls._specs[n])

            @classmethod
            def _specialize(cls, n):
                @wp.kernel(module="unique")
                def step(a: wp.array(dtype=float)):
                    a[wp.tid()] = a[wp.tid()] + float(n)

                return type(f"Solver{n}", (cls,), {"kernel": step})


        def make(n: int):
            label = f"solver {n}"
            return Solver(n)


        def run(count: int):
            a = wp.zeros(count, dtype=float)
            wp.launch(cost, dim=count, inputs=[a])
            out = []
            for n in (1, 2):
                solver = make(n)
                out.append(solver.kernel.key)
            return out
    """,
}


def _specialized(root: Path, n: int, outer: list[dict]) -> object:
    return _creation(f"step_{n}", "unique", root / "app/solver.py", "Solver._specialize", 19,
                     {"n": {"kind": "int", "text": str(n)}},
                     [{"file": str(root / "app/solver.py"), "line": 14, "function": "Solver.__new__",
                       "at_import": False, "args": {}}, *outer])


def test_a_caller_that_launches_or_goes_on_to_work_is_never_called_at_import_a_thin_one_is(tmp_path: Path) -> None:
    """Seen in newton-physics/newton, newton/_src/sim/ik/ik_lm_optimizer.py:155-176 (tests/shapes/ik_specializer):
    the kernels are made in a classmethod behind `__new__`, so the innermost module-level frame is the program's
    `run()`, which launches a probe kernel before it builds the solvers; called at import it ran the workload."""
    from warp_compile.probe.fix.transform.memoize import made_at_import_from_run

    root = _write(tmp_path / "p", SOLVER)
    solver = root / "app/solver.py"
    run_frame = {"file": str(solver), "line": 36, "function": "run", "at_import": False,
                 "args": {"count": {"kind": "int", "text": "8"}}}
    made = [_specialized(root, n, [run_frame]) for n in (1, 2)]
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "run() launches kernels itself (line 33)" in step.why_not
    # without the probe launch, run() still goes on to collect the solvers after the call that made the kernel
    src = solver.read_text()
    solver.write_text(src.replace("    wp.launch(cost, dim=count, inputs=[a])\n", ""))
    run_frame["line"] = 35  # the loop's solver = make(n), one line up now
    made = [_specialized(root, n, [run_frame]) for n in (1, 2)]
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert not step.ok and "run() goes on to its own work besides making the kernel (line 36" in step.why_not
    # a thin caller (it names and returns, nothing else) in between is the one called at import
    made = [_specialized(root, n, [{"file": str(solver), "line": 28, "function": "make", "at_import": False,
                                    "args": {"n": {"kind": "int", "text": str(n)}}}, run_frame]) for n in (1, 2)]
    r = Report(command=["python", "-m", "app"], cwd=str(root), samples=1, kernel_creations=made)
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    step = made_at_import_from_run(ctx, made)
    assert step.ok, step.why_not
    out = _apply(root, step.edits, tmp_path / "copy")["app/solver.py"]
    assert "make(1)\nmake(2)" in out and "run(8)" not in out


def test_a_factory_both_memoize_and_hoist_can_realise_carries_the_other_as_an_alternative(tmp_path: Path) -> None:
    """Generate and test (issue 39): factories that take no module parameter and capture nothing can be cached and
    called at import, or have their kernels moved out; the first is the finding's edit, the other an alternative
    that `fix` measures beside it. Both write the same kernels, at import, into one module."""
    files = {k: v.replace('(*, module="unique")', "()").replace("@wp.kernel(module=module)",
                                                                 '@wp.kernel(module="unique")')
             for k, v in UNIQUE_LATE.items()}
    files["app/stages.py"] = files["app/stages.py"].replace('    wp.set_module_options({"fast_math": True})\n',
                                                            "    pass\n")
    root = _write(tmp_path / "p", files)
    (f,) = unique_modules.evaluate(_unique_run(root)).findings
    assert f.edits and f.alternatives, f.review
    own = _apply(root, f.edits, tmp_path / "own")["app/stages.py"]
    assert "@functools.lru_cache(maxsize=None)" in own and "make_push()\n" in own
    labels = [a.label for a in f.alternatives]
    assert labels[0] == "make_push() by hoist, make_pull() by hoist instead", labels
    assert "make_push() by hoist instead of memoize from the source's calls" in labels[1:], labels
    alt = f.alternatives[0]
    moved = _apply(root, alt.edits, tmp_path / "alt")["app/stages.py"]
    tree = ast.parse(moved)
    assert {s.name for s in tree.body if isinstance(s, ast.FunctionDef)} >= {"push", "pull"}
    assert "unique" not in moved and "lru_cache" not in moved


def test_a_module_constant_that_reads_unique_is_edited_at_the_call_and_the_constant_is_left(tmp_path: Path) -> None:
    from warp_compile.probe.fix.transform.decorators import drop_unique

    root = tmp_path / "proj"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "naming.py").write_text(textwrap.dedent('''\
        import warp as wp

        KERNEL_MODULE = "unique"
        OTHER = "unique"


        def named_kernel(name):
            def wrap(fn):
                fn.__name__ = name
                return wp.kernel(fn, module=KERNEL_MODULE, enable_backward=False)
            return wrap
        '''))
    facts = scan(root)
    (k,) = [k for k in facts.kernels if k.file.endswith("naming.py")]
    assert k.module_arg == "unique" and k.module_arg_text == "KERNEL_MODULE"
    view = SourceView(root)
    e = drop_unique(view, k, '"proj.kernels"')
    assert e is not None and e.new.strip() == 'return wp.kernel(fn, module="proj.kernels", enable_backward=False)'
    dropped = drop_unique(view, k)
    assert dropped is not None and dropped.new.strip() == "return wp.kernel(fn, enable_backward=False)"
    # a name that is not the one the scan resolved is not touched (OTHER reads "unique" too, but is not this call's)
    k2 = k.model_copy(update={"module_arg_text": "OTHER"})
    assert drop_unique(view, k2) is None


def test_a_moved_decorator_loses_the_unique_name_or_the_literal_a_move_wrote_in() -> None:
    """reset_worlds' module/constant variant: the kernels move with `module=KERNEL_MODULE` (a constant reading
    "unique") on their decorators; sharing the file's module means that keyword goes, or the moved kernels would
    still get a module each. The constant itself stays (other code may read it)."""
    from warp_compile.probe.fix.transform.decorators import moved_to

    text = ["@wp.kernel(module=KERNEL_MODULE, enable_backward=False)\n", "def clear(x: wp.array(dtype=float)):\n"]
    assert moved_to(text, "None", "KERNEL_MODULE")[0] == "@wp.kernel(enable_backward=False)\n"
    assert moved_to(text, '"app.kernels"', "KERNEL_MODULE")[0].startswith('@wp.kernel(module="app.kernels", ')
    # without the name the literal is all it looks for: a constant it was not told reads "unique" stays
    assert moved_to(text, "None")[0] == text[0]
    # a move that wrote the callers' literal in (module=module -> module="unique") is found by the literal
    written = ['@wp.kernel(module="unique")\n', *text[1:]]
    assert moved_to(written, "None", "module")[0] == "@wp.kernel\n"
