"""CS-13: independent modules compiled one at a time.

Fires on a CUDA run where at least two modules were compiled, each once, the measured overlap_factor is about 1.0
(nothing overlapped) and the ceiling `sum of module ms / largest module ms` leaves something to gain. The fix is a
`wp.force_load(device=..., modules=[...], max_workers=...)` preload at the entry point, built from the measured
modules and grouped by their measured block_dim (never `modules=None`). On a CPU-only run it is not reached:
parallel CPU first loads are unsafe (CS-8); the reason still carries the ceiling numbers.
"""

from __future__ import annotations

from collections import defaultdict

from ..fix.place.preload import preload_edit
from ..fmt import fmt_ms
from ..models import Build, CudaConcurrent
from ..models.diagnosis import Evidence, Finding, NotReached, RuledOut, RuleResult
from ..stats import overlap_factor
from . import cuda_replay as cr
from . import helpers
from .context import RuleContext
from .helpers import MEDIUM_SHARE, NOTHING_COMPILED, is_cpu, parallel_value, ruled_out, share_of_compile

MECHANISM = "CS-13"

SERIAL_OVERLAP = 1.15  # overlap_factor at or below this: builds ran one at a time
MIN_CEILING = 1.25  # below this one module is (nearly) the whole cost


def _per_module(builds: list[Build]) -> dict[str, list[Build]]:
    out: dict[str, list[Build]] = defaultdict(list)
    for b in builds:
        out[b.module].append(b)
    return dict(out)


def ceiling(builds: list[Build]) -> tuple[float, float, str, float]:
    """(sum ms, largest module ms, largest module, ceiling speedup) over compiled builds, summed per module."""
    per = {m: sum(b.ms for b in bs) for m, bs in _per_module(builds).items()}
    if not per:
        return 0.0, 0.0, "", 1.0
    total = sum(per.values())
    big = max(per, key=lambda m: per[m])
    largest = per[big]
    return total, largest, big, (total / largest if largest > 0 else 1.0)


def _overlap(ctx: RuleContext, builds: list[Build]) -> float | None:
    if ctx.report.overlap_factor is not None:
        return ctx.report.overlap_factor
    # fall back on the builds: summed ms / union of their intervals
    return overlap_factor([(b.start_ms, b.end_ms) for b in builds])


def _numbers(builds: list[Build]) -> str:
    total, largest, big, ceil = ceiling(builds)
    n = len({b.module for b in builds})
    return (
        f"{n} modules compiled, {fmt_ms(total)} of module work in total, the largest ({big}) {fmt_ms(largest)}: "
        f"best possible elapsed {fmt_ms(largest)}, ceiling speedup {ceil:.2f}x"
    )


def _preload_calls(cuda: list[Build]) -> tuple[str, list[str]]:
    """force_load source text, one call per (device, block_dim) group, from the measured builds."""
    groups: dict[tuple[str, int | None], list[str]] = defaultdict(list)
    for b in sorted(cuda, key=lambda b: b.seq):
        key = (b.device, b.block_dim)
        if b.module not in groups[key]:
            groups[key].append(b.module)
    n_max = max(len(v) for v in groups.values())
    workers = f"min(os.cpu_count(), {min(n_max, 8)})"
    lines = []
    for (device, bd), mods in groups.items():
        mod_text = ", ".join(f'wp.get_module("{m}")' for m in mods)
        bd_text = f", block_dim={bd}" if bd is not None else ""
        lines.append(f'wp.force_load(device="{device}", modules=[{mod_text}]{bd_text}, max_workers={workers})')
    return "\n".join(lines), [f"{d} block_dim={bd}: {', '.join(m)}" for (d, bd), m in groups.items()]


def _extra_cpu(conc: CudaConcurrent) -> str:
    """Why an overlap can lose although threads ran: each worker thread pays NVRTC's start-up again, which short
    builds do not win back (measured: 0.75 s of CPU against 0.42 s for four ~100 ms modules on two threads)."""
    if conc.cpu_ms is None or not conc.serial_cpu_ms or conc.cpu_ms < 1.2 * conc.serial_cpu_ms:
        return ""
    extra = conc.cpu_ms - conc.serial_cpu_ms
    return (
        f"; the concurrent pass used {extra:.0f} ms more CPU than the serial one ({conc.cpu_ms:.0f} against "
        f"{conc.serial_cpu_ms:.0f} ms): each worker thread pays the compiler's start-up again, which builds this "
        "short do not win back"
    )


