"""Compare two measurements: was the same work done, and was less (or sooner) compiled?

`load_report` reads a report file (one clear line on any problem), `compare` judges two reports (pure),
`render_text` prints a comparison, and `interleaved_compare` measures two source trees alternately (A B, B A, ...)
so drift on a shared machine hits both arms.

The verdict, in order:

1. INVALID: the launch structure changed, the AFTER run had failed samples or build errors, or either side has no
   successful sample.
2. UNVERIFIED: neither run recorded a launch, so equal work cannot be confirmed (the clocks are still reported).
3. Three clocks, each against its own band max(1% of the BEFORE median, 2 x BEFORE raw MAD):
   compile elapsed (cold wall - warm wall: what the user waited), warm repeat (module time of the warm run: what
   every later run pays), cold module work (summed module load time of the cold run: what was built). Below the
   timing floor (5 ms of baseline median) a clock is judged on counts (compiled events) instead.
   * identical work (same identities, module hashes and generated source bytes) takes the summed cold clock out of
     the verdict: overlapped builds contend for cores and inflate it, so a scheduling change is judged on elapsed;
   * a warm run that compiled (in either arm) takes compile elapsed out: cold - warm then no longer isolates
     compilation, and the warm repeat is the clock that shows a cache fix.
   REGRESSION if a deciding clock regressed beyond its band; else IMPROVED if one improved beyond its band;
   else INCONCLUSIVE (inside the noise band of every clock).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from warp_compile.probe import stats
from warp_compile.probe.compare_models import (
    CLOCK_TITLES,
    EXIT_CODES,
    Clock,
    ClockDecision,
    Comparison,
    Count,
    Divergence,
    Equivalence,
    Interleaved,
    ModuleHashRow,
    Rename,
    Structure,
)
from warp_compile.probe.errors import ReportError, UsageError
from warp_compile.probe.models import SCHEMA_VERSION, Build, Launch, Report, RunResult, Stat

TIMING_FLOOR_MS = 5.0  # below this baseline median, a percentage band is meaningless: judge on counts
MIN_TIMING_SAMPLES = 3  # fewer per arm: a timed move counts only where the work changed the same way
ERROR_STATUSES = ("error", "error_no_build")
# identical hashes with a few bytes of generated source difference are still identical work: Warp's generated source
# carries `<L line>` comments, so a line shift in the user's file changes the bytes but not the hash
SOURCE_BYTES_SLACK = 256
SOURCE_FRACTION_SLACK = 0.001
REPORT_KIND = "warp-compile-report"
# what every `measure` report carries (the contract named in the README); a file without one of them was damaged
# or hand-made, and judging it would silently read defaults as measurements
CONTRACT_FIELDS = (
    "command", "cwd", "label", "warp_version", "python", "platform", "samples", "failed_samples",
    "cold_module_ms", "warm_module_ms", "native_compile_ms", "codegen_ms", "pch_ms", "cold_wall_ms", "warm_wall_ms",
    "compile_elapsed_ms", "overlap_factor", "generated_source_bytes", "lto_artifacts", "identities", "modules",
    "builds", "warm_builds", "launches", "launch_count", "cache", "sample_results", "warnings", "hook",
)  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------
# Loading


def load_report(path: str | Path) -> Report:
    """Read a measurement report. Any problem raises `ReportError` with one line naming the file and the cause."""
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise ReportError(f"{name}: no such file")
    if p.is_dir():
        raise ReportError(f"{name}: is a directory, not a report file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ReportError(f"{name}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportError(f"{name}: not a JSON report (the file is not UTF-8 text)") from None
    if not text.strip():
        raise ReportError(f"{name}: empty file, not a JSON report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        body = text.strip()
        opened = body[:1] in "{["
        truncated = exc.pos >= len(text.rstrip()) or (opened and body[-1:] not in "}]")
        what = "truncated JSON (the file ends early)" if truncated and opened else "not valid JSON"
        raise ReportError(f"{name}: {what} ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{name}: JSON {_json_type(data)}, not a warp-compile report object")
    kind = data.get("kind")
    if kind != REPORT_KIND:
        if kind is None:
            raise ReportError(f"{name}: not a warp-compile report (no 'kind' field)")
        if kind == "warp-compile-comparison":
            raise ReportError(f"{name}: a comparison result, not a measurement report (pass two `measure` reports)")
        raise ReportError(f"{name}: not a warp-compile report (kind {kind!r}, expected {REPORT_KIND!r})")
    version = data.get("schema_version")
    if version is None:
        raise ReportError(f"{name}: report has no schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version != SCHEMA_VERSION:
        raise ReportError(
            f"{name}: report schema_version {version!r}; this warp-compile reads schema_version {SCHEMA_VERSION}"
        )
    missing = [f for f in CONTRACT_FIELDS if f not in data]
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ReportError(f"{name}: damaged report (missing {shown})")
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        raise ReportError(f"{name}: invalid report ({_first_error(exc)})") from None


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "validation failed"
    e = errors[0]
    loc = ".".join(str(x) for x in e.get("loc", ())) or "(root)"
    msg = f"{loc}: {e.get('msg', 'invalid')}"
    if "input" in e and e.get("type") != "missing":
        shown = repr(e["input"])
        if len(shown) > 40:
            shown = shown[:37] + "..."
        msg += f", got {shown}"
    if len(errors) > 1:
        msg += f"; and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''}"
    return msg


# ----------------------------------------------------------------------------------------------------------------
# Workload equivalence


def _sig(launch: Launch) -> tuple[Any, ...]:
    return (
        tuple(launch.dim),
        launch.device,
        tuple(launch.dtypes),
        launch.block_dim,
        bool(launch.adjoint),
        bool(launch.tiled),
    )


_SIG_FIELDS = ("dim", "device", "dtypes", "block_dim", "adjoint", "tiled")


def _total_launches(r: Report) -> int:
    recorded = sum(max(1, int(x.count)) for x in r.launches)
    return max(int(r.launch_count or 0), recorded)


def _where(launch: Launch | None) -> str:
    if launch is None:
        return "nothing"
    s = f"{launch.kernel}"
    if launch.site is not None:
        s += f" at {Path(launch.site.file).name}:{launch.site.line}"
    return s


def _launch_brief(launch: Launch) -> str:
    parts = [f"dim {list(launch.dim)}"]
    if launch.device:
        parts.append(launch.device)
    if launch.dtypes:
        parts.append("(" + ", ".join(launch.dtypes) + ")")
    if launch.block_dim is not None:
        parts.append(f"block_dim {launch.block_dim}")
    if launch.adjoint:
        parts.append("adjoint")
    if launch.tiled:
        parts.append("tiled")
    return " ".join(parts)


def _describe_divergence(index: int, b: Launch | None, a: Launch | None, b_total: int, a_total: int) -> Divergence:
    n = index + 1
    if b is not None and a is not None:
        fields = [f for f, x, y in zip(_SIG_FIELDS, _sig(b), _sig(a), strict=True) if x != y]
        changes = []
        for f in fields:
            bv, av = getattr(b, f), getattr(a, f)
            changes.append(f"{f} {bv!r} -> {av!r}" if not isinstance(bv, list) else f"{f} {bv} -> {av}")
        desc = f"launch {n:,}: " + ", ".join(changes) + f" (before {_where(b)}, after {_where(a)})"
    elif b is not None:
        fields = ["count"]
        desc = (
            f"launch {n:,}: the AFTER run has no launch here (before: {_where(b)}, {_launch_brief(b)}); "
            f"{b_total:,} launches before, {a_total:,} after"
        )
    elif a is not None:
        fields = ["count"]
        desc = (
            f"launch {n:,}: the BEFORE run has no launch here (after: {_where(a)}, {_launch_brief(a)}); "
            f"{b_total:,} launches before, {a_total:,} after"
        )
    else:
        fields = ["count"]
        desc = f"launch counts differ: {b_total:,} before, {a_total:,} after (beyond the recorded launch lists)"
    return Divergence(index=index, before=b, after=a, fields=fields, description=desc)


def check_equivalence(before: Report, after: Report) -> Equivalence:
    """Launch-structure equivalence, kernel and module names ignored (renames listed).

    Run-length `count`s are walked position by position (never expanded into memory). A launch list that the
    probe truncated is compared over its recorded prefix, plus the total launch counts.
    """
    bl, al = before.launches, after.launches
    b_total, a_total = _total_launches(before), _total_launches(after)
    if b_total == 0 and a_total == 0:
        return Equivalence(status="unverified", note="neither run recorded a kernel launch")
    for side, r, total in (("BEFORE", before, b_total), ("AFTER", after, a_total)):
        if total == 0 and r.hook.mode == "none":
            return Equivalence(
                status="unverified",
                before_launches=b_total,
                after_launches=a_total,
                note=f"the {side} run recorded no launches because its hook did not run",
            )

    renames: dict[tuple[str, str, str, str], int] = {}
    ib = ia = 0
    rem_b = max(1, bl[0].count) if bl else 0
    rem_a = max(1, al[0].count) if al else 0
    pos = 0
    divergence: Divergence | None = None
    while ib < len(bl) and ia < len(al):
        lb, la = bl[ib], al[ia]
        if _sig(lb) != _sig(la):
            divergence = _describe_divergence(pos, lb, la, b_total, a_total)
            break
        step = min(rem_b, rem_a)
        if lb.kernel != la.kernel or lb.module != la.module:
            key = (lb.kernel, la.kernel, lb.module, la.module)
            renames[key] = renames.get(key, 0) + step
        pos += step
        rem_b -= step
        rem_a -= step
        if rem_b == 0:
            ib += 1
            rem_b = max(1, bl[ib].count) if ib < len(bl) else 0
        if rem_a == 0:
            ia += 1
            rem_a = max(1, al[ia].count) if ia < len(al) else 0

    checked = pos
    note = ""
    if divergence is None:
        b_left = bl[ib] if ib < len(bl) else None
        a_left = al[ia] if ia < len(al) else None
        if b_left is not None and not after.launches_truncated:
            divergence = _describe_divergence(pos, b_left, None, b_total, a_total)
        elif a_left is not None and not before.launches_truncated:
            divergence = _describe_divergence(pos, None, a_left, b_total, a_total)
        elif b_total != a_total:
            divergence = _describe_divergence(pos, None, None, b_total, a_total)
        elif before.launches_truncated or after.launches_truncated:
            note = f"launch list truncated: checked the first {checked:,} of {b_total:,} launches, totals equal"
    rename_list = [
        Rename(before=k[0], after=k[1], before_module=k[2], after_module=k[3], launches=n) for k, n in renames.items()
    ]
    return Equivalence(
        status="changed" if divergence is not None else "equivalent",
        first_divergence=divergence,
        renames=rename_list,
        before_launches=b_total,
        after_launches=a_total,
        checked_launches=checked,
        note=note,
    )


# ----------------------------------------------------------------------------------------------------------------
# Structure


def _reference_run(r: Report, phase: str) -> RunResult | None:
    chosen = None
    for s in r.sample_results:
        if r.reference_sample is not None and s.index == r.reference_sample:
            chosen = s
            break
        if chosen is None and s.ok:
            chosen = s
    if chosen is None:
        return None
    return chosen.cold if phase == "cold" else chosen.warm


def _compiled_events(r: Report, phase: str) -> int | None:
    """Builds with status "compiled" in the reference sample's cold or warm run; None when nothing says."""
    builds = r.builds if phase == "cold" else r.warm_builds
    if builds:
        return sum(1 for b in builds if b.status == "compiled")
    run = _reference_run(r, phase)
    if run is not None:
        return int(run.compiled)
    if phase == "warm" and r.builds:
        return 0  # the cold run recorded its builds and the warm run recorded none: nothing was loaded anew
    return None


