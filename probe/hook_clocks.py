"""warp-compile hook companion: CPU-time clocks for the builds, and the CPU and wall time the hook's exit work took.

Copied by the sandbox next to the injected `sitecustomize` (probe/hook.py) and loaded by path in every run; like the
hook it runs in the user's interpreter (Python >= 3.9): standard library only, no warp-compile imports, errors
swallowed. Warp's CPU build runs LLVM in-process on the thread that loads the module, so that thread's CPU time
around the load is the build's own work: a machine busy with other jobs stretches its wall time, not this.

At exit the hook may add work of its own (the `--cuda-arch` replay, the settings rebuilds of `diagnose`). The parent
measures the whole child's CPU time (rusage) and wall time; `exit_bracket` times that added work on both clocks so
the parent can take it out again.
"""

import atexit
import os
import time


def thread_cpu():
    """CPU seconds of the calling thread, or None where the platform has no per-thread clock."""
    try:
        return time.thread_time()
    except (AttributeError, OSError):
        return None


def since(cpu0):
    """Milliseconds of this thread's CPU time since `cpu0` (a `thread_cpu()` reading), or None without one."""
    cpu1 = thread_cpu() if cpu0 is not None else None
    return None if cpu1 is None else (cpu1 - cpu0) * 1000.0


def header_share(cpu_ms, wall_ms, header_ms):
    """The CPU time of a precompiled header built inside one native compile call.

    The header and the module are compiled by one call into LLVM, so the thread's CPU clock cannot be read at the
    moment the header is written; its wall time is known (from the header file's mtime), and the call's CPU share
    of a core is applied to it. Exact when the thread kept the same share of a core through the call."""
    if cpu_ms is None or not wall_ms or wall_ms <= 0:
        return None
    return round(min(cpu_ms, cpu_ms * min(1.0, header_ms / wall_ms)), 3)


def process_cpu_ms():
    """CPU time of this process and the children it waited for (user + system), in ms; None without rusage."""
    try:
        import resource

        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime) * 1000.0
    except Exception:
        return None


def exit_bracket(emit):
    """Register the closing half of the exit-work clock now; returns the opening half, to register last.

    atexit runs handlers last-registered first: the opening half (registered after every other hook handler) runs
    before them, the closing half (registered before them) runs after them, so the pair brackets all of the hook's
    own exit work and nothing the app registered before `import warp`.
    """
    start = {}

    def opening():
        start["wall"] = time.perf_counter()
        start["cpu"] = process_cpu_ms()

    def closing():
        try:
            if "wall" not in start:
                return
            cpu1 = process_cpu_ms()
            cpu0 = start.get("cpu")
            emit("exit_work", {
                "wall_ms": round((time.perf_counter() - start["wall"]) * 1000.0, 3),
                "cpu_ms": round(cpu1 - cpu0, 3) if cpu0 is not None and cpu1 is not None else None,
                # the process's CPU time when the app ended (its exit work began): the per-call CPU clock's end
                "cpu_at_start_ms": round(cpu0, 3) if cpu0 is not None else None,
            })
        except Exception:
            pass

    atexit.register(closing)
    return opening


def load_rebuild(load_companion, warp_mod, ctx, bld, hook):
    """`diagnose` asked for the settings rebuilds (WARP_COMPILE_REBUILD): load hook_rebuild.py and register it.
    `hook` holds the hook's emit, hook_error, targets and rebind."""
    if not os.environ.get("WARP_COMPILE_REBUILD"):
        return
    try:
        mod = load_companion("hook_rebuild.py", "_warp_compile_hook_rebuild")
        mod.install(warp_mod, ctx, bld, hook["emit"], hook["hook_error"], hook["targets"], hook["rebind"])
    except Exception as exc:
        hook["targets"]["rebuild"] = "missing"
        hook["hook_error"]("rebuild.install", exc)
