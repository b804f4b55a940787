"""A Diagnosis as text: findings ranked by saving (where, fix, evidence), why modules loaded again, the rest.

Also the one-line form of a hash change (`module m rebuilt (a -> b) at file:line, 120 ms: why`), which the
diagnosis prints in its reload log.
"""

from __future__ import annotations

import ast
import textwrap

from ..fmt import fmt_ms, pch_count, plural, warp_text
from ..models.clocks import CLOCK_TITLES
from ..models.diagnosis import Diagnosis, Finding, HashChange, MeasuredSaving

# ---------------------------------------------------------------------------------------------- hash changes


def _verb(c: HashChange) -> str:
    kinds = {x.kind for x in c.causes}
    if c.status.startswith("error"):
        return "failed to load again"
    if kinds == {"different_device"}:
        return f"built for {c.device}" if c.status == "compiled" else f"loaded for {c.device}"
    if c.status == "cached":
        return "reloaded from cache"
    return "rebuilt"


def _h7(h: str) -> str:
    return h[:7]


def render_change(c: HashChange) -> str:
    """One torch-style line: module, old -> new hash, where the load came from, its cost, and the reasons."""
    hashes = f"({_h7(c.from_hash)} -> {_h7(c.to_hash)})" if c.from_hash != c.to_hash else f"({_h7(c.to_hash)})"
    at = f" at {c.trigger}" if c.trigger else ""
    why = "; ".join(x.detail for x in c.causes) or "no recorded cause"
    return f"module {c.module} {_verb(c)} {hashes}{at}, {fmt_ms(c.cost_ms)}: {why}"


def render_changes(changes: list[HashChange]) -> str:
    if not changes:
        return "no module loaded twice: every module family built once per device\n"
    return "\n".join(render_change(c) for c in changes) + "\n"


# ---------------------------------------------------------------------------------------------- diagnosis


def _is_code(line: str) -> bool:
    """A line of a fix that is Python to paste (kept verbatim), not prose to wrap."""
    stripped = line.strip()
    if not stripped:
        return False
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return False
    body = tree.body
    return bool(body) and not (
        len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, (ast.Name, ast.Constant))
    )


def _wrap(text: str, indent: str, first: str = "", width: int = 110) -> list[str]:
    """Wrap prose; keep lines of code (a fix's snippet after a newline) whole, indented under the prose."""
    hang = indent + " " * len(first)
    out: list[str] = []
    for n, part in enumerate(text.split("\n")):
        lead = indent + first if n == 0 else hang
        if n > 0 and _is_code(part):
            out.append(hang + "    " + part.rstrip())
            continue
        out += textwrap.wrap(part, width=width, initial_indent=lead, subsequent_indent=hang, break_on_hyphens=False)
    return out or [indent + first]


def _interval(m: MeasuredSaving) -> str:
    """The measured saving's band: its 95% interval, or why there is none."""
    if m.saving_low_ms is not None and m.saving_high_ms is not None:
        return f"95% interval {fmt_ms(m.saving_low_ms)} to {fmt_ms(m.saving_high_ms)}"
    return "one sample a side: no interval" if m.pairs <= 1 else f"noise band ±{fmt_ms(m.band_ms)}"


def rebuild_line(d: Diagnosis) -> str:
    """What the settings rebuilds cost and what they left out, in one sentence ("" when none ran)."""
    r = d.rebuild
    if r is None:
        return ""
    steps = ", ".join(f"{name} ({len(s.entries)} module(s))" for name, s in r.steps.items()) or "nothing to rebuild"
    text = (f"Rebuilt at exit to price CS-10 / CS-12 on the CPU clock: {steps}; {r.builds} build(s), "
            f"{fmt_ms(r.cpu_ms)} of CPU time, {fmt_ms(r.ms)} wall (limit {r.limit_s:g} s, outside the measured clocks)")
    if r.skipped:
        text += "; skipped: " + "; ".join(
            f"{s.module} ({s.step}: {s.why}, ~{fmt_ms(s.predicted_ms)})" for s in r.skipped)
    if r.errors:
        text += "; errors: " + "; ".join(r.errors)
    return text + "."


