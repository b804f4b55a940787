"""CS-10: backward (adjoint) code generated and compiled for modules that nothing differentiates.

A compiled module is a candidate when its generated source holds adjoint code (`Build.backward_in_source`) or,
when that is unknown, its resolved options say `enable_backward: True`. It is excluded (ruled out, with the reason)
when any of its kernels was launched with `adjoint=True` in the measured run, or a `wp.Tape` in the sources records
one of its kernels (directly or through called functions). A tape whose recorded kernels the scan could not resolve
lowers the confidence and is named in a caveat.

Only the build that remains once rebuilds are fixed counts: per module, device and block_dim the last identity's
compiled build. Earlier builds that a rebuild superseded (a kernel added, an option or overload changed, a cache
cleared) are the rebuild mechanisms' saving (CS-1, CS-3, CS-6, ...) and are named in the evidence, not counted twice.

The saving: native compile time is close to a line, fixed + per-byte x source bytes, per module (the fixed part is
the per-module work of the compiler: the precompiled header's load or, with the header off, the whole header
parse). Only the size-dependent part shrinks with the adjoint code, so the estimate applies the adjoint share of the
source to (native - fixed) plus the codegen time. The fixed part comes from a fit over this run's own compiled
builds when there are at least 3 of one kind with a wide spread of sizes that lie on a line, else from this
project's calibration (`_CPU_FIXED_MS`, see knowledge/CS-10.md), scaled to this machine: up by the run's own
precompiled header against the calibration's (the same header work on every run of a version, so a slower header
means a slower machine, and the estimate grows with the compile instead of faster than it), else down by the run's
smallest build. For CUDA there is no calibration: without an in-run fit the share is applied to the whole native
time, an upper bound, and the basis says so. Builds that compiled concurrently are divided by their overlap, so
the figure is elapsed time.

Two shapes of the fix, always scoped to the application, never a library edit:
- late assignment: `wp.config.enable_backward = False` exists but ran after the kernel module was created (the
  build's `config_shadow` shows enable_backward ["True", "False"]) -> location at that assignment, fix: move it above
  the import that creates the module;
- otherwise: assign it at the entry point before the first import that reaches a kernel module (location at that
  import; the fix adds `import warp as wp` only when the file does not import warp under a name already), or, when
  that import is not the entry point's to reorder (a parent package imports the kernels first, or some modules are
  differentiated), `wp.get_module(name).options["enable_backward"] = False` before first load.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fix.edits import reuse_warp_import, top_insert
from ..fix.place.entry_fix import (
    can_edit,
    entry_line_fix,
    entry_point,
    entry_settings_edits,
    module_lines,
    scanned_entry,
)
from ..fix.transform.statements import after_statement_edit, move_line_edits
from ..fmt import fmt_ms
from ..models import Build
from ..models.diagnosis import Applicability, Edit, Evidence, Finding, Location, RuledOut, RuleResult
from ..models.scan import (
    ConfigSetFact,
    ImportFact,
    ImportRef,
    KernelDef,
    ModuleInfo,
    ScanFacts,
    TapeFact,
)
from . import context as _context
from . import cuda_pricing, helpers
from .backward_cost import (
    BackwardModule,
    build_kind,
    bytes_share,
    concurrency,
    estimate_saving,
    fixed_parts,
)
from .backward_paths import differentiation, paths_text
from .backward_upstream import upstream_for
from .context import RuleContext
from .helpers import (
    MEDIUM_SHARE,
    NOTHING_COMPILED,
    is_false,
    material,
    noise_ms,
    reached,
    ruled_out,
    share_of_compile,
    warp_key,
)

MECHANISM = "CS-10"


MIN_SHARE = MEDIUM_SHARE  # below this share of the cold compile (or inside its noise) it is not worth a finding
# below MIN_SHARE but at least this share: no finding, yet `fix` measures the edit and the proof decides (an estimate
# near the line falls either side of it from run to run; the measurement does not depend on which)
MEASURE_SHARE = MIN_SHARE / 2


def _share(ctx: RuleContext, ms: float) -> str:
    total = ctx.cold_compile_total
    if not total:
        return "n/a"
    pch = " incl. the precompiled header" if ctx.report.pch_ms.median else ""
    return f"{ms / total:.1%} of {fmt_ms(total)} cold compile{pch}"


def worth_measuring(ctx: RuleContext, ms: float) -> bool:
    """A saving under the line for a finding that `fix` still measures: MEASURE_SHARE of the cold compile or more
    (the noise band is left to the measurement, which has its own)."""
    return share_of_compile(ctx, ms) >= MEASURE_SHARE


def _noise_text(ctx: RuleContext) -> str:
    noise = noise_ms(ctx)
    return f" of {noise:.0f} ms" if noise > 0 else ""


def _remaining(ctx: RuleContext) -> tuple[list[Build], list[Build]]:
    """(remaining, superseded) compiled builds of the cold run: per module, device and block_dim the build that
    remains once every rebuild is fixed (`context.remaining_builds`, the one notion the rebuild rules share); the
    other compiled builds were superseded by a rebuild, whose cost the rebuild mechanisms claim."""
    keep = {k: b for k, b in _context.remaining_builds(ctx).items() if b.status == "compiled"}
    kept = {b.seq for b in keep.values()}
    superseded = [b for b in ctx.compiled if _context.build_key(b) in keep and b.seq not in kept]
    return sorted(keep.values(), key=lambda b: b.seq), sorted(superseded, key=lambda b: b.seq)


def _superseded_text(ctx: RuleContext, b: Build) -> str:
    """`build #4 (16,418 B) was superseded by rebuild #7 (kernel added: ...)`."""
    later = [ch for ch in ctx.changes if ch.from_seq == b.seq and ch.module == b.module]
    why = ""
    if later:
        ch = min(later, key=lambda c: c.to_seq)
        detail = "; ".join(c.detail for c in ch.causes[:2])
        why = f" by rebuild #{ch.to_seq}" + (f" ({detail})" if detail else "")
    return f"build #{b.seq} ({b.source_bytes:,} B, {fmt_ms(b.ms)}) was superseded{why}"


def _backward_off(b: Build) -> bool:
    """The build's own options already say enable_backward False (a library set it, or the app did in time)."""
    return is_false(b.options.get("enable_backward"))


