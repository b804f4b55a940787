"""CS-12: the precompiled header (PCH) is off, or is not paying for itself.

Fires when:
- `use_precompiled_headers` is False for compiled modules (the resolved option in the builds, or a setting in the
  sources) on a backend where Warp uses a PCH (CPU from warp 1.13; CUDA while NVRTC < 13, i.e. warp < 1.19):
  every compile re-parses the full header. Fix: remove the line. Saving = sum over the compiled modules of
  (native ms - typical PCH-backed native ms), capped per module at the header's parse cost, minus the one PCH build
  per compiling thread and key that comes back (the saving is net, as compile elapsed would show it);
- or, the inverse, on CUDA with NVRTC < 13: the default is in force, a few modules compiled, and the measured PCH
  ms exceed the modules' summed native compile (info/low, measured numbers only). On the CPU the inverse is not
  claimed: there the header pays from about the second module and is built once per process and thread.
Every PCH build of the run (thread, block_dim key, ms) is listed in the evidence or the ruled-out signal.
"""

from __future__ import annotations

import re

from ..fix.place.entry_fix import can_edit, entry_settings_edits
from ..fix.place.merge_module import MergePlan, plan_merge
from ..fix.transform.statements import remove_statement_edit
from ..fmt import fmt_ms
from ..models import Build, PchBuild
from ..models.diagnosis import (
    Applicability,
    Edit,
    Evidence,
    Finding,
    Location,
    NotReached,
    RuledOut,
    RuleResult,
)
from ..models.scan import SettingFact
from . import cuda_pricing
from .backward_cost import concurrency
from .context import RuleContext
from .helpers import (
    HIGH_SHARE,
    MEDIUM_SHARE,
    NOTHING_COMPILED,
    is_cpu,
    is_false,
    material,
    median,
    pch_off,
    ruled_out,
    share_of_compile,
)

MECHANISM = "CS-12"

FEW_MODULES = 5
# Figures from the project's notes (2-core x86_64 VM, CPU, cold process): typical native compile per module with
# the PCH, per module without it, and one PCH build, by warp version.
_CPU_FIGURES: list[tuple[tuple[int, int], float, float, float]] = [
    ((1, 19), 140.0, 1000.0, 1590.0),
    ((1, 17), 105.0, 970.0, 1600.0),
    ((1, 13), 120.0, 1500.0, 2400.0),
]