def _finding_lines(i: int, f: Finding) -> list[str]:
    head = f"{i}. {f.mechanism}  {f.title}"
    out = [head, f"   {f.severity} severity, {f.confidence} confidence"]
    if f.estimated_saving_ms is not None:
        clock = f" on {clock_title(f.saving_clock or 'compile_elapsed')}"
        if f.estimated_saving_pct is not None:
            clock += f", {f.estimated_saving_pct:.1f}% of it"
        out += _wrap(f"~{fmt_ms(f.estimated_saving_ms)}{clock} ({f.saving_basis})", "   ", "saving   ")
    elif f.saving_basis:
        out += _wrap(f.saving_basis, "   ", "saving   ")
    m = f.measured
    if m is not None:
        share = f"{m.saving_pct:.1f}% of the before arm; " if m.saving_pct is not None else ""
        got = "no timing" if m.saving_ms is None else f"{fmt_ms(m.saving_ms)} ({share}{_interval(m)})"
        tried = ", ".join(f"{k}={v!r}" for k, v in m.settings.items()) if not f.edits else "its edit on a copy"
        if m.verdict and m.verdict != "IMPROVED":
            got = f"no effect ({got})"
        stop = f" ({m.stopped_because})" if m.stopped_because else ""
        out += _wrap(f"{got} on {clock_title(m.clock)} with {tried}: {m.verdict} over {m.pairs} pairs{stop}; "
                     f"{m.agreement}", "   ", "measured ")
    elif f.experiment:
        tried = " ".join(f"--set {k}={v!r}" for k, v in f.experiment.items())
        out += _wrap(f"`warp-compile try {tried} -- CMD` (or diagnose --verify)", "   ", "measure  ")
    if f.modules:
        out += _wrap(", ".join(f.modules), "   ", "modules  ")
    for loc in f.locations:
        note = f"  {loc.note}" if loc.note else ""
        owner = f"  [installed: {loc.distribution or 'a dependency'}]" if loc.owner == "dependency" else ""
        out.append(f"   where    {loc.file}:{loc.line}{owner}{note}")
    out += _wrap(f.fix, "   ", "fix      ")
    if f.applicability is not None:
        files = sorted({e.file for e in f.edits})
        edits = f" ({len(f.edits)} edit{'s' if len(f.edits) != 1 else ''} in {', '.join(files)})" if files else ""
        out += _wrap(f"{f.applicability}{edits}{': ' + f.review if f.review else ''}", "   ", "applies  ")
    if f.alternatives:
        ways = "; ".join(a.label for a in f.alternatives)
        out += _wrap(f"{len(f.alternatives)} other way(s) to carry it out ({ways}): `fix` measures them beside it "
                     "and keeps the one that saves most", "   ", "or       ")
    up = f.upstream
    if up is not None:
        est = f" ~{fmt_ms(up.estimated_ms)}" if up.estimated_ms is not None else ""
        band = (f" (band ±{fmt_ms(up.band_ms)})" if up.band_ms is not None
                else " (one sample: no band yet)" if up.estimated_ms is not None and up.samples <= 1 else "")
        who = up.distribution or "the library"
        out += _wrap(f"for {who}'s maintainers{est}{band}: {up.change}", "   ", "upstream ")
        out += ["            " + ln for ln in up.diff.rstrip("\n").splitlines()]
    for e in f.evidence:
        out += _wrap(e.fact, "   ", "because  " if e is f.evidence[0] else "         ")
    for c in f.caveats:
        out += _wrap(c, "   ", "caveat   ")
    if f.excerpt:
        out += _wrap(f.excerpt, "   ", "why      ")
    return out


def render_text(d: Diagnosis) -> str:
    """The diagnosis for people: findings ranked by saving (location, fix, evidence), the reload log, then the rest."""
    lines = [f"warp-compile diagnose: {' '.join(d.command)}"]
    t = d.totals
    facts = [warp_text(d.warp_version), plural(d.samples, "sample")]
    if t.cold_module_ms is not None:
        facts.append(f"cold module work {fmt_ms(t.cold_module_ms)} ({t.compiled} compiled of {t.builds} builds)")
    if t.pch_ms:
        several = f" ({pch_count(t.pch_builds, t.pch_threads)})" if t.pch_builds > 1 else ""
        facts.append(f"precompiled header {fmt_ms(t.pch_ms)}{several}")
    if t.warm_module_ms is not None:
        facts.append(f"warm module work {fmt_ms(t.warm_module_ms)}")
    lines.append("  " + " · ".join(facts))
    if d.source_root:
        lines.append(f"  sources: {d.source_root}")
    lines.append("")
    lines += _wrap(d.summary, "")
    if d.findings:
        lines += ["", "Findings, largest estimated saving first:", ""]
        for i, f in enumerate(d.findings, 1):
            lines += _finding_lines(i, f)
            lines.append("")
    if d.withdrawn:
        lines += ([""] if lines[-1] else []) + ["Withdrawn by --verify (the fix failed on a copy):"]
        for w in d.withdrawn:
            lines += _wrap(w.reason, "  ", f"{w.finding.mechanism:<6} {w.finding.title}: ")
    if d.rebuild is not None and (d.rebuild.steps or d.rebuild.skipped or d.rebuild.errors):
        lines += ([""] if lines[-1] else []) + _wrap(rebuild_line(d), "")
    if d.verification is not None:
        v = d.verification
        reused = ", the diagnosis run reused as the first" if v.reused_diagnosis_sample else ""
        lines += ([""] if lines[-1] else []) + [
            f"Verified with {v.program_runs} program run(s) ({v.baseline_samples} baseline sample(s){reused}), "
            f"{v.wall_s:.1f} s"
        ]
    if d.hash_changes:
        lines += ([""] if lines[-1] else []) + ["Why modules loaded again (diff from the closest earlier load):"]
        for c in d.hash_changes:
            lines += _wrap(render_change(c), "  ")
    if d.ruled_out:
        lines += ["", "Ruled out:"]
        lines += [ln for r in d.ruled_out for ln in _wrap(r.signal, "  ", f"{r.mechanism:<6} ")]
    if d.not_reached:
        lines += ["", "Not reached:"]
        lines += [ln for r in d.not_reached for ln in _wrap(r.reason, "  ", f"{r.mechanism:<6} ")]
    if d.warnings:
        lines += ["", "Warnings:"]
        lines += [ln for w in d.warnings for ln in _wrap(w.message, "  ", "- ")]
    return "\n".join(lines).rstrip() + "\n"


def clock_title(name: str) -> str:
    """A clock as every line names it ("compile CPU"), so an estimate and its measurement read alike."""
    return CLOCK_TITLES.get(name, name.replace("_", " "))  # type: ignore[call-overload]
