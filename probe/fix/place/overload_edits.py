"""CS-6's edits: how a generic kernel's routine instances get registered before the first launch, or why not.

For the project's module-scope kernel, `wp.overload` lines right after its definition; for its closure kernel
(made inside a function), a module of its own (`closure_kernels`); for an installed library's kernel, a
registration from the entry point when a module-scope name reaches it, else an upstream report for its
maintainers. The argument types come from the measured launches, spelled as Warp expressions.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from ...dependency_advice import dist_relative, upstream_report
from ...fmt import fmt_ms
from ...hashdiff import content_hashed
from ...models import Build, KernelInfo, Site
from ...models.diagnosis import Edit, UpstreamReport
from ...models.scan import CREATION_OPTIONS, KernelDef
from ..edits import insert_before
from ..transform import syntax
from ..transform.context import Project
from .closure_kernels import own_closure_plan, upstream_closure_change

SCALAR_CODES = {
    "float16": "f2",
    "float32": "f4",
    "float64": "f8",
    "int8": "i1",
    "int16": "i2",
    "int32": "i4",
    "int64": "i8",
    "uint8": "u1",
    "uint16": "u2",
    "uint32": "u4",
    "uint64": "u8",
    "float": "f4",
    "int": "i4",
}
ARRAY_RE = re.compile(r"^array\[(?P<dtype>[^;\]]+);(?P<ndim>\d)d\]$")


def type_code(dtype: str) -> str | None:
    """Warp's short type code for a recorded launch dtype, when it is one we can spell (else None: no opinion)."""
    m = ARRAY_RE.match(dtype)
    if m:
        inner = SCALAR_CODES.get(m.group("dtype"))
        return f"a{m.group('ndim')}{inner}" if inner else None
    return SCALAR_CODES.get(dtype)


def signature_matches(sig: str, dtypes: list[str]) -> bool:
    tokens = sig.split("_") if sig else []
    if len(tokens) != len(dtypes):
        return False
    return all(type_code(d) in (None, t) for t, d in zip(tokens, dtypes, strict=True))


def wp_type(dtype: str) -> str:
    """A launch dtype as the Python expression that names it in `wp.overload(...)`."""
    m = ARRAY_RE.match(dtype)
    if m:
        inner = m.group("dtype")
        inner_expr = inner if inner in ("float", "int") else f"wp.{inner}"
        ctor = "wp.array" if m.group("ndim") == "1" else f"wp.array{m.group('ndim')}d"
        return f"{ctor}(dtype={inner_expr})"
    if dtype in ("float", "int", "bool"):
        return dtype
    return f"wp.{dtype}"



def load_frames(build: Build | None) -> list[Site]:
    if build is None or build.trigger is None:
        return []
    return list(build.trigger.stack) or [build.trigger]


def type_suffix(dtype: str) -> str:
    m = ARRAY_RE.match(dtype)
    return (m.group("dtype") if m else dtype) if dtype else ""


# ---------------------------------------------------------------------------------------------- the edits

_WARP_TYPE = re.compile(r"^(vec|mat|quat|transform|spatial_vector|spatial_matrix|spatial_transform)\w*$")
RANK = {"automatic": 0, "review": 1, "manual": 2}


@dataclass
class Plan:
    """How one generic kernel's routine instances get registered before the first launch, or why not."""

    edits: list[Edit] = field(default_factory=list)
    applicability: str = "manual"
    review: str = ""
    prose: str = ""  # replaces the generic "register at module scope" sentence when set
    upstream: tuple[str, str, int, str] | None = None  # (distribution, file, line, change) when nothing else works
    upstream_diff: str = ""  # the change against the dependency's own file, for its maintainers
    upstream_edits: list[Edit] = field(default_factory=list)  # the same change as edits (paths as they name them)
    upstream_base: str = ""  # where those paths resolve (read only)
    registers: bool = True  # the fix registers overloads (launches then resolve to them)


def _spellable(dtypes: list[str]) -> str | None:
    """The first recorded argument type `wp_type` cannot spell as a Warp expression (a struct, a custom type)."""
    for d in dtypes:
        m = ARRAY_RE.match(d)
        inner = m.group("dtype") if m else d
        if inner in SCALAR_CODES or inner == "bool" or _WARP_TYPE.match(inner):
            continue
        return d
    return None


def _calls(target: str, parent: str, sigs: list[str], types: dict, prefix: str) -> tuple[list[str], str]:
    """`<prefix><parent>_<suffix> = wp.overload(<target>, [...])` per signature, or (_, why not)."""
    out = []
    for sig in sigs:
        dt = types.get(sig)
        if dt is None:
            return [], f"the argument types of the instance {sig or '?'} were not recorded by the measurement"
        bad = _spellable(dt)
        if bad is not None:
            return [], f"the argument type {bad} is not a Warp built-in type, so the registration is written by hand"
        suffix = "_".join(dict.fromkeys(type_suffix(d) for d in dt if type_suffix(d))) or sig.replace("_", "")
        args = ", ".join(wp_type(d) for d in dt)
        line = f"{prefix}{parent}_{suffix} = wp.overload({target}, [{args}])"
        wrapped = f"{prefix}{parent}_{suffix} = wp.overload(\n    {target},\n    [{args}],\n)"
        out.append(line if len(line) <= 100 else wrapped)
    return out, ""


