"""A kernel factory cached, so a call with the arguments of an earlier one returns the kernel it made (WC-1).

A factory called at every step (`make_relax(n_iter)` inside `step()`) builds a new Kernel object each time: the
source is parsed, hashed and its module looked up again, every step, though the kernel is the same. One line fixes
it, the one a person would write: `@functools.lru_cache(maxsize=None)` on the factory (and `import functools`).

Preconditions, each named when it fails: the factory is a module-level function of a project file (a method's cache
would key on, and keep alive, its instance); it does not cache already; every argument the run recorded is a value
a cache can key on and source can name (numbers, strings, Warp types, module-level functions: hook_kernels.encode
records anything else as "other"); and each place that calls it passed the same arguments at every call (fixed per
call site), so the cache holds one kernel per call site rather than one per step. And it is a factory: it returns
a value and launches nothing itself, since a cached call hands back the first call's result and skips everything
else the function does (a `main()` that reaches a library's kernel maker, `wp.map`, is not one).
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict

from ...models import KernelCreation
from ..edits import insert_before
from . import syntax
from .context import Project
from .fresh_args import fresh_arguments, params_of
from .memoize import CACHE, _caches, _factory_node, _import_line
from .plan import Step, failed

STEP = "cache the factory"


def _sig(c: KernelCreation) -> str:
    return json.dumps(c.args, sort_keys=True, default=str)


def _unkeyable(c: KernelCreation) -> list[str]:
    return sorted(n for n, v in c.args.items() if v.get("kind") == "other")


def fixed_per_call_site(made: list[KernelCreation]) -> str:
    """"" when every calling place passed the same arguments at every call; else which place varied."""
    by: dict[tuple[str, int], set[str]] = defaultdict(set)
    for c in made:
        site = (c.caller.file, c.caller.line) if c.caller is not None else ("?", 0)
        by[site].add(_sig(c))
    for (file, line), sigs in by.items():
        if len(sigs) > 1:
            return f"the call at {file}:{line} passed {len(sigs)} different argument lists"
    return ""


def _own_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """The function's own nodes: not those of a function, class or lambda defined inside it (a kernel's body)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return out


def not_a_factory(fn: ast.FunctionDef) -> str:
    """"" when `fn` returns a value and launches no kernel itself; else why a cache would change what it does."""
    own = _own_nodes(fn)
    if not any(isinstance(n, ast.Return) and n.value is not None for n in own):
        return (f"{fn.name}() returns nothing: a cached call would skip what it does instead of handing back a "
                "kernel, so it is not a factory a cache can wrap")
    for n in own:
        f = n.func if isinstance(n, ast.Call) else None
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "launch":
            return f"{fn.name}() launches kernels itself (line {n.lineno}): a cached call would skip those launches"
    return ""


def cache_factory(ctx: Project, file: str, function: str, made: list[KernelCreation]) -> Step:
    """The step that caches the module-level factory `function` of `file`, whose calls made `made`."""
    if not function or "." in function or function == "<module>":
        return failed(STEP, f"the kernels are made inside {function}(), not by a module-level factory a cache can "
                            "wrap (a method's cache would key on its instance)")
    src = syntax.parsed(ctx.sources, file)
    node = _factory_node(src[1], function) if src is not None else None
    if src is None or node is None:
        return failed(STEP, f"{function}() was not found at module scope of {file}")
    why = not_a_factory(node)
    if why:
        return failed(STEP, why)
    if _caches(node):
        return failed(STEP, f"{function}() caches already, yet made new kernels: its arguments differ per call")
    fresh = fresh_arguments(ctx, made, params_of(node))
    if fresh:
        f = fresh[0]
        return failed(STEP, f"{function}()'s argument {f.param} is a new function at every call "
                            f"({ctx.rel(f.site_file)}:{f.site_line} calls {f.maker}(), which defines "
                            f"{f.value.get('name')} anew): a cache on {function}() keys on that object and never hits")
    bad = sorted({n for c in made for n in _unkeyable(c)})
    if bad:
        return failed(STEP, f"{function}()'s argument(s) {', '.join(bad)} are objects a cache would key on by "
                            "identity, not value")
    varied = fixed_per_call_site(made)
    if varied:
        return failed(STEP, f"{varied}: a cache would keep one kernel per call, not one per place")
    step = Step(what=STEP)
    cached = insert_before(ctx.sources, file, syntax.span_of(node)[0], CACHE)
    if cached is None:
        return failed(STEP, f"{file} is not a file of the project")
    step.edits.append(cached)
    at, has = _import_line(src[1])
    if not has:
        imp = insert_before(ctx.sources, file, at, "import functools")
        if imp is None:
            return failed(STEP, f"{file} is not a file of the project")
        step.edits.append(imp)
    versions = len({_sig(c) for c in made})
    step.done = f"cache {function}() (functools.lru_cache): {versions} argument list(s), one kernel each"
    step.review.append(
        f"{function}() now returns the kernel it made for the same arguments (functools.lru_cache): callers share "
        "that object, and a value the kernel read from elsewhere when it was made (a global, a config) is kept "
        "from the first call"
    )
    return step
