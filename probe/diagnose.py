"""`diagnose`: from a measurement (and the project's sources) to ranked findings, each with its line and its fix.

The shape follows the prior art: a recompile is explained as a diff from the closest earlier load (`hashdiff`), and
each mechanism is a pure rule over facts (`rules/`), never over a project's name. This module only wires them:
it builds the RuleContext, runs every registered rule (a missing or crashing rule costs its mechanism, not the
report), fills knowledge excerpts, ranks by what a fix would save, and says plainly what was ruled out, what could
not be reached on this machine, and, when nothing fires, how big the remaining builds are, because "no churn" is
not the same as "nothing to gain".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from .composition import compose, join_plans
from .dependency_advice import address_to_maintainers
from .errors import UsageError
from .fix.checks import parse_problem
from .fix.edits import EditConflict, SourceView, owned_path, patched
from .fix.settings import add_settings_edits
from .fmt import fmt_ms
from .hashdiff import explain_changes
from .models import Report, Warn, WarningCode, warn
from .models.diagnosis import Diagnosis, Finding, NotReached, RuleResult, Totals
from .models.scan import ScanFacts
from .pricing import as_shares, price
from .rules import load_rules
from .rules.context import RuleContext, dedupe_locations, plan_removals
from .rules.helpers import Claim

Progress = Callable[[str], None]

MECHANISMS = [f"CS-{i}" for i in range(1, 14)] + ["WC-1"]  # WC-n: this project's own (knowledge/WC-n.md)
_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2, "info": 3}


def _mech_number(mech: str) -> int:
    """A rank for ties: CS-n by number, then this project's WC-n after all of them, anything else last."""
    from .knowledge import order

    family, number = order(mech)
    return family * 100 + number


DEPENDENCY_RANK = 0.75  # a fix the project cannot make in its own code yields to a project fix of >= 75% its size


def _rank_key(f: Finding) -> tuple:
    saving = f.estimated_saving_ms if f.estimated_saving_ms is not None else -1.0
    if f.owner == "dependency" and saving > 0:
        saving *= DEPENDENCY_RANK
    return (-saving, _SEVERITY_RANK.get(f.severity, 9), _mech_number(f.mechanism))


def _fill_excerpt(f: Finding) -> None:
    if f.excerpt:
        return
    try:
        from .knowledge import excerpt

        f.excerpt = excerpt(f.mechanism)
    except Exception:  # knowledge is an aid; a missing file must not cost the finding
        f.excerpt = ""


def _totals(report: Report) -> Totals:
    return Totals(
        builds=len(report.builds),
        compiled=sum(1 for b in report.builds if b.status == "compiled"),
        identities=report.identities,
        modules=report.modules,
        cold_module_ms=report.cold_module_ms.median,
        pch_ms=report.pch_ms.median,
        pch_builds=len(report.pch),
        pch_threads=len({p.thread for p in report.pch}),
        compile_elapsed_ms=report.compile_elapsed_ms.median,
        warm_module_ms=report.warm_module_ms.median,
    )


def _compiled_nothing(report: Report) -> bool:
    if report.builds or report.warm_builds:
        return False
    return not any(s.cold.compiled or s.cold.cached or s.cold.errors for s in report.sample_results)


def _ok_samples(report: Report) -> int:
    return max(0, report.samples - report.failed_samples)


def arbitrate(ctx: RuleContext, modules: list[ModuleType] | None = None, warnings: list[Warn] | None = None) -> None:
    """Give each rebuild event to one mechanism (the highest-priority rule that claims it sizes it), and decide once,
    for all owned events together, which build each one's fix removes (`context.plan_removals`).

    Rules declare the events they explain (`claims(ctx)`, optional); no rule looks at another. A rule that fails to
    declare loses its claims, not the diagnosis. Ties go to the lower mechanism number.
    """
    if modules is None:
        modules = load_rules()[0]
    best: dict[int, Claim] = {}
    for mod in modules:
        declare = getattr(mod, "claims", None)
        if not callable(declare):
            continue
        try:
            claims = list(declare(ctx))
        except Exception as exc:  # one broken declaration costs its claims only
            if warnings is not None:
                rule = mod.__name__.rsplit(".", 1)[-1]
                warnings.append(warn(WarningCode.RULE_CLAIMS_FAILED, rule=rule, error=str(exc)))
            continue
        for c in claims:
            cur = best.get(c.event)
            if cur is None or (c.priority, -_mech_number(c.mechanism)) > (cur.priority, -_mech_number(cur.mechanism)):
                best[c.event] = c
    ctx.owners = {event: c.mechanism for event, c in best.items()}
    ctx.removals = plan_removals(ctx, [ch for ch in ctx.changes if ch.to_seq in ctx.owners])