def _has_backward(b: Build) -> bool:
    """Backward code that `enable_backward=False` would remove: never where the build's options already have it
    off (Warp still emits adjoint stubs and struct helpers there, which the setting does not change)."""
    if _backward_off(b):
        return False
    if b.backward_in_source is not None:
        return b.backward_in_source
    return b.options.get("enable_backward", "").strip() == "True"


def _late_shadow(b: Build) -> bool:
    sh = b.config_shadow.get("enable_backward")
    return bool(sh) and len(sh) == 2 and sh[0].strip() == "True" and sh[1].strip() in ("False", "0")


def _entry_fix(ctx: RuleContext, why: str, locations: list[Location]) -> str:
    """The entry-point fix; the entry point's location, when it is the project's, joins `locations`."""
    fix, where = entry_line_fix(ctx, why)
    if where is not None:
        locations.append(where)
    return fix


def _defs_for(scan: ScanFacts | None, keys: set[str], module: str) -> list[KernelDef]:
    if scan is None:
        return []
    out = []
    for k in scan.kernels:
        if warp_key(k.qualname) in keys or (k.name in keys and k.warp_module in (module, None)):
            out.append(k)
    return out


def _unresolved_tapes(scan: ScanFacts) -> list[TapeFact]:
    """Tapes whose recorded kernels the scan could not name (a with-block holding calls it could not follow, or a
    tape object never used in a with-block of the same name in that file)."""
    with_vars = {(t.file, t.var) for t in scan.tapes if t.with_block}
    out = []
    for t in scan.tapes:
        if t.with_block:
            if not t.launched_kernels and not t.indirect_kernels:
                out.append(t)
        elif (t.file, t.var) not in with_vars:
            out.append(t)
    return out


@dataclass
class _Late:
    fact: ConfigSetFact
    refs: list[ImportRef]  # the earlier imports that created kernel modules
    confirmed: list[str]  # Warp modules whose builds show the value did not arrive


