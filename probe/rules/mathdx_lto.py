"""CS-7: MathDx LTO work for tile operations without a measured payoff (CUDA tiles).

Fires on a CUDA run when modules whose kernels hold MathDx tile operations (tile_matmul, tile_fft, tile_cholesky,
... from the scan) were compiled and the measurement shows LTO work: `.lto` artifacts in the cache, or a large gap
between the module's load time and its native compile time. It names the enable_mathdx_* option per op family and
warns that backward code multiplies the links (CS-10 first). On a CPU-only run it is not reached (MathDx LTO is CUDA
only); the reason names the tile op sites.
"""

from __future__ import annotations

from ..fix.place import cuda_edits as ce
from ..fmt import fmt_ms
from ..models import Build
from ..models.diagnosis import Edit, Evidence, Finding, Location, NotReached, RuledOut, RuleResult
from ..models.scan import ScanFacts, TileOpFact
from . import cuda_replay as cr
from .context import RuleContext
from .helpers import (
    MEDIUM_SHARE,
    NOTHING_COMPILED,
    is_cpu,
    ruled_out,
    share_of_compile,
    warp_key,
)

MECHANISM = "CS-7"
GAP_SHARE = 0.5  # (ms - native) / ms at or above this, and the gap a material share of the cold compile

_OPTION = {
    "tile_matmul": "enable_mathdx_gemm",
    "tile_fft": "enable_mathdx_fft",
    "tile_ifft": "enable_mathdx_fft",
    "tile_cholesky": "enable_mathdx_solver",
    "tile_cholesky_solve": "enable_mathdx_solver",
    "tile_lower_solve": "enable_mathdx_solver",
    "tile_upper_solve": "enable_mathdx_solver",
}


def _sites(ops: list[TileOpFact]) -> str:
    return ", ".join(f"{t.op} in {t.kernel} at {t.file}:{t.line}" for t in ops)


def _launch_sites(scan: ScanFacts, ops: list[TileOpFact]) -> str:
    kernels = {t.kernel for t in ops if t.kind == "kernel"}
    return ", ".join(
        f"{la.file}:{la.line} ({la.api} {la.kernel_name}"
        + (f", block_dim={la.block_dim})" if la.block_dim is not None else ")")
        for la in scan.launches
        if la.kernel_name in kernels
    )


def _ops_in_build(scan: ScanFacts, b: Build, ops: list[TileOpFact]) -> list[TileOpFact]:
    keys = {k.key for k in b.kernels}
    kernel_names = {k.name for k in scan.kernels if warp_key(k.qualname) in keys or k.name in keys}
    func_keys = set(b.functions)
    func_names = {f.name for f in scan.functions if warp_key(f.qualname) in func_keys or f.name in func_keys}
    return [
        t
        for t in ops
        if (t.kind == "kernel" and t.kernel in kernel_names) or (t.kind == "func" and t.kernel in func_names)
    ]


