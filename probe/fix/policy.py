"""Which findings become candidates, which clock judges each, and what --write may take: pure over the models.

Split from probe/fix/engine.py (the I/O: copies, runs, writes) so probe/fix/rounds.py and the front ends read the policy
without importing the runner.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UsageError
from ..models.diagnosis import Diagnosis, Edit, Finding
from ..models.fix import CandidateFix, FixResult, HeldBack

# mechanisms whose fix acts on CUDA compiles only (judged on the --cuda-arch clock where it was measured)
CUDA_ONLY = {"CS-5", "CS-7", "CS-13"}
CACHE_FIX = {"CS-2"}  # a cache fix shows on the repeat run
BELOW_LINE = "under diagnose's line for a finding: measured, written only if proven"
# the cost bound of generate-and-test: a finding's own edits plus at most this many other realisations are measured
MAX_ALTERNATIVES = 2


def finding_keys(findings: Sequence[Finding]) -> list[str]:
    """`CS-n` per finding, `CS-n#k` (k from 1) where a mechanism has several."""
    count: dict[str, int] = {}
    for f in findings:
        count[f.mechanism] = count.get(f.mechanism, 0) + 1
    seen: dict[str, int] = {}
    keys = []
    for f in findings:
        seen[f.mechanism] = seen.get(f.mechanism, 0) + 1
        keys.append(f.mechanism if count[f.mechanism] == 1 else f"{f.mechanism}#{seen[f.mechanism]}")
    return keys


def _wanted(key: str, mech: str, wanted: Sequence[str]) -> bool:
    from ..models.diagnosis import normalize_mechanism

    for w in wanted:
        head, _, k = w.partition("#")
        if normalize_mechanism(head) == mech and (not k or key == f"{mech}#{k.strip()}"):
            return True
    return False


PER_CALL = frozenset({"WC-1"})  # costs paid at every call, judged on the run's steady clock, not its compile


def fix_clock(mechanisms: Sequence[str]) -> str:
    """The clock a fix is about: the repeat run for a cache fix, CUDA compile for a CUDA-only one, the run after its
    last load for a per-call cost, else what the user waits for at start-up (compile elapsed)."""
    if any(m in CACHE_FIX for m in mechanisms):
        return "warm_repeat"
    if mechanisms and all(m in PER_CALL for m in mechanisms):
        return "steady"  # a cost paid at every call: the run after its last load, where the calls repeat
    if mechanisms and all(m in CUDA_ONLY for m in mechanisms):
        return "cuda_compile"
    return "compile_elapsed"


def below_line(diagnosis: Diagnosis) -> list[Finding]:
    """The findings diagnose ruled out only because their estimate fell under the line, with an edit to measure: a
    mechanism already among the findings is left out (its key stays as diagnose printed it)."""
    fired = {f.mechanism for f in diagnosis.findings}
    return [r.candidate for r in diagnosis.ruled_out if r.candidate is not None and r.candidate.edits
            and r.candidate.mechanism not in fired]


def fix_findings(diagnosis: Diagnosis, with_below_line: bool = False) -> list[Finding]:
    """What `fix` measures: the findings, then (with_below_line) the edits diagnose judged too small to report,
    whose saving the measurement decides."""
    return [*diagnosis.findings, *(below_line(diagnosis) if with_below_line else [])]


def plan(diagnosis: Diagnosis, wanted: Sequence[str] | None = None, settings_arms: bool = False,
         with_below_line: bool = False) -> list[CandidateFix]:
    """One candidate per finding, in the diagnosis' order: "measured" for those to run (status set later), else
    "skipped" with the reason. `settings_arms` (diagnose --verify) also measures a finding that has only an
    experiment the hook applies (nothing a file could hold); `with_below_line` (fix) adds the ruled-out findings
    whose edit only the measurement can judge. Raises UsageError for a --finding naming none."""
    findings = fix_findings(diagnosis, with_below_line)
    keys = finding_keys(findings)
    if wanted:
        from ..models.diagnosis import normalize_mechanism

        for w in wanted:
            if not any(_wanted(k, f.mechanism, [w]) for k, f in zip(keys, findings, strict=True)):
                have = ", ".join(keys) or "none"
                raise UsageError(f"fix: --finding {normalize_mechanism(w.partition('#')[0])}: no such finding "
                                 f"(findings: {have})")
    out = []
    for key, f in zip(keys, findings, strict=True):
        c = CandidateFix(key=key, mechanisms=[f.mechanism], title=f.title, applicability=f.applicability,
                         review=f.review, edits=list(f.edits), estimated_saving_ms=f.estimated_saving_ms,
                         clock=fix_clock([f.mechanism]), below_line=f.below_line)
        if c.below_line:
            c.title += f" ({BELOW_LINE})"
        if wanted and not _wanted(key, f.mechanism, wanted):
            c.reason = "not selected (--finding)"
        elif f.edits:
            c.status = "measured"
        elif f.experiment and settings_arms:
            c.status, c.settings = "measured", dict(f.experiment)
        elif f.upstream is not None and f.upstream.edits and f.upstream.base_dir:
            c.status, c.upstream, c.diff = "measured", True, f.upstream.diff
            c.reason = "the change is the library's: measured on a patched scratch copy of it, never written"
        else:
            c.reason = no_edit_reason(f)
        same = next((o for o in out if o.status == "measured" and o.edits == c.edits
                     and (f.plan_with or o.mechanisms == c.mechanisms)), None)
        if c.status == "measured" and same is not None:  # one plan (composition.join_plans): measured once
            c.status = "skipped"
            c.reason = f"one plan with {same.key}: the same edits, measured and written as {same.key}"
            if f.plan_with:
                same.carries.append(key)
        out.append(c)
        if c.status == "measured" and not c.upstream and c.settings is None:
            out += alternatives_of(key, f)
    return out


def alternatives_of(key: str, f: Finding) -> list[CandidateFix]:
    """The finding's other realisations as candidates (`KEY/1`, `KEY/2`), at most MAX_ALTERNATIVES: measured beside
    its own edits on the same baseline, and only the one that saves most stays improved (`keep_best_realisation`)."""
    return [CandidateFix(key=f"{key}/{i}", mechanisms=[f.mechanism], title=f"{f.title} ({alt.label})",
                         applicability=alt.applicability, review=alt.review, edits=list(alt.edits),
                         estimated_saving_ms=f.estimated_saving_ms, clock=fix_clock([f.mechanism]),
                         below_line=f.below_line, alternative_of=key, status="measured")
            for i, alt in enumerate(f.alternatives[:MAX_ALTERNATIVES], 1) if alt.edits]


def keep_best_realisation(candidates: Sequence[CandidateFix]) -> None:
    """Of each finding's realisations that improved, only the one saving most stays improved; the others say which
    won, so a combination and --write take one realisation per finding."""
    groups: dict[str, list[CandidateFix]] = {}
    for c in candidates:
        groups.setdefault(c.alternative_of or c.key, []).append(c)
    for group in groups.values():
        won = [c for c in group if c.improved]
        if len(won) < 2:
            continue
        best = max(won, key=lambda c: c.saving_ms or 0.0)
        for c in won:
            if c is not best:
                c.improved = False
                c.reason = (f"another realisation of the same finding, {best.key}, saved more "
                            f"({best.saving_ms or 0:.0f} ms against {c.saving_ms or 0:.0f} ms); kept that one")


def no_edit_reason(f: Finding) -> str:
    """Why a finding has no edit to apply (`fix` skips it; `diagnose --diff` names it)."""
    if f.upstream is not None:
        return "the construct is a dependency's: an upstream report, nothing to apply"
    if f.experiment and f.applicability != "manual":
        return "its experiment has no edit that makes it permanent (see the finding's fix text)"
    rated = f.applicability or "the rule gives none"
    if f.review.startswith("no edit"):
        return f"{rated}: {f.review}"
    return f"no edit ({rated}){': ' + f.review if f.review else ''}"


def improved(c: CandidateFix) -> bool:
    """What --write may apply: IMPROVED (any other verdict, NO_EFFECT included, is not) with behaviour kept, and the
    clock the fix is about not pointing the other way (a verdict carried by another clock while this one rose is no
    proof of this fix)."""
    pointing = c.saving_ms is None or c.saving_ms > 0
    kept = c.behaviour is not None and c.behaviour.ok
    return c.status == "measured" and c.verdict == "IMPROVED" and kept and pointing


def pointing_right(candidates: Sequence[CandidateFix]) -> list[CandidateFix]:
    """Undecided fixes that kept behaviour and point the right way (a positive saving inside the band): small
    savings on a busy machine rarely decide alone; together, or with what they make possible on top, they are
    judged as a whole against the same baseline."""
    return [c for c in candidates if c.status == "measured" and c.edits and not c.upstream
            and c.verdict in ("INCONCLUSIVE", "NO_EFFECT") and c.behaviour_ok is True and (c.saving_ms or 0.0) > 0]


def tentative_base(result: FixResult, unsafe_fixes: bool = True) -> CandidateFix | None:
    """With no proven first-round fix, the undecided one a next round may stack on (the largest saving pointing
    the right way): a stack is measured against the original, so its proof covers both layers. CS-9's split of a
    per-call module saves little alone and leaves the one module CS-12's header switch pays on."""
    if _first_round(result, unsafe_fixes)[0]:
        return None
    combo = result.combination
    pool = [c for c in pointing_right(result.candidates) if writable(c, unsafe_fixes)]
    if combo is not None and pointing_right([combo]) and writable(combo, unsafe_fixes):
        pool.append(combo)
    return max(pool, key=lambda c: c.saving_ms or 0.0, default=None)


