"""CS-2: the kernel cache is not reused between runs (or within one).

Every measured sample re-runs the command against the cache its cold run just filled, so a healthy app loads every
module from cache the second time. The rule fires on what was measured: the warm re-run compiled again, the app
switched cache_kernels off, or a module was compiled again under the same hash after a clear/unload in one process.
The scan and the recorded API calls only say *why* (clear_kernel_cache, cache_kernels=False, a temporary or
timestamped kernel_cache_dir, the cache removed at exit, CUDA_CACHE_DISABLE) and *where*.

A cache-defeating call that the measured command never reached (a maintenance script, a branch not taken) is not a
finding: the warm run proves the cache was reused. It is listed under ruled out instead.

Saving: the warm run's compiled module ms (median over samples); the warm run also rebuilt the precompiled header,
which a reused cache avoids too, and that is stated beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..fix.place.entry_fix import can_edit
from ..fix.transform.statements import remove_statement_edit
from ..models import ApiCall, Build
from ..models.diagnosis import Applicability, Edit, Evidence, Finding, Location, RuleResult
from ..models.scan import CacheOp
from .argv_flags import flags_guarding
from .context import RuleContext, dedupe_locations, fmt_ms
from .helpers import median, reached, ruled_out
from .process_names import Renamings, renamed_modules

MECHANISM = "CS-2"


def _harmful(op: CacheOp) -> bool:
    """Scanned cache operations that defeat reuse across runs (an unload alone only costs in-process)."""
    if op.kind in ("clear_kernel_cache", "clear_lto_cache", "cache_kernels_false", "cuda_cache_disable"):
        return True
    if op.kind in ("kernel_cache_dir", "cuda_cache_path"):
        return op.temporary or op.timestamped
    if op.kind == "cache_dir_removed":
        return op.mentions_cache
    return False


def _op_text(op: CacheOp) -> str:
    if op.kind == "clear_kernel_cache":
        return "wp.clear_kernel_cache() deletes every compiled module"
    if op.kind == "clear_lto_cache":
        return "wp.clear_lto_cache() deletes the MathDx LTO cache"
    if op.kind == "cache_kernels_false":
        return "wp.config.cache_kernels = False disables reuse"
    if op.kind == "kernel_cache_dir":
        what = "a temporary" if op.temporary else "a per-run (timestamped)"
        return f"kernel_cache_dir = {op.value} points at {what} directory"
    if op.kind == "cuda_cache_path":
        return f"CUDA_CACHE_PATH = {op.value} points at a per-run directory"
    if op.kind == "cache_dir_removed":
        when = " at exit" if op.atexit else ""
        return f"{op.api}({op.value}) removes the cache directory{when}"
    if op.kind == "cuda_cache_disable":
        return "CUDA_CACHE_DISABLE disables the CUDA driver cache"
    return op.kind


# the fix per cache operation kind, formatted with where=the place it stands
_OP_FIX = {
    "clear_kernel_cache": (
        "remove wp.clear_kernel_cache() at {where} (a new Warp version gets its own cache directory and a changed "
        "kernel a new hash, so stale binaries are never picked up; clearing also hits other processes)"
    ),
    "clear_lto_cache": "remove wp.clear_lto_cache() at {where}",
    "cache_kernels_false": "remove wp.config.cache_kernels = False at {where}",
    "kernel_cache_dir": (
        "drop the per-run kernel_cache_dir at {where}: let Warp use its persistent cache (default location or "
        "WARP_CACHE_PATH), or point it at a stable directory"
    ),
    "cuda_cache_path": "point CUDA_CACHE_PATH at a stable directory instead of a per-run one ({where})",
    "cache_dir_removed": "stop deleting the cache directory at {where}",
    "cuda_cache_disable": "do not set CUDA_CACHE_DISABLE ({where})",
}


def _op_label(op: CacheOp) -> str:
    """The operation as the user wrote it, for "keep X at file:line"."""
    if op.kind in ("clear_kernel_cache", "clear_lto_cache"):
        return f"wp.{op.kind}()"
    if op.kind == "cache_kernels_false":
        return "wp.config.cache_kernels = False"
    return _op_text(op)


def _op_fix(op: CacheOp, where: str) -> str:
    return _OP_FIX.get(op.kind, "review {where}").format(where=where)


def _warm_compiled(ctx: RuleContext) -> tuple[list[Build], list[float], list[float]]:
    """(warm builds that compiled in the reference sample, warm module ms per bad sample, warm PCH ms per sample)."""
    builds = [b for b in ctx.report.warm_builds if b.status == "compiled"]
    module_ms, pch_ms = [], []
    for s in ctx.report.sample_results:
        if s.ok and s.warm is not None and s.warm.compiled > 0:
            module_ms.append(s.warm.module_ms)
            pch_ms.append(s.warm.pch_ms)
    return builds, module_ms, pch_ms


def _median_or_none(xs: list[float]) -> float | None:
    return median(xs) if xs else None


def evaluate(ctx: RuleContext) -> RuleResult:
    r = ctx.report
    warm_builds, warm_ms, warm_pch = _warm_compiled(ctx)
    warm_measured = any(s.ok and s.warm is not None for s in r.sample_results)
    # a same-hash reload only compiles when the binary on disk is gone or ignored (a plain unload reloads it cached)
    reloads = [
        (ch, c)
        for ch, c in ctx.causes("same_hash_reload")
        if ch.status == "compiled" and "previous load attempt failed" not in c.detail
    ]
    clear_calls = [c for c in r.cache.calls if c.api in ("clear_kernel_cache", "clear_lto_cache")]
    ops = [op for op in (ctx.scan.cache_ops if ctx.scan else []) if _harmful(op)]
    if ctx.cpu_only:  # the CUDA driver cache plays no part in a CPU-only run
        ops = [op for op in ops if op.kind not in ("cuda_cache_disable", "cuda_cache_path")]

    measured = bool(warm_ms or warm_builds or reloads or r.cache.cache_kernels is False)
    lto_calls = [c for c in clear_calls if c.api == "clear_lto_cache" and c.site is not None]
    if not measured and lto_calls and not any(c.api == "clear_kernel_cache" for c in clear_calls):
        return _lto_clear_finding(ctx, lto_calls, ops)
    if not measured:
        if warm_measured or not (ops or clear_calls):
            return _ruled_out(ctx, ops, warm_measured)
        # no warm run to judge by: report what the sources say, at low confidence
    evidence: list[Evidence] = []
    locations: list[Location | None] = []
    fixes: list[str] = []
    if warm_builds or warm_ms:
        n = len(warm_builds) or max((s.warm.compiled for s in r.sample_results if s.warm), default=0)
        names = ", ".join(sorted({b.module for b in warm_builds})) or "?"
        evidence.append(
            Evidence(
                fact=f"the warm re-run, against the cache the cold run had just filled, compiled {n} module(s) again "
                f"({names}): {fmt_ms(_median_or_none(warm_ms))} of module work"
                + (
                    f" plus {fmt_ms(_median_or_none(warm_pch))} for the precompiled header"
                    if _median_or_none(warm_pch)
                    else ""
                ),
                builds=[b.seq for b in warm_builds],
                ms=_median_or_none(warm_ms),
            )
        )
    for ch, c in reloads:
        evidence.append(
            Evidence(
                fact=f"build #{ch.to_seq} compiled {ch.module} again under the same hash {ch.to_hash[:7]} "
                f"({fmt_ms(ch.cost_ms)}): {c.detail}",
                builds=[ch.from_seq, ch.to_seq],
                ms=ch.cost_ms,
            )
        )
    if r.cache.cache_kernels is False:
        evidence.append(Evidence(fact="the app ran with wp.config.cache_kernels = False"))
    if r.cache.left_sandbox:
        evidence.append(
            Evidence(
                fact=f"the app set its own kernel cache directory ({r.cache.kernel_cache_dir}) instead of the "
                "one it was given (WARP_CACHE_PATH)"
            )
        )
    if r.cache.cuda_cache_disable and r.cache.cuda_cache_disable not in ("0", "") and not ctx.cpu_only:
        evidence.append(Evidence(fact=f"CUDA_CACHE_DISABLE={r.cache.cuda_cache_disable} in the app's environment"))
    for call in clear_calls:
        if call.site is None:
            continue
        where = f"{ctx.rel(call.site.file)}:{call.site.line}"
        evidence.append(Evidence(fact=f"{call.api}() was called at {where} (seq {call.seq})"))
        locations.append(ctx.loc(call.site.file, call.site.line, f"{call.api}() runs in every process"))
    plan = _plan(ctx, ops, clear_calls)
    renamed = Renamings.of(ctx, renamed_modules(r))
    evidence += renamed.evidence
    locations += renamed.locations
    fixes += renamed.fixes
    for op in ops:
        where = f"{ctx.rel(op.file)}:{op.line}"
        state = plan.state.get(id(op), "")
        evidence.append(Evidence(fact=f"{_op_text(op)} ({where}){state}", source="scan"))
        if id(op) in plan.remove:
            locations.append(ctx.loc(op.file, op.line, _op_text(op)))
            fixes.append(_op_fix(op, where))
    for call in clear_calls:
        if call.site is not None and not any(op.kind == call.api for op in ops) and not plan.is_kept(ctx, call):
            site = f"{ctx.rel(call.site.file)}:{call.site.line}"
            fixes.append(_op_fix(CacheOp(file="", line=0, kind=call.api), site))
    if plan.kept:
        if not fixes:
            fixes.append(
                "find what else empties or bypasses the kernel cache between runs (what the scan found did not run "
                "unconditionally in this command)"
            )
        fixes.append("keep " + "; ".join(plan.kept))
    if not fixes:
        fixes.append(
            "find what empties or bypasses the kernel cache between runs"
            + (f" (the app used {r.cache.kernel_cache_dir})" if r.cache.kernel_cache_dir else "")
            + " and persist one cache directory per compatible build (Warp version, options, architecture)"
        )
    fix = "; ".join(dict.fromkeys(fixes))
    fix = fix[0].upper() + fix[1:] + ". The second run of the same command should then load every module from cache."
    saving = _median_or_none(warm_ms)
    if saving is None and warm_builds:
        saving = sum(b.ms for b in warm_builds)
    if saving is None and reloads:
        saving = sum(ch.cost_ms for ch, _ in reloads)
    pch = _median_or_none(warm_pch)
    basis = (
        f"the warm re-run's compiled module work, median of {len(warm_ms)} sample(s)"
        if warm_ms
        else "the same-hash rebuilds in the cold run, reference sample"
        if reloads
        else "no warm run was measured"
    )
    if pch and saving is not None and warm_ms:
        # every later run pays the header again as soon as anything compiles: a reused cache skips it too
        saving += pch
        basis += f", plus the {fmt_ms(pch)} precompiled header it rebuilt (median): what every later run pays"
    elif pch:
        basis += f"; a reused cache also skips the {fmt_ms(pch)} precompiled header the warm run rebuilt"
    explained = bool(ops or clear_calls or r.cache.left_sandbox or reloads or r.cache.cache_kernels is False
                     or renamed.pairs)
    edits = plan.edits + renamed.edits
    if not can_edit(ctx):
        applicability: Applicability | None = None
        review = ""
    elif edits:
        applicability = "review"
        reviews = []
        if plan.edits:
            reviews.append(
                "the cache now persists between runs: a caller that needs a clean build must clear it on purpose"
                + (f" ({', '.join(' '.join(k) for k in plan.must_keep)} still does)" if plan.must_keep else "")
                + "; only the cache-defeating code that ran unconditionally in the measured command is removed")
        reviews += renamed.review
        review = "; ".join(reviews)
    else:
        applicability = "manual"
        review = "; ".join([
            "no edit: nothing that ran unconditionally in the measured command was found to remove"
            + (f" (the code behind {', '.join(' '.join(k) for k in plan.must_keep)} is the user's contract)"
               if plan.must_keep else ""), *renamed.review])
    confidence = ("high" if explained else "medium") if measured else "low"
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title="The kernel cache is not reused: a repeat run compiles the same modules again",
                severity=ctx.severity_for(saving) if saving else ("medium" if measured else "low"),
                confidence=confidence,
                modules=sorted({b.module for b in warm_builds} | {ch.module for ch, _ in reloads}),
                evidence=evidence,
                locations=dedupe_locations(locations),
                fix=fix,
                estimated_saving_ms=round(saving, 1) if saving else None,
                saving_basis=basis,
                samples=len(warm_ms) if warm_ms else (1 if reloads and ctx.samples else 0),
                experiment={"keep_kernel_cache": True} if clear_calls and not r.cache.left_sandbox else None,
                applicability=applicability,
                edits=edits,
                review=review,
                must_keep=plan.must_keep,
                upstream=renamed.upstream,
                caveats=[
                    "Share a cache only between compatible builds (same Warp version, module options, target "
                    "architecture, driver/toolchain); a caller that needs a clean build can still clear it on purpose.",
                    "Where nothing can persist between runs (ephemeral containers), prewarm at startup and report that "
                    "the cost moved rather than disappeared.",
                ],
            )
        ]
    )


@dataclass
class _Plan:
    """Which cache-defeating code the fix removes, and which it keeps (with why)."""

    remove: set[int] = field(default_factory=set)  # id() of the scanned ops the edits remove
    edits: list[Edit] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # "wp.clear_kernel_cache() at m.py:4: behind --rebuild, ..."
    kept_sites: set[tuple[str, int]] = field(default_factory=set)
    must_keep: list[list[str]] = field(default_factory=list)
    state: dict[int, str] = field(default_factory=dict)  # id(op) -> how the measurement saw it, for the evidence

    def is_kept(self, ctx: RuleContext, call: ApiCall) -> bool:
        return call.site is not None and (ctx.rel(call.site.file), call.site.line) in self.kept_sites


def _op_ran(ctx: RuleContext, op: CacheOp) -> bool | None:
    """Did this scanned operation run in the measured command? The hook records every clear call; a setting shows
    in the cache facts (cache_kernels False, the app's own kernel_cache_dir); anything else ran if its file was
    imported (None: the report kept no record)."""
    r = ctx.report
    if op.kind in ("clear_kernel_cache", "clear_lto_cache"):
        return _ran(ctx, op)
    seen = reached(ctx, op.file)
    if seen is False:
        return False
    if op.kind == "cache_kernels_false":
        return None if r.cache.cache_kernels is None else r.cache.cache_kernels is False
    if op.kind == "kernel_cache_dir":
        if r.cache.left_sandbox:
            return True
        if r.cache.kernel_cache_dir and r.cache.sandbox_cache_dir:
            return r.cache.kernel_cache_dir.rstrip("/") != r.cache.sandbox_cache_dir.rstrip("/")
        return None
    return seen


def _removes_cache_itself(op: CacheOp, ops: list[CacheOp]) -> bool:
    """A removal at exit deletes the cache itself (not a scratch directory that a kernel_cache_dir op pointed the
    cache at: once that assignment goes, the removal only cleans the empty scratch up, so it stays)."""
    if op.kind != "cache_dir_removed":
        return True
    scratch = {o.value for o in ops if o.kind == "kernel_cache_dir" and o.value}
    return op.value not in scratch


def _plan(ctx: RuleContext, ops: list[CacheOp], clear_calls: list[ApiCall]) -> _Plan:
    """Remove only what ran unconditionally: a call that did not run in this command, or runs behind a command-line
    switch (`--rebuild`), is the user's documented contract; it stays, and the switch goes to must_keep."""
    plan = _Plan()
    for op in ops:
        where = f"{ctx.rel(op.file)}:{op.line}"
        flags = flags_guarding(ctx, op.file, op.line)
        ran = _op_ran(ctx, op)
        if flags:
            plan.kept.append(f"{_op_label(op)} at {where}: it runs behind {' '.join(flags)}, a switch the user "
                             "asked for (run it to clear the cache on purpose)")
            plan.kept_sites.add((ctx.rel(op.file), op.line))
            plan.state[id(op)] = f"; behind {' '.join(flags)}" + ("" if ran else ", and it did not run in this command")
            if flags not in plan.must_keep:
                plan.must_keep.append(flags)
            continue
        if ran is False:
            plan.kept.append(f"{_op_label(op)} at {where}: it did not run in this command")
            plan.kept_sites.add((ctx.rel(op.file), op.line))
            plan.state[id(op)] = "; it did not run in this command"
            continue
        if not _removes_cache_itself(op, ops):
            continue  # cleans up the scratch directory once the cache no longer points there
        plan.remove.add(id(op))
        if ran:
            plan.state[id(op)] = "; it ran in the measured command"
        e = remove_statement_edit(ctx.sources, op.file, op.line)
        if e is not None and all(x.file != e.file or x.start_line != e.start_line for x in plan.edits):
            plan.edits.append(e)
    for call in clear_calls:  # a recorded clear the scan did not list: the hook's site is the line
        if call.site is None:
            continue
        rel = ctx.rel(call.site.file)
        if any(op.kind == call.api and ctx.rel(op.file) == rel and op.line == call.site.line for op in ops):
            continue
        if flags_guarding(ctx, rel, call.site.line):
            continue
        e = remove_statement_edit(ctx.sources, rel, call.site.line)
        if e is not None and all(x.file != e.file or x.start_line != e.start_line for x in plan.edits):
            plan.edits.append(e)
    return plan


def _ran(ctx: RuleContext, op: CacheOp) -> bool:
    """The hook recorded this scanned call running in the measured process (same API, same file and line)."""
    return any(
        c.api == op.kind and c.site is not None and ctx.rel(c.site.file) == ctx.rel(op.file) and c.site.line == op.line
        for c in ctx.report.cache.calls
    )


def _ruled_out(ctx: RuleContext, ops: list[CacheOp], warm_measured: bool) -> RuleResult:
    if not warm_measured:
        signal = "no warm re-run was measured, and neither the sources nor the recorded calls defeat the cache"
    else:
        signal = "the warm re-run loaded every module from the cache"
        ran = [op for op in ops if _ran(ctx, op)]
        idle = [op for op in ops if not _ran(ctx, op)]
        if ran:
            sites = ", ".join(f"{ctx.rel(op.file)}:{op.line}" for op in ran[:3])
            signal += f"; the cache-defeating code at {sites} ran (recorded by the hook) without costing this run"
        if idle:
            sites = ", ".join(f"{ctx.rel(op.file)}:{op.line}" for op in idle[:3])
            signal += f"; the cache-defeating code the scan found ({sites}) did not run in this command"
    return ruled_out(MECHANISM, signal)


def _lto_clear_finding(ctx: RuleContext, calls: list, ops: list[CacheOp]) -> RuleResult:
    """wp.clear_lto_cache() ran in the measured process: on the CPU it costs nothing (no LTO artifacts exist), on
    CUDA it makes the next process generate every MathDx LTO artifact again. Priced from CUDA builds when the report
    has them (a --cuda-arch replay or a GPU run), else stated without a figure."""
    r = ctx.report
    locations = [ctx.loc(c.site.file, c.site.line, "wp.clear_lto_cache() runs in every process") for c in calls]
    evidence = [
        Evidence(fact=f"the hook recorded wp.clear_lto_cache() running at {ctx.rel(c.site.file)}:{c.site.line} "
                 f"(event {c.seq}) in the measured process")
        for c in calls
    ]
    lto_builds = [b for b in r.cuda_builds if b.lto_artifacts.count]
    saving = sum(b.phases.get("lto", 0.0) for b in lto_builds) or None
    if lto_builds:
        evidence.append(
            Evidence(
                fact=f"the CUDA builds of this run made {sum(b.lto_artifacts.count for b in lto_builds)} LTO "
                f"artifact(s) ({', '.join(sorted({b.module for b in lto_builds}))}); generating them took "
                f"{fmt_ms(saving)}, which every process after a clear pays again",
                builds=[],
                ms=saving,
            )
        )
        basis = "the MathDx LTO generation time of the CUDA builds in this report, paid again after every clear"
    elif ctx.cpu_only:
        evidence.append(
            Evidence(fact="this run compiled for the CPU only, where Warp makes no LTO artifacts: the call cost it "
                     "nothing")
        )
        basis = (
            "nothing on the CPU; on CUDA, every MathDx tile module (tile_matmul, tile_fft, ...) regenerates its LTO "
            "artifacts after the clear: measure it with `--cuda-arch 90`"
        )
    else:
        basis = "no LTO artifacts were made in this run"
    where = ", ".join(f"{ctx.rel(c.site.file)}:{c.site.line}" for c in calls)
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title="wp.clear_lto_cache() runs in every process: its cost falls on CUDA tile (MathDx) modules",
                severity=ctx.severity_for(saving) if saving else "low",
                confidence="high",
                evidence=evidence,
                locations=dedupe_locations(locations),
                fix=f"Remove wp.clear_lto_cache() at {where} (or run it only when the MathDx or Warp version "
                "changes): it deletes the linked device code that CUDA tile modules reuse between runs. On the CPU it "
                "does nothing.",
                estimated_saving_ms=round(saving, 1) if saving else None,
                saving_basis=basis,
                samples=1 if ctx.samples else 0,
                caveats=[
                    "A stale LTO cache after a MathDx or Warp upgrade is the one reason to clear it; do that once, "
                    "not in every run."
                ],
                experiment={"keep_kernel_cache": True} if lto_builds else None,
            )
        ]
    )