def _replay(ctx: RuleContext, mathdx: list[TileOpFact]) -> RuleResult:
    """CS-7 from a --cuda-arch replay: LTO artifacts, link inputs and phase times of each sm_N build."""
    report = ctx.report
    where = cr.origin(report)
    builds = cr.replay_builds(report)
    lto = [b for b in builds if b.lto_artifacts.count or b.link_inputs or b.phases.get("lto", 0.0) > 0]
    if not lto:
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM,
                    signal=(
                        f"no MathDx LTO in the {len(builds)} build(s) replayed for {where}: no .lto artifacts, no "
                        "link inputs, no LTO generation time"
                    ),
                )
            ]
        )
    evidence: list[Evidence] = []
    backward: set[str] = set()
    for b in lto:
        gen = b.phases.get("lto", 0.0)
        nvrtc = b.phases.get("nvrtc", 0.0)
        evidence.append(
            Evidence(
                fact=(
                    f"{b.module} (block_dim {b.block_dim}) built for {where} in {b.ms:.0f} ms: MathDx LTO generation "
                    f"{gen:.0f} ms ({gen / b.ms:.0%}), NVRTC compile and link of {b.link_inputs} LTO input(s) "
                    f"{nvrtc:.0f} ms, codegen {b.phases.get('codegen', 0.0):.0f} ms; {b.lto_artifacts.count} .lto "
                    f"artifact(s), {b.lto_artifacts.bytes / 1e6:.1f} MB."
                ),
                ms=round(gen, 1),
            )
        )
        cpu = [x for x in report.builds if x.module == b.module]
        if any(x.backward_in_source or x.options.get("enable_backward") == "True" for x in cpu):
            backward.add(b.module)
    modules = sorted({b.module for b in lto})
    off = [m for m in modules if m not in backward]
    if off:  # CS-10 checked first: backward code would multiply the LTO work
        evidence.append(Evidence(fact=f"backward code is off in {', '.join(off)} (CS-10 checked): no adjoint GEMMs."))
    ops = {t.op for t in mathdx}
    opts = sorted({_OPTION.get(op, "enable_mathdx_gemm") for op in ops}) or ["enable_mathdx_gemm"]
    fields = _edit_fields(ctx, modules, mathdx, backward)
    edits = fields.get("edits") or []
    opt_lines = (
        "; ".join(f"{e.new.strip().splitlines()[-1]} at the top of {e.file} (the edit)" for e in edits)  # type: ignore[union-attr]
        if edits
        else "; ".join(f'wp.get_module("{m}").options["{o}"] = False' for o in opts for m in modules)
    )
    fix = (
        "Measure both ways before choosing: build the tile modules with the MathDx path off ("
        + opt_lines
        + ", before first load), replay again with --cuda-arch and compare the build time AND the steady-state "
        "kernel time of the active precision on the target GPU. Keep MathDx where its runtime benefit is measured."
    )
    if backward:
        fix = (
            f"First check backward code (CS-10): {', '.join(sorted(backward))} generate adjoints, and an adjoint "
            "tile_matmul generates and links its own GEMMs; if nothing differentiates them, set "
            '{"enable_backward": False} on the module. Then: ' + fix
        )
    total = sum(b.phases.get("lto", 0.0) for b in lto)
    build_ms = sum(b.ms for b in lto)
    locations = [
        ctx.loc(t.file, t.line, f"{t.op}: MathDx LTO on CUDA ({_OPTION.get(t.op, 'enable_mathdx_*')})") for t in mathdx
    ]
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title=f"MathDx LTO generation dominates the tile modules' CUDA build ({where})",
                severity="high" if build_ms and total / build_ms >= 0.5 else "medium",
                confidence="medium",
                modules=modules,
                evidence=evidence,
                locations=locations,
                fix=fix,
                estimated_saving_ms=round(total, 1),
                saving_basis=(
                    f"{where}: the MathDx LTO generation measured in these builds ({total:.0f} of {build_ms:.0f} ms); "
                    "the link inside the NVRTC build shrinks too but is not timed apart; the LTO cache keeps the "
                    "artifacts for later processes with the same cache"
                ),
                caveats=[
                    "Changes numerics and runtime: leave MathDx on where its runtime benefit is required and measured.",
                    "Replayed without a device: the same module identities a GPU run builds, timed on this machine.",
                ],
                samples=ctx.samples,
                **fields,  # type: ignore[arg-type]
            )
        ]
    )