def _binds_warp(tree: ast.Module, before: int) -> bool:
    """The file binds `wp` to warp (`import warp as wp`) at module scope before line `before`."""
    for stmt in tree.body:
        if stmt.lineno >= before:
            break
        if isinstance(stmt, ast.Import) and any(a.name == "warp" and a.asname == "wp" for a in stmt.names):
            return True
    return False


def own_plan(
    ctx: Project, parent: str, kdef: KernelDef | None, module: str, sigs: list[str], types: dict
) -> Plan:
    """A generic kernel of the project's own: the registrations at module scope right after its definition."""
    plan = Plan()
    if kdef is None:
        plan.review = (f"the definition of {parent} was not found in the scanned sources, nor at the line the run "
                       "recorded making it (hoist: no definition to move; memoize: no factory to cache)")
        return plan
    if kdef.nested and kdef.generic:
        closure = own_closure_plan(ctx, kdef, module, types)
        plan.edits, plan.applicability, plan.review = closure.edits, closure.applicability, closure.review
        plan.prose, plan.registers = closure.prose, False
        return plan
    if kdef.nested:
        plan.review = (
            f"{kdef.name} is created inside {kdef.enclosing_function}(), so it cannot be registered at module scope: "
            "register its instances right after it is created, before its first launch"
        )
        return plan
    src = syntax.parsed(ctx.sources, kdef.file)
    node = syntax.def_at(src[1], kdef.line, kdef.name) if src is not None else None
    if src is None or node is None:
        plan.review = f"{kdef.file}:{kdef.line} could not be read back as the definition of {kdef.name}"
        return plan
    lines, tree = src
    # after the module-scope statement that holds it: a definition under `if`/`try` (one per branch) is bound once
    # that statement ran, and lines inserted at column 0 inside the block would break it
    top = syntax.top_statement(tree, node.lineno)
    end = syntax.span_of(top if top is not None else node)[1]
    if not _binds_warp(tree, end):
        plan.review = f"{kdef.file} does not bind `wp` to warp before {kdef.name}, so the lines are written by hand"
        return plan
    calls, why = _calls(kdef.name, kdef.name, sigs, types, "")
    taken = syntax.module_bindings(tree)
    if not why and any(c.split(" = ", 1)[0] in taken for c in calls):
        why = "a name the registrations would bind is already used at module scope"
    if why:
        plan.review = why
        return plan
    e = insert_before(ctx.sources, kdef.file, end + 1, "\n\n" + "\n".join(calls) + "\n")
    if e is None:
        plan.review = f"{kdef.file} is not a file of the project"
        return plan
    plan.edits, plan.applicability = [e], "automatic"
    return plan


def _entry_insert(ctx: Project) -> tuple[str, list[str], ast.Module, int] | tuple[None, str]:
    """(entry file, its lines, its AST, the line after its leading imports and settings) where a registration for a
    dependency's kernel can go, or (None, why not)."""
    entry = ctx.report.entry
    if entry is None or not entry.file:
        return None, "the measured command's entry point is not known"
    if entry.owner == "dependency":
        return None, f"the entry point {entry.name} is installed ({entry.distribution or 'a dependency'})"
    rel = ctx.sources.rel(entry.file)
    src = syntax.parsed(ctx.sources, entry.file) if rel is not None else None
    if rel is None or src is None:
        return None, "the entry point is not a file of the project"
    lines, tree = src
    at = 1
    for i, stmt in enumerate(tree.body):
        doc = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        setting = isinstance(stmt, (ast.Assign, ast.AugAssign)) and ".config." in ast.unparse(stmt).split("=")[0]
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or doc or setting:
            at = (stmt.end_lineno or stmt.lineno) + 1
            continue
        break
    return rel, lines, tree, at