def _late_assignments(ctx: RuleContext) -> list[_Late]:
    """`wp.config.enable_backward = False` assigned after a kernel module was created (the option deadline).

    Uses the shared `late_config_assignments` helper of context.py; falls back on the scan's import facts when the
    helper is missing."""
    helper = getattr(_context, "late_config_assignments", None)
    if helper is not None:
        out = []
        for lc in helper(ctx):
            if lc.option == "enable_backward" and is_false(lc.value):
                out.append(_Late(lc.fact, list(lc.imports), list(lc.modules)))
        if out:
            return out
    if ctx.scan is None:
        return []
    out = []
    for c in ctx.scan.config_sets_named("enable_backward"):
        if reached(ctx, c.file) is False:
            continue  # never imported by the measured run: not this run's deadline
        refs = (
            c.after_kernel_imports + c.after_kernel_imports_transitive + list(getattr(c, "after_package_imports", []))
        )
        if is_false(c.value) and (refs or c.after_kernels_in_file):
            out.append(_Late(c, refs, []))
    return out


def _entry_module(ctx: RuleContext) -> ModuleInfo | None:
    return scanned_entry(ctx)

def _warp_alias(scan: ScanFacts, file: str, before: int) -> tuple[str, int] | None:
    """(name, line) of a module-scope `import warp` / `import warp as X` in `file` above line `before`."""
    hits = [
        i
        for i in scan.imports_in(file)
        if i.module == "warp" and i.scope == "module" and not i.type_checking and i.line < before and i.names
    ]
    if not hits:
        return None
    first = min(hits, key=lambda i: i.line)
    return first.names[0], first.line


def _warp_import_text(name: str) -> str:
    return "import warp" if name == "warp" else f"import warp as {name}"


def _first_kernel_import(scan: ScanFacts, entry: ModuleInfo) -> ImportFact | None:
    hits = [i for i in scan.imports_in(entry.file) if i.reaches_kernels and not i.type_checking and i.scope == "module"]
    return min(hits, key=lambda i: i.line) if hits else None


def _parents_reach_kernels(scan: ScanFacts, entry: ModuleInfo) -> list[str]:
    """Parent packages of the entry module (run before it under `python -m`) that create kernel modules."""
    parts = entry.name.split(".")
    out = []
    for n in range(1, len(parts)):
        parent = ".".join(parts[:n])
        info = scan.module_info(parent)
        if info is None:
            continue
        if info.module_scope_kernel_count or any(
            i.reaches_kernels and not i.type_checking and i.scope == "module" for i in scan.imports_in(info.file)
        ):
            out.append(parent)
    return out


def _collect(ctx: RuleContext) -> dict[str, BackwardModule]:
    remaining, superseded = _remaining(ctx)
    mods: dict[str, BackwardModule] = {}
    for b in remaining:
        if not _has_backward(b):
            continue
        m = mods.setdefault(b.module, BackwardModule(b.module))
        m.builds.append(b)
    for b in superseded:
        m = mods.get(b.module)
        if m is not None:
            m.superseded.append(b)
    for m in mods.values():
        for b in m.builds + m.superseded:
            m.keys.update(k.key for k in b.kernels)
            m.late = m.late or _late_shadow(b)
        m.adjoint_launches = sum(la.count for la in ctx.report.launches if la.module == m.name and la.adjoint)
        m.defs = _defs_for(ctx.scan, m.keys, m.name)
        if ctx.scan is not None:
            for kd in m.defs:
                for t in ctx.scan.tapes_launching(kd.name):
                    hit = reached(ctx, t.file)
                    m.tapes_measured = m.tapes_measured or hit is not None
                    if hit is False:  # a tape on another entry point's path: not this command's
                        if t not in m.unreached_tapes:
                            m.unreached_tapes.append(t)
                        continue
                    m.taped_kernels.add(kd.name)
                    if t not in m.tapes:
                        m.tapes.append(t)
    return mods


def _tape_text(m: BackwardModule) -> str:
    parts = []
    for t in m.tapes:
        rec = sorted(set(t.launched_kernels) | set(t.indirect_kernels))
        back = f", tape.backward at line {', '.join(map(str, t.backward_lines))}" if t.backward_lines else ""
        parts.append(f"wp.Tape at {t.file}:{t.line} records {', '.join(rec)}{back}")
    return "; ".join(parts)