def to_write(result: FixResult, unsafe_fixes: bool = False, next_round: bool = True) -> tuple[list[str], list[Edit]]:
    """The keys and edits --write applies: the combination when it improved, else the best single fix, of those only
    what `writable` allows; with a next-round fix that saves more on top of it, both (see `layers_to_write`)."""
    layers = layers_to_write(result, unsafe_fixes) if next_round else None
    if layers is not None:
        keys, edit_layers = layers
        return keys, [e for layer in edit_layers for e in layer]
    return _first_round(result, unsafe_fixes)


def layers_to_write(result: FixResult, unsafe_fixes: bool = False) -> tuple[list[str], list[list[Edit]]] | None:
    """(keys, edit layers) when a writable next-round fix improved on top of the first round's, else None."""
    good = sorted((c for c in result.next_round if c.improved and c.edits and writable(c, unsafe_fixes)),
                  key=lambda c: -(c.saving_ms or 0.0))
    if not good:
        return None
    keys, first = _first_round(result, unsafe_fixes)
    base = tentative_base(result, unsafe_fixes) if not keys else None
    if base is not None:  # undecided alone; the stack on it decided against the original
        keys, first = base.key.split("+"), list(base.edits)
    top = good[0]
    if not keys or top.on_top_of is None or ("+".join(keys) != top.on_top_of and [top.on_top_of] != keys):
        return None
    return [*keys, top.key], [first, list(top.edits)]