def _identities(r: Report) -> int:
    if r.identities or not r.builds:
        return r.identities
    return len({(b.module, b.hash, b.device, b.block_dim) for b in r.builds})


def _modules(r: Report) -> int:
    if r.modules or not r.builds:
        return r.modules
    return len({b.module for b in r.builds})


def _short(b: Build) -> str:
    return b.hash_short or b.hash[:8]


def module_hash_rows(before: Report, after: Report) -> list[ModuleHashRow]:
    """One row per (module, device, block_dim) of either cold run, hashes in load order, changed rows marked."""
    order: list[tuple[str, str, int | None]] = []
    full: dict[tuple[str, str, int | None], tuple[list[str], list[str]]] = {}
    short: dict[tuple[str, str, int | None], tuple[list[str], list[str]]] = {}
    for side, r in ((0, before), (1, after)):
        for b in r.builds:
            key = (b.module, b.device, b.block_dim)
            if key not in full:
                order.append(key)
                full[key] = ([], [])
                short[key] = ([], [])
            if b.hash not in full[key][side]:
                full[key][side].append(b.hash)
                short[key][side].append(_short(b))
    rows = []
    for key in order:
        fb, fa = full[key]
        sb, sa = short[key]
        rows.append(
            ModuleHashRow(
                module=key[0],
                device=key[1],
                block_dim=key[2],
                before_hashes=sb,
                after_hashes=sa,
                changed=sorted(fb) != sorted(fa),
            )
        )
    return rows