def already_preloads(ctx: RuleContext) -> str | None:
    """Where the app already loads modules on worker threads (a force_load / load_module with max_workers > 1, in
    the sources or recorded), or sets load_module_max_workers for its lazy loads: the fix is in effect."""
    scan = ctx.scan
    if scan is not None:
        for lc in scan.load_calls:
            if lc.max_workers is not None and parallel_value(lc.max_workers)[0]:
                return f"{lc.file}:{lc.line}: {lc.api}(..., max_workers={lc.max_workers})"
        for st in scan.settings:
            if st.name == "load_module_max_workers" and parallel_value(st.value)[0]:
                return f"{st.file}:{st.line}: wp.config.load_module_max_workers = {st.value}"
    for c in ctx.report.cache.calls:
        mw = c.detail.get("max_workers")
        if c.api in ("force_load", "load_module") and mw is not None and parallel_value(mw)[0]:
            where = f" at {ctx.rel(c.site.file)}:{c.site.line}" if c.site is not None else ""
            return f"{c.api} was called with max_workers={mw}{where}"
    return None


def _edit_fields(ctx: RuleContext, groups: dict[int | None, list[str]]) -> dict[str, object]:
    """The preload as an edit of the entry point, for a person to review: its effect needs a GPU to measure."""
    edit, why = preload_edit(ctx, groups)
    if edit is None:
        return {"applicability": "manual", "review": f"no edit: {why}; write the preload by hand from the fix"}
    return {
        "edits": [edit],
        "applicability": "review",
        "review": (
            "The preload only changes when the modules are built (the same modules, options and block_dim, so the "
            "same launches and results); what it saves can only be measured by a run on a GPU: on a machine "
            "without one it is skipped (it runs only when the preferred device is CUDA), so a CPU compare reads "
            "no change. It names internals of the measured code: regenerate the list when modules move."
        ),
    }


def _edit_note(fields: dict[str, object]) -> str:
    edits = fields.get("edits") or []
    if not edits:
        return ""
    e = edits[0]  # type: ignore[index]
    where = f"a launcher {e.file}" if e.create else f"{e.file} after its imports (line {e.start_line})"
    return (
        f"\nThe edit puts this into {where}: it imports the Python modules that register these modules' kernels "
        "first, and preloads on wp.get_preferred_device() only when that is a GPU."
    )


