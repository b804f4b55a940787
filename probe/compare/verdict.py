"""The verdict of a comparison: the headline clock against its noise band, after the equivalence check.

The verdict, in order:

1. INVALID: the launch structure changed, the AFTER run had failed samples or build errors, or either side has no
   successful sample.
2. NO_EFFECT: the change can only act through what is compiled (`acts_through="compiled"`: a settings experiment,
   a fix meant to remove builds) and both runs built identical work (same identities, module hashes, generated
   source, header builds and compiled events): no effect on what Warp compiles, whatever the timing says.
3. UNVERIFIED: neither run recorded a launch, so equal work cannot be confirmed (the clocks are still reported).
4. The clocks, each against its own band max(1% of the BEFORE median, 2 x BEFORE raw MAD), never below the 5 ms
   timing floor (below it, judged on counts of compiled events). The headline is compile elapsed (cold wall -
   warm wall), the repeat run's wall time when a warm run compiled (a cache fix), or the CUDA compile clock with
   --cuda-arch. Warm repeat and cold module work may decide too; cold / warm wall, header, native and codegen are
   informational.
   * identical work takes the summed cold clock out (overlapped builds contend for cores and inflate it), and so
     does a header that moved in or out of the modules' native compile (its cost moved, it did not grow);
   * a warm run that compiled takes compile elapsed out (cold - warm then no longer isolates compilation);
   * a headline that improved beyond its band wins: a secondary clock that moved the other way is shown with its
     reason and does not decide.
   REGRESSION if a deciding clock regressed beyond its band; else IMPROVED if one improved beyond its band;
   else INCONCLUSIVE. Saved reports pass a `Drift` (see `compare.drift`): the AFTER clocks divided by its factor,
   the bands widened by its uncertainty, and a timed verdict set aside when the drift cannot be trusted.
"""

from __future__ import annotations

import math

from .. import stats
from ..contention import is_contended
from ..fmt import fmt_num
from ..models import Build, Report, Stat, Warn, WarningCode, warn
from ..models.clocks import CLOCK_TITLES, CPU_TWIN
from ..models.comparison import (
    EXIT_CODES,
    ActsThrough,
    Clock,
    Comparison,
    Count,
    Drift,
    EffectInterval,
    Equivalence,
    Structure,
)
from .equivalence import check_equivalence, module_hash_rows, structure
from .same import identical_work

TIMING_FLOOR_MS = 5.0  # below this baseline median, a percentage band is meaningless: judge on counts
MIN_TIMING_SAMPLES = 3  # fewer per arm: a timed move counts only where the work changed the same way
ERROR_STATUSES = ("error", "error_no_build")


# ----------------------------------------------------------------------------------------------------------------
# Clocks