def _structure(before: Report, after: Report, rows: list[ModuleHashRow]) -> Structure:
    s = Structure(
        identities=Count(before=_identities(before), after=_identities(after)),
        modules=Count(before=_modules(before), after=_modules(after)),
        generated_source_bytes=Count(before=before.generated_source_bytes, after=after.generated_source_bytes),
        lto_artifacts=Count(before=before.lto_artifacts, after=after.lto_artifacts),
        compiled_events=Count(before=_compiled_events(before, "cold"), after=_compiled_events(after, "cold")),
        warm_compiled_events=Count(before=_compiled_events(before, "warm"), after=_compiled_events(after, "warm")),
    )
    same_hashes = bool(rows) and not any(r.changed for r in rows)
    sb, sa = s.generated_source_bytes.before or 0, s.generated_source_bytes.after or 0
    source_diff = abs(sa - sb)
    source_same = source_diff <= max(SOURCE_BYTES_SLACK, SOURCE_FRACTION_SLACK * max(sb, sa))
    s.identical_work = same_hashes and source_same and not s.identities.changed and not s.lto_artifacts.changed
    if s.identical_work and source_diff:
        s.note = (
            f"generated source differs by {source_diff:,} bytes under identical hashes: Warp's source comments carry "
            "line numbers, so moving code in a file changes them without changing what is compiled"
        )
    return s


