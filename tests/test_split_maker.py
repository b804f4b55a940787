"""WC-1's split: a function that makes its kernel and then launches it becomes a cached maker and the launch.

The functions here are render-like (funcs made from an argument's values, a decorator built from a config, the
kernel launched at the end), written differently from tests/shapes/render_frames: a helper that reads attributes of
the config, a name of the slice the launch reads too. The
refusals are the two the split must never get wrong: a slice that writes to an argument, and one that allocates an
array the launch reads later. The heavy test (two real runs, about a minute of compiles) runs the split code with
Warp and compares it with the original.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_per_call import _ctx, _report
from warp_compile.probe.fix.edits import apply_edits
from warp_compile.probe.fix.transform.split import split_maker
from warp_compile.probe.models import KernelCreation, Site

OBJ = {"kind": "other", "type": "Obj"}

APP = '''\
import numpy as np
import warp as wp


class Cfg:
    def __init__(self, n, gain, fast):
        self.n, self.gain, self.fast = n, gain, fast


class Scene:
    def __init__(self, k):
        self.k = k
        self.calls = 0


def make_scale(k: int):
    K = k

    @wp.func
    def scale(x: float) -> float:
        return x * float(K)

    return scale


def decorator_for(cfg):
    return wp.kernel(module="unique", enable_backward=not cfg.fast)


def step(scene, cfg, offset: float):
    scale_fn = make_scale(scene.k)
    N = cfg.n  # also the launch size
    G = cfg.gain

    @decorator_for(cfg)
    def apply(x: wp.array(dtype=float), off: float):
        i = wp.tid()
        if i < N:
            x[i] = scale_fn(x[i]) * G + off

    x = wp.array(np.arange(N, dtype=np.float32), dtype=float, device="cpu")
    wp.launch(apply, dim=N, inputs=[x, offset], device="cpu")
    return x.numpy()


if __name__ == "__main__":
    import sys
    cfg, scene = Cfg(8, 0.5, True), Scene(3)
    for i in range(4):
        if i == 2:
            scene.k = 5  # a value the kernel reads changes: a new key, a new kernel
        print(float(step(scene, cfg, 0.25 * i).sum()))
    print("makes", sys.argv[-1] if len(sys.argv) > 1 else "")
'''


def _made(root: Path, function: str, line: int, args: dict) -> list[KernelCreation]:
    file = str(root / "app.py")
    return [KernelCreation(key=f"{function}__locals__k", file=file, line=line, function=function, args=args,
                           caller=Site(file=file, line=60, function="main"), start_ms=100.0 + i, made_ms=1.0)
            for i in range(4)]


def _project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text(textwrap.dedent(text))
    return root


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in ln)


def _split(root: Path, function: str, line: int, args: dict):  # type: ignore[no-untyped-def]
    made = _made(root, function, line, args)
    ctx = _ctx(_report(root, made), root)
    return split_maker(ctx, str(root / "app.py"), function, made)


def test_a_render_like_function_is_split_into_a_maker_keyed_on_the_values_it_reads(tmp_path: Path) -> None:
    root = _project(tmp_path, APP)
    step = _split(root, "step", _line(APP, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ, "offset": {
        "kind": "float", "text": "0.0"}})
    assert step.ok, step.why_not
    apply_edits(root, step.edits)
    text = (root / "app.py").read_text()
    tree = ast.parse(text)
    maker = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "_step_kernel")
    # the values the slice reads, through the helper too: not the objects; plain values it computed stay keys
    assert [a.arg for a in maker.args.args] == ["N", "G", "cfg_fast", "scene_k"]
    assert any("lru_cache" in ast.unparse(d) for d in maker.decorator_list)
    step_fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "step")
    got = [ast.unparse(s) for s in step_fn.body[:3]]
    # N and G are computed where they were (the launch reads N too); the maker is called where the kernel was
    assert got == ["N = cfg.n", "G = cfg.gain", "apply = _step_kernel(N, G, cfg.fast, scene.k)"]
    assert any("wp.launch" in ast.unparse(s) for s in step_fn.body)
    assert "import functools" in text and "import types" in text


def test_a_slice_that_writes_to_its_argument_is_refused(tmp_path: Path) -> None:
    bump = "def bump(scene):\n    scene.calls += 1\n    return scene.k\n\n\ndef decorator_for(cfg):"
    app = APP.replace("    scale_fn = make_scale(scene.k)\n", "    scale_fn = make_scale(bump(scene))\n").replace(
        "def decorator_for(cfg):", bump)
    root = _project(tmp_path, app)
    step = _split(root, "step", _line(app, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert not step.ok
    assert "bump()" in step.why_not and "scene.calls" in step.why_not


def test_a_slice_that_allocates_what_the_launch_reads_is_refused(tmp_path: Path) -> None:
    app = APP.replace("    N = cfg.n  # also the launch size\n",
                      "    x = wp.zeros(cfg.n, dtype=float, device='cpu')\n    N = x.shape[0]\n").replace(
        "    x = wp.array(np.arange(N, dtype=np.float32), dtype=float, device=\"cpu\")\n", "")
    root = _project(tmp_path, app)
    step = _split(root, "step", _line(app, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert not step.ok
    assert "wp.zeros()" in step.why_not


def test_an_argument_the_slice_uses_whole_is_a_key_only_when_the_run_recorded_a_value(tmp_path: Path) -> None:
    app = APP.replace("scale_fn = make_scale(scene.k)", "scale_fn = make_scale(scene)")
    root = _project(tmp_path, app)
    line = _line(app, "@decorator_for(cfg)")
    refused = _split(root, "step", line, {"scene": OBJ, "cfg": OBJ})
    assert "uses scene itself" in refused.why_not and "Obj" in refused.why_not
    ok = _split(root, "step", line, {"scene": {"kind": "int", "text": "3"}, "cfg": OBJ})
    assert ok.ok, ok.why_not
    assert any("_step_kernel(N, G, scene, cfg.fast)" in e.new for e in ok.edits)


def test_a_kernel_under_a_branch_and_a_name_bound_again_are_refused(tmp_path: Path) -> None:
    branch = APP.replace("    @decorator_for(cfg)\n    def apply",
                         "    if True:\n      @decorator_for(cfg)\n      def apply")
    branch = branch.replace("        i = wp.tid()\n        if i < N:\n            x[i]",
                            "          i = wp.tid()\n          if i < N:\n            x[i]")
    root = _project(tmp_path, branch)
    got = _split(root, "step", _line(branch, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert "under a branch or loop" in got.why_not
    again = APP.replace("    return x.numpy()\n", "    N = 0\n    return x.numpy()\n")
    root2 = _project(tmp_path / "b", again) if (tmp_path / "b").mkdir() is None else None
    assert root2 is not None
    got = _split(root2, "step", _line(again, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert "binds N again" in got.why_not


@pytest.mark.heavy
def test_the_split_code_prints_what_the_original_printed_and_makes_each_kernel_once(tmp_path: Path) -> None:
    """Real Warp CPU runs: the original and the split file print the same sums; the split one makes the kernel once
    per key (scene.k changes once: two kernels in four calls)."""
    root = _project(tmp_path, APP)
    counter = ("\n_made = []\n_init = wp.Kernel.__init__\n"
               "def _count(self, *a, **k):\n    _made.append(1)\n    return _init(self, *a, **k)\n"
               "wp.Kernel.__init__ = _count\n")
    src = (root / "app.py").read_text().replace('if __name__ == "__main__":', counter + 'if __name__ == "__main__":')
    src = src.replace('print("makes", sys.argv[-1] if len(sys.argv) > 1 else "")', 'print("makes", len(_made))')
    (root / "app.py").write_text(src)
    original = subprocess.run([sys.executable, "app.py"], cwd=root, capture_output=True, text=True, timeout=600)
    assert original.returncode == 0, original.stderr[-600:]
    step = _split(root, "step", _line(src, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert step.ok, step.why_not
    apply_edits(root, step.edits)
    split = subprocess.run([sys.executable, "app.py"], cwd=root, capture_output=True, text=True, timeout=600)
    assert split.returncode == 0, split.stderr[-600:]

    def lines(out: str) -> list[str]:
        return [ln for ln in out.splitlines() if ln and not ln.startswith(("Warp ", "Module "))]

    want, got = lines(original.stdout), lines(split.stdout)
    assert want[:-1] == got[:-1]
    assert want[-1] == "makes 4" and got[-1] == "makes 2"


def test_a_cache_the_edits_add_is_refused_when_the_fixed_run_keyed_it_on_an_object(tmp_path: Path) -> None:
    """Judged on the composed result: the fixed copy's run record of the new maker's arguments (the hook's)."""
    from types import SimpleNamespace

    from warp_compile.probe.fix.keys import object_keys

    root = _project(tmp_path, APP)
    step = _split(root, "step", _line(APP, "@decorator_for(cfg)"), {"scene": OBJ, "cfg": OBJ})
    assert step.ok, step.why_not

    def run(args: dict) -> SimpleNamespace:
        made = KernelCreation(key="_step_kernel__locals__apply", file=str(root / "app.py"), line=30,
                              function="_step_kernel", args=args)
        return SimpleNamespace(cold=SimpleNamespace(events=SimpleNamespace(kernel_creations=[made])))

    values = {"cfg_fast": {"kind": "bool", "text": "True"}, "scene_k": {"kind": "int", "text": "3"}}
    assert object_keys(step.edits, [run(values)]) == ""
    why = object_keys(step.edits, [run({**values, "scene_k": {"kind": "other", "type": "Material"}})])
    assert "_step_kernel()" in why and "scene_k (a Material)" in why
    # edits that add no cached function are not judged here
    assert object_keys([e for e in step.edits if "lru_cache" not in e.new],
                       [run({"x": {"kind": "other", "type": "Material"}})]) == ""


CHECKS = '''\
import numpy as np
import warp as wp
import warp.utils


class Checker:
    def __init__(self, tol):
        self.tol = tol

    def check(self, q, predicate, indices=None):
        if isinstance(predicate, wp.Function):
            fn = predicate
        else:
            fn = warp.utils.create_warp_function(predicate)[0]
        TOL = self.tol

        @wp.kernel(module="unique", enable_backward=False)
        def check(q: wp.array(dtype=float), bad: wp.array(dtype=int)):
            t = wp.tid()
            if fn(q[t]) and q[t] > TOL:
                bad[t] = 0
            else:
                bad[t] = 1

        if indices is None:
            indices = np.arange(q.shape[0], dtype=np.int32)
        bad = wp.zeros(q.shape[0], dtype=int)
        wp.launch(check, dim=q.shape[0], inputs=[q, bad])
        return int(bad.numpy().sum())
'''


def test_a_method_that_picks_its_func_in_a_branch_is_split_on_the_predicate_and_its_instances_value(
        tmp_path: Path) -> None:
    """newton's check helper as a method: the `if` that turns a predicate into a func is taken whole, the keys are the
    predicate (recorded as a function) and the value computed from `self`, not `self`."""
    root = _project(tmp_path, CHECKS)
    line = _line(CHECKS, "@wp.kernel(module=")
    pred = {"kind": "function", "module": "app", "name": "upright"}
    step = _split(root, "Checker.check", line, {"self": OBJ, "q": OBJ, "predicate": pred, "indices": {"kind": "none"}})
    assert step.ok, step.why_not
    apply_edits(root, step.edits)
    tree = ast.parse((root / "app.py").read_text())
    maker = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "_check_kernel")
    assert [a.arg for a in maker.args.args] == ["TOL", "predicate"]
    cls = next(s for s in tree.body if isinstance(s, ast.ClassDef))
    method = next(s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "check")
    assert [ast.unparse(s) for s in method.body[:2]] == ["TOL = self.tol", "check = _check_kernel(TOL, predicate)"]
    lambdas = _split(_project(tmp_path / "c", CHECKS) if (tmp_path / "c").mkdir() is None else root, "Checker.check",
                     line, {"self": OBJ, "q": OBJ, "predicate": {"kind": "other", "type": "partial"}})
    assert "uses predicate itself" in lambdas.why_not


