"""Fold trial results into a scorecard, render it as text or Markdown, and merge shard scorecards into one."""

from __future__ import annotations

from statistics import mean, pstdev

from ..probe.errors import UsageError
from .models import CaseResult, CaseSummary, Scorecard


def summarize(agent: str, results: list[CaseResult], trials: int, warp_version: str = "", shard: str = "",
              suite: str = "") -> Scorecard:
    by_case: dict[str, list[CaseResult]] = {}
    for r in results:
        by_case.setdefault(r.id, []).append(r)
    cases = []
    for cid, rs in by_case.items():
        rs.sort(key=lambda r: r.trial)
        scores = [r.score for r in rs]
        flags = sorted({f for r in rs for f in r.flags})
        cases.append(CaseSummary(
            id=cid, kind=rs[0].kind, score=round(mean(scores), 4), spread=round(pstdev(scores), 4),
            diagnosis=rs[0].diagnosis, fix=rs[0].fix, flags=flags, trials=rs, history=rs[0].history,
        ))
    return _total(Scorecard(agent=agent, trials=trials, cases=cases, warp_version=warp_version, shard=shard,
                            suite=suite))


def _total(card: Scorecard) -> Scorecard:
    if not card.cases:
        return card
    card.score = round(mean(c.score for c in card.cases), 4)
    per_trial = [mean(t.score for c in card.cases for t in c.trials if t.trial == i) for i in range(card.trials)
                 if any(t.trial == i for c in card.cases for t in c.trials)]
    card.trial_scores = [round(s, 4) for s in per_trial]
    card.spread = round(pstdev(per_trial), 4) if len(per_trial) > 1 else 0.0
    return card


def merge(cards: list[Scorecard]) -> Scorecard:
    """One scorecard from shard scorecards of the same agent and trial count; a case in two shards is an error."""
    if not cards:
        raise UsageError("eval merge: no scorecards given")
    first = cards[0]
    seen: set[str] = set()
    out = Scorecard(agent=first.agent, trials=first.trials, warp_version=first.warp_version, suite=first.suite)
    for card in cards:
        if card.suite != first.suite:
            raise UsageError(f"eval merge: scorecards of different suites ({card.suite or 'fixtures'!r} vs "
                             f"{first.suite or 'fixtures'!r})")
        if card.agent != first.agent or card.trials != first.trials:
            raise UsageError(f"eval merge: scorecards disagree (agent {card.agent!r} x{card.trials} vs "
                             f"{first.agent!r} x{first.trials})")
        for c in card.cases:
            if c.id in seen:
                raise UsageError(f"eval merge: case {c.id} appears in more than one scorecard")
            seen.add(c.id)
            out.cases.append(c)
    out.cases.sort(key=lambda c: c.id)
    return _total(out)


def _fix_cell(c: CaseSummary) -> tuple[str, str, str]:
    if c.fix is None:
        return "-", "-", "-"
    credit = "n/j" if c.fix.credit is None else f"{c.fix.credit:.2f}"
    saving = "" if c.fix.saving_pct is None else f" {c.fix.saving_pct:+.1f}%"
    return (c.fix.verdict or "unchanged") + saving, "yes" if c.fix.behaviour_ok else "NO", credit


def render_markdown(card: Scorecard) -> str:
    spread = f" ± {card.spread:.3f} over {card.trials} trials" if card.trials > 1 else ""
    lines = [
        f"**{card.agent}**: score {card.score:.3f}{spread}" + (f" (warp {card.warp_version})" if card.warp_version
                                                               else ""),
        "",
        "| case | kind | score | mech P/R | loc P/R | verdict | behaviour | fix credit | flags |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in card.cases:
        d = c.diagnosis
        verdict, behaviour, credit = _fix_cell(c)
        score = f"{c.score:.2f}" + (f" ± {c.spread:.2f}" if card.trials > 1 else "")
        lines.append(
            f"| {c.id} | {c.kind} | {score} | {d.precision:.2f}/{d.recall:.2f} | "
            f"{d.location_precision:.2f}/{d.location_recall:.2f} | {verdict} | {behaviour} | {credit} | "
            f"{', '.join(c.flags) or ''} |"
        )
    lines += _history_rows(card)
    lines.append("")
    lines.append("n/j: not judged (the reference fix itself is not measurably faster here), the diagnosis alone "
                 "scores the case.")
    return "\n".join(lines) + "\n"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f}%"