# ----------------------------------------------------------------------------------------------------------------
# Clocks


def fmt_ms(x: float | None, *, sign: bool = False) -> str:
    """Milliseconds for people: thousands separators, one decimal below 100 ms."""
    if x is None:
        return "n/a"
    f = "+" if sign else ""
    if abs(x) >= 100:
        return f"{x:{f},.0f}"
    return f"{x:{f},.1f}"


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
        why = counts_only or f"baseline median {fmt_ms(bm)} ms is below the {fmt_ms(floor)} ms timing floor"
        c.note = f"{why}: judged on counts ({shown})"
        if not counts_known:
            c.note += f"; without counts the floor serves as the band (median moved {fmt_ms(c.delta_ms, sign=True)} ms)"
        return c
    raw_band = stats.band(b) or 0.0
    c.band_ms = max(raw_band, floor)
    if raw_band < floor:
        c.note = (
            f"band max(1% of median, 2 x MAD) = {fmt_ms(raw_band)} ms raised to the {fmt_ms(floor)} ms timing floor"
        )
    if bm > 0:
        c.delta_pct = 100.0 * c.delta_ms / bm
    band_ms = c.band_ms
    if c.delta_ms < -band_ms:
        c.judged, c.outcome = "improved", "improved"
    elif c.delta_ms > band_ms:
        c.judged, c.outcome = "regressed", "regressed"
    else:
        c.judged, c.outcome = "within band", "unchanged"
    return c


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


def _clock_phrase(c: Clock, *, with_band: bool = True) -> str:
    bm, am = stats.stat_median(c.before), stats.stat_median(c.after)
    head = f"{c.title} {fmt_ms(bm)} -> {fmt_ms(am)} ms"
    if bm is None or am is None:
        return head + " (no data)"
    if c.judged == "counts":
        if c.counts_before is not None and c.counts_after is not None:
            return head + f" (judged on counts: {c.counts_label} {c.counts_before} -> {c.counts_after})"
        return head + f" (no counts; judged against the {fmt_ms(c.band_ms)} ms timing floor)"
    bits = []
    if c.delta_pct is not None:
        bits.append(f"{c.delta_pct:+.1f}%")
    else:
        bits.append(f"{fmt_ms(c.delta_ms, sign=True)} ms")
    if with_band and c.band_ms is not None:
        bits.append(f"band ±{fmt_ms(c.band_ms)} ms")
    return head + " (" + ", ".join(bits) + ")"


def _warnings(before: Report, after: Report, eq: Equivalence) -> list[str]:
    w: list[str] = []
    if list(before.command) != list(after.command):
        w.append(f"the reports ran different commands: {' '.join(before.command)!r} vs {' '.join(after.command)!r}")
    for field, what in (
        ("warp_version", "Warp versions"),
        ("python", "Python interpreters"),
        ("machine", "machines"),
        ("platform", "platforms"),
    ):
        bv, av = getattr(before, field), getattr(after, field)
        if bv and av and bv != av:
            w.append(f"measured on different {what}: {bv} vs {av}")
    if before.tool_version and after.tool_version and before.tool_version != after.tool_version:
        w.append(f"measured by different warp-compile versions: {before.tool_version} vs {after.tool_version}")
    if before.failed_samples:
        w.append(f"{before.failed_samples} of {before.samples} BEFORE samples failed; its clocks are over the rest")
    for side, r in (("BEFORE", before), ("AFTER", after)):
        n = _successful(r)
        if 0 < n < 3:
            w.append(f"{side} has only {n} successful sample{'s' if n != 1 else ''}: its MAD, and so the band, is weak")
        if r.cache.left_sandbox:
            w.append(
                f"the {side} app pointed kernel_cache_dir outside the sandbox: its cold runs may have reused a cache"
            )
        if r.hook.errors:
            w.append(f"the {side} hook reported {len(r.hook.errors)} internal error(s): {r.hook.errors[0]}")
    if before.hook.mode != after.hook.mode and "none" not in (before.hook.mode, after.hook.mode):
        w.append(f"the hooks ran in different modes: {before.hook.mode} vs {after.hook.mode}")
    if eq.note and eq.status == "equivalent":
        w.append(eq.note)
    errs = _build_errors(before)
    if errs:
        w.append(f"the BEFORE run had {len(errs)} build error(s) (first: module {errs[0].module})")
    return w


