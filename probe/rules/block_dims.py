"""CS-5: one module compiled at several block_dim values (CUDA).

Fires when the measurement shows one module compiled on a CUDA device at more than one block_dim (a build
grouping, or a hash diff whose cause is `block_dim_variant`). The finding groups the module's kernels by the
block_dim they were launched at, proposes one named module per stable block_dim, and puts kernels whose block_dim
is chosen at run time (several values, or a non-literal `block_dim=` in the sources) in a module of their own.
Saving: the extra variants' ms (all variants but the largest).

On a CPU-only run the launch block_dim is forced to 1, so the mechanism is not reached; the reason names any
launches in the sources that give one module's kernels different literal block_dim values (what a CUDA run would
compile), and any CPU variants that were measured anyway (force_load(block_dim=...), enable_cpu_blocks).
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..fmt import fmt_ms
from ..models import Build, CudaBuild, Report
from ..models.diagnosis import Evidence, Finding, Location, NotReached, RuledOut, RuleResult
from ..models.scan import KernelDef, LaunchFact, ScanFacts
from . import cuda_pricing as cp
from . import cuda_replay as cr
from .block_split import plan_split, preload_block_dim
from .context import RuleContext
from .helpers import HIGH_SHARE, NOTHING_COMPILED, is_cpu, ruled_out, share_of_compile, warp_key

MECHANISM = "CS-5"


def _scan_kernel(scan: ScanFacts | None, key: str) -> KernelDef | None:
    if scan is None:
        return None
    for k in scan.kernels:
        if warp_key(k.qualname) == key:
            return k
    hits = scan.kernel_by_name(key)
    return hits[0] if len(hits) == 1 else None


def _scan_launches_by_module(scan: ScanFacts) -> dict[str, list[tuple[LaunchFact, KernelDef]]]:
    """Launches in the sources that pass block_dim, keyed by the Warp module of the launched kernel."""
    out: dict[str, list[tuple[LaunchFact, KernelDef]]] = defaultdict(list)
    for la in scan.launches:
        if la.block_dim is None or not la.kernel_name:
            continue
        ks = scan.kernel_by_name(la.kernel_name)
        if len(ks) != 1 or ks[0].warp_module is None:
            continue
        out[ks[0].warp_module].append((la, ks[0]))
    return dict(out)


def _variants(builds: list[Build]) -> dict[tuple[str, str], dict[int | None, list[Build]]]:
    """(module, device) -> block_dim -> builds, for modules compiled at more than one block_dim."""
    groups: dict[tuple[str, str], dict[int | None, list[Build]]] = defaultdict(lambda: defaultdict(list))
    for b in builds:
        groups[(b.module, b.device)][b.block_dim].append(b)
    return {k: dict(v) for k, v in groups.items() if len(v) > 1}


def _changes_modules(ctx: RuleContext) -> set[tuple[str, str]]:
    return {(hc.module, hc.device) for hc in ctx.changes if any(c.kind == "block_dim_variant" for c in hc.causes)}


_CONST_RE = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Z0-9_]*$")


def stable_block_dim(value: int | str | None) -> bool:
    """A literal int or a named constant (ALL_CAPS, possibly qualified): fixed for the program's lifetime."""
    return isinstance(value, int) or (isinstance(value, str) and bool(_CONST_RE.match(value.strip())))


def _cpu_scan_note(ctx: RuleContext) -> str:
    if ctx.scan is None:
        return ""
    notes = []
    for mod, items in sorted(_scan_launches_by_module(ctx.scan).items()):
        stable: dict[str, list[str]] = defaultdict(list)
        runtime: list[str] = []
        for la, k in items:
            where = f"{k.name} at {la.file}:{la.line}"
            if stable_block_dim(la.block_dim):
                stable[str(la.block_dim)].append(where)
            else:
                runtime.append(f"{where} (block_dim={la.block_dim})")
        if len(stable) > 1 or (stable and runtime):
            parts = [f"block_dim={bd}: {', '.join(ws)}" for bd, ws in sorted(stable.items())]
            if runtime:
                parts.append("chosen at run time: " + ", ".join(runtime))
            notes.append(
                f"the sources launch kernels of module {mod} with different block_dim values ({'; '.join(parts)}); "
                "on a CUDA device that module would compile once per distinct value, each time with all its kernels"
            )
    return ("; ".join(notes) + ".") if notes else ""


