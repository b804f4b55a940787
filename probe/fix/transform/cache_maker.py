"""The maker of a factory's argument cached, so the factory's cache or memo can hit (WC-1).

`sweep_kernel(make_filter(model.filter_mode))` at every step: `make_filter` defines a new `@wp.func`, the memo on
`sweep_kernel` keys on that object and misses, and the kernel is declared again (fresh_args.py says which arguments
are such). Caching the factory cannot help; caching the maker does: `@functools.lru_cache(maxsize=None)` on
`make_filter` makes callers share one function per argument list (per mode), and then the factory's own memo, or a
`functools.lru_cache` this step adds on the factory when it has none, hits. (mujoco_warp #844 keyed the factory on
the ints instead; this is the application-side equivalent, and leaves the factory's signature alone.)

Preconditions, each named when it fails: the maker is a module-level function of a project file (the record's
module among the scanned ones); it does not cache already; it returns a value on every path it returns on and
launches nothing; it has no side effects (no launch, allocation, I/O, random draw, write to what it was given, to a
global or to a module-level object, nor a call whose effects the project cannot show: split.py's check, project
functions followed); what it reads outside its arguments is fixed (functions, classes, imports, constants: not a
module-level array or object, which a cached result would keep from the first call; `wp.static()` inside the
function it defines counts, as it runs when the kernel is built); and each argument the call passes is a value a
cache keys on by value: written in the source as a constant, or recorded by the run (the function's captured cells,
or the calling frame's arguments) as a number, string, bool, None, type, module-level function or a tuple of those.
A run-time array, or any other object, is refused with its type.
"""

from __future__ import annotations

import ast
import json

from ...models import KernelCreation
from ...scan.common import last_ident
from ..edits import insert_before
from . import syntax
from .cache_factory import not_a_factory
from .context import Project
from .fresh_args import Fresh, bound_params, fresh_arguments, maker_of, params_of
from .memoize import CACHE, _caches, _factory_node, _import_line
from .plan import Step, failed
from .reached import def_by_path
from .split import _MUTATORS, _Effects, _root, _without_warp_bodies

STEP = "cache the factory"
_BY_VALUE = {"int", "float", "bool", "str", "none", "type"}
_WARP = {"wp", "warp"}
_ALLOCATES = {"zeros", "empty", "ones", "full", "array", "zeros_like", "empty_like", "ones_like", "full_like", "clone",
              "copy", "from_numpy", "from_torch", "from_jax", "from_dlpack", "indexedarray"}
_ARRAYS = {"array", "ndarray", "Tensor", "indexedarray", "fabricarray", "indexedfabricarray", "Array"}


def _kind_why(value: dict) -> str:
    """"" when a recorded value is one a cache keys on by value; else what it is."""
    kind = str(value.get("kind") or "")
    if kind in _BY_VALUE:
        return ""
    if kind == "tuple":
        return next((w for w in (_kind_why(v) for v in value.get("items", [])) if w), "")
    if kind == "function":
        return f"a function made anew inside {maker_of(value)}()" if maker_of(value) else ""
    if kind == "other":
        t = str(value.get("type") or "object")
        return f"a run-time array ({t})" if t in _ARRAYS else f"an object ({t}) a cache keys on by identity"
    if kind == "global":
        return f"the module-level object {value.get('name')} (a cache keys on its identity: a change to it is missed)"
    return "" if "text" in value else f"a value of kind {kind}"