def _judged(how: str | None) -> str:
    return f" ({how})" if how else ""


def _history_rows(card: Scorecard) -> list[str]:
    """Each history case and role: ownership and the upstream report (the user role; a maintainer is upstream, so
    "-" there), the saving against the maintainers'."""
    rows = [c for c in card.cases if c.history is not None]
    if not rows:
        return []
    out = ["", "| case | role | releases | owned by the library | upstream mech P/R | upstream lines P/R | clock | "
           "saving | maintainers' saving | fraction | program runs | minutes (agent + judge) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in rows:
        h = c.history
        assert h is not None
        u = h.upstream
        frac = "-" if h.saving_fraction is None else f"{h.saving_fraction:.2f}"
        ref = _pct(h.reference_saving_pct) + _judged(h.reference_clock_judged)
        runs = "-" if h.program_runs is None else str(h.program_runs)
        user = h.role == "user"
        owned = ("yes" if h.owned_by_dependency else "no") if user else "-"
        mech = f"{u.precision:.2f}/{u.recall:.2f}" if user else "-"
        lines = f"{u.location_precision:.2f}/{u.location_recall:.2f}" if user else "-"
        out.append(f"| {c.id} | {h.role} | {h.before} -> {h.after} | {owned} | {mech} | {lines} | "
                   f"{h.clock} | {_pct(h.saving_pct)}{_judged(h.clock_judged)} | {ref} | {frac} | {runs} | "
                   f"{h.agent_minutes:.1f} + {h.judge_minutes:.1f} |")
    return out


def render_text(card: Scorecard) -> str:
    spread = f" ± {card.spread:.3f} over {card.trials} trials" if card.trials > 1 else ""
    lines = [f"warp-compile eval · agent {card.agent} · score {card.score:.3f}{spread}"]
    for c in card.cases:
        d = c.diagnosis
        verdict, behaviour, credit = _fix_cell(c)
        extra = [f"mech P/R {d.precision:.2f}/{d.recall:.2f}", f"loc P/R {d.location_precision:.2f}/"
                 f"{d.location_recall:.2f}", f"fix {verdict} behaviour {behaviour} credit {credit}"]
        if d.missed:
            extra.append("missed " + ",".join(d.missed))
        if d.false_positives:
            extra.append("false " + ",".join(d.false_positives))
        if d.error:
            extra.append(d.error)
        if c.flags:
            extra.append("FLAGS " + ",".join(c.flags))
        lines.append(f"  {c.score:.2f}  {c.id:<20} {' · '.join(extra)}")
        if c.fix is not None and c.fix.behaviour:
            lines.append(f"        {c.fix.behaviour}")
        h = c.history
        if h is not None:
            frac = "-" if h.saving_fraction is None else f"{h.saving_fraction:.2f}"
            who = (f"owned by {h.library}: {'yes' if h.owned_by_dependency else 'no'} · upstream report "
                   f"{h.upstream.score:.2f}" if h.role == "user" else "maintainer role (the release's source)")
            lines.append(f"        {h.before} -> {h.after}: {who} · "
                         f"{h.clock} saving {_pct(h.saving_pct)} vs the maintainers' {_pct(h.reference_saving_pct)} "
                         f"(fraction {frac}) · program runs {h.program_runs if h.program_runs is not None else '-'}"
                         f" · {h.agent_minutes + h.judge_minutes:.1f} min")
    return "\n".join(lines)