def compare(before: Report, after: Report, *, before_label: str = "", after_label: str = "") -> Comparison:
    """Judge AFTER against BEFORE. Pure: no I/O, no clock reads."""
    eq = check_equivalence(before, after)
    rows = module_hash_rows(before, after)
    st = _structure(before, after, rows)
    floor = TIMING_FLOOR_MS

    elapsed = _judge_clock(
        "compile_elapsed",
        before.compile_elapsed_ms,
        after.compile_elapsed_ms,
        counts_label="compiled events",
        counts_before=st.compiled_events.before,
        counts_after=st.compiled_events.after,
        floor=floor,
    )
    no_warm_compile = st.warm_compiled_events.before == 0 and st.warm_compiled_events.after == 0
    warm = _judge_clock(
        "warm_repeat",
        before.warm_module_ms,
        after.warm_module_ms,
        counts_label="compiled events in the warm run",
        counts_before=st.warm_compiled_events.before,
        counts_after=st.warm_compiled_events.after,
        floor=floor,
        counts_only="neither warm run compiled, so the warm repeat only loaded cached modules"
        if no_warm_compile
        else "",
    )
    cold = _judge_clock(
        "cold_module",
        before.cold_module_ms,
        after.cold_module_ms,
        counts_label="compiled events",
        counts_before=st.compiled_events.before,
        counts_after=st.compiled_events.after,
        floor=floor,
    )
    warm_compiles = (st.warm_compiled_events.before or 0) > 0 or (st.warm_compiled_events.after or 0) > 0
    if warm_compiles:
        elapsed.decisive = False
        elapsed.left_out = "the warm run compiled"
        elapsed.note = _join(
            elapsed.note,
            f"not judged: the warm run compiled ({st.warm_compiled_events.before} compiled events before, "
            f"{st.warm_compiled_events.after} after), so cold - warm no longer isolates compilation; "
            "the warm repeat carries the verdict",
        )
    if st.identical_work:
        cold.decisive = False
        cold.left_out = "the work is identical"
        cold.note = _join(
            cold.note,
            "not judged: same identities, module hashes and generated source (identical work); overlapped builds "
            "contend for cores and inflate the summed clock"
            + (", so compile elapsed decides" if elapsed.decisive else ""),
        )
    clocks = [elapsed, warm, cold]
    if before.cuda_builds and after.cuda_builds:  # --cuda-arch on both: the CUDA-only mechanisms' clock
        clocks.append(_judge_clock(
            "cuda_compile", _cuda_clock(before), _cuda_clock(after), counts_label="CUDA builds",
            counts_before=len(before.cuda_builds), counts_after=len(after.cuda_builds), floor=floor,
        ))
    headline = "warm_repeat" if warm_compiles else "compile_elapsed"
    few = min(_successful(before), _successful(after))
    if 0 < few < MIN_TIMING_SAMPLES:
        _discount_thin_timing(clocks, st, few)

    # -- verdict -------------------------------------------------------------------------------------------------
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

    deciding = [c for c in clocks if c.decisive and c.outcome != "not judged"]
    regressed = [c for c in deciding if c.outcome == "regressed"]
    improved = [c for c in deciding if c.outcome == "improved"]
    ignored = [c for c in clocks if not c.decisive and c.outcome in ("improved", "regressed")]

    if invalid:
        verdict = "INVALID"
        reason = "; ".join(invalid)
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
        if eq.status == "unverified":
            verdict = "UNVERIFIED"
            reason = f"{eq.note}, so the same work cannot be confirmed; the clocks alone say {clock_verdict}: {reason}"
        else:
            verdict = clock_verdict

    return Comparison(
        verdict=verdict,  # type: ignore[arg-type]
        reason=reason,
        exit_code=EXIT_CODES[verdict],
        headline=headline,  # type: ignore[arg-type]
        clocks=clocks,
        equivalence=eq,
        structure=st,
        module_hashes=rows,
        warnings=_warnings(before, after, eq),
        before_label=before_label or before.label or "before",
        after_label=after_label or after.label or "after",
        before_samples=_successful(before),
        after_samples=_successful(after),
        before_failed_samples=before.failed_samples,
        after_failed_samples=after.failed_samples,
        timing_floor_ms=floor,
    )


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def _moved(c: Clock) -> str:
    word = "fell" if c.outcome == "improved" else "rose"
    if c.judged == "counts":
        if c.counts_before is not None and c.counts_after is not None and c.counts_before != c.counts_after:
            return f"{c.title}: {c.counts_label} {word} {c.counts_before} -> {c.counts_after} (judged on counts)"
        return f"{c.title} {word} by {fmt_ms(abs(c.delta_ms or 0))} ms, more than the {fmt_ms(c.band_ms)} ms floor"
    pct = f" ({c.delta_pct:+.1f}%)" if c.delta_pct is not None else ""
    return (
        f"{c.title} {word} {fmt_ms(stats.stat_median(c.before))} -> {fmt_ms(stats.stat_median(c.after))} ms{pct}, "
        f"beyond its ±{fmt_ms(c.band_ms)} ms band"
    )