def _judge_clock(
    name: str,
    b: Stat,
    a: Stat,
    *,
    counts_label: str,
    counts_before: int | None,
    counts_after: int | None,
    floor: float,
    counts_only: str = "",
    widen: float = 0.0,
    paired: bool = False,
    basis: tuple[Stat, Stat] | None = None,
) -> Clock:
    c = Clock(name=name, title=CLOCK_TITLES[name], before=b, after=a)  # type: ignore[arg-type]
    c.counts_label = counts_label
    c.counts_before, c.counts_after = counts_before, counts_after
    bm, am = stats.stat_median(b), stats.stat_median(a)
    if bm is None or am is None:
        missing = " and ".join(s for s, m in (("BEFORE", bm), ("AFTER", am)) if m is None)
        c.note = f"no successful samples in {missing}"
        return c
    c.delta_ms = am - bm
    if len(b.values) >= 2 and len(a.values) >= 2:
        rt = stats.mann_whitney(b.values, a.values)
        c.p_value, c.p_method = rt.p, rt.method
    if bm < floor or counts_only:
        c.judged = "counts"
        c.band_ms = floor
        counts_known = counts_before is not None and counts_after is not None
        if counts_known and counts_after < counts_before:  # type: ignore[operator]
            c.outcome = "improved"
        elif counts_known and counts_after > counts_before:  # type: ignore[operator]
            c.outcome = "regressed"
        elif not counts_known and abs(c.delta_ms) > floor:  # no counts to go by: the floor is the band
            c.outcome = "improved" if c.delta_ms < 0 else "regressed"
        else:
            c.outcome = "unchanged"
        shown = f"{counts_label} {counts_before} -> {counts_after}" if counts_known else f"{counts_label} unknown"
        why = counts_only or f"baseline median {fmt_num(bm)} ms is below the {fmt_num(floor)} ms timing floor"
        c.note = f"{why}: judged on counts ({shown})"
        if not counts_known:
            moved = fmt_num(c.delta_ms, sign=True)
            c.note += f"; without counts the floor serves as the band (median moved {moved} ms)"
        return c
    raw_band = stats.band(b) or 0.0
    # widen: the drift factor's uncertainty (saved reports), independent of the samples' own spread: in quadrature
    c.band_ms = math.hypot(max(raw_band, floor), widen * abs(bm))
    if raw_band < floor:
        c.note = (
            f"band max(1% of median, 2 x MAD) = {fmt_num(raw_band)} ms raised to the {fmt_num(floor)} ms timing floor"
        )
    if bm > 0:
        c.delta_pct = 100.0 * c.delta_ms / bm
    if basis is not None and len(basis[0].values) >= 2:
        c.basis_before, c.basis_after = basis
        bb, ba = stats.stat_median(basis[0]), stats.stat_median(basis[1])
        if bb is not None and ba is not None:  # the same work taken from both arms: the move is what differs
            c.delta_ms = ba - bb
            c.delta_pct = 100.0 * c.delta_ms / bm if bm > 0 else None
    c.interval = _interval(c.basis_before or b, c.basis_after or a, paired, widen * abs(bm), b)
    band_ms = c.band_ms
    if c.delta_ms < -band_ms:
        c.judged, c.outcome = "improved", "improved"
    elif c.delta_ms > band_ms:
        c.judged, c.outcome = "regressed", "regressed"
    else:
        c.judged, c.outcome = "within band", "unchanged"
    iv = c.interval
    if iv is not None and not paired and c.outcome != "unchanged" and (iv.low_ms <= 0.0 <= iv.high_ms):
        # the medians moved beyond the band, but the interval of the effect still holds no change at all (paired
        # compares hold their intervals against the band instead: see interleave._decide and the tentative check)
        c.judged, c.outcome = "within band", "unchanged"
        c.note = _join(c.note, f"the median moved {fmt_num(c.delta_ms, sign=True)} ms, beyond the band, but the "
                               f"{iv.confidence:.0%} interval of the effect [{fmt_num(iv.low_ms, sign=True)}, "
                               f"{fmt_num(iv.high_ms, sign=True)}] ms ({iv.method}, n={iv.n}) holds zero")
    return c


def _interval(b: Stat, a: Stat, paired: bool, widen_ms: float, whole: Stat) -> EffectInterval | None:
    """The 95% interval of after - before from the samples (paired when they were measured in pairs), widened in
    quadrature by the drift factor's uncertainty of a saved-report compare; None with one sample a side.

    As a share: with pairs, each pair's difference over that pair's own before value on the whole clock (`whole`),
    then the t interval of those shares. A load that stretches one pair's CPU time stretches its difference and its
    before value alike, so the pair's share is free of it, where a share of one median carries the whole spread
    of the load (bench/COVERAGE.md). Without pairs: the ms interval over the before arm's median."""
    is_paired = paired and len(a.values) == len(b.values)
    eff = stats.effect_interval(b.values, a.values, paired=is_paired)
    if eff is None:
        return None
    half = math.hypot((eff.high - eff.low) / 2.0, widen_ms)
    low, high = eff.mean - half, eff.mean + half
    bm = stats.stat_median(whole) or 0.0
    pcts: tuple[float, float, float] | None = None
    if is_paired and len(whole.values) == len(b.values) and all(w > 0 for w in whole.values):
        shares = [100.0 * (y - x) / w for x, y, w in zip(b.values, a.values, whole.values, strict=True)]
        share = stats.effect_interval([0.0] * len(shares), shares, paired=True)
        if share is not None:
            h = math.hypot((share.high - share.low) / 2.0, 100.0 * widen_ms / bm if bm > 0 else 0.0)
            pcts = (share.mean, share.mean - h, share.mean + h)
    if pcts is None and bm > 0:
        pcts = (100.0 * eff.mean / bm, 100.0 * low / bm, 100.0 * high / bm)
    mean_pct, low_pct, high_pct = (round(v, 3) for v in pcts) if pcts is not None else (None, None, None)
    return EffectInterval(mean_ms=round(eff.mean, 3), low_ms=round(low, 3), high_ms=round(high, 3), n=eff.n,
                          method=eff.method, confidence=eff.confidence, mean_pct=mean_pct, low_pct=low_pct,
                          high_pct=high_pct)


def _cuda_clock(r: Report) -> Stat:
    """Summed --cuda-arch builds per sample; a report without the per-sample clock gives its reference sample."""
    if r.cuda_compile_ms.values:
        return r.cuda_compile_ms
    return stats.stat_of([round(sum(b.ms for b in r.cuda_builds if b.status == "compiled"), 3)])


