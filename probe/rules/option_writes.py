"""CS-3's option writes that configure nothing: a bare `wp.set_module_options()` in a Python module that holds no
kernels, and an options write after the module's first load that no later launch of it picks up.

Split from rules/late_options.py (the rule: rebuilds after a first load, missed import deadlines), which adds these
findings to its own; the review text for an option that never arrived is shared by both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fix.place.entry_fix import (
    can_edit,
)
from ..fix.transform.options import NUMERICS_OPTIONS  # noqa: F401 (re-exported for late_options)
from ..models import Build
from ..models.diagnosis import (
    Evidence,
    Finding,
    Location,
)
from ..models.scan import KernelDef, ModuleOptionsFact, ScanFacts
from .context import (
    RuleContext,
    dedupe_locations,
    fmt_ms,
    norm_value,
)
from .helpers import (
    literal_dict,
    reached,
)

MECHANISM = "CS-3"  # the findings here are CS-3's


def build_evidence(b: Build, what: str) -> Evidence:
    """`build #n of <module> (<hash>) <what>`, citing that build and its ms."""
    return Evidence(fact=f"build #{b.seq} of {b.module} ({b.hash_short}) {what}", builds=[b.seq], ms=b.ms)


def never_reached_review(*options: str) -> str:
    """Why an option that never arrived gets no edit: making it arrive changes what is compiled (for fast_math,
    mode, ... what the kernels compute), and leaving it as it is costs no compile time."""
    numeric = [o for o in options if o in NUMERICS_OPTIONS]
    head = (
        f"no edit: {', '.join(options) or 'the option'} never reached a kernel in this run, so the results so far were "
        "computed without it"
    )
    if numeric:
        return head + (
            f"; making {', '.join(numeric)} arrive changes numerics, and leaving the call inert changes nothing "
            "compiled: decide which is meant, then confirm the printed results"
        )
    return head + "; making it arrive changes the generated code: decide whether it is meant, then re-measure"


# ---------------------------------------------------------------------------------------------- 3. no-op calls


def _named_modules(scan: ScanFacts, file: str | None = None, python_module: str | None = None) -> dict[str, KernelDef]:
    """Named Warp modules (module="...") that kernels of a file or a Python module join: name -> first such kernel."""
    out: dict[str, KernelDef] = {}
    for k in scan.kernels:
        if (file is not None and k.file != file) or (python_module is not None and k.python_module != python_module):
            continue
        if k.module_arg and k.warp_module and k.warp_module != k.python_module and k.warp_module not in out:
            out[k.warp_module] = k
    return out


def _on_every_unique_decorator(scan: ScanFacts, f: ModuleOptionsFact) -> bool:
    """Every kernel of the call's Python module gets a unique module of its own, and each already sets every option
    of the call on its decorator (enable_backward=, or module_options={...}) to the same value."""
    own = [k for k in scan.kernels if k.python_module == f.target]
    if not f.options or not own or any(k.module_arg != "unique" for k in own):
        return False

    def has(k: KernelDef, key: str, value: str) -> bool:
        if key == "enable_backward" and k.enable_backward_text is not None:
            return norm_value(k.enable_backward_text) == norm_value(value)
        text = k.module_options_dict.get(key)
        return text is not None and norm_value(text) == norm_value(value)

    return all(has(k, key, value) for k in own for key, value in f.options.items())


def _set_elsewhere_note(module: str) -> str:
    return (
        f'on warp 1.19 `wp.set_module_options({{...}}, module="{module}")` does the same; 1.10.1 only accepts an '
        "imported Python module there and raises AttributeError on a name"
    )


def _is_entry(ctx: RuleContext, file: str, info: object) -> bool:
    """The program's own entry file (run as __main__): a call there may be meant for every kernel it imports."""
    if getattr(info, "main_alias", None) == "__main__":
        return True
    entry = ctx.report.entry
    return entry is not None and bool(entry.file) and ctx.rel(entry.file) == ctx.rel(file)