def _version(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _figures(version: tuple[int, int] | None) -> tuple[str, float, float, float]:
    """(label, pch-backed native ms, no-pch native ms, pch build ms) for the closest documented version."""
    for v, with_pch, without, pch in _CPU_FIGURES:
        if version is None or version >= v:
            return f"warp {v[0]}.{v[1]}", with_pch, without, pch
    v, with_pch, without, pch = _CPU_FIGURES[-1]
    return f"warp {v[0]}.{v[1]}", with_pch, without, pch


def _cpu_pch_exists(version: tuple[int, int] | None) -> bool:
    return version is None or version >= (1, 13)


def _nvrtc_pch_used(version: tuple[int, int] | None) -> bool:
    # warp 1.19 ships NVRTC 13.x, where get_nvrtc_pch_dir() returns None; earlier wheels ship 12.x.
    return version is not None and version < (1, 19)


def _pch_bd(p: PchBuild) -> str | None:
    m = re.search(r"_bd(\d+)", p.file)
    return m.group(1) if m else None


def describe_pch(pch: list[PchBuild]) -> list[str]:
    out = []
    for p in pch:
        bd = _pch_bd(p)
        out.append(
            f"{p.file or 'PCH'}: {fmt_ms(p.ms)} on thread {p.thread}"
            + (f", block_dim {bd}" if bd else "")
            + (f", during {p.during_module}" if p.during_module else "")
            + (f" (build {p.during_seq})" if p.during_seq is not None else "")
        )
    return out


def _pch_summary(pch: list[PchBuild]) -> str:
    if not pch:
        return "no precompiled header was built"
    threads = {p.thread for p in pch}
    keys = {_pch_bd(p) for p in pch}
    head = f"{len(pch)} precompiled header build(s), {fmt_ms(sum(p.ms for p in pch))}"
    if len(pch) > 1:
        head += f" on {len(threads)} thread(s) and {len(keys)} block_dim key(s) (one per thread and key)"
    return head + ": " + "; ".join(describe_pch(pch))


def _pch_off_pays(ctx: RuleContext, cpu: list[Build], saving: float, pch_back: float, header_cost: float) -> RuledOut:
    """The header is already off and, on this workload, that is the cheaper choice: nothing to change (no finding
    for what is already in effect), ruled out with the numbers and where the balance turns.

    With one or two small CPU modules the header build (~1.6 s per process and thread) outweighs what it saves
    per module, so restoring the default would make the cold start slower.
    """
    breakeven = max(2, int(pch_back // max(header_cost, 1.0)) + 1)
    where = ", ".join(f"{s.file}:{s.line}" for s in _scan_off_settings(ctx))
    return RuledOut(
        mechanism=MECHANISM,
        signal=f"the precompiled header is already off{f' ({where})' if where else ''}, and on this workload that "
        f"is the cheaper choice: {len(cpu)} CPU module(s) compiled without it ("
        + ", ".join(f"{b.module} build {b.seq} native {fmt_ms(b.native_ms)}" for b in cpu)
        + f"); the header would save ~{fmt_ms(saving)} of that but costs ~{fmt_ms(pch_back)} to build per process "
        f"(and compiling thread); it pays from about {breakeven} modules per process",
    )


def _pch_off_finding(ctx: RuleContext, off: list[Build], version: tuple[int, int] | None) -> Finding | RuledOut:
    report = ctx.report
    label, fig_with, fig_without, fig_pch = _figures(version)
    cpu = [b for b in off if is_cpu(b.device)]
    cuda = [b for b in off if not is_cpu(b.device)]
    # A measured PCH-backed compile in the same run is better than the notes' figure.
    backed = [b.native_ms for b in ctx.compiled if is_cpu(b.device) and not pch_off(b) and b.native_ms > 0]
    if backed:
        typical = median(backed)
        typical_src = f"median native compile of the {len(backed)} PCH-backed CPU module(s) in this run"
    else:
        typical = fig_with
        typical_src = f"{label} figure from the project notes, 2-core VM"
    header_cost = fig_without - fig_with
    per = [(b, max(0.0, min(b.native_ms - typical, header_cost))) for b in cpu]
    saving = sum(s for _b, s in per)
    pch_measured = [p.ms for p in report.pch]
    pch_one = median(pch_measured) if pch_measured else fig_pch
    keys = {(b.thread, b.block_dim) for b in cpu} or {(0, None)}
    pch_back = pch_one * len(keys)
    net = saving - pch_back
    if cpu and not cuda and net <= 0:
        return _pch_off_pays(ctx, cpu, saving, pch_back, header_cost)

    evidence = []
    if cpu:
        evidence.append(
            Evidence(
                fact=(
                    f"{len(cpu)} CPU module(s) compiled with use_precompiled_headers=False, each parsing the full "
                    "header: "
                    + ", ".join(f"{b.module} build {b.seq} native {fmt_ms(b.native_ms)}" for b in cpu)
                    + f" (sum {fmt_ms(sum(b.native_ms for b in cpu))}) against ~{fmt_ms(typical)} per module behind "
                    f"a PCH ({typical_src})."
                ),
                builds=[b.seq for b in cpu],
                ms=round(sum(b.native_ms for b in cpu), 1),
            )
        )
    if cuda:
        evidence.append(
            Evidence(
                fact=(
                    f"{len(cuda)} CUDA module(s) compiled without the NVRTC header: "
                    + ", ".join(f"{b.module} build {b.seq} native {fmt_ms(b.native_ms)}" for b in cuda)
                    + "."
                ),
                builds=[b.seq for b in cuda],
                ms=round(sum(b.native_ms for b in cuda), 1),
            )
        )
    if report.pch:
        evidence.append(Evidence(fact="measured " + _pch_summary(report.pch) + ".", ms=round(sum(pch_measured), 1)))

    locations: list[Location] = []
    scan_sets = _scan_off_settings(ctx)
    for s in scan_sets:
        locations.append(ctx.loc(s.file, s.line, "remove: restores the default use_precompiled_headers=True"))
        evidence.append(
            Evidence(
                fact=f"{s.file}:{s.line}: use_precompiled_headers is set to {s.value} ({s.via}).",
                source="scan",
            )
        )
    where = ", ".join(f"{s.file}:{s.line}" for s in scan_sets)
    fix = (
        f"Remove the use_precompiled_headers = False assignment ({where}) so the default (True) applies"
        if where
        else "Find where use_precompiled_headers is set to False (an entry point, a config helper or the deployment "
        "environment; it was not found in the scanned sources) and remove it"
    )
    fix += (
        ". The option is part of every module's hash, so all modules get new identities (expect one cold rebuild). "
        "Keep it off only with a recorded measurement of this workload that justifies it, and only at an "
        "application entry point, never in library code."
    )
    if cpu:
        # what the user waits for: the module work saved, minus the header build(s) that come back with the default
        basis = (
            f"net of the header: module work saved ~{fmt_ms(saving)}, the sum over {len(cpu)} CPU module(s) of "
            f"(native ms - {fmt_ms(typical)}), each capped at the header parse cost ~{fmt_ms(header_cost)} ({label} "
            f"notes: ~{fmt_ms(fig_without)} per module without the header, ~{fmt_ms(fig_with)} with it), minus the PCH "
            f"build that comes back, ~{fmt_ms(pch_one)} ({'measured' if pch_measured else label + ' notes'}) per "
            f"compiling thread and block_dim ({len(keys)} here): net ~{fmt_ms(net)}"
        )
        estimated: float | None = round(net, 1) if net > 0 else None
    else:
        basis = (
            "not estimated: no PCH-backed CUDA compile time to compare with on this run; the NVRTC header itself "
            "costs a few hundred ms per program name, so measure both with compare"
        )
        estimated = None
    if cpu and net <= 0:
        severity = "low"
    elif max(share_of_compile(ctx, saving), share_of_compile(ctx, net)) >= HIGH_SHARE:
        severity = "high"
    else:
        severity = "medium"
    caveats = [
        "The header is built once per process and compiling thread (and per block_dim / mode / flags key), even "
        "with a warm kernel cache as soon as anything compiles; with very few small modules it can cost more than "
        "it saves: confirm with `warp-compile compare` before and after.",
        "A global setting: keep it at the application entry point; library code must not change it.",
    ]
    if cpu and net <= 0:
        caveats.insert(
            0,
            f"On this run the estimate is close: ~{fmt_ms(saving)} of module work saved against ~{fmt_ms(pch_back)} of "
            "header build: turning the PCH off may have been measured deliberately here; keep it off only if a "
            "recorded measurement says so.",
        )
    if cuda:
        caveats.append(
            "CUDA: with toolkit 13.0 and above Warp passes no NVRTC header directory and the setting has no effect."
        )
    modules = sorted({b.module for b in off})
    edits, applicability, review = _restore_edits(ctx, scan_sets)
    return Finding(
        mechanism=MECHANISM,
        title="The precompiled header is turned off, so every module compile parses the full Warp header",
        applicability=applicability,
        edits=edits,
        review=review,
        experiment={"use_precompiled_headers": True},
        severity=severity,
        confidence="high" if cpu else "medium",
        modules=modules,
        evidence=evidence,
        locations=locations,
        fix=fix,
        estimated_saving_ms=estimated,
        saving_basis=basis,
        caveats=caveats,
        samples=ctx.samples,
    )


def _restore_edits(ctx: RuleContext, settings: list[SettingFact]) -> tuple[list[Edit], Applicability | None, str]:
    """Remove the project's own `use_precompiled_headers = False` lines (the default comes back); where the scan
    found none (the environment or a dependency sets it), set the default at the entry point instead."""
    if not can_edit(ctx):
        return [], None, ""
    edits = [e for e in (remove_statement_edit(ctx.sources, s.file, s.line) for s in settings if s.via == "config")
             if e]
    if not edits and not settings:
        edits = entry_settings_edits(ctx, {"use_precompiled_headers": True}, "the header pays for these modules")
    if not edits:
        return [], "manual", "no edit: the setting is not a plain wp.config assignment of the project's: remove it"
    return edits, "automatic", ""


def _scan_off_settings(ctx: RuleContext) -> list[SettingFact]:
    if ctx.scan is None:
        return []
    return [s for s in ctx.scan.settings_named("use_precompiled_headers") if is_false(s.value)]


def _cuda_inverse(ctx: RuleContext, version: tuple[int, int] | None) -> Finding | None:
    report = ctx.report
    cuda = [b for b in ctx.compiled if not is_cpu(b.device) and not pch_off(b)]
    if not cuda or not _nvrtc_pch_used(version):
        return None
    seqs = {b.seq for b in cuda}
    pch = [p for p in report.pch if p.during_seq in seqs]
    if not pch:
        return None
    modules = sorted({b.module for b in cuda})
    pch_ms = sum(p.ms for p in pch)
    native = sum(b.native_ms for b in cuda)
    if len(modules) > FEW_MODULES or pch_ms <= native:
        return None
    return Finding(
        mechanism=MECHANISM,
        title="The NVRTC precompiled header costs more than the few modules it serves",
        severity="low",
        confidence="low",
        modules=modules,
        evidence=[
            Evidence(
                fact=(
                    f"{len(modules)} CUDA module(s) compiled, native compile {fmt_ms(native)} in total, while building "
                    f"the precompiled header(s) took {fmt_ms(pch_ms)}: " + "; ".join(describe_pch(pch)) + "."
                ),
                builds=sorted(seqs),
                ms=round(pch_ms, 1),
            )
        ],
        locations=[],
        fix=(
            "Measure the application with wp.config.use_precompiled_headers = False set at its entry point (before "
            "the first load; the option is in every module hash) against the default, with `warp-compile compare`; "
            "keep whichever wins on compile elapsed. Never set it from library code."
        ),
        estimated_saving_ms=None,
        saving_basis=(
            f"not estimated: the header cost {fmt_ms(pch_ms)} is an upper bound, and compiling without it is slower "
            "by an amount this run did not measure"
        ),
        caveats=[
            "Only while the CUDA toolkit (NVRTC) is below 13.0; from 13.0 Warp passes no header directory.",
            "The balance flips as modules are added: re-measure when the module set grows.",
            "Parallel loading (CS-13) builds one header per worker thread, which makes the header costlier still.",
        ],
        samples=ctx.samples,
    )


# Measured by this project (knowledge/CS-12.md, Figures; CPU, warp 1.19.0, 2-core VM, median of 3 cold runs per arm,
# interleaved): compile ms with the header on and off, for one and for four modules of four kernels per process.
# Compile(on) = header + n x m and compile(off) = n x (m + parse) give the header build and the extra each module pays
# without it; their ratio carries to another machine by the run's own header build (the same work on every run of a
# version), where the absolute figures would not.
_HEADER_TRADE = {1: (3099.3, 2284.2), 4: (5341.1, 7616.9)}


def parse_ratio() -> float:
    """What one module pays without the header, as a share of one header build (from `_HEADER_TRADE`)."""
    (n1, (on1, off1)), (n4, (on4, off4)) = sorted(_HEADER_TRADE.items())
    # saving(n) = on - off = header - n x parse
    d1, d4 = on1 - off1, on4 - off4
    parse = (d1 - d4) / (n4 - n1)
    header = d1 + n1 * parse
    return parse / header


def _cpu_header_builds(ctx: RuleContext) -> list[PchBuild]:
    by_seq = {b.seq: b for b in ctx.report.builds}
    return [
        p
        for p in ctx.report.pch
        if p.ms > 0 and (p.during_seq is None or p.during_seq not in by_seq or is_cpu(by_seq[p.during_seq].device))
    ]


def _header_trade(ctx: RuleContext, version: tuple[int, int] | None) -> Finding | RuledOut | None:
    """Header on (the default) on the CPU: does it pay for the modules this process compiles? Decided from the run's
    own header build and module count, through the measured trade (`parse_ratio`): turning it off saves the header
    builds and costs every compiled module the full header parse. A finding when that saving is material for this
    run (a share of its cold compile, above its noise band); else ruled out with the figures."""
    cpu = [b for b in ctx.compiled if is_cpu(b.device) and not pch_off(b)]
    headers = _cpu_header_builds(ctx)
    if not cpu or not headers or not _cpu_pch_exists(version):
        return None
    ratio = parse_ratio()
    one = median([p.ms for p in headers])
    header_ms = sum(p.ms for p in headers)
    per_module = ratio * one
    n = len(cpu)
    overlap = concurrency(cpu) if len({p.thread for p in headers}) > 1 else 1.0
    saving = (header_ms - n * per_module) / (overlap if overlap > 1.05 else 1.0)
    figures = (
        f"{_pch_summary(headers)}; {n} CPU module build(s) compiled; without the header "
        f"each would parse it, ~{fmt_ms(per_module)} apiece ({ratio:.2f} x this run's header build, the ratio measured "
        "with one and four modules per process, knowledge/CS-12.md)"
        + (f"; divided by {overlap:.2f}, the overlap of the builds on their threads" if overlap > 1.05 else "")
    )
    if saving <= 0 or not material(ctx, saving):
        verdict = (
            f"turning it off would cost ~{fmt_ms(-saving)} more" if saving <= 0
            else f"turning it off would save ~{fmt_ms(saving)}, too little for this run"
        )
        merged = (header_ms - per_module) / (overlap if overlap > 1.05 else 1.0)  # one module parses it once
        no_merge = ""
        if n >= 2 and material(ctx, merged):
            plan = plan_merge(ctx, cpu)
            found = _merged_finding(ctx, cpu, plan, merged, figures) if not plan.why_not else None
            if found is not None:
                return found
            no_merge = f"; as one module it would save ~{fmt_ms(merged)}, but no merge is offered: {plan.why_not}"
        return RuledOut(
            mechanism=MECHANISM,
            signal=f"the CPU precompiled header pays for the {n} module build(s) it serves: {figures}; {verdict} "
            f"(at least {MEDIUM_SHARE:.0%} of the cold compile and above the run's noise band is worth acting on)"
            + no_merge,
        )
    edits = entry_settings_edits(
        ctx, {"use_precompiled_headers": False}, "few modules per process: the header costs more than it saves"
    )
    entry = ctx.report.entry
    locations = (
        [ctx.loc(entry.file, edits[0].start_line if edits and not edits[0].create else 1,
                 "set wp.config.use_precompiled_headers = False here, before anything compiles")]
        if entry is not None and entry.file and entry.owner == "project"
        else []
    )
    return Finding(
        mechanism=MECHANISM,
        title="The CPU precompiled header costs more than the few modules it serves",
        severity=ctx.severity_for(saving),
        confidence="medium",
        modules=sorted({b.module for b in cpu}),
        evidence=[
            Evidence(
                fact=f"{n} CPU module build(s) used it: "
                + ", ".join(f"{b.module} build {b.seq} native {fmt_ms(b.native_ms)}" for b in cpu),
                builds=[b.seq for b in cpu],
                ms=round(sum(b.native_ms for b in cpu), 1),
            ),
        ],
        locations=locations,
        fix="Set wp.config.use_precompiled_headers = False at the application entry point, before anything compiles "
        "(the option is in every module hash): with this few modules the header build costs more than the parse it "
        "saves them. Measure it (`diagnose --verify` or `warp-compile fix` run exactly this), and turn the default "
        "back on when the process compiles more modules.",
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"the header build(s) minus the parse every module pays without them: {figures}",
        caveats=[
            f"The balance turns with the module count: each module compiled in the process adds ~{fmt_ms(per_module)} "
            "without the header; from the second one on the header usually pays.",
            "A global setting: keep it at the application entry point; library code must not change it.",
        ],
        samples=ctx.samples,
        experiment={"use_precompiled_headers": False},
        applicability=("review" if edits else "manual") if can_edit(ctx) else None,
        edits=edits,
        review=(
            f"a trade measured for {n} module build(s) per process: a change that adds modules makes the header pay "
            "again; re-measure when the module set grows"
        ),
    )


def _merged_finding(ctx: RuleContext, cpu: list[Build], plan: MergePlan, saving: float, figures: str
                    ) -> Finding | None:
    """The header pays only because the process compiles several modules: merged into one, switched off."""
    header = entry_settings_edits(ctx, {"use_precompiled_headers": False},
                                  f"one module ({plan.target}): the header costs more than it saves")
    if not header:
        return None
    n, moved = len(cpu), ", ".join(plan.moved)
    checks = [f"the merged kernels now build with {plan.target}'s options: " + "; ".join(plan.options)] if (
        plan.options) else []
    hoisted = ", ".join(f"{h.name} (made inside a function at each call)" for h in plan.hoists)
    if hoisted:
        checks.append(f"{hoisted} now made once, at import of the file that defines it")
    checks += [f"made before the merged module loads: {d}" for d in plan.early] + plan.early_review
    checks += [
        f"code that names {moved} (wp.get_module, set_module_options(module=...), force_load lists) no longer "
        "reaches their kernels",
        "a trade for one module per process: a change that adds modules makes the header pay again; re-measure then",
    ]
    return Finding(
        mechanism=MECHANISM,
        title=f"The CPU precompiled header pays only because the process compiles {n} separate modules",
        severity=ctx.severity_for(saving),
        confidence="medium",
        modules=sorted({b.module for b in cpu}),
        evidence=[Evidence(
            fact=f"{n} modules, each built once, all the project's and declared before the first loads: "
            + ", ".join(f"{b.module} build {b.seq} native {fmt_ms(b.native_ms)}" for b in cpu),
            builds=[b.seq for b in cpu], ms=round(sum(b.native_ms for b in cpu), 1),
        )],
        locations=[ctx.loc(e.file, e.start_line, f'module="{plan.target}" here') for e in plan.edits[:3]],
        fix=(f"Move {hoisted} to module scope of its file, so it exists at import. " if hoisted else "")
        + f"Compile these {n} modules as one: put the kernels of {moved} in {plan.target} (module=\"{plan.target}\" "
        "on each decorator), then set wp.config.use_precompiled_headers = False at the entry point. One module "
        "parses the header once, which costs less than building it; with several modules the header pays, so the "
        "two changes go together. Measure it (`warp-compile fix` runs exactly this).",
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"the header build(s) minus one module's parse of the header: {figures}",
        caveats=["The merged module rebuilds as a whole when any of its kernels changes during development."],
        samples=ctx.samples,
        applicability="review",
        edits=[*plan.edits, *header],
        review="; ".join(checks),
    )


def _evaluate(ctx: RuleContext) -> RuleResult:
    report = ctx.report
    version = _version(report.warp_version)
    compiled = ctx.compiled
    off = [b for b in compiled if pch_off(b)]
    effective_off = [
        b
        for b in off
        if (is_cpu(b.device) and _cpu_pch_exists(version)) or (not is_cpu(b.device) and _nvrtc_pch_used(version))
    ]
    if effective_off:
        found = _pch_off_finding(ctx, effective_off, version)
        return RuleResult(findings=[found]) if isinstance(found, Finding) else RuleResult(ruled_out=[found])

    scan_off = _scan_off_settings(ctx)
    if scan_off and not off and ctx.cpu_only and not _cpu_pch_exists(version):
        where = ", ".join(f"{s.file}:{s.line}" for s in scan_off)
        return RuleResult(
            not_reached=[
                NotReached(
                    mechanism=MECHANISM,
                    reason=(
                        f"the sources set use_precompiled_headers False ({where}), but warp {report.warp_version} "
                        "has no CPU precompiled header (from 1.13): the assignment changes nothing on this version"
                    ),
                )
            ]
        )
    if off:
        devs = sorted({b.device for b in off})
        why = (
            f"warp {report.warp_version} has no CPU precompiled header (from 1.13)"
            if any(is_cpu(d) for d in devs)
            else f"warp {report.warp_version} ships NVRTC 13, where no NVRTC header is used"
        )
        return RuleResult(
            not_reached=[
                NotReached(
                    mechanism=MECHANISM,
                    reason=(
                        f"use_precompiled_headers is False for {len(off)} module(s), but it has no effect here: {why}"
                        " (it still changes every module hash)"
                    ),
                )
            ]
        )

    inverse = _cuda_inverse(ctx, version)
    if inverse is not None:
        return RuleResult(findings=[inverse])
    trade = _header_trade(ctx, version)
    if isinstance(trade, Finding):
        return RuleResult(findings=[trade])

    if not compiled:
        signal = NOTHING_COMPILED
        if scan_off:
            signal += "; the sources set use_precompiled_headers False at " + ", ".join(
                f"{s.file}:{s.line}" for s in scan_off
            )
        return ruled_out(MECHANISM, signal)

    native = sum(b.native_ms for b in compiled)
    signal = "use_precompiled_headers is not False for any compiled module"
    if scan_off:
        signal += (
            " (the sources set it False at "
            + ", ".join(f"{s.file}:{s.line}" for s in scan_off)
            + ", but no measured build used that value)"
        )
    if report.pch:
        pch_ms = sum(p.ms for p in report.pch)
        signal += f"; {_pch_summary(report.pch)}; modules' native compile {fmt_ms(native)} in total"
        if isinstance(trade, RuledOut):
            return ruled_out(MECHANISM, trade.signal)
        if pch_ms > native and not any(is_cpu(b.device) for b in compiled):
            signal += "; the CUDA header costs more than the modules, but this warp ships NVRTC 13 (no header)"
    return ruled_out(MECHANISM, signal)


def evaluate(ctx: RuleContext) -> RuleResult:
    result = cuda_pricing.cs12(ctx, _evaluate(ctx))  # CUDA figures when the report has CUDA builds
    from . import cuda_header  # CUDA below toolkit 13: the header measured both ways

    return cuda_header.price(ctx, result)