def _ruled_out_for(m: BackwardModule) -> RuledOut:
    why = []
    if m.adjoint_launches:
        why.append(f"{m.adjoint_launches} adjoint launch(es) of its kernels were measured")
    if m.tapes:
        how = (
            " (in a file the measured process imported)" if m.tapes_measured
            else " (found by the scan; the run kept no record of what it imported)"
        )
        why.append(_tape_text(m) + how)
    forward_only = sorted(d.name for d in m.defs if d.name not in m.taped_kernels)
    signal = f"{m.name} generates backward code that is used: " + "; ".join(why)
    if forward_only and m.tapes:
        signal += (
            f" (forward-only kernels {', '.join(forward_only)} share the module; only a split into a separate "
            "module could drop their adjoints)"
        )
    return RuledOut(mechanism=MECHANISM, signal=signal)



def _fix_edits(
    ctx: RuleContext,
    shape: str,
    late_sets: list[_Late],
    getmodule_lines: str,
    first_import: ImportFact | None,
) -> list[Edit]:
    """The finding's fix as edits on project files: never a library's file, never a package's __init__.py.

    move / move_in_file: the late assignment moves above the import (or the kernel definitions) it missed, with an
    `import warp as wp` first when that file imports warp only below; modules: per-module options at the top of the
    entry point (after the import that creates them when the entry point imports them itself); entry: the process
    setting at the top of the entry point, or a launcher when that is installed code.
    """
    scan = ctx.scan
    if shape in ("move", "move_in_file") and late_sets and scan is not None:
        fact = late_sets[0].fact
        if shape == "move":
            before = min((r.line for r in late_sets[0].refs if r.line), default=0)
        else:
            own = [k.line for k in scan.kernels if k.file == fact.file and not k.nested]
            before = min(own, default=0)
            # decorators sit above the def line: go above the first decorated statement
            before = _statement_start(ctx, fact.file, before)
        alias = _warp_alias(scan, fact.file, before) if before else None
        prefix = "" if alias is not None else "import warp as wp\n"
        edits = move_line_edits(ctx.sources, fact.file, fact.line, before, prefix) if before else []
        if edits:
            return edits
    if shape == "modules":
        entry = entry_point(ctx, _entry_module(ctx))
        if not getmodule_lines or entry is None or not entry.file or ctx.sources.rel(entry.file) is None:
            return []
        text = "import warp as wp\n" + getmodule_lines + "\n"
        own = first_import is not None and ctx.sources.rel(first_import.file) == ctx.sources.rel(entry.file)
        last = _last_kernel_import(scan, first_import.file) if own and scan is not None else None
        if last is None:
            return top_insert(ctx.sources, entry.file, text)
        text = reuse_warp_import(ctx.sources, entry.file, last.line, text)
        e = after_statement_edit(ctx.sources, entry.file, last.line, text)
        return [e] if e is not None else []
    comment = "forward-only run; delete to revert"
    return entry_settings_edits(ctx, {"enable_backward": False}, comment, _entry_module(ctx))


def _statement_start(ctx: RuleContext, file: str, line: int) -> int:
    """The first decorator line of the def at `file:line` (the def line itself when it has none)."""
    lines = ctx.sources.lines(file) or []
    if not 1 <= line <= len(lines):
        return line
    i = line - 1
    while i - 1 >= 0 and lines[i - 1].lstrip().startswith("@") and not lines[i - 1][:1].isspace():
        i -= 1
    return i + 1


def _last_kernel_import(scan: ScanFacts, file: str) -> ImportFact | None:
    hits = [i for i in scan.imports_in(file) if i.reaches_kernels and not i.type_checking and i.scope == "module"]
    return max(hits, key=lambda i: i.line) if hits else None


