"""`wp.map`'s kernels made at import: the candidate for CS-1 when the late kernels are Warp's generated map kernels.

`wp.map(fn, *inputs)` generates a `map_kernel` for the input types and registers it in a module named after the
mapped function (`map_soften`); a call with new input types after that module loaded adds a kernel and rebuilds it.
The kernels are not the project's definitions (no `def` to move, no factory of its own to cache), but the hook
records, per creation, the mapped function and what the kernel is chosen by (hook_kernels._mapped: each input's
array family, dtype, ndim and which dimensions are 1, or a plain value's type; the `out` given). The step writes,
right after the function's last module-scope definition in its own file, one
`wp.map(fn, <zero-size CPU placeholders>, return_kernel=True, device="cpu")` per distinct record, kept in a
module-scope tuple: every map kernel then exists before the module first loads, and the module builds once.

Checked on warp-lang 1.10.1, 1.15.0 and 1.19.0 (docs/fix.md): `return_kernel=True` returns before the launch;
the only allocation is the zero-size output; from 1.15 Warp's `map_cache` (keyed by function key, each input's
family, dtype, ndim and size-1 dimensions, and the output family) hands the later real call the same kernel object,
so nothing joins the module (its hash equals the unfixed run's final build); 1.10 has no cache and makes a kernel of
the same source at every call, which does not change the module's hash once it loaded with them. The placeholders
live on the CPU whatever device the app maps on (a kernel is device-independent), so no CUDA context is made; Warp
initialises and the map module is created when the file is imported, earlier than the run did, which is why a
`wp.config` write inside a function, or at module scope after kernel modules were imported, refuses the step (Warp
reads some at initialisation, and a new module copies some options from `wp.config`).

Refused, with the reason: a creation the hook did not describe (an older hook or Warp); a lambda or a function
defined inside another (no name at import); a function that is not a module-level `def` of a project file, or whose
name is bound by something else after its last `def`; a Warp builtin; an input that is not a plain `wp.array` (an
indexed or fabric array) or a value other than a bool, int or float; a dtype the file cannot name; an `out` that is
not a plain array; a file without `import warp`.
"""

from __future__ import annotations

import ast
from typing import Any

from ...models import KernelCreation
from ..edits import insert_before
from ..transform import syntax
from ..transform.context import Project
from ..transform.memoize import home_of, render
from ..transform.plan import Step, failed

STEP = "create at import"
_VALUES = {"float": "0.0", "int": "0", "bool": "False"}  # a plain value's type -> a value of that type


def made_by_map(c: KernelCreation) -> bool:
    return c.via is not None and c.via.function == "map"


def _placeholder(item: dict, home: Any, ctx: Project, warp: str, at: int) -> str:
    """One input as a zero-size CPU array of the recorded dtype and ndim (size 1 where the real one had 1: map's
    kernel indexes those dimensions at 0), or a plain value of the recorded type; raises ValueError with why not."""
    if "array" not in item:
        value = _VALUES.get(str(item.get("value", ""))) if item.get("module") == "builtins" else None
        if value is None:
            raise ValueError(f"an input is a {item.get('value', 'value')}, which no placeholder at import stands for")
        return value
    if item.get("array") != "array":
        raise ValueError(f"an input is a {item.get('array')}, not a plain wp.array a placeholder stands for")
    dtype = render(item.get("dtype") or {}, home, ctx)
    if dtype is None or home.imports or ("." not in dtype and home.bound.get(dtype, at) >= at):
        raise ValueError(f"{home.file} cannot name the dtype {item.get('dtype')} at module scope there")
    ndim, ones = int(item.get("ndim", 0) or 0), set(item.get("ones") or [])
    if ndim < 1:
        raise ValueError("an input array has no dimension recorded")
    shape = "0" if ndim == 1 and not ones else "(" + ", ".join("1" if i in ones else "0" for i in range(ndim)) + ")"
    return f'{warp}.empty({shape}, dtype={dtype}, device="cpu")'


def _versions(made: list[KernelCreation]) -> list[dict] | str:
    """The distinct map records of `made`, in the run's order, or why one cannot be written."""
    out: list[dict] = []
    for c in made:
        m = c.mapped
        if m is None:
            return (f"{c.key} is made by Warp's map() in {c.function}(), but the run did not record the mapped "
                    "function and input types (an older hook, or this Warp's map keeps them under other names)")
        if m not in out:
            out.append(m)
    return out


