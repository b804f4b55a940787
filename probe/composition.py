"""Findings priced in the state the higher-ranked fixes leave.

Each rule prices its finding against the run as measured. Some fixes change what another finding is worth: once the
kernel cache is kept (CS-2), the CPU precompiled header is built once and reused by every later rebuild, so turning
it off (CS-12) stops paying and starts costing each of those rebuilds. Such a finding is not dropped silently: it
moves to the ruled-out list with the state it was priced in.
"""

from __future__ import annotations

from .models.diagnosis import Finding, RuledOut

PRICED = "priced in the state"  # how a priced-out finding's ruled-out signal reads (a next round keeps it out too)

# (the fix that changes the state, the finding it prices out, why)
_PRICED_OUT = (
    (
        "CS-2",
        "CS-12",
        f"{PRICED} CS-2's fix leaves: with the kernel cache kept, the precompiled header is built once and "
        "reused by every later rebuild, so turning it off would slow each of those instead of saving a build per run",
    ),
)


# (the fix that merges modules, the finding priced on those modules as they are, why): not priced out for good, so
# a next round on the tree the merge leaves judges the header again, on the merged module
_DEFERRED = (
    (
        "CS-4",
        "CS-12",
        "deferred to the tree CS-4's merge leaves: the header's trade is priced on these modules as separate, which "
        "that merge changes; fix's next round judges it again on the merged module",
    ),
)


def compose(findings: list[Finding]) -> tuple[list[Finding], list[RuledOut]]:
    """(the findings still worth offering, the ones a higher-ranked fix prices out or defers, with why)."""
    mechs = {f.mechanism for f in findings}
    kept: list[Finding] = []
    out: list[RuledOut] = []
    for f in findings:
        why = next((w for first, then, w in _PRICED_OUT if f.mechanism == then and first in mechs), None)
        why = why or next((w for first, then, w in _DEFERRED if f.mechanism == then and set(f.modules) & {
            m for g in findings if g.mechanism == first and g.edits for m in g.modules}), None)
        if why is None:
            kept.append(f)
        else:
            out.append(RuledOut(mechanism=f.mechanism, signal=f"{f.title}: {why}"))
    return kept, out


def _touches(f: Finding, g: Finding) -> bool:
    """`g`'s edits replace or remove a line `f` points at: the construct `f` is about is part of `g`'s plan."""
    for loc in f.locations:
        for e in g.edits:
            if e.create or e.end_line < e.start_line:
                continue  # an insertion points at nothing
            # the line an edit replaces, or the `def` right under a decorator the edit replaces
            if e.file == loc.file and e.start_line <= loc.line <= e.end_line + (1 if e.old.lstrip().startswith("@")
                                                                                else 0):
                return True
    return False


def join_plans(findings: list[Finding]) -> list[Finding]:
    """Findings that are traps for each other become one plan: a finding with no edit of its own whose line another
    finding's plan changes (CS-3's inert option call that CS-9's plan moves before the shared module's first load)
    carries that plan, said so, instead of a refusal. Its applicability is the plan's; `fix` measures the plan once."""
    for f in findings:
        if f.edits or f.upstream is not None:
            continue
        g = next((g for g in findings if g is not f and g.edits and _touches(f, g)), None)
        if g is None:
            continue
        f.edits = list(g.edits)
        f.applicability = g.applicability
        f.plan_with = g.mechanism
        was = f" (on its own: {f.review})" if f.review else ""
        f.review = f"one plan with {g.mechanism}, which changes this line: {g.review or 'meaning kept'}{was}"
        f.fix = f"{f.fix} {g.mechanism}'s plan carries this out with its own edits (one plan, measured once)."
    return findings