SLOW_RULE_S = 1.0  # a rule that takes longer says so in the progress lines


def _run_rules(
    ctx: RuleContext, warnings: list[Warn], progress: Progress | None = None
) -> tuple[list[RuleResult], set[str]]:
    modules, skipped = load_rules()
    arbitrate(ctx, modules, warnings)
    results: list[RuleResult] = []
    covered: set[str] = set()
    for name, why in skipped.items():
        if why != "not installed":
            warnings.append(warn(WarningCode.RULE_SKIPPED, rule=name, why=why))
    for mod in modules:
        mech = str(mod.MECHANISM)
        covered.add(mech)
        t0 = time.monotonic()
        if progress is not None:
            progress(f"rules: {mech} ({mod.__name__.rsplit('.', 1)[-1]})")
        try:
            res = mod.evaluate(ctx)
            if not isinstance(res, RuleResult):
                raise TypeError(f"returned {type(res).__name__}, not RuleResult")
        except Exception as exc:  # one broken rule costs one mechanism, never the diagnosis
            rule, error = mod.__name__.rsplit(".", 1)[-1], f"{type(exc).__name__}: {exc}"
            warnings.append(warn(WarningCode.RULE_FAILED, rule=rule, mechanism=mech, error=error))
            results.append(
                RuleResult(not_reached=[NotReached(mechanism=mech, reason=f"the rule failed ({type(exc).__name__})")])
            )
            continue
        for f in res.findings:
            f.locations = dedupe_locations(f.locations)  # one file:line once per finding, whoever built the list
        results.append(res)
        took = time.monotonic() - t0
        if progress is not None and took >= SLOW_RULE_S:
            progress(f"rules: {mech} took {took:.1f} s ({len(res.findings)} finding(s))")
    return results, covered


def _no_finding_summary(d: Diagnosis, report: Report) -> str:
    compiled = [b for b in report.builds if b.status == "compiled"]
    parts = ["No compile-time mechanism fired"]
    if d.hash_changes:
        parts[0] += f" ({len(d.hash_changes)} module reload(s) matched no rule; see the hash changes)"
    else:
        parts[0] += (
            f": every module built once per device ({len(report.builds)} build(s) of {report.modules} module(s))"
        )
    if d.ruled_out:
        parts.append("ruled out " + ", ".join(sorted({r.mechanism for r in d.ruled_out}, key=_mech_number)))
    size = "what remains is the size of the builds themselves"
    if compiled:
        big = max(compiled, key=lambda b: b.ms)
        total = sum(b.ms for b in report.builds)
        size += f": largest module {big.module} {fmt_ms(big.ms)} of {fmt_ms(total)} cold module work"
    if report.pch_ms.median:
        size += f", precompiled header {fmt_ms(report.pch_ms.median)} (paid once per process)"
    parts.append(size)
    return "; ".join(parts) + "."


def _finding_summary(d: Diagnosis) -> str:
    n = len(d.findings)
    items = []
    for f in d.findings[:4]:
        s = f"{f.mechanism} {f.title}"
        if f.estimated_saving_ms:
            s += f" (~{fmt_ms(f.estimated_saving_ms)})"
        items.append(s)
    more = f"; and {n - 4} more" if n > 4 else ""
    total = d.totals.cold_module_ms
    base = f" Cold module work {fmt_ms(total)}" if total is not None else ""
    if base and d.totals.pch_ms:
        base += f" plus {fmt_ms(d.totals.pch_ms)} precompiled header"
    if base:
        base += f" (median of {d.samples} sample{'s' if d.samples != 1 else ''})."
    return f"{n} finding{'s' if n != 1 else ''}: " + "; ".join(items) + more + "." + base