def dep_plan(
    ctx: Project, parent: str, info: KernelInfo | None, module: str, dist: str, sigs: list[str], types: dict,
    first: Build | None,
) -> Plan:
    """A dependency's generic kernel: `wp.overload(<its importable kernel>, [...])` from the entry point, after its
    imports and settings and before the first launch; an upstream report when the kernel is not importable."""
    plan = Plan()
    where = (dist_relative(info.file), info.line or 0) if info is not None and info.file else (module, 0)
    change = (
        f"register the routine instances of {parent.split('__locals__')[-1]} with wp.overload right after its "
        f"definition in {module}, before anything in {module} is launched"
    )
    rel = where[0].removesuffix(".py").removesuffix("/__init__")
    if rel.replace("/", ".") != module and not ("__locals__" in parent or content_hashed(module)):
        plan.review = (
            f"{parent} joins the Warp module {module}, not the Python module of its file ({rel.replace('/', '.')}), "
            "so the entry point cannot name it by that module: register it by hand"
        )
        plan.upstream = (dist, *where, change)
        return plan
    if "__locals__" in parent or not parent.isidentifier() or content_hashed(module):
        outer = parent.rpartition("__locals__")[0].replace("__", ".").rstrip(".") or "a function"
        name = parent.split("__locals__")[-1].strip("_")
        made = (upstream_closure_change(ctx, info.file, where[0], info.line or 0, name)
                if info is not None and info.file and "__locals__" in parent else None)
        diff = made[1] if made is not None else ""
        plan.review = (
            f"{name} is created inside {outer}() of the installed {dist}: no module-scope name reaches it, so the "
            "application cannot register its instances"
        )
        plan.registers = False
        if diff:
            change = (f'give the closure kernel {name} a module of its own (module="unique" on its decorator): its '
                      f"instances then rebuild only that kernel's module, and {module} builds once; a wp.overload "
                      f"at the definition would need the instance types, which {outer}() never receives")
            plan.upstream_diff = diff
            plan.upstream_edits, plan.upstream_base = [made[0]], made[2]  # type: ignore[index]
        plan.prose = (
            f"{name} belongs to the installed {dist} and is created inside {outer}(): no module-scope name reaches "
            "it, so the application cannot register its instances. The upstream report for its maintainers "
            + ("carries the change as a diff against their file." if diff else "names the lines and the cost.")
        )
        plan.upstream = (dist, *where, change)
        return plan
    found = _entry_insert(ctx)
    if found[0] is None:
        plan.review = f"{found[1]}: the registration for {dist}'s {parent} is not written mechanically"
        plan.upstream = (dist, *where, change)
        return plan
    rel, _lines, tree, at = found  # type: ignore[misc]
    entry_abs = os.path.normpath(str(ctx.report.entry.file))  # type: ignore[union-attr]
    frames = load_frames(first)
    late_enough = any(os.path.normpath(fr.file) == entry_abs and fr.line >= at for fr in frames)
    alias = "_" + module.replace(".", "_")
    calls, why = _calls(f"{alias}.{parent}", parent, sigs, types, alias + "_")
    if why or not late_enough:
        plan.review = why or (
            f"{module} first loads before the entry point's code after its imports runs (or the measurement does not "
            "show where), so a registration there may come too late"
        )
        plan.upstream = (dist, *where, change)
        return plan
    head = [] if _binds_warp(tree, at) else ["import warp as wp"]
    text = "\n".join(
        [
            *head,
            f"import {module} as {alias}",
            f"# {dist}'s generic {parent}: register the instances this app launches, before the first launch",
            *calls,
        ]
    )
    e = insert_before(ctx.sources, rel, at, text + "\n")
    if e is None:
        plan.review = "the entry point is not a file of the project"
        return plan
    plan.edits, plan.applicability = [e], "review"
    plan.review = (
        f"the entry point now imports {module} before its own code runs: check that nothing the app sets before "
        f"importing {dist} (wp.config, environment) is needed by it"
    )
    created = next((c for c in ctx.report.module_creations if c.module == module), None)
    copied = {k: v for k, v in (created.options if created else {}).items() if k in CREATION_OPTIONS and v != "None"}
    if created is not None and all(ctx.report.config_at_import.get(k, v) == v for k, v in copied.items()):
        plan.applicability, plan.review = "automatic", ""
    plan.prose = (
        f"{parent} belongs to the installed {dist} (do not edit it): register the instances this app launches from "
        f"the entry point {rel}, after its imports and before the first launch, with "
        + "; ".join(f"`{c}`" for c in calls)
        + f" (after `import {module} as {alias}`); {module} then loads once with every instance."
    )
    return plan


def overload_upstream_report(
    module: str, ups: list[tuple[str, str, int, str]], ms: float, plans: list[Plan], rebuilds: list[float],
    samples: int,
) -> UpstreamReport:
    places = [(f, n, "generic kernel launched with new argument types after its module loaded") for _d, f, n, _c in ups]
    each = ", ".join(fmt_ms(x) for x in rebuilds)
    measured = (
        f"{module} built {len(rebuilds) + 1} times in one cold run; the {len(rebuilds)} superseded build(s) "
        f"({each}) cost {fmt_ms(ms)}"
    )
    rep = upstream_report(
        ups[0][0],
        f"{module} is rebuilt for every new instance of a generic kernel launched after it loaded",
        places,
        ms,
        measured,
        "; ".join(dict.fromkeys(c for *_x, c in ups)),
    )
    rep.estimated_ms, rep.samples = round(ms, 1), samples
    rep.text += (f"\nEstimated saving: {fmt_ms(ms)} per cold start"
                 + (" (one sample: no noise band yet)" if samples <= 1 else "") + ".\n")
    diffs = [p.upstream_diff for p in plans if p.upstream_diff]
    if diffs:
        rep.diff = "".join(dict.fromkeys(diffs))
        rep.edits = [e for p in plans for e in p.upstream_edits]
        rep.base_dir = next(p.upstream_base for p in plans if p.upstream_base)
        rep.text += f"\nThe change, against {ups[0][0]}'s source:\n\n```diff\n{rep.diff}```\n"
    return rep