def _constant(expr: ast.expr, tree: ast.Module, seen: frozenset[str] = frozenset()) -> bool:
    """The expression is fixed by the source: literals, and names bound once at module scope to such."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):  # a member of a class of this file
        return expr.value.id in {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    if isinstance(expr, (ast.Tuple, ast.BinOp, ast.UnaryOp, ast.BoolOp)):
        return all(_constant(c, tree, seen) for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr))
    if isinstance(expr, ast.Name) and expr.id not in seen:
        values = [s.value for s in tree.body if isinstance(s, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in s.targets)]
        return len(values) == 1 and _constant(values[0], tree, seen | {expr.id})
    return False


def _argument_why(f: Fresh, param: str, expr: ast.expr | None, default: ast.expr | None,
                  frame_args: dict) -> str:
    """"" when what `param` of the maker gets at this call is a value a cache keys on by value; else why not."""
    if expr is None:
        return "" if default is None or _constant(default, f.tree) else f"{param}'s default is not a constant"
    # the run's record first (what the function captured of the call, or the calling frame's argument), then the
    # source: a literal or a module-level constant of the calling file that the calling function does not rebind
    recorded = (f.value.get("cells") or {}).get(param)
    if recorded is None and isinstance(expr, ast.Name):
        recorded = frame_args.get(expr.id)
    local = isinstance(expr, ast.Name) and f.caller is not None and expr.id in syntax.bound_names(f.caller)
    if recorded is None and not local and _constant(expr, f.tree):
        return ""
    if recorded is None:
        return (f"{f.maker}() gets {ast.unparse(expr)} as {param}: neither a constant in the source nor a value the "
                "run recorded, so whether a cache can key on it is unknown")
    why = _kind_why(recorded)
    return f"{f.maker}() takes {ast.unparse(expr)} as {param}, {why}" if why else ""


def _call_why(f: Fresh, node: ast.FunctionDef, frame_args: dict) -> str:
    params = params_of(node)
    a = node.args
    if a.vararg or a.kwarg or any(isinstance(x, ast.Starred) for x in f.call.args) \
            or any(k.arg is None for k in f.call.keywords):
        return f"{f.maker}() takes or is given *args/**kwargs: what a cache would key on cannot be read"
    defaults = dict(zip(params[len(params) - len(a.defaults):], a.defaults, strict=False))
    defaults.update({x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is not None})
    given = {**{params[i]: e for i, e in enumerate(f.call.args) if i < len(params)},
             **{k.arg: k.value for k in f.call.keywords if k.arg}}
    for param in [*params, *(x.arg for x in a.kwonlyargs)]:
        why = _argument_why(f, param, given.get(param), defaults.get(param), frame_args)
        if why:
            return why
    return ""


def _fixed_value(value: ast.expr | None, tree: ast.Module) -> bool:
    """A module-level binding's value that stays what it is: a constant, or a Warp type or constant made from
    constants (`wp.constant(3)`, `wp.types.vector(length=5, dtype=float)`). An allocation (`wp.zeros`), a NumPy or
    project call, a list or dict (mutable) is a value the run makes or can change."""
    if value is None:
        return False
    if _constant(value, tree):
        return True
    if isinstance(value, ast.Call) and _root(value.func) in _WARP and last_ident(value.func) not in _ALLOCATES:
        parts = [*value.args, *(k.value for k in value.keywords)]
        return all(_constant(p, tree) or _root(p) in _WARP or isinstance(p, ast.Name) for p in parts)
    return False


def _module_state(node: ast.FunctionDef, tree: ast.Module) -> str:
    """Why the maker depends on or changes module state beyond fixed definitions ("" when it does not)."""
    fixed: set[str] = set()
    runtime: dict[str, int] = {}
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            fixed.add(s.name)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            fixed |= {(x.asname or x.name).split(".")[0] for x in s.names}
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        value = getattr(s, "value", None)
                        if isinstance(s, ast.Assign) and _fixed_value(value, tree) and n.id not in runtime \
                                and n.id not in fixed:
                            fixed.add(n.id)
                        else:
                            runtime[n.id] = s.lineno
                            fixed.discard(n.id)
    for n in ast.walk(tree):
        if isinstance(n, ast.Global):
            runtime.update({name: n.lineno for name in n.names})
            fixed.difference_update(n.names)
    own = syntax.bound_names(node) | set(params_of(node))
    nodes = [x for top in node.body for x in _without_warp_bodies(top)]
    nodes += [a for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr == "static" and _root(n.func) in _WARP for a in n.args]
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                return f"declares {', '.join(n.names)} {type(n).__name__.lower()} (line {n.lineno}): it writes state"
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                    and _root(n) not in own:
                return f"writes {ast.unparse(n)} (line {n.lineno}), state outside the call"
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS \
                    and _root(n.func) not in own:
                return f"changes {_root(n.func)} with {ast.unparse(n.func)}() (line {n.lineno}), state outside the call"
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in runtime and n.id not in own:
                return (f"reads {n.id} (line {n.lineno}), bound at module scope to a value the run makes (line "
                        f"{runtime[n.id]}): a cached result would keep what it read at its first call")
    return ""


def _maker_why(ctx: Project, f: Fresh, file: str, tree: ast.Module, node: ast.FunctionDef) -> str:
    if _caches(node):
        return f"{f.maker}() caches already, yet its result was new at every call"
    own = not_a_factory(node)
    if own:
        return own
    bare = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is None]
    if bare:
        return f"{f.maker}() returns nothing on the path at line {bare[0].lineno}"
    state = _module_state(node, tree)
    if state:
        return f"{f.maker}() {state}"
    effects = _Effects(ctx, file, tree).function(file, tree, node, 0)
    return f"{f.maker}() has side effects: it {effects}" if effects else ""


def _stores_results(fn: ast.FunctionDef) -> bool:
    """`fn` keeps results in a mapping (`_MEMO[key] = ...`, `.setdefault(...)`) or defines a functools-cached one."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "setdefault":
            return True
        if isinstance(n, ast.FunctionDef) and n is not fn and _caches(n):
            return True
    return False


