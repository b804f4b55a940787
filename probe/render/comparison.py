"""A comparison for people: verdict line, workload, clocks table, structure, module hashes, interleaving, warnings.

Renders the same `Comparison` model the JSON carries; it decides nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fmt import fmt_num
from ..models.clocks import CLOCK_TITLES
from ..models.comparison import Clock, Comparison, Drift


def render_comparison(c: Comparison) -> str:
    """The comparison for people. Line 1: verdict, headline clock, reason. Same model as the JSON."""
    head = c.clock(c.headline)
    phrase = _clock_phrase(head) if head and not head.not_a_time else CLOCK_TITLES.get(c.headline, c.headline)
    lines = [f"{c.verdict}: {phrase}. {c.reason}"]
    lines.append(
        f"  before: {c.before_label} ({c.before_samples} successful sample{'s' if c.before_samples != 1 else ''}"
        + (f", {c.before_failed_samples} failed" if c.before_failed_samples else "")
        + f");  after: {c.after_label} ({c.after_samples} successful sample{'s' if c.after_samples != 1 else ''}"
        + (f", {c.after_failed_samples} failed" if c.after_failed_samples else "")
        + ")"
    )
    if c.clock_basis_reason:
        lines.append(f"  clocks: {c.clock_basis_reason}")
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

    corrected = ", AFTER drift-corrected" if c.drift is not None and c.drift.trusted else ""
    lines.append(f"Clocks (median ms{corrected}; band = max(1% of before median, 2 x before raw MAD); interval = 95% "
                 f"interval of the effect, {_method(c)}):")
    table = [("clock", "before", "after", "delta", "band", "interval", "judged", "")]
    for k in c.clocks:
        delta = fmt_num(k.delta_ms, sign=True)
        if k.delta_pct is not None:
            delta += f" ({k.delta_pct:+.1f}%)"
        b_txt, a_txt = fmt_num(k.before.middle()), fmt_num(k.after.middle())
        if k.not_a_time:  # cold - warm that is not a compile time is never shown as one (nor below zero)
            b_txt = a_txt = delta = "n/a"
        bandtxt = f"±{fmt_num(k.band_ms)}" if k.band_ms is not None else "n/a"
        if k.judged == "counts":
            bandtxt = f"floor {fmt_num(k.band_ms)}"
        judged = k.judged
        if k.judged == "counts":
            judged = f"counts: {k.outcome}"
        flags = []
        if k.name == c.headline:
            flags.append("headline")
        if k.role == "informational":
            flags.append("informational")
        elif not k.decisive:
            flags.append("not deciding")
        iv = k.interval
        ivtxt = "n/a"
        if iv is not None and not k.not_a_time:
            ivtxt = f"[{fmt_num(iv.low_ms, sign=True)}, {fmt_num(iv.high_ms, sign=True)}]"
        table.append(
            (
                k.title,
                b_txt,
                a_txt,
                delta,
                bandtxt,
                ivtxt,
                judged,
                ", ".join(flags),
            )
        )
    lines.extend(_table(table, right=(1, 2, 3, 4, 5)))
    for k in c.clocks:
        if k.not_a_time:
            lines.append(f"  {k.title}: {k.not_a_time}")
        if k.note and k.role != "informational":
            lines.append(f"  {k.title}: {k.note}")
    for m in c.moved_costs:
        lines.append(f"  moved: {m}")
    if c.drift is not None:
        lines.extend(_drift_lines(c))
    if c.gate is not None:
        g = c.gate
        lines.append(f"  gate --max-regression {g.max_regression_pct:g}%: {'passed' if g.passed else 'FAILED'}: "
                     f"{g.reason} (exit {g.exit_code})")
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
        ("header builds (cold)", s.headers),
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
        lines.extend(f"  - {w.message}" for w in c.warnings)
    return "\n".join(lines) + "\n"


def _method(c: Comparison) -> str:
    methods = sorted({k.interval.method for k in c.clocks if k.interval is not None})
    return ", ".join(methods) or "none: one sample a side"


def _drift_lines(c: Comparison) -> list[str]:
    d = c.drift
    assert d is not None
    out = _one_drift("drift", d)
    if d.cpu is not None:  # the CPU clocks are corrected by their own factor, which a loaded machine barely moves
        out += _one_drift("CPU drift", d.cpu)
    raw = [k for k in c.clocks if k.drift_corrected and k.after_raw_median is not None and k.role != "informational"]
    if raw:
        shown = ", ".join(f"{k.title} {fmt_num(k.after_raw_median)} ms" for k in raw)
        out.append(f"    measured AFTER medians: {shown}")
    return out


def _one_drift(label: str, d: Drift) -> list[str]:
    if d.factor is None:
        return [f"  {label}: not estimated: {d.reason}"]
    head = (f"  {label}: factor {d.factor:.3f} (after / before, ±{fmt_num(d.band_pct)}%) on {d.yardstick} "
            f"({fmt_num(d.yardstick_before_ms)} -> {fmt_num(d.yardstick_after_ms)} ms)")
    return [head, f"    {'corrected: ' if d.trusted else 'NOT corrected: '}{d.reason}"]


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(r)]
        out.append(("  " + "  ".join(cells)).rstrip())
    return out


def _clock_phrase(c: Clock, *, with_band: bool = True) -> str:
    bm, am = c.before.middle(), c.after.middle()
    head = f"{c.title} {fmt_num(bm)} -> {fmt_num(am)} ms"
    if bm is None or am is None:
        return head + " (no data)"
    if c.judged == "counts":
        if c.counts_before is not None and c.counts_after is not None:
            return head + f" (judged on counts: {c.counts_label} {c.counts_before} -> {c.counts_after})"
        return head + f" (no counts; judged against the {fmt_num(c.band_ms)} ms timing floor)"
    bits = []
    if c.delta_pct is not None:
        bits.append(f"{c.delta_pct:+.1f}%")
    else:
        bits.append(f"{fmt_num(c.delta_ms, sign=True)} ms")
    if with_band and c.band_ms is not None:
        bits.append(f"band ±{fmt_num(c.band_ms)} ms")
    if with_band and c.interval is not None:
        iv = c.interval
        share = (f", {iv.low_pct:+.1f}% to {iv.high_pct:+.1f}% of before"
                 if iv.low_pct is not None and iv.high_pct is not None else "")
        bits.append(f"95% interval {fmt_num(iv.low_ms, sign=True)} to {fmt_num(iv.high_ms, sign=True)} ms{share}")
    return head + " (" + ", ".join(bits) + ")"

