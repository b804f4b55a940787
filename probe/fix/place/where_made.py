"""CS-6 for a generic kernel made inside a function into a module of its own: its routine instances registered on the
line after the one that makes it.

A `module="unique"` kernel gets its module when it is made, so it always exists before that module first loads;
what rebuilds the module is an instance launched after the first one (float64 arrays after float32). Making the
kernel earlier (memoize, hoist, a call from the run's record) changes nothing there. The run's record says where
each kernel was made (the line that ran `wp.kernel`) and which argument types each was launched with: when every
kernel made on that line was made before its module first loaded and was launched with the same types, a
`wp.overload` per type list right after the line makes every instance exist before the first launch, and the module
builds once. Launches resolve to the registered instances; a type a later run launches that this one did not is
still made lazily, as before.
"""

from __future__ import annotations

import ast

from ...models import KernelCreation
from ...models.scan import KernelDef
from ..edits import insert_before, replace_lines
from ..transform import syntax
from ..transform.context import Project
from .overload_edits import Plan, _binds_warp, _spellable, wp_type

STEP = "register where it is made"


def _made(ctx: Project, key: str) -> list[KernelCreation]:
    return [c for c in ctx.report.kernel_creations if c.made_by == "kernel" and c.key == key]


def _launched(ctx: Project, key: str) -> list[tuple[str, ...]]:
    """The distinct argument-type lists `key` was launched with, in first-launch order."""
    out: list[tuple[str, ...]] = []
    for la in ctx.report.launches:
        if la.kernel == key and la.dtypes and tuple(la.dtypes) not in out:
            out.append(tuple(la.dtypes))
    return out


def _first_load_ms(ctx: Project, key: str) -> float | None:
    starts = [b.start_ms for b in ctx.report.builds
              if b.start_ms > 0 and any(key in (k.key, k.generic_parent) for k in b.kernels)]
    return min(starts) if starts else None