def _ignored(c: Clock) -> str:
    word = "fell" if c.outcome == "improved" else "rose"
    return f"{c.title} {word} ({fmt_ms(c.delta_ms, sign=True)} ms) but is not judged because {c.left_out}"


def _work_direction(st: Structure, clock: str) -> int:
    """-1 when the AFTER run compiled less (by compiled events), +1 when more, 0 when the counts say nothing."""
    cnt = st.warm_compiled_events if clock == "warm_repeat" else st.compiled_events
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
        if st.identical_work:
            moved = fmt_ms(abs(c.delta_ms or 0))
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


# ----------------------------------------------------------------------------------------------------------------
# Text


def render_text(c: Comparison) -> str:
    """The comparison for people. Line 1: verdict, headline clock, reason. Same model as the JSON."""
    head = c.clock(c.headline)
    lines = [f"{c.verdict}: {_clock_phrase(head) if head else c.headline}. {c.reason}"]
    lines.append(
        f"  before: {c.before_label} ({c.before_samples} successful sample{'s' if c.before_samples != 1 else ''}"
        + (f", {c.before_failed_samples} failed" if c.before_failed_samples else "")
        + f");  after: {c.after_label} ({c.after_samples} successful sample{'s' if c.after_samples != 1 else ''}"
        + (f", {c.after_failed_samples} failed" if c.after_failed_samples else "")
        + ")"
    )
    lines.append("")

    eq = c.equivalence
    lines.append("Workload (launch order, count, dim, device, dtypes, block_dim, adjoint, tiled; names ignored):")
    if eq.status == "equivalent":
        lines.append(f"  equivalent: {eq.before_launches:,} launches, same structure")
    elif eq.status == "changed":
        lines.append(f"  CHANGED: {eq.before_launches:,} launches before, {eq.after_launches:,} after")
        if eq.first_divergence is not None:
            lines.append(f"  first divergence: {eq.first_divergence.description}")
    else:
        lines.append(f"  UNVERIFIED: {eq.note}")
    if eq.note and eq.status == "equivalent":
        lines.append(f"  note: {eq.note}")
    for r in eq.renames:
        mod = f" (module {r.before_module} -> {r.after_module})" if r.before_module != r.after_module else ""
        lines.append(f"  renamed: {r.before} -> {r.after}{mod}, {r.launches:,} launch{'es' if r.launches != 1 else ''}")
    lines.append("")

    lines.append("Clocks (median ms; band = max(1% of before median, 2 x before raw MAD)):")
    table = [("clock", "before", "after", "delta", "band", "judged", "")]
    for k in c.clocks:
        delta = fmt_ms(k.delta_ms, sign=True)
        if k.delta_pct is not None:
            delta += f" ({k.delta_pct:+.1f}%)"
        bandtxt = f"±{fmt_ms(k.band_ms)}" if k.band_ms is not None else "n/a"
        if k.judged == "counts":
            bandtxt = f"floor {fmt_ms(k.band_ms)}"
        judged = k.judged
        if k.judged == "counts":
            judged = f"counts: {k.outcome}"
        flags = []
        if k.name == c.headline:
            flags.append("headline")
        if not k.decisive:
            flags.append("not deciding")
        table.append(
            (
                k.title,
                fmt_ms(stats.stat_median(k.before)),
                fmt_ms(stats.stat_median(k.after)),
                delta,
                bandtxt,
                judged,
                ", ".join(flags),
            )
        )
    lines.extend(_table(table, right=(1, 2, 3, 4)))
    for k in c.clocks:
        if k.note:
            lines.append(f"  {k.title}: {k.note}")
    lines.append("")

    s = c.structure
    lines.append("Structure (reference sample):")
    for label, cnt in (
        ("identities", s.identities),
        ("modules", s.modules),
        ("generated source bytes", s.generated_source_bytes),
        ("LTO artifacts", s.lto_artifacts),
        ("compiled events (cold)", s.compiled_events),
        ("compiled events (warm)", s.warm_compiled_events),
    ):
        b = "n/a" if cnt.before is None else f"{cnt.before:,}"
        a = "n/a" if cnt.after is None else f"{cnt.after:,}"
        mark = "" if cnt.before == cnt.after else "   *"
        lines.append(f"  {label:<24} {b:>12} -> {a:<12}{mark}".rstrip())
    lines.append(f"  identical work: {'yes' if s.identical_work else 'no'}")
    if s.note:
        lines.append(f"  note: {s.note}")
    if c.module_hashes:
        lines.append("")
        lines.append("Module hashes (cold run; * = changed):")
        rows = [("", "module", "device", "block_dim", "before", "after")]
        for r in c.module_hashes:
            rows.append(
                (
                    "*" if r.changed else "",
                    r.module,
                    r.device,
                    "" if r.block_dim is None else str(r.block_dim),
                    " ".join(r.before_hashes) or "-",
                    " ".join(r.after_hashes) or "-",
                )
            )
        lines.extend(_table(rows))

    if c.interleaved is not None:
        it = c.interleaved
        lines.append("")
        state = ""
        if it.until_decided:
            state = ", decided" if it.decided else ", NOT decided"
        warm = f", after {it.warmup} discarded warm-up sample(s) per arm" if it.warmup else ""
        lines.append(f"Interleaved ({it.order}{warm}): {it.pairs} pair{'s' if it.pairs != 1 else ''}{state}")
        if it.stopped_because:
            lines.append(f"  stopped: {it.stopped_because}")
        if it.rule:
            lines.append(f"  rule: {it.rule}")
        for d in it.clocks:
            lines.append(f"  {CLOCK_TITLES[d.name]}: {d.outcome}" + (f" ({d.reason})" if d.reason else ""))

    if c.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines.extend(f"  - {w}" for w in c.warnings)
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(r)]
        out.append(("  " + "  ".join(cells)).rstrip())
    return out


