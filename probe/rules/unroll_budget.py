"""CS-11: the unroll budget inflates generated source (a size and runtime knob, not a cold-start fix).

How Warp decides (warp/_src/codegen.py, `get_unroll_range` / `emit_For`): each `for ... in range(<constants>)` loop
is judged on its own. It is unrolled when its trip count is at most the module's `max_unroll` (16 by default) and
its body has no `break`, or, whatever the budget, when it (its body or a loop inside it) holds a `wp.static(...)`
that reads a loop variable. A `wp.static(...)` in the bound alone is replaced by its value before code generation,
so such a loop obeys the budget like any other. An unrolled loop writes its whole body out once per iteration, nested
loops included: a 48-step loop unrolled inside an unrolled 8-step loop is written 8 x 48 = 384 times, while inside a
loop that stays a loop it is written 48 times.

Fires (severity info, no saving claimed) when a compiled module's kernels hold a constant-bound loop longer than the
default budget that is unrolled: either `max_unroll` was raised (the build's resolved option or a setting in the
sources) to reach it, or a `wp.static(...)` on a loop variable forces it. The module's generated source per kernel
is the evidence. The study behind this mechanism cut source ~39% by lowering the budget and measured no cold-time
gain, while a module made mostly of unrolled copies compiled ~70% faster at the default budget here; so the finding
claims no saving of its own and points at the experiment that measures it.
"""

from __future__ import annotations

import math

from ..fix.place.entry_fix import can_edit
from ..fix.transform.statements import remove_statement_edit
from ..models import Build
from ..models.diagnosis import Applicability, Edit, Evidence, Finding, Location, RuleResult
from ..models.scan import LoopFact, ScanFacts, SettingFact
from . import cuda_pricing
from .context import RuleContext, dedupe_locations
from .helpers import NOTHING_COMPILED, ruled_out, warp_key

MECHANISM = "CS-11"
DEFAULT_MAX_UNROLL = 16
MIN_BYTES_PER_KERNEL = 8_000  # below this the source is not "large" whatever unrolled it


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(str(text).strip().strip("'\""))
    except ValueError:
        return None


def _loops_of(scan: ScanFacts, b: Build) -> list[LoopFact]:
    """Constant-bound loops in the kernels (and wp.funcs) compiled into this build."""
    keys = {k.key for k in b.kernels}
    kernel_names = {k.name for k in scan.kernels if warp_key(k.qualname) in keys or k.name in keys}
    func_keys = set(b.functions)
    func_names = {f.name for f in scan.functions if warp_key(f.qualname) in func_keys or f.name in func_keys}
    out = []
    for lp in scan.loops:
        if (lp.kind == "kernel" and lp.kernel in kernel_names) or (lp.kind == "func" and lp.kernel in func_names):
            out.append(lp)
    return out


def _unroll_settings(scan: ScanFacts | None) -> list[SettingFact]:
    return [] if scan is None else scan.settings_named("max_unroll")


def _forced(lp: LoopFact) -> bool:
    return bool(getattr(lp, "forced_unroll", False))


def _unrolled(lp: LoopFact, budget: int) -> bool:
    """Whether Warp writes this loop out iteration by iteration under `budget` (break-free bodies assumed)."""
    return _forced(lp) or lp.bound <= budget


def _outer(scan: ScanFacts | None, lp: LoopFact) -> list[LoopFact]:
    """The constant loops this one sits in, outermost first (only those the scan recorded)."""
    if scan is None:
        return []
    out = []
    for line in getattr(lp, "outer_loop_lines", None) or []:
        o = scan.loop_at(lp.file, line, lp.kernel)
        if o is not None:
            out.append(o)
    return out


def _inner(loops: list[LoopFact], lp: LoopFact) -> list[LoopFact]:
    return [x for x in loops if x.file == lp.file and x.kernel == lp.kernel and lp.line in (x.outer_loop_lines or [])]


def _copies(scan: ScanFacts | None, lp: LoopFact, budget: int) -> tuple[int, list[LoopFact]]:
    """(copies of this loop's body in the generated code, the unrolled loops around it that multiply it)."""
    around = [o for o in _outer(scan, lp) if _unrolled(o, budget)]
    return lp.bound * math.prod(o.bound for o in around), around


def _steps(lp: LoopFact) -> str:
    return f"{lp.bound}-step loop"


