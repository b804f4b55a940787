"""One clock per finding: the clock `fix`, `diagnose --verify` and `compare` all report a finding's saving on.

A finding's fix is about one thing the user waits for (start-up compile, the repeat run, the CUDA builds, or for
preloads the waiting itself); `compare` decides whether CPU time or wall time measures it (`clock_basis`). The
saving is read on the clock both name, with the 95% interval of the effect as its band. Pure functions over a
Comparison.
"""

from __future__ import annotations

from .models.comparison import Clock, Comparison

# the CPU clock that measures the same work as each wall clock a fix can be about
CPU_CLOCK_OF = {
    "compile_elapsed": "compile_cpu", "cold_module": "cold_module_cpu", "cuda_compile": "cuda_compile_cpu",
    "warm_repeat": "warm_cpu", "warm_wall": "warm_cpu", "steady": "steady_cpu",
}


def finding_clock(comparison: Comparison, intended: str) -> str:
    """The clock a saving is read on: the intended one, on the CPU clock where the comparison decides on CPU time;
    the comparison's headline when the intended clock was not judged (the warm run compiled, no CUDA builds)."""
    name = intended or "compile_elapsed"
    if comparison.clock_basis == "cpu" and comparison.clock(CPU_CLOCK_OF.get(name, "")) is not None:
        name = CPU_CLOCK_OF[name]
    k = comparison.clock(name)
    if name in ("cuda_compile", "cuda_compile_cpu") and (k is None or k.before.median is None):
        name = "compile_cpu" if comparison.clock_basis == "cpu" else "compile_elapsed"
        k = comparison.clock(name)
    if name in ("compile_elapsed", "compile_cpu") and (k is None or not k.decisive):
        name = comparison.headline  # the warm run compiled: see compare
    return name


def saving_interval(k: Clock | None) -> tuple[float | None, float | None]:
    """(low, high) of the saving (before - after) on this clock, from its interval of after - before."""
    if k is None or k.interval is None:
        return None, None
    return round(-k.interval.high_ms, 3), round(-k.interval.low_ms, 3)