# ----------------------------------------------------------------------------------------------------------------
# Interleaved measurement


RunSample = Callable[..., Any]
BuildReport = Callable[..., Report]


def _decide(c: Comparison, max_samples: int, min_pairs: int, pairs: int) -> tuple[bool, bool, str, list[ClockDecision]]:
    """(stop, decided, because, per-clock decisions) for one interim comparison (see `stats.settled_verdict`)."""
    if c.verdict == "INVALID":
        return True, True, f"INVALID after {pairs} pair{'s' if pairs != 1 else ''}: {c.reason}", []
    decisions: list[ClockDecision] = []
    deciding: list[stats.Decision] = []
    for k in c.clocks:
        if not k.decisive or k.outcome == "not judged":
            decisions.append(ClockDecision(name=k.name, outcome="not judged", reason=k.note))
            continue
        if k.judged == "counts":
            fixed = {"improved": "improved", "regressed": "regressed"}.get(k.outcome, "equivalent")
            outcome = fixed if pairs >= min_pairs else "undecided"
            deciding.append(
                stats.Decision(
                    decided=outcome != "undecided",
                    exhausted=False,
                    outcome=outcome,  # type: ignore[arg-type]
                    pairs=pairs,
                    band=k.band_ms or 0.0,
                )
            )
            decisions.append(
                ClockDecision(name=k.name, outcome="counts", band_ms=k.band_ms, reason=f"judged on counts: {k.outcome}")
            )
            continue
        d = stats.until_decided(k.before.values, k.after.values, k.band_ms or 0.0, max_samples, min_pairs=min_pairs)
        deciding.append(d)
        decisions.append(
            ClockDecision(
                name=k.name,
                outcome=d.outcome,
                ci_low_ms=d.interval.low if d.interval else None,
                ci_high_ms=d.interval.high if d.interval else None,
                band_ms=d.band,
                p_value=d.rank_test.p if d.rank_test else None,
                reason=d.reason,
            )
        )
    settled = stats.settled_verdict(deciding) if pairs >= min_pairs else None
    if settled is not None:
        return True, True, f"the verdict settled as {settled} after {pairs} pairs", decisions
    if pairs >= max_samples:
        return True, False, f"reached --max-samples {max_samples} before the verdict settled", decisions
    return False, False, "", decisions