def _statement(tree: ast.Module, line: int) -> tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The innermost statement of a function body that holds `line`, with that function."""
    best: tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in fn.body:
            first, last = syntax.span_of(stmt)
            if first <= line <= last and (best is None or stmt.lineno >= best[0].lineno):
                best = (stmt, fn)
    return best


def _why_not_sooner(name: str, module: str, made_ms: float, load_ms: float) -> str:
    """Why the candidates that make the kernel sooner cannot remove this rebuild, each named."""
    when = (f"the run made {name} {made_ms:.0f} ms in, before {module} first loaded ({load_ms:.0f} ms in), and its "
            "later instances came with launches")
    return (f"memoize: a cached call at import would only make {name} sooner: {when}; hoist: a definition at module "
            f"scope would too, and {name} still gets its instances from launches; from the run's record: calling "
            "the function that made it at import, the same")


def register_where_made(ctx: Project, kdef: KernelDef, key: str, module: str) -> Plan:
    """`wp.overload(<the kernel>, [...])` per recorded type list right after the line that makes it (see the
    module docstring), or a manual plan that names every candidate and why it failed."""
    plan = Plan(registers=True)
    made = _made(ctx, key)
    load = _first_load_ms(ctx, key)
    if not made or load is None:
        plan.review = (f"{STEP}: the run recorded no creation of {key} (an older hook); memoize, hoist and from the "
                       "run's record were not tried")
        return plan
    sooner = _why_not_sooner(key, module, min(c.start_ms for c in made), load)
    sites = {(ctx.sources.rel(c.file), c.line) for c in made}
    whys = []
    if len(sites) != 1 or None in next(iter(sites)):
        whys.append(f"{key} was made on more than one line, or outside the project's files")
    else:
        file, line = next(iter(sites))
        whys += _site_plan(ctx, plan, kdef, key, str(file), int(line))
    if plan.edits:
        return plan
    plan.review = "; ".join([f"{STEP}: {w}" for w in whys[:1]] + [sooner])
    plan.prose = (f"{key} is made inside {kdef.enclosing_function or 'a function'}() into a module of its own, "
                  "before that module first loads: register the instances it is launched with right after it is "
                  f"made, by hand ({whys[0] if whys else 'see the review'}).")
    return plan


def _site_plan(ctx: Project, plan: Plan, kdef: KernelDef, key: str, file: str, line: int) -> list[str]:
    """Fill `plan` with the registration after `file:line`, or return why it cannot be written."""
    same = [c for c in ctx.report.kernel_creations
            if c.made_by == "kernel" and ctx.sources.rel(c.file) == file and c.line == line]
    types = _launched(ctx, key)
    if not types:
        return [f"the launches of {key} recorded no argument types"]
    for c in same:  # every kernel this line makes gets the registrations, so each must have needed them all
        other = _launched(ctx, c.key)
        if set(other) != set(types):
            return [f"{c.key}, also made at {file}:{line}, was launched with other argument types than {key}, so one "
                    "registration would compile instances some kernel never uses"]
        load = _first_load_ms(ctx, c.key)
        if load is not None and c.start_ms >= load:
            return [f"{c.key} was made after its module first loaded, so a registration where it is made comes late"]
    bad = next((b for t in types if (b := _spellable(list(t))) is not None), None)
    if bad is not None:
        return [f"the argument type {bad} is not a Warp built-in type, so the registration is written by hand"]
    src = syntax.parsed(ctx.sources, file)
    found = _statement(src[1], line) if src is not None else None
    if src is None or found is None:
        return [f"{file}:{line} is not a statement in a function"]
    lines, tree = src
    stmt, fn = found
    if not _binds_warp(tree, fn.lineno):
        return [f"{file} does not bind `wp` to warp at module scope, so the lines are written by hand"]
    pad = " " * syntax.indent_of(lines[stmt.lineno - 1])
    first, last = syntax.span_of(stmt)

    def calls(target: str) -> list[str]:
        out = []
        for t in types:
            args = ", ".join(wp_type(d) for d in t)
            one = f"{pad}wp.overload({target}, [{args}])"
            out.append(one if len(one) <= 100 else f"{pad}wp.overload(\n{pad}    {target},\n{pad}    [{args}],\n{pad})")
        return out

    note = f"{pad}# register the instances the launches add, so its module builds once with all of them"
    if isinstance(stmt, ast.FunctionDef) and kdef.form == "decorator" and stmt.name == kdef.name:
        e = insert_before(ctx.sources, file, last + 1, "\n".join([note, *calls(stmt.name)]) + "\n")
    elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
          and isinstance(stmt.value, ast.Call) and stmt.value.lineno <= line):
        e = insert_before(ctx.sources, file, last + 1, "\n".join([note, *calls(stmt.targets[0].id)]) + "\n")
    elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) and kdef.form == "call":
        name = f"{kdef.name}_kernel"
        if name in syntax.bound_names(fn) | syntax.read_names(fn):
            return [f"the name {name} is already used in {fn.name}()"]
        value = ast.get_source_segment("".join(lines), stmt.value) or ast.unparse(stmt.value)
        e = replace_lines(ctx.sources, file, first, last,
                          "\n".join([f"{pad}{name} = {value}", note, *calls(name), f"{pad}return {name}"]))
    else:
        return [f"the kernel is made inside the expression of a {type(stmt).__name__.lower()} statement at "
                f"{file}:{line}, not bound to a name the registration can follow"]
    if e is None:
        return [f"{file} is not a file of the project"]
    kinds = ", ".join("[" + ", ".join(t) + "]" for t in types)
    plan.edits, plan.applicability = [e], "review"
    plan.review = (f"every kernel {fn.name}() makes at {file}:{line} now compiles the instances {kinds} at its first "
                   "launch, as each one this run made was launched with: a run that launches fewer pays for the rest")
    plan.prose = (f"{key} is made at {file}:{line} inside {fn.name}(), before its module first loads; its other "
                  f"instances came with later launches. The edit registers {kinds} right after that line, so the "
                  "module builds once with every instance; launches resolve to them.")
    return []