def _describe(scan: ScanFacts | None, loops: list[LoopFact], lp: LoopFact, budget: int) -> tuple[str, str]:
    """(evidence text, location note) for one loop unrolled past the default budget."""
    copies, around = _copies(scan, lp, budget)
    why = " (forced: a wp.static(...) in it reads a loop variable)" if _forced(lp) else ""
    if around:
        chain = " x ".join(str(o.bound) for o in around) + f" x {lp.bound} = {copies}"
        inside = " and ".join(f"the {_steps(o)} at line {o.line}" for o in around)
        note = f"{_steps(lp)} unrolled inside {inside}, also unrolled: {chain} copies of its body{why}"
    else:
        note = f"{_steps(lp)} unrolled: {copies} copies of its body{why}"
    inner = [x for x in _inner(loops, lp) if _unrolled(x, budget)]
    if inner:
        x = max(inner, key=lambda i: _copies(scan, i, budget)[0])
        note += (
            f"; the {_steps(x)} inside it at line {x.line} is unrolled too: "
            f"{_copies(scan, x, budget)[0]} copies of that body"
        )
    text = f"{lp.kernel} at {lp.file}:{lp.line}: {note}"
    if budget > DEFAULT_MAX_UNROLL and not _forced(lp):  # lp.bound > default here: it would stay a loop
        around_default = [o for o in _outer(scan, lp) if _unrolled(o, DEFAULT_MAX_UNROLL)]
        times = math.prod(o.bound for o in around_default)
        text += f"; at the default budget of {DEFAULT_MAX_UNROLL} it stays a loop" + (
            f", written out {times} times by the unrolled loop(s) around it" if around_default else ""
        )
    return text, note


def _lower_budget_edits(
    ctx: RuleContext, raised: list[SettingFact], forced: bool
) -> tuple[list[Edit], Applicability | None, str]:
    """Delete the project's statements that raise max_unroll and set nothing else (the default comes back); a
    statement that sets other options too, a kernel argument, or a loop forced by wp.static(...) is left to a person.
    Review: unrolling is a throughput knob, so steady-state kernel time may change (results should not)."""
    if not can_edit(ctx):
        return [], None, ""
    edits: list[Edit] = []
    for st in raised:
        only = st.via == "config" or _sets_only_max_unroll(ctx, st)
        e = remove_statement_edit(ctx.sources, st.file, st.line) if only else None
        if e is None:
            return [], "manual", (
                f"no edit: {st.file}:{st.line} sets max_unroll with other options (or on a kernel); lower it there "
                "by hand"
            )
        edits.append(e)
    if not edits:
        why = "wp.static(...) reads the loop variable, which unrolls whatever max_unroll says" if forced else ""
        return [], "manual", f"no edit: {why or 'no setting of the project raises max_unroll'}; rewrite it by hand"
    return edits, "review", (
        "kernel throughput: the loops stay loops at the default budget, so steady-state kernel time may change "
        "(results do not): benchmark it if runtime matters more than start-up"
    )


def _sets_only_max_unroll(ctx: RuleContext, st: SettingFact) -> bool:
    """`wp.set_module_options({"max_unroll": N})` with no other option (read from the project's line)."""
    if ctx.scan is None:
        return False
    for f in ctx.scan.module_options:
        if f.file == st.file and f.line == st.line:
            return set(f.options) == {"max_unroll"} and f.api == "set_module_options" and not f.module_arg
    return False