def _successful(r: Report) -> int:
    if r.sample_results:
        return sum(1 for s in r.sample_results if s.ok)
    n = max(len(r.compile_elapsed_ms.values), len(r.cold_wall_ms.values), len(r.cold_module_ms.values))
    if n:
        return n
    return max(0, r.samples - r.failed_samples) if r.cold_module_ms.median is not None else 0


def _build_errors(r: Report) -> list[Build]:
    return [b for b in (*r.builds, *r.warm_builds) if b.status in ERROR_STATUSES]


def _sample_errors(r: Report) -> int:
    n = 0
    for s in r.sample_results:
        for run in (s.cold, s.warm):
            if run is not None:
                n += int(run.errors)
    return n


def _warnings(before: Report, after: Report, eq: Equivalence) -> list[Warn]:
    w: list[Warn] = []
    if list(before.command) != list(after.command):
        w.append(warn(WarningCode.DIFFERENT_COMMANDS, before=list(before.command), after=list(after.command)))
    for field in ("warp_version", "python", "machine", "platform", "tool_version"):
        bv, av = getattr(before, field), getattr(after, field)
        if bv and av and bv != av:
            w.append(warn(WarningCode.DIFFERENT_SETUP, field=field, before=bv, after=av))
    if before.failed_samples:
        w.append(warn(WarningCode.BEFORE_SAMPLES_FAILED, failed=before.failed_samples, samples=before.samples))
    for side, r in (("BEFORE", before), ("AFTER", after)):
        n = _successful(r)
        if 0 < n < 3:
            w.append(warn(WarningCode.FEW_SAMPLES, side=side, n=n))
        if r.cache.outside_sandbox:
            w.append(warn(WarningCode.CACHE_LEFT_SANDBOX, side=side))
        if r.hook.errors:
            w.append(warn(WarningCode.HOOK_ERRORS, side=side, count=len(r.hook.errors), first=r.hook.errors[0]))
    busy = [(side, r.other_share) for side, r in (("BEFORE ", before), ("AFTER ", after))
            if is_contended(r.other_share)]
    if busy:
        w.append(warn(WarningCode.CONTENDED, share=max(v for _s, v in busy), side=busy[0][0] if len(busy) == 1 else ""))
    if before.hook.mode != after.hook.mode and "none" not in (before.hook.mode, after.hook.mode):
        w.append(warn(WarningCode.HOOK_MODES_DIFFER, before=before.hook.mode, after=after.hook.mode))
    if eq.status == "equivalent" and (before.launches_truncated or after.launches_truncated):
        w.append(warn(WarningCode.LAUNCH_PREFIX_CHECKED, checked=eq.checked_launches, total=eq.before_launches))
    errs = _build_errors(before)
    if errs:
        w.append(warn(WarningCode.BEFORE_BUILD_ERRORS, count=len(errs), module=errs[0].module))
    return w


TIME_CLOCKS = ("compile_elapsed", "warm_repeat", "cold_module", "cuda_compile", "cold_wall", "warm_wall", "pch",
               "native", "codegen", "steady", "steady_cpu", "compile_cpu", "cold_module_cpu", "cold_cpu", "warm_cpu",
               "pch_cpu", "native_cpu", "cuda_compile_cpu")  # fmt: skip
CPU_CLOCKS = frozenset(CPU_TWIN.values())


def _corrected(s: Stat, factor: float | None) -> Stat:
    """AFTER values divided by the drift factor (1.0 or None: as measured)."""
    if not factor or factor == 1.0 or not s.values:
        return s
    return stats.stat_of([round(v / factor, 3) for v in s.values])


