"""Was the same work done? Launch-structure equivalence (names ignored), module hashes and what was built.

`check_equivalence` walks both launch lists position by position; `module_hash_rows` and `structure` say whether
the builds are identical work (same identities, hashes and generated source), which takes the summed cold clock
out of the verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..models import Build, Launch, Report, RunResult
from ..models.comparison import Count, Divergence, Equivalence, ModuleHashRow, Rename, Structure

# identical hashes with a few bytes of generated source difference are still identical work: Warp's generated source
# carries `<L line>` comments, so a line shift in the user's file changes the bytes but not the hash
SOURCE_BYTES_SLACK = 256
SOURCE_FRACTION_SLACK = 0.001


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


def _merged(launches: list[Launch]) -> list[Launch]:
    """The launch records with module names set aside: records of one kernel from one call site that differ only
    in their module (the versions of a module="unique" kernel, a module each) are one record, at the place of the
    first, with the counts summed. The hook aggregates launches per record in first-seen order, so a fix that gives
    the versions one module (or a module each) regroups the same launches; comparing the regrouped records keeps
    that from reading as a changed workload. Records without a call site are left as they are."""
    if not launches:
        return launches
    out: list[Launch] = []
    index: dict[tuple[Any, ...], int] = {}
    for la in launches:
        if la.site is None:
            out.append(la)
            continue
        key = (_sig(la), la.kernel, la.site.file, la.site.line)
        at = index.get(key)
        if at is None:
            index[key] = len(out)
            out.append(la)
        else:
            first = out[at]
            out[at] = first.model_copy(update={"count": max(1, first.count) + max(1, la.count)})
    return out


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


def without_added_args(after: Report, added: dict[str, list[str]], at: dict[str, int] | None = None) -> str:
    """Set aside the arguments a fix's edits add to launches (a closure's captured values passed as kernel
    arguments): each launch of such a kernel whose types hold them at their place (last, or at `at[kernel]`, before
    the outputs) is compared without them. Replaces the report's launch list (the samples' records stay as
    measured); returns what was set aside, "" for nothing."""
    if not added:
        return ""
    out, seen = [], 0
    for la in after.launches:
        tail = added.get(la.kernel)
        if tail:
            start = (at or {}).get(la.kernel, len(la.dtypes) - len(tail))
            if 0 <= start and list(la.dtypes[start:start + len(tail)]) == tail:
                la = la.model_copy(update={"dtypes": list(la.dtypes[:start]) + list(la.dtypes[start + len(tail):])})
                seen += max(1, int(la.count))
        out.append(la)
    after.launches = out
    if not seen:
        return ""
    shown = ", ".join(f"{k} ({', '.join(v)})" for k, v in sorted(added.items()))
    return f"{seen:,} launch(es) carry the arguments the fix adds, set aside for this check: {shown}"


def check_equivalence(before: Report, after: Report) -> Equivalence:
    """Launch-structure equivalence, kernel and module names ignored (renames listed).

    Run-length `count`s are walked position by position (never expanded into memory). A launch list that the
    probe truncated is compared over its recorded prefix, plus the total launch counts.
    """
    bl, al = _merged(before.launches), _merged(after.launches)
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
    status = "changed" if divergence is not None else "equivalent"
    return Equivalence(status=status, first_divergence=divergence, renames=rename_list, before_launches=b_total,
                       after_launches=a_total, checked_launches=checked, note=note)


# ----------------------------------------------------------------------------------------------------------------
# What was built


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


def structure(before: Report, after: Report, rows: list[ModuleHashRow]) -> Structure:
    """Counts of what each reference sample built, and whether the two did identical work."""
    s = Structure(
        identities=Count(before=_identities(before), after=_identities(after)),
        modules=Count(before=_modules(before), after=_modules(after)),
        generated_source_bytes=Count(before=before.generated_source_bytes, after=after.generated_source_bytes),
        lto_artifacts=Count(before=before.lto_artifacts, after=after.lto_artifacts),
        compiled_events=Count(before=_compiled_events(before, "cold"), after=_compiled_events(after, "cold")),
        warm_compiled_events=Count(before=_compiled_events(before, "warm"), after=_compiled_events(after, "warm")),
        headers=Count(before=len(before.pch), after=len(after.pch)),
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