def noop_findings(ctx: RuleContext) -> list[Finding]:
    scan = ctx.scan
    if scan is None:
        return []
    built = {b.module for b in ctx.report.builds}
    out = []
    for f in scan.module_options:
        if f.api != "set_module_options" or not f.target_resolved or f.target is None or f.target_has_kernels:
            continue
        info = scan.module_info(f.target)
        names = {f.target, *([info.main_alias] if info and info.main_alias else [])}
        if names & built:
            continue  # Warp did build a module by that name: something does hold kernels there
        if reached(ctx, f.file) is False:
            continue  # the measured run never executed the call: nothing in this run says what it was meant for
        own_named = _named_modules(scan, file=f.file)
        kernel_mods = [i.project_module for i in scan.imports_in(f.file) if i.defines_kernels and i.project_module]
        imported_named: dict[str, KernelDef] = {}
        plain: list[str] = []
        for m in sorted(set(kernel_mods)):
            named = _named_modules(scan, python_module=m)
            imported_named.update({n: k for n, k in named.items() if n not in imported_named})
            if not named or any(k.python_module == m and k.warp_module == m for k in scan.kernels):
                plain.append(m)
        named_targets = own_named or imported_named
        if _on_every_unique_decorator(scan, f):
            # every kernel of the file is module="unique" and its decorator already carries these options: the call
            # configures nothing, but nothing is missing either (advising the decorator option would repeat it)
            continue
        if not named_targets and not plain and scan.functions_in(f.file):
            # a file of @wp.func helpers: they compile into the modules of the kernels that call them, whose own
            # options govern them; setting options beside them is a harmless habit with no module to point at
            continue
        defines = any(k.python_module == f.target for k in scan.kernels)  # its own kernels, module="unique"
        if not named_targets and not plain and not defines and not _is_entry(ctx, f.file, info):
            # a library file that neither holds, imports nor names kernels (a convention copied into every file):
            # nothing in the run or the source says which kernels the call was meant for
            continue
        candidates = (
            sorted(own_named)
            or sorted({*plain, *imported_named})
            or sorted(built)[:3]
            or sorted(scan.python_modules_with_kernels)[:3]
        )
        if not own_named and not defines and f.options and set(f.options) <= {"enable_backward"}:
            continue  # whether imported kernels need their backward code is CS-10's question, measured and priced there
        evident = {*own_named, *plain, *imported_named}  # what the source ties the call to (not the guess below)
        meant = [b for b in ctx.report.builds if b.module in evident]
        if f.options and meant and all(norm_value(b.options.get(k)) == norm_value(v)
                                       for b in meant for k, v in f.options.items()):
            continue  # every module it could be meant for compiled with these options already: nothing is missing
        opts = literal_dict(f.options) if f.options else (f.options_text or "{...}")
        targets = " or ".join(f'wp.get_module("{m}").options.update({opts})' for m in candidates[:2])
        evidence = [
            Evidence(
                fact=f"wp.set_module_options({opts}) at {ctx.rel(f.file)}:{f.line} targets its calling Python "
                f"module {f.target}, which defines no kernels",
                source="scan",
            ),
            Evidence(
                fact=f"no build of a module named {f.target} was measured; built: {', '.join(sorted(built)) or 'none'}",
            ),
        ]
        for m, k in sorted(named_targets.items()):
            evidence.append(
                Evidence(
                    fact=f"{k.name} ({ctx.rel(k.file)}:{k.line}) is declared with module={k.module_arg_text or repr(m)}"
                    f": it joins the named Warp module {m}, which this call does not configure",
                    source="scan",
                )
            )
        for b in ctx.report.builds:
            if b.module not in candidates or not f.options:
                continue
            absent = {
                k: b.options[k]
                for k, v in f.options.items()
                if k in b.options and norm_value(b.options[k]) != norm_value(v)
            }
            if absent:
                ran = ", ".join(f"{k}={v}" for k, v in absent.items())
                evidence.append(build_evidence(b, f"ran with {ran}: the options set here never reached it"))
        if named_targets:
            first = sorted(named_targets)
            stmts = " and ".join(f'`wp.get_module("{m}").options.update({opts})`' for m in first[:2])
            siblings = [
                o
                for o in scan.module_options
                if o is not f
                and o.api == "set_module_options"
                and o.target != f.target
                and not o.target_has_kernels
                and set(_named_modules(scan, file=o.file)) & set(first)
            ]
            sources = ", ".join(sorted({k.python_module for k in named_targets.values()}))
            where = (
                f'the kernels of {ctx.rel(f.file)} are declared with module="{first[0]}"'
                if own_named
                else f'the kernels imported here ({sources}) are declared with module="{first[0]}"'
            )
            fix = (
                f"A bare wp.set_module_options() configures the calling file's own module {f.target}, but {where}, "
                f"so these options never reach them"
                + (" (the call is already at file level: moving it does not help)" if f.scope == "module" else "")
                + f". Replace the call at {ctx.rel(f.file)}:{f.line} with {stmts}"
                + ("" if f.scope == "module" else ", at file level")
                + ": it runs at import, before "
                f"{first[0]} first loads, and works on every Warp version ({_set_elsewhere_note(first[0])})."
            )
            if siblings:
                fix += " The same applies to " + ", ".join(f"{ctx.rel(o.file)}:{o.line}" for o in siblings[:4]) + "."
            fix += " Then check that the module hash moved."
        elif unique_own := sorted({k.name for k in scan.kernels if k.python_module == f.target
                                   and k.module_arg == "unique"}):
            fix = (
                f"The kernels of {ctx.rel(f.file)} ({', '.join(unique_own[:4])}) are each created with "
                f'module="unique": each gets a module of its own, named after its hash, which a '
                f"wp.set_module_options() call never reaches. Either give them the options on their decorators "
                f"(module_options={opts}, Warp 1.15 and newer), or let them share {f.target} (CS-9) and set "
                f"{opts} on it at file level, before its first load."
            )
        else:
            fix = (
                f"Call wp.set_module_options({opts}) at the top of the Python file that defines the kernels, or "
                f"set it on the module itself before it loads: {targets or 'wp.get_module(name).options.update(...)'}"
                ". Then check that the module hash moved."
            )
        out.append(
            Finding(
                mechanism=MECHANISM,
                title=f"wp.set_module_options() configures {f.target}, which holds no kernels",
                applicability="manual" if can_edit(ctx) else None,
                review=never_reached_review(*sorted(f.options)),
                severity="low",
                confidence="high" if built else "medium",
                modules=candidates,
                evidence=evidence,
                locations=[ctx.loc(f.file, f.line, f"set_module_options targets {f.target} (no kernels)")],
                fix=fix,
                estimated_saving_ms=None,
                saving_basis="not measured: the options never reached a module",
                samples=1 if ctx.samples else 0,
                caveats=["Options that change numerics (fast_math, mode) change results once they do arrive."],
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- 4. ignored writes


@dataclass
class AfterLoad:
    """Why a write to a module's options ran after the module first loaded."""

    kind: str  # "call": a call of the writer runs after the load; "same": the write follows it in one function;
    # "static": the write follows a launch in the same body (scan only)
    file: str  # where the late step is: the call site ("call"), the write ("same", "static")
    line: int
    function: str
    load_file: str = ""  # the line in that function that led to the first load
    load_line: int = 0
    callee: str = ""  # "call": the function the call site calls


def short_name(function: str) -> str:
    return function.split(".")[-1]


def after_first_load(ctx: RuleContext, f: ModuleOptionsFact, first: Build) -> AfterLoad | None:
    """Order the write against the measured first load: the build's trigger stack (user frames, innermost first)
    against the write's own line and the scanned calls of its function; else the scan's same-body order."""
    t = first.trigger
    frames: list[tuple[str, str, int]] = []
    if t is not None:
        for site in [t, *t.stack]:
            fr = (ctx.rel(site.file), site.function, site.line)
            if fr not in frames:
                frames.append(fr)
    for file, function, line in frames:
        if f.file == file and short_name(f.function) == function and f.line > line:
            return AfterLoad("same", f.file, f.line, f.function, file, line)
        for c in f.callers:
            if c.file == file and short_name(c.function) == function and c.line > line:
                return AfterLoad("call", c.file, c.line, c.function, file, line, callee=c.callee)
    if f.before_launch_in_file is False:
        return AfterLoad("static", f.file, f.line, f.function)
    return None


def _launches_after(ctx: RuleContext, module: str, after: AfterLoad) -> tuple[int, list[str]]:
    """Measured launches of `module` from the late step's function at later lines: they ran the old binary."""
    n = 0
    sites: list[str] = []
    for la in ctx.report.launches:
        s = la.site
        if la.module != module or s is None:
            continue
        if ctx.rel(s.file) == after.file and s.function == short_name(after.function) and s.line > after.line:
            n += la.count
            where = f"{ctx.rel(s.file)}:{s.line}"
            if where not in sites:
                sites.append(where)
    return n, sites


def _python_module(scan: ScanFacts, module: str) -> bool:
    return module == "__main__" or scan.module_info(module) is not None


def ignored_write_findings(ctx: RuleContext) -> list[Finding]:
    """`get_module(x).options[...] = v` / `.options.update(...)` after x loaded: Warp does not re-hash on a direct
    write, so v never arrives (the options dict says v, the binary that runs was built without it).

    Confirmed by the measurement: every build of x carries the old value, no rebuild happened for it, and the write
    runs after the first load: a later line of a function on the first load's trigger stack, or a call of the
    writing function from such a line (the scan's callers), or, without a matching frame, after a launch in the
    same body.
    """
    scan = ctx.scan
    if scan is None:
        return []
    out = []
    for f in scan.module_options:
        if f.api == "set_module_options" or not f.options or not f.target:
            continue
        builds = [b for b in ctx.loads if b.module == f.target]
        if not builds:
            continue
        missed = {
            k: v
            for k, v in f.options.items()
            if all(k in b.options and norm_value(b.options[k]) != norm_value(v) for b in builds)
        }
        if not missed:
            continue
        first = min(builds, key=lambda b: b.seq)
        after = after_first_load(ctx, f, first)
        if after is None:
            continue
        out.append(_ignored_write_finding(ctx, f, missed, builds, first, after))
    return out


def _ignored_write_finding(
    ctx: RuleContext,
    f: ModuleOptionsFact,
    missed: dict[str, str],
    builds: list[Build],
    first: Build,
    after: AfterLoad,
) -> Finding:
    scan = ctx.scan
    assert scan is not None and f.target is not None
    module = f.target
    opts = literal_dict(missed)
    names = ", ".join(missed)
    first_at = f"{ctx.rel(first.trigger.file)}:{first.trigger.line}" if first.trigger else None
    where = f" (first load at {first_at})" if first_at else ""
    fn = f" in {f.function}()" if f.scope == "function" else ""
    write = f'{ctx.rel(f.file)}:{f.line} writes {opts} to wp.get_module("{module}").options{fn}'
    load_step = f"{after.load_file}:{after.load_line}"
    led = (
        f" (the first load of {module})"
        if load_step == first_at
        else f", which led to the first load of {module} at {first_at}"
    )
    if after.kind == "call":
        order = (
            f"{write}, which runs from {after.file}:{after.line} (`{short_name(after.callee)}()` in "
            f"{short_name(after.function)}()) after {load_step}{led}"
        )
    elif after.kind == "same":
        order = f"{write} after {load_step}{led}"
    else:
        order = f"{write} after a launch in the same code path"
    n_after, sites = _launches_after(ctx, module, after)
    ran = (
        f"; {n_after} launch(es) of {module} after the write ({', '.join(sites[:4])}) ran the binary built "
        "without it, while "
        f'wp.get_module("{module}").options says {", ".join(f"{k}={norm_value(v)}" for k, v in missed.items())}'
        if n_after
        else ""
    )
    evidence = [
        Evidence(fact=order, source="scan"),
        Evidence(
            fact=f"all {len(builds)} load(s) of {module} ran with "
            + ", ".join(f"{k}={builds[-1].options.get(k)}" for k in missed)
            + f"{where}; no rebuild picked the new value up, because a direct write to .options (or .options.update) "
            "does not mark the module modified" + ran,
            builds=[b.seq for b in builds],
        ),
    ]
    locations: list[Location | None] = [
        ctx.loc(f.file, f.line, f"writes {names} after {module} loaded: never reaches the build")
    ]
    if after.kind == "call":
        locations.append(
            ctx.loc(after.file, after.line, f"{short_name(after.callee)}() runs here, after {module} first loaded")
        )
    # where the option can be set before the first load
    if after.kind == "call":
        early = f"call {short_name(after.callee)}() before {load_step} instead of at {after.file}:{after.line}"
    elif first_at:
        early = f"move the write above {load_step}"
    else:
        early = "move the write above the first launch"
    kernel_file = scan.python_modules_with_kernels.get(module) if _python_module(scan, module) else None
    named = [k for k in scan.kernels if k.warp_module == module and k.module_arg]
    if kernel_file and not named:
        home = f"or set it where the kernels are defined, `wp.set_module_options({opts})` at the top of {kernel_file}"
    else:
        files = sorted({k.file for k in named})
        home = (
            f'or `wp.get_module("{module}").options.update({opts})` at the top of {files[0]}, before any launch'
            if files
            else f'or `wp.get_module("{module}").options.update({opts})` before any launch'
        )
    if _python_module(scan, module):
        rebuild = (
            f'`wp.set_module_options({opts}, module=sys.modules["{module}"])` (with `import sys`), which marks it '
            f'modified on warp 1.10.1 and 1.19 alike (1.19 also accepts module="{module}"; 1.10.1 raises '
            "AttributeError on a name)"
        )
    else:
        rebuild = (
            f'`wp.set_module_options({opts}, module="{module}")` on warp 1.19, or on any version '
            f'`m = wp.get_module("{module}"); m.options.update({opts}); m.mark_modified()` (1.10.1 only accepts a '
            "Python module in set_module_options)"
        )
    fix = (
        f'The write changes wp.get_module("{module}").options but not the module that runs: that was built at the '
        f"first load and nothing marked it modified. For every launch to use {names}, set it before {module} first "
        f"loads{where}: {early}, {home}. If the launches before the "
        f"write must really run without {names}, only a call that marks the module modified makes it arrive: replace "
        f"the write at {ctx.rel(f.file)}:{f.line} with {rebuild}; that costs a second build of {module} "
        f"(~{fmt_ms(first.ms)} measured for the first). Then check that the module hash moved."
    )
    return Finding(
        mechanism=MECHANISM,
        title=f"{names} written to {module} after it loaded never arrive{'s' if len(missed) == 1 else ''}",
        applicability="manual" if can_edit(ctx) else None,
        review=never_reached_review(*sorted(missed)),
        severity="low",
        confidence="high" if after.kind != "static" else "medium",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=None,
        saving_basis="not a saving: the options were silently absent; applying them changes what is compiled",
        samples=1 if ctx.samples else 0,
        caveats=[
            "Once the write lands before the first load, the module compiles with these options: they may change "
            "numerics (mode, fast_math) and compile time.",
            "Set before the first load, the option also applies to the launches that ran before the write; if "
            "those must run without it, take the rebuild route and count the second build.",
        ],
    )


