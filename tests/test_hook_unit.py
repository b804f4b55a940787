"""The hook file itself: what it may import, which Python it must parse under, and that it stays inert unless asked."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

HOOK = Path(__file__).resolve().parents[1] / "probe" / "hook.py"


def test_hook_parses_as_python_39():
    ast.parse(HOOK.read_text(), feature_version=(3, 9))


def test_hook_imports_only_the_standard_library():
    tree = ast.parse(HOOK.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports: the hook runs as a lone sitecustomize"
            names.add((node.module or "").split(".")[0])
    assert names and names <= set(sys.stdlib_module_names), names - set(sys.stdlib_module_names)


def test_hook_is_inert_without_an_events_file(tmp_path):
    """Installed as sitecustomize but without WARP_COMPILE_EVENTS: no finder, no output, nothing written."""
    (tmp_path / "sitecustomize.py").write_text(HOOK.read_text())
    env = {k: v for k, v in os.environ.items() if k != "WARP_COMPILE_EVENTS"}
    env["PYTHONPATH"] = str(tmp_path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # only what the hook itself might write counts
    out = subprocess.run(
        [sys.executable, "-c", "import sys; print(any(type(f).__name__ == '_WarpFinder' for f in sys.meta_path))"],
        env=env, capture_output=True, text=True, cwd=tmp_path, check=True,
    )
    assert out.stdout.strip() == "False"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sitecustomize.py"]


def test_backward_bytes_counts_what_disabling_backward_removes():
    reach = HOOK.parent / "hook_reach.py"  # the hook's companion, loaded beside it in the sandbox
    ns: dict = {"__file__": str(reach), "__name__": "reach_under_test"}
    exec(compile(reach.read_text(), str(reach), "exec"), ns)
    body = "  adj_x += 2.0f * x;\n" * 10
    generated = (
        "#include <x>\n"
        "static void k_cpu_kernel_forward(int a)\n{\n  a += 1;\n}\n"
        "static void k_cpu_kernel_backward(int a)\n{\n  a -= 1;\n}\n"
        f"// f.py:3\nstatic CUDA_CALLABLE void adj_helper(float x)\n{{\n{body}}}\n"
        "static CUDA_CALLABLE void adj_off(float x)\n{\n\t// reverse mode disabled (no backward-enabled kernel)\n}\n"
        "WP_API void k_cpu_forward(int a)\n{\n}\n"
    )
    kernel_backward = "static void k_cpu_kernel_backward(int a)\n{\n  a -= 1;\n}\n"
    # a kernel's backward goes whole; a wp.func adjoint keeps its signature and a stub, so its body counts (less the
    # stub); an adjoint that is already the stub removes nothing
    assert ns["backward_bytes"](generated) == len(kernel_backward) + len(body) - 96
    assert ns["backward_bytes"]("static void adj_s(int a)\n{\n}\n") == 0


def test_sandbox_ships_the_hook_bytecode_the_child_loads(tmp_path):
    """The child runs with PYTHONDONTWRITEBYTECODE=1: without a ready .pyc it would compile the hook every run."""
    from warp_compile.probe.sandbox import write_hook

    write_hook(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    env["WARP_COMPILE_EVENTS"] = str(tmp_path / "events.jsonl")
    out = subprocess.run([sys.executable, "-v", "-c", "pass"], env=env, capture_output=True, text=True, check=True)
    loaded = [ln for ln in out.stderr.splitlines() if "sitecustomize" in ln and "code object from" in ln]
    assert loaded and loaded[0].rstrip("'").endswith(".pyc"), loaded


def test_every_sandbox_ships_hash_checked_bytecode_of_the_hook_and_its_companion(tmp_path):
    """Compiled once per process, the bytecode is valid in every sandbox (checked against the source's hash, not
    its mtime): the child loads the hook and hook_reach.py from .pyc files in a second sandbox too."""
    from warp_compile.probe.sandbox import Sandbox

    for _ in range(2):
        with Sandbox() as box:
            env = dict(os.environ, PYTHONPATH=str(box.hook_dir), PYTHONDONTWRITEBYTECODE="1")
            env["WARP_COMPILE_EVENTS"] = str(tmp_path / "events.jsonl")
            out = subprocess.run([sys.executable, "-v", "-c", "pass"], env=env, capture_output=True, text=True,
                                 check=True)
            loaded = [ln for ln in out.stderr.splitlines() if "code object from" in ln]
            for name in ("sitecustomize", "hook_reach"):
                mine = [ln for ln in loaded if name in ln and str(box.hook_dir) in ln]
                assert mine and mine[0].rstrip("'").endswith(".pyc"), (name, loaded)


def test_a_counted_launch_keeps_its_hooks_alive_so_their_id_names_no_other_kernel():
    """A launch signature holds id(hooks): once Warp frees those hooks (a rebuilt module's exec), CPython may give
    the id to the hooks of another kernel or struct instance, whose launches would count into the old record. The
    hook keeps every hooks object it put in a signature."""
    import gc
    import weakref

    ns: dict = {"__file__": str(HOOK), "__name__": "hook_under_test"}
    env = os.environ.pop("WARP_COMPILE_EVENTS", None)
    try:
        exec(compile(HOOK.read_text(), str(HOOK), "exec"), ns)
    finally:
        if env is not None:
            os.environ["WARP_COMPILE_EVENTS"] = env

    class Hooks:
        pass

    hooks = Hooks()
    gone = weakref.ref(hooks)
    frame = sys._getframe()  # not Warp's `launch`: recorded as ignored, still a signature
    ns["_first_launch"]((id(hooks), id(frame.f_code), frame.f_lasti), frame, object(), object(), hooks)
    del hooks
    gc.collect()
    assert gone() is not None