def writable(c: CandidateFix, unsafe_fixes: bool = False) -> bool:
    """--write's policy (ruff's --unsafe-fixes, cargo fix's machine-applicable): `automatic` fixes are written;
    `review` ones (and unrated ones) only with --unsafe-fixes; `manual` never (it has no edit)."""
    return c.applicability == "automatic" or (unsafe_fixes and c.applicability in ("review", None))


def _first_round(result: FixResult, unsafe_fixes: bool = False) -> tuple[list[str], list[Edit]]:
    combo = result.combination
    best = sorted((c for c in result.candidates if c.improved and c.edits and writable(c, unsafe_fixes)),
                  key=lambda c: -(c.saving_ms or 0.0))
    if combo is not None and combo.improved and writable(combo, unsafe_fixes):
        keys = combo.key.split("+")
        undecided = [c for c in result.candidates if c.key in keys and not c.improved]
        # an undecided part about another clock (a per-call fix in a compile-judged combination) cannot be earned on
        # the combination's clock: its saving does not show there
        elsewhere = any(c.clock and c.clock != combo.clock for c in undecided)
        # a combination with an undecided part must earn that part: more saved than the best fix alone
        if not elsewhere and (not undecided or not best or (combo.saving_ms or 0.0) > (best[0].saving_ms or 0.0)):
            return keys, list(combo.edits)
    if not best:
        return [], []
    return [best[0].key], list(best[0].edits)