def _not_reached(ctx: RuleContext, cpu_variants: dict[tuple[str, str], dict[int | None, list[Build]]]) -> RuleResult:
    reason = (
        "CUDA only: this run compiled for the CPU, where every launch runs at block_dim 1, so a module is not "
        "duplicated per launch block_dim (splitting modules by block_dim on the CPU only adds modules)"
    )
    for (mod, dev), by_bd in sorted(cpu_variants.items()):
        desc = ", ".join(
            f"block_dim {bd}: build {', '.join(str(b.seq) for b in bs)} ({fmt_ms(sum(b.ms for b in bs))})"
            + (
                f" from {bs[0].trigger.api or 'load'} at {ctx.rel(bs[0].trigger.file)}:{bs[0].trigger.line}"
                if bs[0].trigger is not None
                else ""
            )
            for bd, bs in sorted(by_bd.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        )
        reason += (
            f". Measured anyway: {mod} was compiled on {dev} at {len(by_bd)} block_dim values ({desc}); a CPU "
            "variant other than the launch's is usually an explicit force_load(block_dim=...) or enable_cpu_blocks "
            "and is compiled for nothing"
        )
    note = _cpu_scan_note(ctx)
    if note:
        reason += ". Scan: " + note
    return RuleResult(not_reached=[NotReached(mechanism=MECHANISM, reason=reason)])


def _grouping(stable: dict[int | None, list[str]], own: list[str], unlaunched: list[str], several: str) -> Evidence:
    """`kernels by launch block_dim: block_dim 64: a, b; <several>: c; not launched in this run: d.`"""
    text = [f"block_dim {bd}: {', '.join(ks)}" for bd, ks in sorted(stable.items(), key=lambda kv: kv[0] or 0)]
    if own:
        text.append(f"{several}: " + ", ".join(own))
    if unlaunched:
        text.append("not launched in this run: " + ", ".join(unlaunched))
    return Evidence(fact="kernels by launch block_dim: " + "; ".join(text) + ".")


def _finding(ctx: RuleContext, mod: str, dev: str, by_bd: dict[int | None, list[Build]]) -> Finding:
    scan = ctx.scan
    all_builds = [b for bs in by_bd.values() for b in bs]
    variant_ms = {bd: sum(b.ms for b in bs) for bd, bs in by_bd.items()}
    total = sum(variant_ms.values())
    keep_bd = max(variant_ms, key=lambda bd: variant_ms[bd])
    saving = total - variant_ms[keep_bd]

    # Which block_dim each kernel was launched at (measured), plus what the sources say.
    launched: dict[str, set[int | None]] = defaultdict(set)
    for la in ctx.report.launches:
        if la.module == mod and la.device == dev:
            launched[la.kernel].add(la.block_dim)
    runtime_src: dict[str, list[LaunchFact]] = defaultdict(list)
    literal_src: dict[str, list[LaunchFact]] = defaultdict(list)
    if scan is not None:
        for key in {k.key for b in all_builds for k in b.kernels} | set(launched):
            kd = _scan_kernel(scan, key)
            if kd is None:
                continue
            for la in scan.launches_of(kd.name):
                if la.block_dim is None:
                    continue
                (literal_src if stable_block_dim(la.block_dim) else runtime_src)[key].append(la)

    kernels = sorted({k.key for b in all_builds for k in b.kernels} | set(launched))
    stable: dict[int | None, list[str]] = defaultdict(list)
    own: list[str] = []
    unlaunched: list[str] = []
    for key in kernels:
        bds = launched.get(key, set())
        if key in runtime_src or len(bds) > 1:
            own.append(key)
        elif len(bds) == 1:
            stable[next(iter(bds))].append(key)
        else:
            unlaunched.append(key)

    evidence = [
        Evidence(
            fact=(
                f"{mod} was compiled on {dev} at {len(by_bd)} block_dim values, each build holding the module's whole "
                "kernel set: "
                + "; ".join(
                    f"block_dim {bd}: build {', '.join(str(b.seq) for b in bs)} ({fmt_ms(variant_ms[bd])}, "
                    f"{max(b.source_bytes for b in bs)} B source)"
                    for bd, bs in sorted(by_bd.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
                )
                + "."
            ),
            builds=sorted(b.seq for b in all_builds),
            ms=round(total, 1),
        )
    ]
    evidence.append(_grouping(stable, own, unlaunched, "launched at several or run-time block_dims"))
    for key, las in sorted(runtime_src.items()):
        for la in las:
            evidence.append(
                Evidence(
                    fact=f"{la.file}:{la.line}: {key} is launched with block_dim={la.block_dim} (chosen at run time).",
                    source="scan",
                )
            )

    locations: list[Location] = []
    short = mod.rsplit(".", 1)[-1]
    plan = []
    for bd, ks in sorted(stable.items(), key=lambda kv: kv[0] or 0):
        name = f"{mod}_bd{bd}"
        plan.append(f'@wp.kernel(module="{name}") on {", ".join(ks)}')
        for key in ks:
            kd = _scan_kernel(scan, key)
            if kd is not None:
                locations.append(ctx.loc(kd.file, kd.line, f'add module="{name}" (launched at block_dim {bd})'))
            else:
                info = next((k for b in all_builds for k in b.kernels if k.key == key and k.file and k.line), None)
                if info is not None and info.file and info.line:
                    locations.append(ctx.loc(info.file, info.line, f'add module="{name}" (launched at block_dim {bd})'))
    for key in own:
        kd = _scan_kernel(scan, key)
        name = f"{mod}_{key}"
        plan.append(f'@wp.kernel(module="{name}") on {key} (its block_dim is not stable)')
        if kd is not None:
            locations.append(ctx.loc(kd.file, kd.line, "keep in its own module: block_dim varies at run time"))
    for las in literal_src.values():
        for la in las:
            locations.append(ctx.loc(la.file, la.line, f"launch at block_dim {la.block_dim}"))

    defs: dict[str, tuple[str, int]] = {}
    for key in kernels:
        kd = _scan_kernel(scan, key)
        info = next((k for b in all_builds for k in b.kernels if k.key == key and k.file and k.line), None)
        if kd is not None:
            defs[key] = (kd.file, kd.line)
        elif info is not None and info.file and info.line:
            defs[key] = (info.file, info.line)
    split = plan_split(ctx, mod, dict(stable), own, defs, total)
    fix = (
        split.fix_text(mod)
        if split.lever != "none"
        else f"Give each stable block_dim its own named module so no kernel is compiled at a block_dim it never "
        f"runs at: {'; '.join(plan)}. Keep kernel names and launches unchanged."
    ) + (
        f" Alternatively, if the block_dim values of {short}'s launches were not deliberately tuned, launch them at "
        "one block_dim." if split.lever == "split" else ""
    )
    return _cs5(
        ctx, mod, evidence, locations, fix, saving,
        title=f"{mod} is compiled once per block_dim ({len(by_bd)} variants)",
        severity="high" if share_of_compile(ctx, saving) >= HIGH_SHARE else "medium",
        confidence="high",
        saving_basis=(
            f"ms of the extra variants: all {len(by_bd)} variant builds ({fmt_ms(total)}) minus the largest "
            f"(block_dim {keep_bd}, {fmt_ms(variant_ms[keep_bd])}); each split module still pays a small fixed cost"
        ),
        caveats=[
            "A kernel whose block_dim is chosen at run time (e.g. from input size) has no stable home: keep it in "
            "its own module rather than dragging a shared module into extra variants.",
            "Do not collapse kernels or change launch block_dim values to claim the gain; that changes the workload.",
            "On the CPU (block_dim 1) the split adds modules and measured slower: apply it to CUDA targets.",
        ],
        **split.fields(),
    )


def _cs5(
    ctx: RuleContext, mod: str, evidence: list[Evidence], locations: list[Location], fix: str, saving: float,
    **text: object,
) -> Finding:
    """A CS-5 finding for one module; `text` carries what differs between a device run and a replay."""
    return Finding(mechanism=MECHANISM, modules=[mod], evidence=evidence, locations=locations, fix=fix,
                   estimated_saving_ms=round(saving, 1), samples=ctx.samples, **text)  # type: ignore[arg-type]


def _replay_finding(ctx: RuleContext, mod: str, by_bd: dict[int | None, CudaBuild]) -> Finding:
    """CS-5 from a --cuda-arch replay: each variant was built for sm_N after the run, at the block_dim asked for."""
    report = ctx.report
    where = cr.origin(report)
    defs = cr.kernel_defs(report, mod)
    order = sorted(by_bd, key=lambda bd: bd or 0)
    launched: dict[str, set[int | None]] = defaultdict(set)
    for bd, b in by_bd.items():
        for key in b.kernels:
            launched[key].add(bd)
    kernels = sorted(set(defs) | set(launched))
    total = sum(b.ms for b in by_bd.values())
    parts = []
    for bd in order:
        b = by_bd[bd]
        parts.append(
            f"block_dim {bd}: {b.ms:.0f} ms (NVRTC {b.phases.get('nvrtc', 0.0):.0f} ms, {b.source_bytes} B source), "
            f"launched: {', '.join(sorted(b.kernels)) or 'none (' + ', '.join(b.via) + ')'}"
        )
    evidence = [
        Evidence(
            fact=(
                f"{mod} built for {where} at {len(by_bd)} block_dim values, each build holding all "
                f"{len(kernels)} kernels: " + "; ".join(parts) + "."
            ),
            ms=round(total, 1),
        )
    ]
    stable: dict[int | None, list[str]] = defaultdict(list)
    own = sorted(k for k, bds in launched.items() if len(bds) > 1)
    for key, bds in sorted(launched.items()):
        if len(bds) == 1:
            stable[next(iter(bds))].append(key)
    unlaunched = [k for k in kernels if k not in launched]
    evidence.append(_grouping(stable, own, unlaunched, "launched at several block_dims"))

    locations: list[Location] = []
    for bd, ks in sorted(stable.items(), key=lambda kv: kv[0] or 0):
        for key in ks:
            info = defs.get(key)
            if info is not None and info.file and info.line:
                locations.append(ctx.loc(info.file, info.line, f"launched at block_dim {bd}"))
    split = plan_split(
        ctx, mod, stable, own, {k: (i.file, i.line) for k, i in defs.items() if i.file and i.line}, total
    )
    startup = cp.startup(report)
    saving, basis = _replay_saving(by_bd, kernels, startup, where)
    preload_only = [bd for bd in order if not by_bd[bd].kernels]
    if preload_only:
        preload_block_dim(ctx, split, mod)
    fix = split.fix_text(mod)
    if preload_only:
        fix = (fix + " " if fix else "") + _preload_note(report, mod, preload_only, split.stay)
    return _cs5(
        ctx, mod, evidence, locations, fix, saving,
        title=f"{mod} is built once per block_dim on CUDA ({len(by_bd)} variants, replayed without a device)",
        severity="high" if total and saving / total >= 0.5 else "medium",
        confidence="medium",
        saving_basis=basis,
        caveats=[
            "Replayed without a device: the builds are the identities a GPU run computes (the module hash has no "
            "device input), timed on this machine's NVRTC.",
            "Do not change launch block_dim values to claim the gain; that changes the workload.",
            "On the CPU (block_dim 1) the split adds modules: apply it for CUDA targets.",
        ],
        **split.fields(),
    )


def _replay_saving(
    by_bd: dict[int | None, CudaBuild], kernels: list[str], startup: cp.Startup | None, where: str
) -> tuple[float, str]:
    """What one module per stable size saves: the kernel work of each variant not launched at its size.

    Each split module is still the first build at its block_dim, so NVRTC's start-up at that size stays; only a
    variant nothing launches at (a preload's default) goes entirely. Without a measured start-up the whole build is
    taken to follow the kernel count, an upper bound.
    """
    saving = 0.0
    for b in by_bd.values():
        if not b.kernels:
            saving += b.ms
            continue
        share = 1.0 - len(set(b.kernels)) / len(kernels) if kernels else 0.0
        fixed = min(b.ms, startup.ms) if startup is not None else 0.0
        saving += (b.ms - fixed) * share
    total = sum(b.ms for b in by_bd.values())
    if startup is not None:
        basis = (
            f"{where}: each variant's ms less NVRTC's start-up at its block_dim ({startup.ms:.0f} ms, {startup.how}), "
            f"times the share of the module's {len(kernels)} kernels not launched at that block_dim (all "
            f"{len(by_bd)} variants: {total:.0f} ms); each split module still pays the start-up at its size"
        )
    else:
        basis = (
            f"{where}: each variant's measured ms times the share of the module's {len(kernels)} kernels not "
            f"launched at its block_dim (all {len(by_bd)} variants: {total:.0f} ms); an upper bound: NVRTC's start-up "
            "at each block_dim stays after the split, and this replay did not measure it apart"
        )
    return round(saving, 1), basis


def _preload_note(report: Report, mod: str, bds: list[int | None], stay: int | None) -> str:
    sizes = ", ".join(str(bd) for bd in bds)
    want = f"block_dim={stay}" if stay is not None else "the launches' block_dim"
    return (
        f"The block_dim {sizes} variant of {mod} was built by a preload or load that no launch uses: pass {want} to "
        "that call (or set the module's default with "
        + cr.block_dim_option(report, mod, stay if stay is not None else 0)
        + "), or it is built for nothing."
    )


def evaluate(ctx: RuleContext) -> RuleResult:
    replayed = {m: v for m, v in cr.by_module(cr.replay_builds(ctx.report)).items() if len(v) > 1}
    if replayed:
        return RuleResult(findings=[_replay_finding(ctx, m, v) for m, v in sorted(replayed.items())])
    if ctx.report.cuda_builds:
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM,
                    signal=f"no module built at more than one block_dim for {cr.origin(ctx.report)}",
                )
            ]
        )
    builds = ctx.compiled
    variants = _variants(builds)
    flagged = _changes_modules(ctx)
    # a block_dim_variant diff names a module whose variants were not both compiled in this run (one cached)
    for mod, dev in flagged:
        if (mod, dev) not in variants:
            by_bd: dict[int | None, list[Build]] = defaultdict(list)
            for b in ctx.loads:
                if b.module == mod and b.device == dev:
                    by_bd[b.block_dim].append(b)
            if len(by_bd) > 1:
                variants[(mod, dev)] = dict(by_bd)

    cuda_variants = {k: v for k, v in variants.items() if not is_cpu(k[1])}
    cpu_variants = {k: v for k, v in variants.items() if is_cpu(k[1])}
    if cuda_variants:
        return RuleResult(
            findings=[_finding(ctx, mod, dev, by_bd) for (mod, dev), by_bd in sorted(cuda_variants.items())]
        )
    if ctx.cpu_only:
        return _not_reached(ctx, cpu_variants)
    if not builds:
        return ruled_out(MECHANISM, NOTHING_COMPILED)
    return RuleResult(
        ruled_out=[
            RuledOut(mechanism=MECHANISM, signal="no module compiled at more than one block_dim on a CUDA device")
        ]
    )