def diagnose(
    report: Report,
    scan: ScanFacts | None,
    root: str | Path | None = None,
    sources: SourceView | None = None,
    progress: Progress | None = None,
) -> Diagnosis:
    """Pure: the measured Report and the scan in, the Diagnosis out. `root` makes locations relative to it;
    `sources` lets rules quote the exact lines their edits replace (none: findings carry no edits)."""
    base = Path(root) if root is not None else Path(scan.root) if scan is not None and scan.root else None
    if base is None and report.cwd:
        base = Path(report.cwd)
    d = Diagnosis(
        command=list(report.command),
        cwd=report.cwd,
        source_root=str(base) if scan is not None and base is not None else None,
        warp_version=report.warp_version,
        samples=_ok_samples(report),
        totals=_totals(report),
        warnings=list(report.warnings),
    )
    if report.all_failed:
        why, _ = report.last_failure()
        d.summary = f"Every sample failed ({why}): nothing to diagnose."
        return d
    if _compiled_nothing(report):
        d.compiled_nothing = True
        why = "" if report.hook.mode != "none" else " (Warp was not imported)"
        d.summary = f"no Warp compilation observed: the command built and loaded no Warp module{why}."
        return d
    if scan is None:
        d.warnings.append(warn(WarningCode.NO_SOURCE_SCAN))
    ctx = RuleContext(report=report, scan=scan, root=base, sources=sources or SourceView())
    ctx.changes = explain_changes(report, rel=ctx.rel)
    d.hash_changes = ctx.changes
    results, covered = _run_rules(ctx, d.warnings, progress)
    findings: list[Finding] = [f for r in results for f in r.findings]
    for f in findings:
        _fill_excerpt(f)
        _stamp_owners(f, report, base)
        address_to_maintainers(f)
        _guard_edits(f)
    add_settings_edits(findings, ctx.sources, report.entry)
    for f in findings:
        _guard_parse(f, ctx.sources)
    findings, priced_out = compose(findings)
    join_plans(findings)
    price(findings, report)  # on the CPU clock: rebuild-measured where the run rebuilt, else the builds' CPU share
    as_shares(findings, report)
    d.rebuild = report.rebuild
    d.findings = sorted(findings, key=_rank_key)
    d.ruled_out += priced_out
    fired = {f.mechanism for f in findings}
    seen: set[tuple[str, str]] = set()
    for r in results:
        for ro in r.ruled_out:
            if ro.mechanism not in fired and (ro.mechanism, ro.signal) not in seen:
                seen.add((ro.mechanism, ro.signal))
                d.ruled_out.append(ro)
        for nr in r.not_reached:
            if nr.mechanism not in fired and (nr.mechanism, nr.reason) not in seen:
                seen.add((nr.mechanism, nr.reason))
                d.not_reached.append(nr)
    accounted = fired | {r.mechanism for r in d.ruled_out} | {n.mechanism for n in d.not_reached}
    for mech in MECHANISMS:
        if mech not in covered and mech not in accounted:
            d.not_reached.append(NotReached(mechanism=mech, reason="no rule for this mechanism is installed"))
    d.ruled_out.sort(key=lambda r: _mech_number(r.mechanism))
    d.not_reached.sort(key=lambda r: _mech_number(r.mechanism))
    d.summary = _finding_summary(d) if d.findings else _no_finding_summary(d, report)
    caution = _not_cold(report)
    if caution:
        d.summary = caution + " " + d.summary
    return d


def _guard_edits(f: Finding) -> None:
    """Last line of defence: no edit leaves the diagnosis for a file the project does not own."""
    kept = [e for e in f.edits if owned_path(e.file)]
    if len(kept) != len(f.edits):
        f.edits = kept
        if not kept:
            f.applicability = "manual"
            f.review = f.review or "the place to change is not a file of the project"


def _guard_parse(f: Finding, sources: SourceView) -> None:
    """A finding shows only edits it could apply: edits whose result no longer parses (a defect of the rule that built
    them, which `fix` would refuse as invalid) are withdrawn, and the finding says so."""
    originals: dict[str, bytes] = {}
    edited: dict[str, str] = {}
    for file in dict.fromkeys(e.file for e in f.edits):
        lines = sources.lines(file) if file.endswith(".py") else None
        if lines is None:
            continue  # a new file, or not Python: the run judges it
        try:
            edited[file] = "".join(patched(lines, [e for e in f.edits if e.file == file]))
        except EditConflict:
            return  # conflicts are the composer's and fix's to report
        originals[file] = "".join(lines).encode()
    why = parse_problem(originals, edited, f.edits) if edited else None
    if why:
        f.edits, f.applicability = [], "manual"
        why = why.replace(", so the candidate was not run", ": the edit is withdrawn (a defect to report)")
        f.review = f"{f.review}; {why}" if f.review else why