def _clocks(before: Report, after: Report, st: Structure, floor: float, drift: Drift | None,
            paired: bool = False) -> list[Clock]:
    """Every clock of the comparison, judged against its band; roles and decisiveness are set by `compare`. A
    paired compare decides its clocks with the work both arms did identically left out (`same.identical_work`)."""
    same = identical_work(before, after) if paired else None

    def clock(name: str, b: Stat, a: Stat, counts: Count, label: str = "compiled events", counts_only: str = ""
              ) -> Clock:
        d = drift.cpu if drift is not None and name in CPU_CLOCKS else drift  # the CPU clocks drift on their own
        factor = d.factor if d is not None and d.trusted else None
        widen = (d.band_pct or 0.0) / 100.0 if factor else 0.0
        basis = same.basis.get(name) if same is not None and not factor else None
        c = _judge_clock(
            name, b, _corrected(a, factor), counts_label=label, counts_before=counts.before,
            counts_after=counts.after, floor=floor, counts_only=counts_only, widen=widen, paired=paired,
            basis=basis,
        )
        if basis is not None and same is not None and c.basis_before is not None:
            c.identical_ms = round(same.shares.get(name, 0.0), 3)
            c.note = _join(c.note, same.note(name))
        if factor and a.values:
            c.drift_corrected, c.after_raw_median = True, stats.stat_median(a)
        return c

    no_warm_compile = st.warm_compiled_events.before == 0 and st.warm_compiled_events.after == 0
    warm_counts_only = "neither warm run compiled, so the warm repeat only loaded cached modules"
    out = [
        clock("compile_elapsed", before.compile_elapsed_ms, after.compile_elapsed_ms, st.compiled_events),
        clock("warm_repeat", before.warm_module_ms, after.warm_module_ms, st.warm_compiled_events,
              label="compiled events in the warm run", counts_only=warm_counts_only if no_warm_compile else ""),
        clock("cold_module", before.cold_module_ms, after.cold_module_ms, st.compiled_events),
    ]
    if before.cuda_builds and after.cuda_builds:  # --cuda-arch on both: the CUDA-only mechanisms' clock
        out.append(clock("cuda_compile", _cuda_clock(before), _cuda_clock(after),
                         Count(before=len(before.cuda_builds), after=len(after.cuda_builds)), label="CUDA builds"))
    headers = Count(before=len(before.pch), after=len(after.pch)) if (before.pch or after.pch) else Count()
    for name, b, a, cnt, label in (
        ("cold_wall", before.cold_wall_ms, after.cold_wall_ms, st.compiled_events, "compiled events"),
        ("warm_wall", before.warm_wall_ms, after.warm_wall_ms, st.warm_compiled_events,
         "compiled events in the warm run"),
        ("pch", before.pch_ms, after.pch_ms, headers, "header builds"),
        ("native", before.native_compile_ms, after.native_compile_ms, st.compiled_events, "compiled events"),
        ("codegen", before.codegen_ms, after.codegen_ms, st.compiled_events, "compiled events"),
    ):
        if b.values or a.values or b.median is not None or a.median is not None:  # absent from both: not measured
            out.append(clock(name, b, a, cnt, label=label))
    if before.steady_ms.values and after.steady_ms.values:  # the per-call clock (WC-1), where both arms ended cleanly
        out.append(clock("steady", before.steady_ms, after.steady_ms, st.compiled_events))
    if before.steady_cpu_ms.values and after.steady_cpu_ms.values:  # its CPU twin, where both runs read the clock
        out.append(clock("steady_cpu", before.steady_cpu_ms, after.steady_cpu_ms, st.compiled_events))
    for name, b, a, cnt, label in (
        ("compile_cpu", before.compile_cpu_ms, after.compile_cpu_ms, st.compiled_events, "compiled events"),
        ("cold_module_cpu", before.cold_module_cpu_ms, after.cold_module_cpu_ms, st.compiled_events,
         "compiled events"),
        ("cold_cpu", before.cold_cpu_ms, after.cold_cpu_ms, st.compiled_events, "compiled events"),
        ("warm_cpu", before.warm_cpu_ms, after.warm_cpu_ms, st.warm_compiled_events,
         "compiled events in the warm run"),
        ("pch_cpu", before.pch_cpu_ms, after.pch_cpu_ms, headers, "header builds"),
        ("native_cpu", before.native_compile_cpu_ms, after.native_compile_cpu_ms, st.compiled_events,
         "compiled events"),
        ("cuda_compile_cpu", before.cuda_compile_cpu_ms, after.cuda_compile_cpu_ms,
         Count(before=len(before.cuda_builds), after=len(after.cuda_builds)), "CUDA builds"),
    ):
        if b.values and a.values:  # a CPU clock only where both reports measured it
            out.append(clock(name, b, a, cnt, label=label))
    return out


def _headline(clocks: list[Clock], warm_compiles: bool, cpu: bool = False) -> str:
    """The clock the comparison is about: the repeat run's wall time when a warm run compiled (a cache fix: what
    every later run waits, header rebuilds included), the CUDA compile clock in a --cuda-arch compare, else compile
    elapsed (what the user waited for compilation). With `cpu` the same on the CPU clock (warm CPU, CUDA compile CPU,
    compile CPU) wherever both reports measured it."""
    names = {c.name for c in clocks}
    if warm_compiles and "warm_wall" in names:
        head = "warm_wall"
    elif warm_compiles:
        head = "warm_repeat"
    elif "cuda_compile" in names:
        head = "cuda_compile"
    else:
        head = "compile_elapsed"
    twin = CPU_TWIN.get(head)
    return twin if cpu and twin in names else head


CPU_REASON = (
    "CPU clocks decide: Warp's CPU build (LLVM) and the NVRTC replay run in-process, so compiling is CPU work on the "
    "building thread; a machine shared with other jobs stretches its wall time, not the CPU time it needs (on the "
    "2-core test VM three compile jobs beside a build doubled its wall time and moved its CPU time by ~3%, "
    "bench/CPU_CLOCKS.md); the wall clocks are shown beside them"
)