def _evaluate(ctx: RuleContext) -> RuleResult:
    compiled = ctx.compiled
    if not compiled:
        return ruled_out(MECHANISM, NOTHING_COMPILED)
    mods = _collect(ctx)
    if not mods:
        signal = "no compiled module generated backward code (backward_in_source / enable_backward False)"
        earlier = sorted(b.seq for b in compiled if _has_backward(b))
        off = [b for b in compiled if _backward_off(b)]
        if off and len(off) == len(compiled):
            signal = (
                f"already in effect: the options of every compiled build ({len(off)}) have enable_backward False, so "
                "setting it again changes nothing Warp compiles"
            )
        elif off and not earlier:
            signal = (
                f"already in effect where backward code was generated: {len(off)} build(s) have enable_backward False "
                "in their own options and the others generated none"
            )
        if earlier:
            signal = (
                "no module's final build generates backward code; only build(s) "
                + ", ".join(f"#{s}" for s in earlier)
                + " did, and a rebuild superseded them"
            )
        return ruled_out(MECHANISM, signal)

    ruled: list[RuledOut] = []
    targets: list[BackwardModule] = []
    for m in mods.values():
        if m.adjoint_launches or m.tapes:
            ruled.append(_ruled_out_for(m))
        else:
            targets.append(m)
    if not targets:
        return RuleResult(ruled_out=ruled)

    scan = ctx.scan
    differentiated = [m.name for m in mods.values() if m.adjoint_launches or m.tapes]
    unresolved = _unresolved_tapes(scan) if scan is not None else []
    late_sets = _late_assignments(ctx)
    late_mods = [m for m in targets if m.late]
    entry = _entry_module(ctx)
    first_import = _first_kernel_import(scan, entry) if (scan is not None and entry is not None) else None
    parents = _parents_reach_kernels(scan, entry) if (scan is not None and entry is not None) else []
    names = sorted(m.name for m in targets)
    getmodule_lines, hashed_names = module_lines(names)
    experiment: dict[str, bool | int | str | None] | None = None if differentiated else {"enable_backward": False}

    fixed = fixed_parts(ctx)
    evidence: list[Evidence] = []
    for m in sorted(targets, key=lambda m: m.name):
        n_launch = sum(la.count for la in ctx.report.launches if la.module == m.name)
        kernels = {k.key for b in m.builds for k in b.kernels}
        srcs = []
        for b in m.builds:
            adj = f", {b.backward_source_bytes:,} B of it adjoint" if b.backward_source_bytes is not None else ""
            srcs.append(f"{b.source_bytes:,} B{adj}")
        how = (
            "holds adjoint code"
            if all(b.backward_in_source for b in m.builds)
            else "was built with enable_backward True"
        )
        fact = (
            f"{m.name} (build {', '.join(f'#{s}' for s in m.seqs)}, {fmt_ms(m.ms)}, native "
            f"{fmt_ms(sum(b.native_ms for b in m.builds))}): the generated source ({'; '.join(srcs)}) {how} "
            f"for {len(kernels)} kernel(s), while none of its {n_launch} launch(es) in the run was an adjoint launch."
        )
        if m.superseded:
            fact += (
                " Only the build that remains once the rebuilds are fixed is counted: "
                + "; ".join(_superseded_text(ctx, b) for b in m.superseded)
                + ", left to the mechanism behind the rebuild (see the hash changes)."
            )
        evidence.append(Evidence(fact=fact, builds=m.seqs, ms=round(m.ms, 1)))
    if scan is not None:
        if not scan.tapes and not scan.tape_backward_calls:
            evidence.append(Evidence(fact="the sources construct no wp.Tape and call no tape.backward.", source="scan"))
        elif not any(m.unreached_tapes for m in targets):
            evidence.append(
                Evidence(
                    fact=(
                        f"no wp.Tape in the sources records a kernel of {', '.join(names)}"
                        + (f" (tapes record {', '.join(differentiated)} instead)" if differentiated else "")
                        + "."
                    ),
                    source="scan",
                )
            )

    locations: list[Location] = []
    caveats = [
        "Disabling backward makes differentiation through these kernels silently wrong (no error): confirm that "
        "no wp.Tape traverses them, e.g. run the entry point under wp.Tape() and inspect len(tape.launches).",
        "If the kernels belong to a shared library that other applications differentiate through, keep the change "
        "at this application's entry point; do not edit the library.",
        "Confirm after the change that the module hash moved and the source shrank; an unchanged hash means the "
        "option never arrived. Keep the change to one line so it is easy to revert.",
    ]
    if scan is not None and any(t.kernel in {d.name for m in targets for d in m.defs} for t in scan.tile_ops):
        caveats.append(
            "Tile modules: use the module option, not @wp.kernel(enable_backward=False); the per-kernel flag still "
            "links the adjoint MathDx GEMMs on CUDA (CS-7)."
        )
    elsewhere = [t for m in targets for t in m.unreached_tapes]
    if elsewhere:
        seen_t: list[str] = []
        for t in elsewhere:
            where_t = f"{t.file}:{t.line}"
            if where_t not in seen_t:
                seen_t.append(where_t)
        caveats.insert(
            0,
            f"Another entry point differentiates these kernels: wp.Tape at {', '.join(seen_t)}, in file(s) this "
            "command never imported (the hook's record of what it imported). Keep the setting at this entry point "
            "only; the other one still needs the backward code.",
        )
        evidence.append(
            Evidence(
                fact=f"the measured process never imported {', '.join(sorted({t.file for t in elsewhere}))}, where "
                "the only tapes over these kernels are",
                source="both",
            )
        )
    confidence = "high"
    if any(not any(b.backward_in_source for b in m.builds) for m in targets):
        confidence = "medium"
    if unresolved:
        confidence = "low"
        caveats.insert(
            0,
            "The scan could not tell what these tapes record: "
            + ", ".join(f"{t.file}:{t.line}" for t in unresolved)
            + "; check them before disabling backward.",
        )

    shape = "entry"  # how the edits express the fix (see _fix_edits)
    if (late_mods or late_sets) and not differentiated:
        if late_sets:
            for lt in late_sets:
                c = lt.fact
                above = min((r.line for r in lt.refs if r.line), default=None)
                locations.append(
                    ctx.loc(
                        c.file,
                        c.line,
                        f"assigned after the kernel modules were created: move above the import at line {above}"
                        if above
                        else "assigned after the kernel modules were created: move it earlier",
                    )
                )
                via = "; ".join(
                    (f"line {r.line} imports {r.module}" if r.line else f"the parent package {r.module}")
                    + f", which creates {', '.join(r.kernel_modules) or 'a kernel module'}"
                    for r in lt.refs
                )
                missed = lt.confirmed or [m.name for m in late_mods]
                evidence.append(
                    Evidence(
                        fact=(
                            f"{c.file}:{c.line}: wp.config.enable_backward = {c.value} runs after "
                            f"{via or 'the kernel modules were created'}; a module copies enable_backward from "
                            f"wp.config when it is created, so the assignment never reached {', '.join(missed)}."
                        ),
                        source="both",
                    )
                )
            first = late_sets[0]
            above = min((r.line for r in first.refs if r.line), default=None)
            if above is not None:
                shape = "move"
                fix = (
                    f"Move `wp.config.enable_backward = {first.fact.value}` ({first.fact.file}:{first.fact.line}) "
                    f"above the import at line {above} (keep `import warp as wp` before it), so the kernel modules "
                    "are created forward-only. Nothing else changes; moving it back reverts it."
                )
            elif first.fact.after_kernels_in_file:
                own = [k.line for k in scan.kernels if k.file == first.fact.file] if scan is not None else []
                where = f" (the first at line {min(own)})" if own else ""
                shape = "move_in_file"
                fix = (
                    f"Move `wp.config.enable_backward = {first.fact.value}` ({first.fact.file}:{first.fact.line}) "
                    f"above the kernel definitions of that file{where}, right after `import warp as wp`, so its "
                    "module is created forward-only. Moving it back reverts it."
                )
            else:
                fix = _entry_fix(
                    ctx, "a package imported before the assignment already created the kernel modules, so the "
                    "assignment reaches only modules created after it", locations
                )
        else:
            fix = _entry_fix(
                ctx, "wp.config.enable_backward was set to False after these modules were created (build "
                "config_shadow), but the scan did not find the assignment", locations
            )
        for m in late_mods:
            evidence.append(
                Evidence(
                    fact=(
                        f"measured: {m.name} kept enable_backward True while wp.config.enable_backward was False "
                        "(config shadow): the option arrived after the module existed."
                    ),
                    builds=m.seqs,
                )
            )
        title = "enable_backward = False is assigned after the kernel modules were created, so it never arrives"
    elif differentiated:
        shape = "modules"
        fix = (
            f"Other modules ({', '.join(differentiated)}) are differentiated, so a process-wide "
            "wp.config.enable_backward = False would break them. Turn backward off only for the forward-only "
            "modules, from the entry point, before their first load:\n" + getmodule_lines
        )
        if hashed_names:
            fix += (
                ("\n" if getmodule_lines else "")
                + f"({len(hashed_names)} more module(s), {', '.join(hashed_names[:3])}"
                + (", ..." if len(hashed_names) > 3 else "")
                + ", are generated: their names carry a content hash that changes with the kernel, so they cannot "
                "be named here; where you own their kernels, pass enable_backward=False in their module options)"
            )
        if first_import is not None:
            locations.append(
                ctx.loc(first_import.file, first_import.line, "after this import, before the first launch")
            )
        title = "Backward code is generated for modules that nothing differentiates"
    elif (
        entry is not None
        and not parents
        and entry.module_scope_kernel_count
        and scan is not None
        and (
            first_import is None
            or first_import.line > min(k.line for k in scan.kernels if k.file == entry.file and not k.nested)
        )
    ):
        first_def = min(k.line for k in scan.kernels if k.file == entry.file and not k.nested)
        locations.append(
            ctx.loc(entry.file, first_def, "set wp.config.enable_backward = False before this first kernel definition")
        )
        fix = (
            f"The entry point {entry.file} defines kernels itself: right after `import warp as wp` and before "
            f"line {first_def}, add\nwp.config.enable_backward = False  # forward-only application; delete to revert\n"
            "so every module this process creates from then on is forward-only."
        )
        title = "Backward code is generated and compiled for kernels that nothing differentiates"
    elif entry is not None and first_import is not None and not parents:
        locations.append(
            ctx.loc(
                first_import.file,
                first_import.line,
                f"set wp.config.enable_backward = False before this import of {first_import.module}",
            )
        )
        alias = _warp_alias(scan, entry.file, first_import.line) if scan is not None else None
        if alias is not None:
            name, line = alias
            add = (
                f"after `{_warp_import_text(name)}` (line {line}) and before line {first_import.line} "
                f"(the import of {first_import.module}, which creates the kernel modules), add:\n"
                f"{name}.config.enable_backward = False  # forward-only application; delete to revert\n"
            )
        else:
            add = (
                f"before line {first_import.line} (the import of {first_import.module}, which creates the kernel "
                "modules), add:\nimport warp as wp\n"
                "wp.config.enable_backward = False  # forward-only application; delete to revert\n"
            )
        fix = (
            f"At the application entry point {entry.file}, {add}"
            "A module copies enable_backward from wp.config when it is created, so the assignment must precede the "
            "import. The kernel modules themselves stay unchanged."
        )
        title = "Backward code is generated and compiled for kernels that nothing differentiates"
    elif parents and ctx.report.entry is not None and ctx.report.entry.owner != "dependency":
        shape = "modules"
        fix = (
            f"The parent package(s) {', '.join(parents)} create the kernel modules before the entry point runs, so a "
            "wp.config line in the entry point comes too late for them (and a package's __init__.py is not the place "
            "for a process-wide setting). Turn backward off on the modules that exist, at the top of the entry "
            "point, before their first load:\nimport warp as wp\n" + getmodule_lines
        )
        title = "Backward code is generated and compiled for kernels that nothing differentiates"
    else:
        why = "the scan could not place it after a specific import"
        fix = _entry_fix(ctx, why, locations)
        if entry is not None and first_import is not None:
            locations.append(
                ctx.loc(first_import.file, first_import.line, "after this import, before the first launch")
            )
        else:
            first = min((b for m in targets for b in m.builds), key=lambda b: b.seq)
            if first.trigger is not None and first.trigger.file:
                at = helpers.own_frame(ctx, first.trigger)
                locations.append(ctx.loc(at.file, at.line, "before this first load"))
        title = "Backward code is generated and compiled for kernels that nothing differentiates"

    edits = _fix_edits(ctx, shape, late_sets, getmodule_lines, first_import)
    paths, must_keep = differentiation(ctx, [(m.defs, m.unreached_tapes, m.builds) for m in targets])
    if differentiated:
        review = (
            f"numerics of gradients: {', '.join(differentiated)} are differentiated in this run and keep backward; "
            "check that no wp.Tape records a kernel of the modules turned off"
        )
    elif paths:
        review = (
            "gradients on another path: " + paths_text(paths) + " records these kernels; the setting is scoped "
            "to this entry point, so confirm that path does not start from it"
        )
    elif ctx.report.tapes:
        review = "the measured run created a wp.Tape: confirm it records none of these kernels"
    else:
        review = ""
    applicability: Applicability | None
    if not can_edit(ctx):
        applicability = None  # no sources to quote: the rule cannot say how the edit applies
    elif not edits:
        applicability = "manual"
        review = review or (
            "no edit: the fix needs a module name that carries a content hash, or an entry point the tool cannot "
            "place a line in; apply the fix text by hand"
        )
    else:
        applicability = "review" if review else "automatic"

    total_ms = sum(m.ms for m in targets)
    estimate = estimate_saving(targets, fixed)
    counted_builds = [b for m in targets for b in m.builds if b.status == "compiled"]
    overlap = concurrency(counted_builds)
    if estimate is not None and overlap > 1.05:
        estimate /= overlap
    late = bool((late_mods or late_sets) and not differentiated)
    superseded = sorted(b.seq for m in targets for b in m.superseded)
    counted = ", ".join(f"#{s}" for m in sorted(targets, key=lambda m: m.name) for s in m.seqs)
    left_out = (
        f"; superseded build(s) {', '.join(f'#{s}' for s in superseded)} are left to the rebuild findings"
        if superseded
        else ""
    )
    small = estimate is not None and not late and not (
        material(ctx, estimate) or cuda_pricing.backward_pays(ctx, names)
    )
    if estimate is not None:
        used = {build_kind(b) for m in targets for b in m.builds if b.status == "compiled"}
        fixed_txt = "; ".join(fixed[k].basis for k in sorted(used) if k in fixed)
        basis = (
            f"the adjoint share of the generated source ({bytes_share(targets)}) applied to the size-dependent "
            f"part of the native compile (native minus a fixed per-module part: {fixed_txt}) plus codegen, for "
            + ("the build(s) that remain once rebuilds are fixed: " if superseded else "")
            + f"{', '.join(names)} ({counted}, {fmt_ms(total_ms)}){left_out}"
            + (
                f"; divided by {overlap:.2f}, the overlap of these builds (they compiled concurrently, so each one's "
                "time includes waiting for the others; see CS-8 / CS-13)"
                if overlap > 1.05
                else ""
            )
            + "; confirm with `warp-compile compare`"
        )
    else:
        basis = (
            "not estimated: this run did not generate the source (cache hit) so its adjoint share is unknown; at "
            f"most the {fmt_ms(total_ms)} these modules took (forward code stays): measure it with "
            "`warp-compile compare` before and after"
        )
    finding = Finding(
        mechanism=MECHANISM,
        title=title,
        severity="low" if small else ctx.severity_for(estimate) if estimate is not None else "medium",
        confidence=confidence, modules=names, evidence=evidence, locations=locations, fix=fix,
        estimated_saving_ms=round(estimate, 1) if estimate is not None else None,
        saving_basis=basis, caveats=caveats, samples=ctx.samples, experiment=experiment,
        applicability=applicability, edits=edits, review=review, must_keep=must_keep, below_line=small,
        upstream=upstream_for(ctx, targets, estimate),
    )
    if small:
        assert estimate is not None
        offered = worth_measuring(ctx, estimate) and bool(edits)
        ruled.append(
            RuledOut(
                mechanism=MECHANISM,
                signal=f"backward code is generated for {', '.join(names)} but it is small: about {fmt_ms(estimate)} "
                f"of compile ({_share(ctx, estimate)}; build(s) {counted}{left_out}"
                + (f"; divided by {overlap:.2f}, the overlap of these concurrent builds" if overlap > 1.05 else "")
                + f"), below what is worth acting on (at least {MIN_SHARE:.0%} of the cold compile, and above "
                f"the run's noise band{_noise_text(ctx)})"
                + (f"; `fix` still measures its edit (at least {MEASURE_SHARE:.0%}), and writes it only if proven"
                   if offered else ""),
                candidate=finding if offered else None,
            )
        )
        return RuleResult(ruled_out=ruled)
    return RuleResult(findings=[finding], ruled_out=ruled)


def evaluate(ctx: RuleContext) -> RuleResult:
    return cuda_pricing.cs10(ctx, _evaluate(ctx))  # CUDA figures when the report has CUDA builds
