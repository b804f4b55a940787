"""What the CUDA rules (CS-5, CS-7, CS-13) read from a `--cuda-arch` replay: builds, origin label, call syntax.

A replay builds each (module, block_dim) the run used for sm_N through NVRTC after the app ran, without a device;
every figure a finding takes from it says so (`origin`).
"""

from __future__ import annotations

from collections import defaultdict

from ..models import Build, CudaBuild, KernelInfo, Report


def replay_builds(report: Report) -> list[CudaBuild]:
    """The CUDA builds the CUDA rules read: the replay's successful builds (an `error` entry has no usable timing),
    else, for a run on a GPU without `--cuda-arch`, the builds the run made on its CUDA devices (`device_builds`),
    so the rules take one record whichever path measured it."""
    replayed = [b for b in report.cuda_builds if b.status == "compiled" and b.origin == "replay"]
    return replayed or device_builds(report)


def device_builds(report: Report) -> list[CudaBuild]:
    """The cold run's compiled loads on CUDA devices, in the replay's record (origin "device", real launches'
    block_dims, the hook's phases: native is NVRTC there), plus any device builds the report already holds."""
    out = [b for b in report.cuda_builds if b.status == "compiled" and b.origin == "device"]
    held = {(b.module, b.hash, b.block_dim, b.device) for b in out}
    launched: dict[tuple[str, str, int | None], set[str]] = {}
    for la in report.launches:  # as in the replay: the kernels launched at each size, not the module's kernel set
        launched.setdefault((la.module, la.device, la.block_dim), set()).add(la.kernel)
    for b in report.builds:
        if b.status != "compiled" or not b.device.startswith("cuda"):
            continue
        if (b.module, b.hash, b.block_dim, b.device) in held:
            continue
        out.append(
            CudaBuild(
                module=b.module,
                hash=b.hash,
                block_dim=b.block_dim,
                ms=b.ms,
                phases={
                    "codegen": b.codegen_ms,
                    "nvrtc": b.native_ms,
                    "other": max(0.0, b.ms - b.codegen_ms - b.native_ms),
                },
                source_bytes=b.source_bytes,
                backward=b.backward_in_source,
                backward_source_bytes=b.backward_source_bytes,
                kernels=sorted(_launched_at(launched, b)),
                via=[b.trigger.api] if b.trigger is not None and b.trigger.api else [],
                origin="device",
                device=b.device,
            )
        )
    return out


def _launched_at(launched: dict[tuple[str, str, int | None], set[str]], b: Build) -> set[str]:
    """The kernels launched at this build's size; a module the report saw no launch of keeps its kernel set."""
    if not any(m == b.module and d == b.device for m, d, _ in launched):
        return {k.key for k in b.kernels}
    return launched.get((b.module, b.device, b.block_dim), set())


def origin(report: Report) -> str:
    """Where the CUDA figures come from, for every sentence that quotes them."""
    if report.cuda_replay is None and any(b.origin == "device" for b in replay_builds(report)):
        return "measured on " + ", ".join(sorted({b.device or "" for b in device_builds(report)}))
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