def clock_basis(before: Report, after: Report, clocks: list[Clock], acts_through: ActsThrough) -> tuple[str, str]:
    """Which family of clocks decides ("cpu" or "wall") and why, in words."""
    names = {c.name for c in clocks}
    if "compile_cpu" not in names or "cold_module_cpu" not in names:
        return "wall", ("wall clocks decide: one of the reports has no CPU clocks (an older report, a platform "
                        "without os.wait4, or a run in Warp's log fallback)")
    if acts_through == "scheduling":
        return "wall", ("wall clocks decide: the change acts on when builds run (threads, preloads), which saves "
                        "waiting, not CPU work; the CPU clocks are shown beside them")
    overlap = max(before.overlap_factor or 1.0, after.overlap_factor or 1.0)
    if overlap > 1.05:
        return "wall", (f"wall clocks decide: builds overlapped on several threads (overlap {overlap:.2f}), so wall "
                        "time carries what concurrency saves and CPU time cannot; the CPU clocks are shown beside them")
    return "cpu", CPU_REASON


def _header_move(clocks: list[Clock], st: Structure, cpu: bool = False) -> str:
    """A cost that moved between the header and the summed module clocks, in words ("" when none did).

    Cold module work and native compile exclude the precompiled header: turning the header off moves its cost into
    each module's native compile (turning it on moves it out). When the module clock moved by no more than the
    header did, the cost moved; it did not grow (or shrink)."""
    by = {c.name: c for c in clocks}
    pch, cold = (by.get("pch_cpu"), by.get("cold_module_cpu")) if cpu else (by.get("pch"), by.get("cold_module"))
    if cold is None or cold.delta_ms is None:
        return ""
    pb = (stats.stat_median(pch.before) if pch else None) or 0.0
    pa = (stats.stat_median(pch.after) if pch else None) or 0.0
    hb, ha = st.headers.before or 0, st.headers.after or 0
    slack = cold.band_ms or 0.0
    header = f"{fmt_num(pa - pb, sign=True)} ms of {'header CPU' if cpu else 'header (pch)'}"
    work = cold.title
    if (hb > ha or (pb > 0 and pa == 0)) and 0 < cold.delta_ms <= (pb - pa) + slack:
        return f"header cost moved into native compile: {fmt_num(cold.delta_ms, sign=True)} ms of {work} " \
               f"against {header}"
    if (ha > hb or (pa > 0 and pb == 0)) and 0 < -cold.delta_ms <= (pa - pb) + slack:
        return f"native compile moved into the header: {fmt_num(cold.delta_ms, sign=True)} ms of {work} " \
               f"against {header}"
    return ""


def _not_a_time(elapsed: Clock, st: Structure, warm_compiles: bool) -> None:
    """Cold wall - warm wall is a compile time only when the warm run compiled nothing; never show it negative (the
    same for cold CPU - warm CPU)."""
    bm, am = stats.stat_median(elapsed.before), stats.stat_median(elapsed.after)
    diff = "cold CPU - warm CPU" if elapsed.name == "compile_cpu" else "cold wall - warm wall"
    if warm_compiles:
        what = (f"{diff}, not a compile time: the warm run compiled too "
                f"({st.warm_compiled_events.before} compiled events before, {st.warm_compiled_events.after} after)")
    elif (bm is not None and bm < 0) or (am is not None and am < 0):
        what = f"{diff} is below zero: nothing measurable was compiled, the runs differ by noise"
    else:
        return
    elapsed.note = "; ".join(part for part in elapsed.note.split("; ") if "baseline median -" not in part)
    parts = []
    for side, m in (("before", bm), ("after", am)):
        if m is not None:
            longer = "longer" if m < 0 else "shorter"
            parts.append(f"{side}, the warm run took {fmt_num(abs(m))} ms {longer} than the cold run")
    elapsed.not_a_time = what + ("; " + "; ".join(parts) if parts else "")