RESET = '''\
import warp as wp


def reset(model, data, mask=None) -> None:
    masked = mask is not None

    @wp.kernel(module="unique", enable_backward=False)
    def clear(mask: wp.array(dtype=bool), force: wp.array(dtype=float)):
        w = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        force[w] = 0.0

    @wp.kernel(module="unique", enable_backward=False)
    def restore(mask: wp.array(dtype=bool), q0: wp.array(dtype=float), q: wp.array(dtype=float)):
        w = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        q[w] = q0[w]

    wp.launch(clear, dim=model.n, inputs=[mask, data.force])
    wp.launch(restore, dim=model.n, inputs=[mask, model.q0, data.q])
'''


def test_the_kernels_of_one_function_share_one_maker_keyed_on_a_value_computed_from_an_array(tmp_path: Path) -> None:
    """mujoco_warp's reset shape: two kernels read `masked = mask is not None`; `mask` is an array (an object the
    cache must not key on), `masked` a bool computed where it was: the one key."""
    root = _project(tmp_path, RESET)
    file = str(root / "app.py")
    made = [KernelCreation(key=f"reset__locals__{k}", file=file, line=_line(RESET, f"def {k}(") - 1, function="reset",
                           args={"model": OBJ, "data": OBJ, "mask": {"kind": "other", "type": "array"}},
                           start_ms=100.0 + i, made_ms=1.0) for i in range(3) for k in ("clear", "restore")]
    ctx = _ctx(_report(root, made), root)
    step = split_maker(ctx, file, "reset", made)
    assert step.ok, step.why_not
    apply_edits(root, step.edits)
    tree = ast.parse((root / "app.py").read_text())
    maker = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "_reset_kernels")
    assert [a.arg for a in maker.args.args] == ["masked"]
    reset = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "reset")
    assert [ast.unparse(s) for s in reset.body[:2]] == ["masked = mask is not None",
                                                        "clear, restore = _reset_kernels(masked)"]
    # a value the function binds again later is no key computed once: the kernels would capture another value
    bound_later = RESET.replace("    wp.launch(clear", "    masked = False\n    wp.launch(clear")
    root2 = _project(tmp_path / "b", bound_later) if (tmp_path / "b").mkdir() is None else root
    got = split_maker(_ctx(_report(root2, made), root2), str(root2 / "app.py"), "reset",
                      [KernelCreation(**{**m.model_dump(), "file": str(root2 / "app.py")}) for m in made])
    assert not got.ok