def interleaved_compare(
    command: list[str],
    before_cwd: Path,
    after_cwd: Path,
    samples: int | None = None,
    until_decided: bool = False,
    max_samples: int = 20,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    *,
    warmup: int = 1,
    run_sample: RunSample | None = None,
    build_report: BuildReport | None = None,
) -> Comparison:
    """Measure BEFORE and AFTER alternately (A B, B A, A B, ...), one cold + warm sample per arm per pair.

    `warmup` discarded samples of each arm come first. The order inside a pair alternates, so a position effect
    (the second run of a pair finding warmer caches) cancels over two pairs instead of favouring one arm.

    Without `until_decided`: `samples` pairs (default 5). With it: at least `samples` pairs (default and minimum 3),
    stopping after the first pair at which the verdict can no longer change (`stats.until_decided` per clock,
    combined by `stats.settled_verdict`), at most `max_samples` pairs. Either way, an INVALID interim comparison
    (changed workload, failed AFTER sample, build errors) stops at once: more samples cannot make it valid.

    `run_sample` / `build_report` default to `warp_compile.probe.measure`; tests inject a mock executor.
    """
    if run_sample is None or build_report is None:
        try:
            from warp_compile.probe import measure as _measure
        except ImportError as exc:  # pragma: no cover - until the measurement module lands
            raise UsageError(f"interleaved compare needs warp_compile.probe.measure ({exc})") from None
        run_sample = run_sample or _measure.run_sample
        build_report = build_report or _measure.build_report
    before_cwd, after_cwd = Path(before_cwd), Path(after_cwd)
    if not command:
        raise UsageError("interleaved compare needs a command after `--`")
    if until_decided:
        min_pairs = max(stats.MIN_PAIRS, samples or stats.MIN_PAIRS)
        limit = max_samples
        if max_samples < min_pairs:
            raise UsageError(f"--max-samples {max_samples} is below the minimum of {min_pairs} pairs")
    else:
        min_pairs = samples or 5
        limit = min_pairs
        if limit < 1:
            raise UsageError("--samples must be at least 1")

    def say(msg: str) -> None:
        if progress is not None:
            progress(msg)

    arms: tuple[list[Any], list[Any]] = ([], [])
    interim: Comparison | None = None
    stop_because = ""
    decided: bool | None = None
    decisions: list[ClockDecision] = []
    pairs = 0
    arm_dirs = ((0, before_cwd), (1, after_cwd))
    for w in range(warmup):
        # hyperfine's discipline: the first runs after a pause pay for cold disk caches and clocks; discard them
        for side, cwd in arm_dirs:
            say(f"warm-up {w + 1}/{warmup}: {'before' if side == 0 else 'after'} ({cwd}), not counted")
            run_sample(command, cwd, -1 - w, timeout_s=timeout_s, progress=None)
    for i in range(limit):
        # A B, then B A: whatever the position in a pair does to a run (a warmer cache, a slower core) hits both
        # arms alike over every two pairs instead of always the same arm
        for side, cwd in arm_dirs if i % 2 == 0 else arm_dirs[::-1]:
            say(f"pair {i + 1}/{limit}: {'before' if side == 0 else 'after'} ({cwd})")
            arms[side].append(run_sample(command, cwd, i, timeout_s=timeout_s, progress=progress))
        pairs = i + 1
        interim = _compare_arms(command, before_cwd, after_cwd, arms, build_report)
        stop, dec, because, decisions = _decide(interim, max_samples if until_decided else limit, min_pairs, pairs)
        if interim.verdict == "INVALID":
            stop_because, decided = because, True if until_decided else None
            break
        if until_decided and pairs >= min_pairs and stop:
            stop_because, decided = because, dec
            break
    assert interim is not None
    if not stop_because:
        stop_because = f"ran the {pairs} requested pair{'s' if pairs != 1 else ''}"
    interim.interleaved = Interleaved(
        pairs=pairs,
        warmup=warmup,
        until_decided=until_decided,
        decided=decided if until_decided else None,
        stopped_because=stop_because,
        rule=stats.UNTIL_DECIDED_RULE.format(min_pairs=min_pairs, max_samples=max_samples) if until_decided else "",
        min_pairs=min_pairs if until_decided else None,
        max_samples=max_samples if until_decided else None,
        clocks=decisions,
        before_cwd=str(before_cwd),
        after_cwd=str(after_cwd),
    )
    if until_decided and decided is False:
        interim.warnings.append(
            f"--until-decided stopped at {pairs} pairs before the verdict settled; more pairs could still change it"
        )
    elif not until_decided and interim.verdict in ("IMPROVED", "REGRESSION"):
        word = "improved" if interim.verdict == "IMPROVED" else "regressed"
        moved = {k.name for k in interim.clocks if k.decisive and k.outcome == word and k.judged != "counts"}
        shaky = [d for d in decisions if d.name in moved and d.outcome != word]
        if moved and len(shaky) == len(moved):
            interim.warnings.append(
                f"tentative: the medians put {', '.join(CLOCK_TITLES[d.name] for d in shaky)} beyond the band, but "
                "the 95% bootstrap interval of the difference still reaches inside it; more pairs, or "
                "--until-decided, would settle it"
            )
    settled = stop_because.split("settled as ")[-1].split(" ")[0] if "settled as " in stop_because else None
    if settled and interim.verdict in EXIT_CODES and interim.verdict not in (settled, "UNVERIFIED", "INVALID"):
        interim.warnings.append(
            f"the bootstrap intervals settled on {settled} but the medians against the bands say {interim.verdict}"
        )
    return interim


def _compare_arms(
    command: list[str],
    before_cwd: Path,
    after_cwd: Path,
    arms: tuple[list[Any], list[Any]],
    build_report: BuildReport,
) -> Comparison:
    n = len(arms[1])
    before = build_report(command, before_cwd, list(arms[0]), label="before", requested=n)
    after = build_report(command, after_cwd, list(arms[1]), label="after", requested=n)
    return compare(before, after, before_label=f"before ({before_cwd})", after_label=f"after ({after_cwd})")