def compare(
    before: Report,
    after: Report,
    *,
    before_label: str = "",
    after_label: str = "",
    acts_through: ActsThrough = "unknown",
    drift: Drift | None = None,
    paired: bool = False,
) -> Comparison:
    """Judge AFTER against BEFORE. Pure: no I/O, no clock reads.

    `acts_through` "compiled" (a settings experiment, a code fix meant to remove builds) turns identical work into
    NO_EFFECT; "scheduling" and "unknown" judge identical work on time. `drift` (saved-report compares, see
    `compare.drift`) divides the AFTER time clocks by its factor and widens the bands by its uncertainty; an
    untrusted drift sets timed verdicts aside. `paired`: the samples at one position were measured together
    (interleaved compares, the fix engine's rounds), so each clock's interval is made from paired differences.

    The CPU clocks decide where both reports measured them and the change acts on what is built (`clock_basis`):
    compile CPU is then the headline and cold module CPU the deciding secondary, and the wall clocks are shown
    beside them, informational; otherwise the wall clocks decide and the CPU clocks are informational.
    """
    eq = check_equivalence(before, after)
    rows = module_hash_rows(before, after)
    st = structure(before, after, rows)
    floor = TIMING_FLOOR_MS
    clocks = _clocks(before, after, st, floor, drift, paired)
    by = {c.name: c for c in clocks}
    basis, basis_reason = clock_basis(before, after, clocks, acts_through)
    cpu = basis == "cpu"
    # the drift of the clocks that decide: a saved report's CPU clocks are corrected by their own factor
    deciding_drift = drift.cpu if cpu and drift is not None and drift.cpu is not None else drift
    elapsed, cold = by["compile_cpu" if cpu else "compile_elapsed"], by["cold_module_cpu" if cpu else "cold_module"]
    warm_compiles = (st.warm_compiled_events.before or 0) > 0 or (st.warm_compiled_events.after or 0) > 0
    headline = _headline(clocks, warm_compiles, cpu)
    informational = _informational(cpu, warm_compiles)
    for c in clocks:
        if c.name == headline:
            c.role = "headline"
        elif c.name in informational:
            c.role, c.decisive = "informational", False
    if warm_compiles:
        elapsed.decisive = False
        elapsed.left_out = "the warm run compiled"
        elapsed.note = _join(
            elapsed.note,
            f"not judged: the warm run compiled ({st.warm_compiled_events.before} compiled events before, "
            f"{st.warm_compiled_events.after} after), so cold - warm no longer isolates compilation; "
            f"the {CLOCK_TITLES[headline]} carries the verdict",
        )
    for c in [elapsed] + ([by["compile_elapsed"]] if elapsed is not by["compile_elapsed"] else []):
        _not_a_time(c, st, warm_compiles)
    moved = _header_move(clocks, st, cpu)
    if moved:
        cold.decisive = False
        cold.left_out = moved
        cold.note = _join(cold.note, f"not judged: {moved}; the header is not in this clock, so it moved, not grew")
    elif st.identical_work:
        cold.decisive = False
        cold.left_out = "the work is identical"
        cold.note = _join(
            cold.note,
            "not judged: same identities, module hashes and generated source (identical work); overlapped builds "
            "contend for cores and inflate the summed clock"
            + (", so compile elapsed decides" if elapsed.decisive else ""),
        )
    few = min(_successful(before), _successful(after))
    if 0 < few < MIN_TIMING_SAMPLES:
        _discount_thin_timing(clocks, st, few)
    _cpu_stands_in(clocks)
    _headline_wins(clocks, headline)

    # -- verdict -------------------------------------------------------------------------------------------------
    invalid = _invalid(before, after, eq)
    deciding = [c for c in clocks if c.decisive and c.outcome != "not judged"]
    regressed = [c for c in deciding if c.outcome == "regressed"]
    improved = [c for c in deciding if c.outcome == "improved"]
    ignored = [c for c in clocks if not c.decisive and c.role != "informational" and c.outcome in ("improved",
                                                                                                   "regressed")]
    # identical work in both runs, the header included: a change that turned the header off built the same
    # modules differently
    same_work = (st.identical_work and not st.compiled_events.changed and not st.warm_compiled_events.changed
                 and not st.headers.changed)
    warnings = _warnings(before, after, eq)
    if invalid:
        verdict = "INVALID"
        reason = "; ".join(invalid)
    elif acts_through == "compiled" and same_work:
        verdict = "NO_EFFECT"
        head = by.get(headline)
        timing = f"; timing: {_timing(head)}" if head is not None and head.delta_ms is not None else ""
        reason = (
            f"no effect on what Warp compiles: both arms built identical work ({st.identities.after} identities, "
            "the same module hashes and generated source), and this change can only act through what is compiled"
            f"{timing}, which is noise or scheduling, not the change"
        )
    else:
        if regressed:
            clock_verdict = "REGRESSION"
            reason = "; ".join(_moved(c) for c in regressed)
            if improved:
                reason += " (although " + "; ".join(_moved(c) for c in improved) + ")"
        elif improved:
            clock_verdict = "IMPROVED"
            reason = "; ".join(_moved(c) for c in improved) + "; no clock regressed"
        else:
            clock_verdict = "INCONCLUSIVE"
            reason = "the change is inside the noise band of every clock, so this measurement cannot tell the two apart"
        if ignored:
            reason += "; " + "; ".join(_ignored(c) for c in ignored)
        if st.identical_work and any(c.name == "compile_elapsed" for c in (*regressed, *improved)):
            reason += "; identical work (same identities, hashes and source): the difference is scheduling"
        if drift is not None and not deciding_drift.trusted and clock_verdict in ("IMPROVED", "REGRESSION"):
            timed = [c for c in (*regressed, *improved) if c.judged != "counts"]
            if timed:
                reason = (
                    f"{clock_verdict} by the raw clocks only, which machine drift between the two reports can explain "
                    f"({deciding_drift.reason}): {reason}; measure both trees interleaved (compare --before-cwd A "
                    "--after-cwd B -- CMD) to judge the change"
                )
                clock_verdict = "INCONCLUSIVE"
        if eq.status == "unverified":
            verdict = "UNVERIFIED"
            reason = f"{eq.note}, so the same work cannot be confirmed; the clocks alone say {clock_verdict}: {reason}"
        else:
            verdict = clock_verdict
    if drift is not None:
        if deciding_drift.trusted:
            warnings.append(warn(WarningCode.DRIFT_CORRECTED, factor=round(deciding_drift.factor or 1.0, 3),
                                 band=round(deciding_drift.band_pct or 0.0, 1), yardstick=deciding_drift.yardstick))
        else:
            warnings.append(warn(WarningCode.DRIFT_UNCORRECTED, reason=deciding_drift.reason))

    return Comparison(
        verdict=verdict,  # type: ignore[arg-type]
        reason=reason,
        exit_code=EXIT_CODES[verdict],
        headline=headline,  # type: ignore[arg-type]
        clocks=clocks,
        equivalence=eq,
        structure=st,
        module_hashes=rows,
        warnings=warnings,
        other_share=max((v for v in (before.other_share, after.other_share) if v is not None), default=None),
        before_label=before_label or before.label or "before",
        after_label=after_label or after.label or "after",
        before_samples=_successful(before),
        after_samples=_successful(after),
        before_failed_samples=before.failed_samples,
        after_failed_samples=after.failed_samples,
        timing_floor_ms=floor,
        acts_through=acts_through,
        moved_costs=[moved] if moved else [],
        drift=drift,
        clock_basis=basis,
        clock_basis_reason=basis_reason,
    )