def _function_site(ctx: Project, fn: dict) -> tuple[str, str] | str:
    """(file, name) of the module-level function the records map, or why it cannot be named at import."""
    name, module = str(fn.get("name", "")), str(fn.get("module", ""))
    if fn.get("kind") != "function" or not name:
        return "the mapped function is not one the run could name (a Warp builtin or a callable object)"
    if "<lambda>" in name:
        return f"a lambda mapped in-line in {name.split('.<locals>')[0]}() has no name a file can call at import"
    if "<locals>" in name or "." in name:
        return f"{name} is defined inside a function or class, so no module-scope name reaches it at import"
    scan = ctx.scan
    info = None
    if scan is not None:
        info = scan.module_info(module) or next((m for m in scan.modules if m.main_alias == module), None)
    if info is None or ctx.sources.rel(info.file) is None:
        return f"{name} is defined in {module or 'a module'}, not a scanned file of the project"
    return info.file, name


def map_kernels_at_import(ctx: Project, module: str, late: list[KernelCreation]) -> Step | None:
    """The step that makes every map kernel of `module` at import, or a failed step naming why; None when the late
    kernels are not all made by wp.map (another candidate's case)."""
    if not late or not all(made_by_map(c) for c in late):
        return None
    made = [c for c in ctx.report.kernel_creations if c.module == module and made_by_map(c)]
    versions = _versions(made)
    if isinstance(versions, str):
        return failed(STEP, versions)
    functions = {(str(v["function"].get("module")), str(v["function"].get("name"))) for v in versions}
    if len(functions) != 1:
        return failed(STEP, f"{module} holds the map kernels of {len(functions)} different functions of one key")
    site = _function_site(ctx, versions[0]["function"])
    if isinstance(site, str):
        return failed(STEP, site)
    file, name = site
    src = syntax.parsed(ctx.sources, file)
    if src is None:
        return failed(STEP, f"{file} cannot be parsed")
    tree = src[1]
    binding = [s for s in tree.body if name in _binds(s)]
    if not binding or not isinstance(binding[-1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return failed(STEP, f"{name} is not bound by a def at module scope of {file} last")
    home = home_of(ctx, file, tree)
    warp = next((a for a, m in home.modules.items() if m == "warp"), None)
    if warp is None:
        return failed(STEP, f"{file} does not `import warp` at module scope")
    late_config = [s for s in (ctx.scan.config_sets if ctx.scan is not None else [])
                   if s.scope != "module" or s.after_kernel_imports_transitive or s.after_kernels_in_file]
    if late_config:
        s = late_config[0]
        where = f"in {s.function}()" if s.scope != "module" else "at module scope after kernel modules are imported"
        return failed(STEP, f"wp.config.{s.name} is set {where} ({s.file}:{s.line}), and a map at import initialises "
                            f"Warp and creates {module} (which copies some wp.config options) before it is")
    last = binding[-1]
    at = (last.end_lineno or last.lineno) + 1
    calls: list[str] = []
    for v in versions:
        if any(o != "array" for o in v.get("out") or []):
            return failed(STEP, f"a map of {name} writes into a {v['out'][0]} given as out=, not a plain wp.array")
        try:
            args = [_placeholder(i, home, ctx, warp, at) for i in v.get("inputs") or []]
        except ValueError as exc:
            return failed(STEP, f"a map of {name}: {exc}")
        if not any(i.get("array") for i in v.get("inputs") or []):
            return failed(STEP, f"a map of {name} has no array input")
        calls.append(f"    {warp}.map({name}, {', '.join(args)}, return_kernel=True, device=\"cpu\"),")
    keep = _free(home.bound, f"_{name}_map_kernels")
    text = (f"\n\n# wp.map's kernels for {name}, made at import so {module} has all {len(calls)} before it first "
            f"loads\n# (zero-size CPU placeholders: nothing is launched)\n{keep} = (\n" + "\n".join(calls) + "\n)\n")
    e = insert_before(ctx.sources, file, at, text)
    if e is None:
        return failed(STEP, f"{file} is not a file of the project")
    shown = f"{len(calls)} map kernel(s) of {name}"
    return Step(
        what=STEP, edits=[e], done=f"make {shown} at import in {file} (wp.map(..., return_kernel=True))",
        review=[f"{file} now makes {shown} when imported, which initialises Warp there (earlier than the run did; "
                "its banner prints earlier) and keeps the kernels; a map of other input types than the run's "
                f"still adds a kernel to {module} after it loaded (CS-1)"],
    )


def _binds(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    # a compound statement (`if`, `try`, `with`) binds what its blocks define or assign
    return {n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else n.id
            for n in ast.walk(stmt)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))}


def _free(bound: dict[str, int], name: str) -> str:
    if name not in bound:
        return name
    n = 2
    while f"{name}_{n}" in bound:
        n += 1
    return f"{name}_{n}"