def realised(result: FixResult) -> list[str]:
    """The mechanisms the written keys carry out: each written candidate's own, then those of the findings whose plan
    it is (one plan, measured once: the edits written are theirs as much as its)."""
    every = {c.key: c for c in [*result.candidates, *([result.combination] if result.combination else []),
                                *result.next_round]}
    out: list[str] = []
    for key in result.applied:
        c = every.get(key)
        if c is None:
            continue
        out += c.mechanisms
        for k in c.carries:
            out += every[k].mechanisms if k in every else []
    return list(dict.fromkeys(out))


def held_back(result: FixResult, unsafe_fixes: bool = False) -> list[HeldBack]:
    """The proven fixes --write leaves out for their applicability, each with why and how to write it."""
    keys = set(to_write(result, unsafe_fixes)[0])
    how = "rerun with --unsafe-fixes to write it" if result.write else "--write writes it only with --unsafe-fixes"
    out = []
    for c in [*result.candidates, *([result.combination] if result.combination is not None else [])]:
        if not c.improved or not c.edits or writable(c, unsafe_fixes) or c.key in keys:
            continue
        rated = f"rated {c.applicability}" if c.applicability else "unrated"
        what = "together improved" if c is result.combination else "improved"
        reason = f"{c.key} {what} but is {rated}"
        if c.applicability != "manual":
            reason += f": {how}" + (f" (check: {c.review})" if c.review else "")
        out.append(HeldBack(key=c.key, applicability=c.applicability, reason=reason))
    return out


def summarize(result: FixResult) -> str:
    measured = [c for c in result.candidates if c.status == "measured"]
    good = [c.key + (" upstream" if c.upstream else "") for c in result.candidates if c.improved]
    if result.candidates:
        parts = [f"{len(measured)} of {len(result.candidates)} finding(s) had a fix to measure"]
    else:  # the reasons are in not_offered: say where, so "nothing" is never silent
        ruled = len({n.split(":", 1)[0] for n in result.not_offered})
        parts = ["no finding to fix" + (f" ({ruled} mechanism(s) ruled out, each with why: see not offered)"
                                         if ruled else "")]
    if measured:
        parts.append(f"{len(good)} improved with behaviour kept ({', '.join(good) or 'none'})")
    if result.combination is not None:
        parts.append(f"combination {result.combination.key}: {result.combination.verdict or result.combination.status}")
    if result.next_round:
        better = [c.key for c in result.next_round if c.improved]
        base = tentative_base(result)  # the one `fix` stacked on when nothing was proven (a dry run measures all)
        where = f"on the tree {base.key} leaves (undecided alone)" if base is not None else "on the kept tree"
        parts.append(f"{len(result.next_round)} found {where}, {len(better)} saving more on top "
                     f"({', '.join(better) or 'none'})")
    if result.held_back:
        parts.append(", ".join(h.key for h in result.held_back) + " held back: --write writes review-rated fixes "
                     "only with --unsafe-fixes")
    if result.write:
        parts.append(f"wrote {', '.join(result.written)}" if result.written else "wrote nothing")
    else:
        parts.append("dry run: nothing in the project was changed")
    return "; ".join(parts) + "."