def _memo_of(ctx: Project, file: str, tree: ast.Module, node: ast.FunctionDef, via: list[ast.FunctionDef]) -> str:
    """What already memoises the factory: functools' cache, a project decorator whose wrapper stores the factory's
    results in a mapping (`_MEMO[key] = factory(*args)`), or a function between the calling line and the factory
    that does (a registry's lookup); "" when nothing does."""
    if _caches(node):
        return "functools cache"
    effects = _Effects(ctx, file, tree)
    for d in node.decorator_list:
        name = d.func if isinstance(d, ast.Call) else d
        found = effects._resolve(name.id, file, tree) if isinstance(name, ast.Name) else None
        if found is not None and _stores_results(found[2]):
            return f"memo @{name.id}"
    for fn in via:
        if _caches(fn) or _stores_results(fn):
            return f"registry in {fn.name}()"
    return ""


def _add_cache(ctx: Project, step: Step, file: str, tree: ast.Module, node: ast.FunctionDef) -> str:
    edit = insert_before(ctx.sources, file, syntax.span_of(node)[0], CACHE)
    if edit is None:
        return f"{file} is not a file of the project"
    step.edits.append(edit)
    at, has = _import_line(tree)
    if not has and not any(e.file == edit.file and e.new.strip() == "import functools" for e in step.edits):
        imp = insert_before(ctx.sources, file, at, "import functools")
        if imp is None:
            return f"{file} is not a file of the project"
        step.edits.append(imp)
    return ""


def _module_file(ctx: Project, module: str, near: list[str]) -> str:
    """The project file of a recorded module name: by its name, or, for `__main__` (the script the run started), the
    scanned script of that alias among the files the record names (the factory's, the calling line's), else the
    only one; "" when the module is not one of the project's."""
    if ctx.scan is None or not module:
        return ""
    info = ctx.scan.module_info(module)
    if info is not None:
        return info.file
    aliased = [m.file for m in ctx.scan.modules if m.main_alias == module]
    near_rel = {ctx.rel(x) for x in near} | set(near)
    return next((x for x in aliased if x in near_rel), aliased[0] if len(aliased) == 1 else "")


def cache_maker(ctx: Project, file: str, function: str, made: list[KernelCreation]) -> Step:
    """The step that caches the maker(s) of the factory `function`'s fresh function arguments (and the factory,
    when nothing memoises it), or why not (see the module's docstring)."""
    src = syntax.parsed(ctx.sources, file)
    line = made[0].line if made else 0
    factory = def_by_path(src[1], function, line) if src is not None and function else None
    if src is None or factory is None:
        return failed(STEP, f"{function}() was not found in {file}")
    fresh = fresh_arguments(ctx, made, bound_params(src[1], factory))
    if not fresh:
        return failed(STEP, f"no argument of {function}() is a function a project maker defines anew at each call")
    step = Step(what=STEP)
    makers: list[str] = []
    for f in fresh:
        mfile = _module_file(ctx, f.module, [file, f.site_file])
        msrc = syntax.parsed(ctx.sources, mfile) if mfile else None
        if msrc is None:
            return failed(STEP, f"{f.maker}() (module {f.module or '?'}) is not the project's own: a cache cannot be "
                                "put on it from here")
        node = _factory_node(msrc[1], f.maker)
        if node is None:
            return failed(STEP, f"{f.maker}() is not a module-level function of {mfile}")
        frame_args = next((fr.get("args") or {} for c in made for fr in c.outer
                           if fr.get("file") == f.site_file and fr.get("line") == f.site_line), {})
        why = _maker_why(ctx, f, mfile, msrc[1], node) or _call_why(f, node, frame_args)
        if why:
            return failed(STEP, f"{f.param} of {function}() is made anew by {f.maker}() at every call, but {why}")
        if f.maker in makers:
            continue
        bad = _add_cache(ctx, step, mfile, msrc[1], node)
        if bad:
            return failed(STEP, bad)
        makers.append(f.maker)
    memo = _memo_of(ctx, file, src[1], factory, [fn for f in fresh for fn in f.via])
    if not memo:
        if _factory_node(src[1], function) is None:
            return failed(STEP, f"nothing memoises {function}(), and a cache cannot be added to it: it is not a "
                                "module-level function (a method's cache would key on its instance)")
        own = not_a_factory(factory)
        if own:
            return failed(STEP, own)
        bad = _add_cache(ctx, step, file, src[1], factory)
        if bad:
            return failed(STEP, bad)
    versions = len({json.dumps(c.args, sort_keys=True, default=str) for c in made})
    names = ", ".join(f"{m}()" for m in makers)
    hits = f"{function}()'s {memo} hits" if memo else f"a cache on {function}() (added) hits"
    step.done = (f"cache {names} (functools.lru_cache): one function per argument list, so {hits} "
                 f"({versions} argument list(s) recorded)")
    step.review.append(
        f"{names} now return{'s' if len(makers) == 1 else ''} the function made for the same arguments "
        f"(functools.lru_cache): callers share one object per argument list, so {hits} and the kernel is made once "
        "per list; a value the maker read from elsewhere when it ran is kept from its first call"
    )
    return step