def _stamp_owners(f: Finding, report: Report, base: Path | None) -> None:
    """Each location says who owns it (resolved when measuring, from the app interpreter's installed metadata);
    the finding is the project's when any of its places is, a dependency's when all of them are."""
    from .ownership import owner_of

    root = str(base) if base is not None else None
    kinds = set()
    for loc in f.locations:
        hit = owner_of(loc.file, report.owners, root)
        if hit is not None:
            loc.owner, loc.distribution = hit.owner, hit.distribution if hit.owner == "dependency" else None
            kinds.add(hit.owner)
    if kinds:
        f.owner = "mixed" if len(kinds) > 1 else kinds.pop()  # type: ignore[assignment]


def _not_cold(report: Report) -> str:
    """The app's own kernel_cache_dir outside the sandbox: its "cold" run may have met a filled cache.

    Said first, because every ruled-out verdict that rests on what compiled is then unreliable.
    """
    if not report.cache.outside_sandbox:  # a cache dir under the sandbox's own temp root is fresh per sample
        return ""
    where = report.cache.kernel_cache_dir or "a directory of its own"
    if report.builds and not any(b.status == "compiled" for b in report.builds):
        return (
            f"NOT A COLD MEASUREMENT: the app sets kernel_cache_dir to {where}, outside the sandbox, and that cache "
            f"already held all {len(report.builds)} module build(s), so nothing compiled and no build could be "
            "judged; empty that directory (or let the app use the default cache) and measure again."
        )
    return (
        f"Caution: the app sets kernel_cache_dir to {where}, outside the sandbox, so its cold runs may have reused "
        "modules an earlier run left there."
    )


def diagnose_command(
    command: list[str],
    cwd: str | Path,
    samples: int = 1,
    source: str | Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    timeout_s: float = 900.0,
    label: str = "",
    cuda_arch: int | None = None,
    rebuild_limit_s: float | None = None,
) -> tuple[Report, Diagnosis]:
    """Measure `command`, scan `source` (default: `cwd`), diagnose. The source is checked before anything runs.

    With `rebuild_limit_s` (CPU seconds; the CLI and the MCP server pass probe/pricing.DEFAULT_LIMIT_S unless told
    otherwise) the first cold run rebuilds its modules at exit with the settings CS-10 and CS-12 would change, to
    price those findings; None or 0: no rebuilds (the library default, so callers that only need the findings,
    the evals among them, pay nothing for it)."""
    from .measure import measure
    from .pricing import rebuild_env

    if source is not None and not Path(source).expanduser().is_dir():
        raise UsageError(f"source directory does not exist or is not a directory: {source}")
    report = measure(
        command, Path(cwd), samples=samples, timeout_s=timeout_s, label=label, progress=progress, cancel=cancel,
        cuda_arch=cuda_arch, first_cold_env=rebuild_env(rebuild_limit_s, timeout_s),
    )
    src = Path(source).expanduser().resolve() if source is not None else Path(report.cwd)
    return report, diagnose_sources(report, src, progress)


def diagnose_sources(report: Report, source: str | Path | None, progress: Progress | None = None) -> Diagnosis:
    """Scan the project's sources, then diagnose: the one path the CLI, the MCP server and the evals share.

    `source` None skips the scan (locations then come from the measurement only, and the diagnosis says so).
    """
    from .scan import scan

    facts = None
    if source is not None:
        if progress:
            progress(f"scan: reading the source under {source}")
        t0 = time.monotonic()
        facts = scan(Path(source), progress=progress)
        if progress:
            progress(f"scan: {facts.files_scanned} files, {len(facts.kernels)} kernels, {len(facts.tapes)} tapes in "
                     f"{time.monotonic() - t0:.1f} s")
    if progress:
        progress("rules: matching the measurement against the mechanisms")
    return diagnose(report, facts, root=source, sources=SourceView(source) if source is not None else None,
                    progress=progress)