def _edit_fields(
    ctx: RuleContext, modules: list[str], mathdx: list[TileOpFact], backward: set[str]
) -> dict[str, object]:
    """The MathDx path off as a module option in each project file whose kernels hold the ops, before they are defined.

    `wp.set_module_options({...})` at module scope sets the calling file's own module, so it reaches exactly the
    tile kernels of that file and nothing else. A module whose kernels name another module (`module="x"`), or a
    dependency's file, gets no edit.
    """
    scan = ctx.scan
    edits: list[Edit] = []
    skipped: list[str] = []
    for mod in modules:
        if scan is None:
            break
        ops = [t for t in mathdx if scan.module_of_file(t.file) is not None]
        files = sorted({t.file for t in ops if mod in _file_modules(ctx, t)})
        if not files:
            skipped.append(mod)
            continue
        for file in files:
            opts = sorted({_OPTION.get(t.op, "enable_mathdx_gemm") for t in ops if t.file == file})
            line = ce.after_imports_line(ctx.sources, file)
            text = "wp.set_module_options({" + ", ".join(f'"{o}": False' for o in opts) + "})"
            e = ce.insert_lines(
                ctx.sources, file, line, f"\n# tile products without MathDx LTO on CUDA (CS-7)\n{text}\n"
            ) if line is not None else None
            if e is None:
                skipped.append(mod)
            else:
                edits.append(e)
    if not edits:
        return {
            "applicability": "manual",
            "review": "no edit: the tile kernels of " + ", ".join(skipped or modules) + " are not in a project file "
            "whose own module holds them; set the option on the module by hand",
        }
    review = (
        "Numerics and GPU runtime change: the tile products use Warp's built-in GEMM instead of MathDx. Results can "
        "differ in the last bits (more at low precision), and the kernels can run slower on the GPU: time them there "
        "before keeping the edit. The build-time saving is measured by the replay without a device."
    )
    if backward:
        review += f" {', '.join(sorted(backward))} also build adjoint code: CS-10 first."
    if skipped:
        review += f" No edit for {', '.join(skipped)}."
    return {"edits": edits, "applicability": "review", "review": review}


def _file_modules(ctx: RuleContext, t: TileOpFact) -> set[str]:
    """The Warp module names the kernels of a tile op's file join when they name none (the file's Python module,
    `__main__` for the script that runs)."""
    scan = ctx.scan
    info = scan.module_of_file(t.file) if scan is not None else None
    if info is None or scan is None:
        return set()
    if any(k.file == t.file and k.name == t.kernel and k.module_arg is not None for k in scan.kernels):
        return set()
    return {info.name} | ({info.main_alias} if info.main_alias else set())


