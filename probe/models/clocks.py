"""The clocks a measurement is judged on: their names as people read them, and each wall clock's CPU twin.

A leaf of the schema (it imports nothing): the comparison, the warnings' sentences and every renderer name a
clock the same way.
"""

from __future__ import annotations

CLOCK_TITLES: dict[str, str] = {
    "compile_elapsed": "compile elapsed",  # cold wall - warm wall: what the user waited for compilation
    "warm_repeat": "warm repeat",  # module time in the warm run: what every later run pays
    "cold_module": "cold module work",  # summed module load time in the cold run (header excluded): what was built
    "cuda_compile": "CUDA compile",  # summed --cuda-arch replay builds (sm_N via NVRTC): what a GPU run builds
    "cold_wall": "cold wall",  # the whole cold run (empty caches)
    "warm_wall": "warm wall",  # the whole repeat run: what every later run waits, header rebuilds included
    "pch": "header (pch)",  # the CPU precompiled header built in the cold run
    "steady": "run after last load",  # the cold run from its last module load to the app's end: the repeated calls
    "steady_cpu": "CPU after last load",  # the same span on the process's CPU clock (user + system)
    "native": "native compile",  # clang / NVRTC in the cold run, header excluded
    "codegen": "codegen",  # Python -> C++/CUDA source generation in the cold run
    # CPU clocks: user + system time of a whole run (os.wait4), and the building threads' CPU time
    "compile_cpu": "compile CPU",  # cold run CPU - warm run CPU: what compiling cost the CPU, header included
    "cold_module_cpu": "cold module CPU",  # summed CPU time of the cold run's builds (header excluded)
    "cold_cpu": "cold CPU",  # the whole cold run's CPU time
    "warm_cpu": "warm CPU",  # the whole repeat run's CPU time: what every later run costs, header rebuilds included
    "pch_cpu": "header CPU",  # the CPU precompiled header's share of its build's CPU time
    "native_cpu": "native compile CPU",  # the builds' native compile on their threads' CPU clock, header excluded
    "cuda_compile_cpu": "CUDA compile CPU",  # the --cuda-arch replay builds on their thread's CPU clock
}
# the clock a CPU-clock comparison reads for each wall clock it sets aside (the same work, the other clock)
CPU_TWIN: dict[str, str] = {
    "compile_elapsed": "compile_cpu", "cold_module": "cold_module_cpu", "cold_wall": "cold_cpu",
    "warm_wall": "warm_cpu", "pch": "pch_cpu", "native": "native_cpu", "cuda_compile": "cuda_compile_cpu",
    "steady": "steady_cpu",
}