def _evaluate(ctx: RuleContext) -> RuleResult:
    compiled = ctx.compiled
    if not compiled:
        return ruled_out(MECHANISM, NOTHING_COMPILED)
    scan = ctx.scan
    settings = _unroll_settings(scan)
    raised_settings = [s for s in settings if (_int(s.value) or 0) > DEFAULT_MAX_UNROLL]

    hits: list[tuple[Build, int, list[LoopFact], list[LoopFact]]] = []
    notes: list[str] = []
    for b in compiled:
        budget = _int(b.options.get("max_unroll")) or DEFAULT_MAX_UNROLL
        loops = _loops_of(scan, b) if scan is not None else []
        beyond = [lp for lp in loops if lp.bound > DEFAULT_MAX_UNROLL and _unrolled(lp, budget)]
        per_kernel = b.source_bytes / max(1, len(b.kernels))
        if beyond and per_kernel >= MIN_BYTES_PER_KERNEL:
            hits.append((b, budget, beyond, loops))
        elif budget > DEFAULT_MAX_UNROLL and not beyond:
            notes.append(f"{b.module} has max_unroll {budget} but no constant loop longer than {DEFAULT_MAX_UNROLL}")
        elif beyond:
            notes.append(
                f"{b.module} unrolls loops past {DEFAULT_MAX_UNROLL} but its source is small "
                f"({per_kernel:.0f} B per kernel)"
            )

    if not hits:
        signal = (
            f"no compiled module unrolls a constant loop beyond the default budget of {DEFAULT_MAX_UNROLL} "
            "(no raised max_unroll reaching a loop, no longer loop forced by a wp.static(...) on its loop variable)"
        )
        if notes:
            signal += "; " + "; ".join(sorted(set(notes)))
        if raised_settings and not any((_int(b.options.get("max_unroll")) or 0) > DEFAULT_MAX_UNROLL for b in compiled):
            signal += (
                "; the sources raise max_unroll ("
                + ", ".join(f"{s.file}:{s.line} = {s.value}" for s in raised_settings)
                + ") but no compiled module carries the raised value (set after the modules were created? see CS-3)"
            )
        return ruled_out(MECHANISM, signal)

    evidence: list[Evidence] = []
    locations: list[Location] = []

    for s in raised_settings:
        locations.append(ctx.loc(s.file, s.line, f"max_unroll raised to {s.value} (default {DEFAULT_MAX_UNROLL})"))
        evidence.append(
            Evidence(
                fact=(
                    f"{s.file}:{s.line}: max_unroll is set to {s.value} ({s.via}), above the default "
                    f"{DEFAULT_MAX_UNROLL}."
                ),
                source="scan",
            )
        )
    any_forced = False
    for b, budget, beyond, loops in hits:
        per_kernel = b.source_bytes / max(1, len(b.kernels))
        described = [(lp, *_describe(scan, loops, lp, budget)) for lp in beyond]
        any_forced |= any(_forced(lp) for lp in beyond)
        evidence.append(
            Evidence(
                fact=(
                    f"{b.module} (build {b.seq}, max_unroll {budget}): {b.source_bytes} B of generated source for "
                    f"{len(b.kernels)} kernel(s), ~{per_kernel:.0f} B per kernel; unrolled past "
                    f"{DEFAULT_MAX_UNROLL}: " + "; ".join(text for _lp, text, _note in described) + "."
                ),
                builds=[b.seq],
                source="both",
            )
        )
        for lp, _text, note in described:
            # with a raised budget to lower, that setting is the line to change; a loop is one only when a
            # wp.static(...) forces it past any budget (the evidence above names every loop either way)
            if _forced(lp) or not raised_settings:
                locations.append(ctx.loc(lp.file, lp.line, note))

    modules = sorted({b.module for b, *_rest in hits})
    where = ", ".join(f"{s.file}:{s.line}" for s in raised_settings)
    fix = (
        "Treat max_unroll as a runtime and source-size knob, not a compile-time fix. If the unrolled loops are not "
        "needed for kernel throughput, lower the budget back towards the default "
        + (f"(the setting at {where}) " if where else "")
        + "before the modules are created, then benchmark steady-state kernel time; keep the raised value if "
        "runtime needs it. Warp judges each loop on its own, and an unrolled loop repeats every loop inside it."
        + (
            " The loops forced by a wp.static(...) that reads the loop variable unroll whatever max_unroll says: "
            "only rewriting that wp.static use keeps them loops."
            if any_forced
            else ""
        )
    )
    edits, applicability, review = _lower_budget_edits(ctx, raised_settings, any_forced)
    experiment = (
        {"max_unroll": DEFAULT_MAX_UNROLL}
        if raised_settings and all(x.via == "config" for x in raised_settings) and not any_forced
        else None
    )
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title="Loops are unrolled past the default budget, inflating generated source",
                applicability=applicability,
                edits=edits,
                review=review,
                experiment=experiment,
                severity="info", confidence="medium", modules=modules, evidence=evidence,
                locations=dedupe_locations(locations), fix=fix, estimated_saving_ms=None,
                saving_basis=(
                    "not estimated: lowering max_unroll cut generated source ~39% in the reference study with no "
                    "measurable cold-time gain, yet where unrolled copies are most of a module (about 1 MB of C++ in "
                    "this project's unroll case) the default budget cut cold compile by about 70%; measure it with "
                    "`warp-compile try --set max_unroll=16` or `diagnose --verify`"
                ),
                caveats=[
                    "Changing max_unroll changes generated code and can slow kernels down: benchmark steady-state "
                    "runtime before keeping any change, and ask whether startup or throughput matters more.",
                    "max_unroll is copied from wp.config when a module is created: a global set after the import "
                    "never arrives (check the module hash moved).",
                ],
                samples=ctx.samples,
            )
        ]
    )


def evaluate(ctx: RuleContext) -> RuleResult:
    return cuda_pricing.cs11(ctx, _evaluate(ctx))  # CUDA figures when the report has CUDA builds
