"""The text form of a FixResult: per candidate its verdict, saving on its clock, behaviour, and the diff."""

from __future__ import annotations

from ..fmt import fmt_ms
from ..models.fix import CandidateFix, ClockSaving, FixResult


def _iv(k: ClockSaving) -> str:
    if k.saving_low_ms is None or k.saving_high_ms is None:
        return f", band ±{fmt_ms(k.band_ms)}"
    return f", 95% interval {fmt_ms(k.saving_low_ms)} to {fmt_ms(k.saving_high_ms)}"


def _measured(c: CandidateFix) -> str:
    if c.status != "measured":
        return f"{c.status}: {c.reason}"
    parts = [c.verdict or "not measured"]
    if c.saving_ms is not None:
        band = f" (noise band ±{fmt_ms(c.band_ms)}, no interval: one sample a side)" if c.band_ms is not None else ""
        if c.saving_low_ms is not None and c.saving_high_ms is not None:
            band = f" (95% interval {fmt_ms(c.saving_low_ms)} to {fmt_ms(c.saving_high_ms)})"
        pct = f" ({abs(c.saving_pct):.1f}%)" if c.saving_pct is not None else ""
        if c.saving_ms >= 0:
            parts.append(f"saves {fmt_ms(c.saving_ms)}{pct} on {_title(c.clock)}{band}")
        else:
            parts.append(f"costs {fmt_ms(-c.saving_ms)}{pct} more on {_title(c.clock)}{band}")
    moved = [k for k in c.savings
             if k.outcome == "improved" and k.decisive and k.name != c.clock and k.saving_ms is not None]
    if moved:
        parts.append("beyond its band on " + ", ".join(f"{k.name} ({fmt_ms(k.saving_ms)}{_iv(k)})" for k in moved))
    if c.estimated_saving_ms is not None:
        parts.append(f"estimated {fmt_ms(c.estimated_saving_ms)}")
    parts.append(f"{c.pairs} sample(s)" + (f" ({c.stopped_because})" if c.stopped_because else ""))
    if c.behaviour is not None:
        parts.append("behaviour kept" if c.behaviour.ok else f"behaviour NOT kept ({c.behaviour.note})")
    return "; ".join(parts)


def _candidate(c: CandidateFix, show_diff: bool) -> list[str]:
    head = f"{c.key} {c.title}".rstrip()
    lines = [head, f"    {_measured(c)}"]
    if c.applicability:
        lines.append(f"    applicability: {c.applicability}{': ' + c.review if c.review else ''}")
    if c.behaviour is not None:
        for k in c.behaviour.kept:
            lines.append(f"    must keep `{' '.join(k.argv)}`: {'ok' if k.ok else 'BROKEN'} ({k.note})")
        if c.behaviour.cause:
            lines.append(f"    failed run: {c.behaviour.cause}; its stderr ends:")
            lines += [f"      | {ln}" for ln in c.behaviour.error_tail]
    if c.command:
        lines.append(f"    runs as: {' '.join(c.command)}  (the edit creates this launcher)")
    if c.improved and c.upstream:
        lines.append("    PROVEN FOR UPSTREAM: the library's change, measured on a patched scratch copy of it with the "
                     "same output; for its maintainers (the finding's upstream report), nothing to write here")
    elif c.improved:
        lines.append("    PROVEN: improved with behaviour kept")
    if show_diff and c.diff:
        lines += ["    " + ln for ln in c.diff.rstrip("\n").splitlines()]
    return lines


def render_fix(r: FixResult, show_diff: bool = True) -> str:
    out = [f"warp-compile fix: {r.summary}", ""]
    for c in r.candidates:
        out += _candidate(c, show_diff and c.status == "measured")
        out.append("")
    if r.combination is not None:
        out += _candidate(r.combination, False)
        out.append("")
    if r.next_round:
        out += ["Found on the kept tree (its own samples diagnosed again), measured on top of it:", ""]
        for c in r.next_round:
            out += _candidate(c, show_diff and c.status == "measured")
            out.append("")
    if r.not_offered:
        out += ["Not offered:"] + [f"    {n}" for n in r.not_offered] + [""]
    cost = r.costs
    reused = " incl. the diagnosis run" if cost.reused_diagnosis_sample else ""
    out.append(f"cost: {cost.program_runs} program run(s) ({cost.diagnosis_runs} for the diagnosis), "
               f"{cost.baseline_samples} baseline sample(s){reused}, {cost.wall_s:.1f} s")
    if r.write:
        if r.written:
            out += ["", f"wrote {', '.join(r.written)} ({', '.join(r.applied)}{_carried(r)}):",
                    r.written_diff.rstrip("\n")]
        elif r.held_back:
            out += ["", "wrote nothing: every fix that improved with behaviour kept is rated review"]
        else:
            out += ["", "wrote nothing: no fix improved with behaviour kept"]
    else:
        out.append("dry run: nothing in the project was changed (--write applies the proven automatic fixes; "
                   "--unsafe-fixes adds those rated review)")
    out += [f"held back: {h.reason}" for h in r.held_back]
    return "\n".join(out).rstrip() + "\n"


def _carried(r: FixResult) -> str:
    """The mechanisms the written plan carries out besides the written keys' own (one plan, measured once)."""
    own = {m for c in [*r.candidates, *r.next_round, *([r.combination] if r.combination else [])]
           if c.key in r.applied for m in c.mechanisms}
    more = [m for m in r.realised if m not in own]
    return f"; its plan carries out {', '.join(more)} too" if more else ""


def _title(clock: str | None) -> str:
    """A clock as the diagnosis names it too ("compile CPU"), so estimates and measurements read alike."""
    from ..models.clocks import CLOCK_TITLES

    return CLOCK_TITLES.get(clock or "", (clock or "").replace("_", " "))  # type: ignore[call-overload]