INFORMATIONAL = ("cold_wall", "warm_wall", "pch", "native", "codegen", "steady")  # steady: a per-call finding's
CPU_INFORMATIONAL = ("cold_cpu", "warm_cpu", "pch_cpu", "native_cpu", "steady_cpu")


def _informational(cpu: bool, warm_compiles: bool) -> set[str]:
    """The clocks shown but never deciding: the other family's clocks, and each family's parts (header, native,
    codegen, whole runs); a warm run that compiled makes the repeat run's whole clock the one that decides."""
    if cpu:
        out = set(INFORMATIONAL) | set(CPU_INFORMATIONAL) | {"compile_elapsed", "cold_module", "cuda_compile"}
        if warm_compiles:  # the warm CPU decides; the warm run's module wall time beside it
            out.discard("warm_cpu")
            out.add("warm_repeat")
        return out
    out = set(INFORMATIONAL) | set(CPU_CLOCKS)
    if warm_compiles:
        out.discard("warm_wall")
    return out


def _invalid(before: Report, after: Report, eq: Equivalence) -> list[str]:
    """Why the two runs cannot be compared at all (INVALID), or nothing."""
    invalid: list[str] = []
    if eq.status == "changed" and eq.first_divergence is not None:
        invalid.append(f"the workload changed at {eq.first_divergence.description}")
    if after.failed_samples:
        invalid.append(f"{after.failed_samples} of {after.samples} AFTER samples failed")
    after_errors = _build_errors(after)
    if after_errors:
        first = after_errors[0]
        detail = f": {first.error.splitlines()[0]}" if first.error else ""
        invalid.append(f"the AFTER run had {len(after_errors)} build error(s) (module {first.module}{detail})")
    elif _sample_errors(after):
        invalid.append(f"the AFTER run reported {_sample_errors(after)} build error(s)")
    if _successful(before) == 0:
        invalid.append("the BEFORE report has no successful sample")
    if _successful(after) == 0 and not after.failed_samples:
        invalid.append("the AFTER report has no successful sample")
    return invalid