def _replay(ctx: RuleContext) -> RuleResult | None:
    """CS-13 from a --cuda-arch replay: the measured serial sum against the same builds run concurrently."""
    report = ctx.report
    conc = report.cuda_concurrent
    builds = cr.replay_builds(report)
    per = {m: sum(b.ms for b in v.values()) for m, v in cr.by_module(builds).items()}
    where = cr.origin(report)
    if len(per) < 2:
        signal = f"only one module built for {where}: nothing to overlap"
        return ruled_out(MECHANISM, signal)
    if conc is None or conc.error or conc.errors or conc.wall_ms <= 0:
        return None  # no usable concurrent measurement: judge from the builds as before
    done = already_preloads(ctx)
    if done is not None:
        return ruled_out(MECHANISM, f"already in effect: the app loads its modules on worker threads ({done})")
    total, largest = sum(per.values()), max(per.values())
    speedup = conc.serial_ms / conc.wall_ms
    measured = (
        f"{len(per)} modules built for {where}: {conc.serial_ms:.0f} ms one after another, {conc.wall_ms:.0f} ms "
        f"on {conc.workers} threads ({speedup:.2f}x"
        + (", header cache already warm" if conc.warm_cache else ", both passes from a cold NVRTC header cache")
        + f"); the theoretical ceiling, sum over the largest module ({total:.0f} / {largest:.0f} ms), is "
        f"{total / largest:.2f}x"
        + (
            f"; measured on {conc.cpus} CPU(s) with a load average of {conc.load_avg:.1f}"
            if conc.cpus and conc.load_avg is not None
            else ""
        )
    )
    if speedup < MIN_CEILING:
        cores = conc.cpu_ms / conc.wall_ms if conc.cpu_ms is not None and conc.wall_ms > 0 else None
        idle = conc.cpus is not None and conc.load_avg is not None and conc.cpus - conc.load_avg >= conc.workers - 0.5
        starved = cores is not None and conc.workers > 1 and cores < 1.0 + 0.5 * (conc.workers - 1)
        if starved and idle:  # cores were free, yet the threads did not use them
            return ruled_out(
                MECHANISM,
                f"measured, overlapping does not pay here: {measured}; the machine had idle cores, yet the "
                f"{conc.workers} threads used {cores:.2f} core(s) on average{_extra_cpu(conc)}, so a preload with "
                "workers would not shorten these builds",
            )
        if starved:
            serial = (
                f" ({conc.serial_cpu_ms / conc.serial_ms:.2f} in the serial pass)"
                if conc.serial_cpu_ms is not None and conc.serial_ms > 0
                else ""
            )
            reason = (
                f"not decided on this machine: {measured}; the {conc.workers} threads had {cores:.2f} core(s) on "
                f"average (CPU time over wall){serial}, so there was no free core to overlap on; re-measure where "
                "cores are idle"
            )
            return RuleResult(not_reached=[NotReached(mechanism=MECHANISM, reason=reason)])
        return ruled_out(MECHANISM, f"measured, overlapping does not pay here: {measured}{_extra_cpu(conc)}")
    groups: dict[int | None, list[str]] = defaultdict(list)
    for b in builds:
        if b.module not in groups[b.block_dim]:
            groups[b.block_dim].append(b.module)
    calls = []
    for bd, mods in sorted(groups.items(), key=lambda kv: kv[0] or 0):
        mod_text = ", ".join(f'wp.get_module("{m}")' for m in mods)
        calls.append(
            f'wp.force_load(device="cuda:0", modules=[{mod_text}], block_dim={bd}, '
            f"max_workers=min(os.cpu_count(), {min(len(mods), 8)}))"
        )
    fields = _edit_fields(ctx, dict(groups))
    first = min(ctx.compiled, key=lambda b: b.seq) if ctx.compiled else None
    locations = []
    if first is not None and first.trigger is not None and first.trigger.file:
        at = helpers.own_frame(ctx, first.trigger)
        locations.append(ctx.loc(at.file, at.line, "preload the modules before this first load"))
    saving = conc.serial_ms - conc.wall_ms
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title=f"Independent modules are built one at a time on CUDA (measured {speedup:.2f}x when overlapped)",
                severity="medium" if speedup >= 1.5 else "low",
                confidence="medium",
                modules=sorted(per),
                evidence=[
                    Evidence(fact=measured + ".", ms=round(saving, 1)),
                    Evidence(
                        fact="per module: "
                        + ", ".join(f"{m} {ms:.0f} ms" for m, ms in sorted(per.items(), key=lambda kv: -kv[1]))
                        + "."
                    ),
                ],
                locations=locations,
                fix=(
                    "Preload the measured modules concurrently from the application entry point, before the first "
                    "launch (import os at the top), one call per launch block_dim:\n" + "\n".join(calls)
                    + "\nNever pass modules=None: that compiles every registered module, not only these."
                    + _edit_note(fields)
                ),
                estimated_saving_ms=round(saving, 1),
                saving_basis=(
                    f"{where}: measured serial minus concurrent wall on {conc.workers} threads; on a machine with "
                    "more cores the overlap can reach the theoretical ceiling, not beyond"
                ),
                caveats=[
                    "Judge it on compile elapsed (cold - warm wall) on the GPU machine: summed module ms rise when "
                    "builds contend.",
                    "Each worker thread pays NVRTC's header cost on its first build, which the measurement includes.",
                    "The block_dim of each preload must match the launches, or the module is built twice.",
                    "Only CUDA devices: keep any load that can reach the CPU serial (CS-8).",
                ],
                samples=ctx.samples,
                **fields,  # type: ignore[arg-type]
            )
        ]
    )