def evaluate(ctx: RuleContext) -> RuleResult:
    if ctx.report.cuda_builds:
        scan = ctx.scan
        return _replay(ctx, [t for t in (scan.tile_ops if scan is not None else []) if t.mathdx])
    scan = ctx.scan
    report = ctx.report
    tile_ops = scan.tile_ops if scan is not None else []
    mathdx = [t for t in tile_ops if t.mathdx]
    compiled = ctx.compiled

    if ctx.cpu_only:
        if mathdx:
            reason = (
                "CUDA only: MathDx LTO is used for tile operations on CUDA devices, and this run compiled for the CPU. "
                f"MathDx tile operations in the sources: {_sites(mathdx)}; on a CUDA device these modules would link "
                "LTO material at first compile (several times more with backward code, see CS-10)"
            )
            launches = _launch_sites(scan, mathdx) if scan is not None else ""
            if launches:
                reason += f"; launched at {launches}"
            return RuleResult(not_reached=[NotReached(mechanism=MECHANISM, reason=reason)])
        if scan is None:
            reason = "CUDA only: this run compiled for the CPU, where no MathDx LTO is linked"
            return RuleResult(not_reached=[NotReached(mechanism=MECHANISM, reason=reason)])
        signal = "no MathDx tile operation (tile_matmul, tile_fft, tile_cholesky, ...) in the sources"
        if tile_ops:
            signal += f"; the {len(tile_ops)} tile operation(s) present do not go through MathDx"
        return ruled_out(MECHANISM, signal)

    cuda = [b for b in compiled if not is_cpu(b.device)]
    if not cuda:
        signal = "no CUDA module was compiled" if compiled else NOTHING_COMPILED
        return ruled_out(MECHANISM, signal)
    if not mathdx and report.lto_artifacts == 0:
        signal = "no MathDx tile operation in the sources and no .lto artifacts in the cache"
        if tile_ops:
            signal = f"tile operations present ({len(tile_ops)}) but none goes through MathDx; no .lto artifacts"
        return ruled_out(MECHANISM, signal)

    # Modules that hold the MathDx ops (from the scan), or, without a scan match, the modules with a large gap.
    suspects: list[tuple[Build, list[TileOpFact]]] = []
    for b in cuda:
        ops = _ops_in_build(scan, b, mathdx) if scan is not None else []
        gap = b.ms - b.native_ms
        big_gap = b.ms > 0 and gap / b.ms >= GAP_SHARE and share_of_compile(ctx, gap) >= MEDIUM_SHARE
        if ops and (report.lto_artifacts > 0 or big_gap):
            suspects.append((b, ops))
        elif not ops and report.lto_artifacts > 0 and big_gap and not mathdx:
            suspects.append((b, []))
    if not suspects:
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM,
                    signal=(
                        f"MathDx tile operations ({_sites(mathdx)}) but no LTO work measured in their modules "
                        f"({report.lto_artifacts} .lto artifacts, no large gap between module and native compile time)"
                    ),
                )
            ]
        )

    evidence: list[Evidence] = []
    locations: list[Location] = []
    options: dict[str, set[str]] = {}
    backward = []
    for b, ops in suspects:
        gap = b.ms - b.native_ms
        evidence.append(
            Evidence(
                fact=(
                    f"{b.module} (build {b.seq}, {b.device}, block_dim {b.block_dim}): {fmt_ms(b.ms)} to load, of "
                    f"which native compile {fmt_ms(b.native_ms)} and {fmt_ms(gap)} outside it (codegen "
                    f"{fmt_ms(b.codegen_ms)}, "
                    f"other {fmt_ms(b.other_ms)})" + (f"; MathDx tile ops: {_sites(ops)}" if ops else "") + "."
                ),
                builds=[b.seq],
                ms=round(gap, 1),
                source="both" if ops else "measurement",
            )
        )
        for t in ops:
            locations.append(
                ctx.loc(t.file, t.line, f"{t.op}: MathDx LTO on CUDA ({_OPTION.get(t.op, 'enable_mathdx_*')})")
            )
            options.setdefault(_OPTION.get(t.op, "enable_mathdx_gemm"), set()).add(b.module)
        if b.backward_in_source or b.options.get("enable_backward") == "True":
            backward.append(b.module)
    if report.lto_artifacts:
        evidence.append(
            Evidence(fact=f"the cold run left {report.lto_artifacts} .lto artifact(s) in the kernel cache.")
        )
    if scan is not None:
        for s in scan.settings_named("enable_mathdx*"):
            evidence.append(Evidence(fact=f"{s.file}:{s.line}: {s.name} = {s.value} ({s.via}).", source="scan"))

    modules = sorted({b.module for b, _o in suspects})
    opt_lines = "; ".join(
        f'wp.get_module("{m}").options["{opt}"] = False' for opt, mods in sorted(options.items()) for m in sorted(mods)
    )
    fix = (
        "Measure both ways before choosing: build the tile modules with the MathDx path off ("
        + (opt_lines or "the matching enable_mathdx_* option = False")
        + ", before first load) and compare cold build time AND steady-state kernel time of the active precision. "
        "Keep MathDx where its runtime benefit is measured (it can be several times faster on float16), drop it "
        "where it buys nothing. If startup and per-request paths need different options, put them in separate "
        "modules."
    )
    if backward:
        fix = (
            f"First check backward code (CS-10): {', '.join(sorted(set(backward)))} generate adjoints, and an "
            "adjoint tile_matmul links its own GEMMs (about three links instead of one); if nothing differentiates "
            "them, disable backward with the module option (not the per-kernel flag). Then: " + fix
        )
    total_gap = sum(b.ms - b.native_ms for b, _o in suspects)
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title="MathDx LTO work dominates the tile modules' build",
                severity="medium",
                confidence="medium" if any(o for _b, o in suspects) else "low",
                modules=modules, evidence=evidence, locations=locations, fix=fix,
                estimated_saving_ms=round(total_gap, 1),
                saving_basis=(
                    f"upper bound: the {fmt_ms(total_gap)} these modules spent outside the native compiler, where the "
                    "LTO work sits; the fallback path still generates and compiles the kernels"
                ),
                caveats=[
                    "Changes numerics and runtime: ask whether startup or steady-state throughput matters; leave it "
                    "alone when the MathDx runtime benefit is required and measured.",
                    "A wrapper that copies results back to NumPy can hide a kernel slowdown: time the launch itself.",
                    "The MathDx break-even in launches has not been measured.",
                ],
                samples=ctx.samples,
            )
        ]
    )