def _headline_wins(clocks: list[Clock], headline: str) -> None:
    """A headline that improved beyond its band is the answer: a secondary clock that moved the other way is shown
    with the reason and does not turn the improvement into a regression."""
    head = next((c for c in clocks if c.name == headline), None)
    if head is None or not head.decisive or head.outcome != "improved":
        return
    for c in clocks:
        if c is not head and c.decisive and c.outcome == "regressed":
            c.decisive = False
            c.left_out = f"the headline clock ({head.title}) improved beyond its band and is what the user waits for"
            c.note = _join(c.note, f"not judged: it moved the other way while the {head.title} improved")


def _timing(c: Clock) -> str:
    bm, am = stats.stat_median(c.before), stats.stat_median(c.after)
    pct = f" ({c.delta_pct:+.1f}%)" if c.delta_pct is not None else ""
    return f"{c.title} {fmt_num(bm)} -> {fmt_num(am)} ms{pct}"


def _cpu_stands_in(clocks: list[Clock]) -> None:
    """With --cuda-arch on both sides the question is the GPU start-up: when the CUDA clock improved beyond its
    band, a CPU clock that regressed (e.g. one more, smaller CPU module after a split by block_dim) is shown but does
    not decide, since on the device those launches build CUDA modules, not CPU ones."""
    cuda = next((c for c in clocks if c.name == "cuda_compile"), None)
    if cuda is None or not cuda.decisive or cuda.outcome != "improved":
        return
    for c in clocks:
        if c is not cuda and c.decisive and c.outcome == "regressed":
            c.decisive = False
            c.left_out = "the CUDA compile clock improved and the CPU run only stands in for the device's launches"
            c.note = _join(c.note, "not judged against the CUDA clock: a --cuda-arch compare is about the GPU start-up")


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def _moved(c: Clock) -> str:
    word = "fell" if c.outcome == "improved" else "rose"
    if c.judged == "counts":
        if c.counts_before is not None and c.counts_after is not None and c.counts_before != c.counts_after:
            return f"{c.title}: {c.counts_label} {word} {c.counts_before} -> {c.counts_after} (judged on counts)"
        return f"{c.title} {word} by {fmt_num(abs(c.delta_ms or 0))} ms, more than the {fmt_num(c.band_ms)} ms floor"
    pct = f" ({c.delta_pct:+.1f}%)" if c.delta_pct is not None else ""
    bm, am = stats.stat_median(c.before), stats.stat_median(c.after)
    if bm is not None and am is not None and am != bm and (am < bm) != (c.outcome == "improved"):
        # paired: the verdict is the pairs' mean; the two sides' medians (from different pairs) moved the other way
        return (f"{c.title} {word} by the pairs' mean{pct}, beyond its ±{fmt_num(c.band_ms)} ms band (the medians, "
                f"from different pairs, read {fmt_num(bm)} -> {fmt_num(am)} ms)")
    return f"{c.title} {word} {fmt_num(bm)} -> {fmt_num(am)} ms{pct}, beyond its ±{fmt_num(c.band_ms)} ms band"


def _ignored(c: Clock) -> str:
    word = "fell" if c.outcome == "improved" else "rose"
    return f"{c.title} {word} ({fmt_num(c.delta_ms, sign=True)} ms) but is not judged because {c.left_out}"


def _work_direction(st: Structure, clock: str) -> int:
    """-1 when the AFTER run compiled less (by compiled events), +1 when more, 0 when the counts say nothing."""
    cnt = st.warm_compiled_events if clock in ("warm_repeat", "warm_wall", "warm_cpu") else st.compiled_events
    if cnt.before is None or cnt.after is None or cnt.before == cnt.after:
        return 0
    return -1 if cnt.after < cnt.before else 1


def _discount_thin_timing(clocks: list[Clock], st: Structure, few: int) -> None:
    """With fewer than MIN_TIMING_SAMPLES samples in an arm, the band has no real spread behind it.

    A timed move then counts only where the work itself changed in the same direction: identical work that timed
    differently is noise, and so is "slower" when fewer modules compiled (or "faster" when more did).
    """
    n = f"{few} sample{'s' if few != 1 else ''}"
    for c in clocks:
        if not c.decisive or c.judged not in ("improved", "regressed"):
            continue
        direction = _work_direction(st, c.name)
        timed = -1 if c.outcome == "improved" else 1
        if direction == timed:  # the work itself moved the same way (e.g. the warm run stopped compiling)
            continue
        if st.identical_work:
            moved = fmt_num(abs(c.delta_ms or 0))
            why = f"the work is identical and {n} per arm cannot tell a {moved} ms move from noise"
        elif direction == -timed:
            less = "fewer" if direction < 0 else "more"
            why = (
                f"{less} modules compiled, which contradicts the timed move, and {n} per arm cannot tell it from noise"
            )
        else:
            continue
        c.decisive = False
        c.left_out = why
        c.note = _join(c.note, f"not judged: {why}; measure with --samples 3 or more, or interleaved")