def evaluate(ctx: RuleContext) -> RuleResult:
    if ctx.report.cuda_builds:
        result = _replay(ctx)
        if result is not None:
            return result
    compiled = ctx.compiled
    if not compiled:
        return ruled_out(MECHANISM, NOTHING_COMPILED)

    cuda = [b for b in compiled if not is_cpu(b.device)]
    cpu = [b for b in compiled if is_cpu(b.device)]
    if not cuda:
        reason = (
            "CUDA only: concurrent first loads on the CPU race Warp's native JIT (CS-8), so CPU builds must stay serial"
        )
        if len({b.module for b in cpu}) >= 2:
            reason += f". For reference, this run: {_numbers(cpu)}"
            ov = _overlap(ctx, cpu)
            if ov is not None:
                reason += f", overlap_factor {ov:.2f}"
        return RuleResult(not_reached=[NotReached(mechanism=MECHANISM, reason=reason)])

    per = _per_module(cuda)
    if len(per) < 2:
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM, signal=f"only one CUDA module compiled ({next(iter(per))}): nothing to overlap"
                )
            ]
        )
    overlap = _overlap(ctx, cuda)
    total, largest, big, ceil = ceiling(cuda)
    if overlap is not None and overlap > SERIAL_OVERLAP:
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM,
                    signal=f"CUDA builds already overlap (overlap_factor {overlap:.2f} > {SERIAL_OVERLAP})",
                )
            ]
        )
    if ceil < MIN_CEILING or share_of_compile(ctx, total - largest) < MEDIUM_SHARE:  # not worth a preload
        return RuleResult(
            ruled_out=[
                RuledOut(
                    mechanism=MECHANISM,
                    signal=(
                        f"one module dominates: {_numbers(cuda)}; overlapping the rest could save at most "
                        f"{fmt_ms(total - largest)}"
                    ),
                )
            ]
        )

    done = already_preloads(ctx)
    if done is not None:
        return ruled_out(MECHANISM, f"already in effect: the app loads its modules on worker threads ({done})")
    rebuilt = sorted(m for m, bs in per.items() if len(bs) > 1)
    preload, groups = _preload_calls(cuda)
    first = min(compiled, key=lambda b: b.seq)
    evidence = [
        Evidence(
            fact=(
                f"{len(per)} CUDA modules were compiled one after another"
                + (f" (overlap_factor {overlap:.2f})" if overlap is not None else "")
                + ": "
                + ", ".join(
                    f"{m} {fmt_ms(sum(b.ms for b in bs))} (build {', '.join(str(b.seq) for b in bs)})"
                    for m, bs in sorted(per.items(), key=lambda kv: -sum(b.ms for b in kv[1]))
                )
                + "."
            ),
            builds=sorted(b.seq for b in cuda),
            ms=round(total, 1),
        ),
        Evidence(
            fact=(
                f"ceiling: overlapping builds cannot finish before the largest module ({big}, {fmt_ms(largest)}), "
                f"so the best case is {fmt_ms(total)} -> {fmt_ms(largest)} ({ceil:.2f}x)."
            ),
            ms=round(total - largest, 1),
        ),
        Evidence(fact="preload groups (device, measured block_dim): " + "; ".join(groups) + "."),
    ]
    if ctx.scan is not None:
        for lc in ctx.scan.load_calls:
            if lc.modules_none:
                evidence.append(
                    Evidence(
                        fact=(
                            f"{lc.file}:{lc.line}: {lc.api} without modules= loads every registered module, not only "
                            "the ones this run used; name the modules instead."
                        ),
                        source="scan",
                    )
                )
    locations = []
    if first.trigger is not None and first.trigger.file:
        at = helpers.own_frame(ctx, first.trigger)
        locations.append(ctx.loc(at.file, at.line, "preload the modules before this first load"))
    caveats = [
        "This changes scheduling, not what is compiled: judge it on compile elapsed (cold - warm wall), not on "
        "summed module ms, which rises when builds contend.",
        "Expect a result between no gain and the ceiling: code generation is serialised under a global lock and "
        "the surrounding Python holds the GIL; only native compilation overlaps.",
        "Only CUDA devices: keep any load that can reach the CPU serial (CS-8).",
        "The block_dim of each preload must match the launches, or the module is compiled twice; leave modules "
        "whose block_dim is chosen at run time to load lazily.",
        "Do not wrap the call in `except RuntimeError: pass`: a misspelled module name would become a silent no-op.",
        "The module list names internals of the measured code; regenerate it from a cold run when they move.",
    ]
    if rebuilt:
        caveats.append(
            f"{', '.join(rebuilt)} compiled more than once: fix that churn first (CS-1/3/5/6), it removes builds "
            "instead of overlapping them."
        )
    fields = _edit_fields(ctx, _groups(cuda))
    finding = Finding(
        mechanism=MECHANISM,
        title="Independent CUDA modules are compiled one at a time",
        severity="medium" if ceil >= 1.5 else "low",
        confidence="medium",
        modules=sorted(per),
        evidence=evidence,
        locations=locations,
        fix=(
            "Preload the measured modules concurrently from the application entry point, before the first launch "
            "(import os at the top):\n" + preload + "\nNever pass modules=None: that compiles every registered "
            "module, not only these." + _edit_note(fields)
        ),
        estimated_saving_ms=round(total - largest, 1),
        saving_basis=(
            f"upper bound on compile elapsed: sum of the {len(per)} modules' ms ({total:.0f}) minus the largest "
            f"({largest:.0f}); real gains land between zero and this"
        ),
        caveats=caveats,
        samples=ctx.samples,
        **fields,  # type: ignore[arg-type]
    )
    return RuleResult(findings=[finding])


def _groups(cuda: list[Build]) -> dict[int | None, list[str]]:
    out: dict[int | None, list[str]] = defaultdict(list)
    for b in sorted(cuda, key=lambda b: b.seq):
        if b.module not in out[b.block_dim]:
            out[b.block_dim].append(b.module)
    return dict(out)
