"""What the CUDA rules (CS-5, CS-7, CS-13) read from a `--cuda-arch` replay: builds, origin label, call syntax.

A replay builds each (module, block_dim) the run used for sm_N through NVRTC after the app ran, without a device;
every figure a finding takes from it says so (`origin`).
"""

from __future__ import annotations

from collections import defaultdict

from warp_compile.probe.models import CudaBuild, KernelInfo, Report


def replay_builds(report: Report) -> list[CudaBuild]:
    """The replay's successful builds (an `error` entry has no usable timing)."""
    return [b for b in report.cuda_builds if b.status == "compiled" and b.origin == "replay"]


def origin(report: Report) -> str:
    """Where the CUDA figures come from, for every sentence that quotes them."""
    if report.cuda_replay is not None:
        return report.cuda_replay.label + (
            f" (toolkit {report.cuda_replay.toolkit})" if report.cuda_replay.toolkit else ""
        )
    arch = next((b.arch for b in report.cuda_builds if b.arch), None)
    return f"sm_{arch} via NVRTC, no device" if arch else "NVRTC replay, no device"


def by_module(builds: list[CudaBuild]) -> dict[str, dict[int | None, CudaBuild]]:
    out: dict[str, dict[int | None, CudaBuild]] = defaultdict(dict)
    for b in builds:
        out[b.module][b.block_dim] = b
    return dict(out)


def kernel_defs(report: Report, module: str) -> dict[str, KernelInfo]:
    """Kernel key -> where it is defined, from the measured (CPU) builds of the same module."""
    out: dict[str, KernelInfo] = {}
    for b in report.builds:
        if b.module == module:
            for k in b.kernels:
                if k.file and k.line and k.key not in out:
                    out[k.key] = k
    return out


def names_accept_strings(report: Report) -> bool:
    """`wp.set_module_options(..., module="name")` takes a module name in 1.19 (checked); 1.10 reads `__name__`."""
    try:
        major, minor = (int(x) for x in (report.warp_version or "0.0").split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= (1, 19)


def block_dim_option(report: Report, module: str, block_dim: int | None) -> str:
    if names_accept_strings(report):
        return f'wp.set_module_options({{"block_dim": {block_dim}}}, module="{module}")'
    return f'wp.get_module("{module}").options["block_dim"] = {block_dim}'
