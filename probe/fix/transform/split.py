"""A function that makes a kernel and then launches it, split into a cached maker and the launch (WC-1).

`render(scene, cfg, angle)` builds its funcs and a kernel, then launches it: a cache on `render` would skip the
launches, and the kernel reads values of the call, so it cannot move to module scope. The split extracts the slice
of the function that makes the kernel (the statements the definition and its decorator depend on, transitively)
into a new module-level function, cached with functools.lru_cache, whose parameters are the values that slice reads
of the original parameters (`scene.geom_types`, `cfg.width`, ... not the objects, which may be mutable or
unhashable). Inside the maker each such parameter is rebuilt as a read-only namespace of exactly those values, so
the slice's own lines are moved unchanged. The function calls the maker where the kernel was defined and keeps
everything else (its launches, its run-time work) in order.

Preconditions, each named when it fails, judged on the split as written: the kernel is a statement of the
function's body (not under a branch or loop); every name the slice reads that the function binds is bound by a
statement the slice can take (a plain assignment, a nested def, an import above the kernel), and is not bound again
elsewhere; the slice has no effects beyond making kernels and funcs (no launch, no allocation, no I/O, no call the
project cannot show is pure, no write to an argument), through the project functions it calls; a parameter the
slice uses other than by reading an attribute (or passing it to a project function that only reads attributes of
it) is a key as a whole, and must be a value the run recorded as hashable; nested attribute reads (`scene.a.b`) are
refused, since `scene.a` would be an object the cache keys on by identity; and the rest of the function still sees
every name it used: what it reads of the slice is returned by the maker.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ...models import KernelCreation
from ...scan.common import last_ident
from ..edits import insert_before, replace_lines
from . import syntax
from .context import Project
from .fresh_args import fresh_arguments
from .memoize import CACHE, _import_line
from .plan import Step, failed
from .reached import def_by_path

STEP = "cache the factory"  # orders with the cache of a factory: the kernels exist once, then the rest
_HASHABLE = {"int", "float", "bool", "str", "none", "tuple", "type", "function"}
_EFFECTS = {"launch", "launch_tiled", "capture_launch", "zeros", "empty", "ones", "full", "array", "zeros_like",
            "empty_like", "ones_like", "full_like", "clone", "copy", "from_numpy", "from_torch", "synchronize",
            "load_module", "force_load", "capture_begin", "capture_end", "print", "open", "write", "save",
            "savez", "load", "set_module_options"}
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add", "discard",
             "sort", "reverse", "fill_", "zero_", "assign", "__setitem__", "__setattr__"}
_PURE_ROOTS = {"wp", "warp", "np", "numpy", "math"}
_PURE_BUILTINS = {"len", "range", "str", "int", "float", "bool", "tuple", "frozenset", "isinstance", "getattr",
                  "hasattr", "type", "min", "max", "sorted", "enumerate", "zip", "repr", "abs", "round", "sum", "any",
                  "all", "dict", "list", "set"}
_WARP_MAKERS = {"kernel", "func", "func_native", "func_grad", "func_replay", "struct", "overload", "constant",
                "create_warp_function", "vec", "mat", "vector", "matrix", "array", "types"}


def _root(e: ast.expr) -> str:
    while isinstance(e, (ast.Attribute, ast.Call, ast.Subscript)):
        e = e.value if isinstance(e, (ast.Attribute, ast.Subscript)) else e.func
    return e.id if isinstance(e, ast.Name) else ""


def _local_free(fn: ast.FunctionDef) -> set[str]:
    """Names a nested function reads from its enclosing scopes: its loads, less its parameters and its own stores."""
    a = fn.args
    own = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | {x.arg for x in (a.vararg, a.kwarg) if x}
    loads: set[str] = set()
    for stmt in fn.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name):
                (loads if isinstance(n.ctx, ast.Load) else own).add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                own.add(n.name)
    return loads - own


def _eager(fn: ast.FunctionDef) -> list[ast.AST]:
    """The parts of a def statement that run when it runs: decorators, defaults, annotations."""
    a = fn.args
    out: list[ast.AST] = [*fn.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None)]
    out += [x.annotation for x in [*a.posonlyargs, *a.args, *a.kwonlyargs] if x.annotation is not None]
    if fn.returns is not None:
        out.append(fn.returns)
    return out


def _reads(stmt: ast.stmt) -> tuple[set[str], list[ast.AST]]:
    """(names the statement reads in the function's scope, the nodes that run when it runs)."""
    if isinstance(stmt, ast.FunctionDef):
        eager = _eager(stmt)
        names = _local_free(stmt)
        for e in eager:
            names |= syntax.read_names(e)
        return names, eager
    return syntax.read_names(stmt), [stmt]


def _binds(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


class _Effects:
    """Whether code does more than make kernels and funcs: launches, allocations, I/O, writes to what it was given,
    or calls nobody can show are pure. Project functions are followed (depth-limited)."""

    def __init__(self, ctx: Project, file: str, tree: ast.Module) -> None:
        self.ctx, self.file, self.tree = ctx, file, tree
        self.seen: set[tuple[str, str]] = set()

    def _resolve(self, name: str, file: str, tree: ast.Module) -> tuple[str, ast.Module, ast.FunctionDef] | None:
        """A module-level function `name` of `file`, or of the project module `file` imports it from."""
        for s in tree.body:
            if isinstance(s, ast.FunctionDef) and s.name == name:
                return file, tree, s
        scan = self.ctx.scan
        if scan is None:
            return None
        me = scan.module_of_file(self.ctx.rel(file)) or scan.module_of_file(file)
        package = "" if me is None else me.name if me.is_package else me.name.rpartition(".")[0]
        files = {m.name: m.file for m in scan.modules}
        for s in tree.body:
            if not isinstance(s, ast.ImportFrom):
                continue
            for a in s.names:
                if (a.asname or a.name) != name:
                    continue
                base = package.split(".") if package else []
                if s.level > 1:
                    base = base[: len(base) - (s.level - 1)]
                mod = ".".join((base if s.level else []) + ([s.module] if s.module else []))
                target = files.get(mod)
                src = syntax.parsed(self.ctx.sources, target) if target else None
                if src is not None:
                    found = next((d for d in src[1].body if isinstance(d, ast.FunctionDef) and d.name == a.name), None)
                    if found is not None:
                        return str(target), src[1], found
        return None

    def of(self, nodes: Iterable[ast.AST], given: set[str], file: str, tree: ast.Module, depth: int = 0) -> str:
        """Why running `nodes` does more than make kernels ("" when it does not). `given`: names bound to what the
        code was handed (the function's parameters), which it must not write to."""
        for top in nodes:
            for n in ast.walk(top):
                if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    root = _root(n)
                    if root in given:
                        return f"writes {ast.unparse(n)}, a part of its argument {root} (line {n.lineno})"
                if not isinstance(n, ast.Call):
                    continue
                last, root = last_ident(n.func), _root(n.func)
                if last in _MUTATORS and root in given:
                    return f"calls {ast.unparse(n.func)}(), which changes its argument {root} (line {n.lineno})"
                if root in _PURE_ROOTS:
                    if "random" in ast.unparse(n.func).split("."):
                        return f"draws random numbers with {ast.unparse(n.func)}() (line {n.lineno})"
                    if last in _EFFECTS:
                        what = "launches a kernel" if "launch" in last else f"calls {ast.unparse(n.func)}()"
                        return f"{what} (line {n.lineno}), work of the call a cache would skip or share"
                    continue
                if root == last and root in _PURE_BUILTINS:
                    continue
                if isinstance(n.func, ast.Name):
                    if n.func.id in _EFFECTS:
                        return f"calls {n.func.id}() (line {n.lineno}), work of the call a cache would skip"
                    found = self._resolve(n.func.id, file, tree)
                    if found is None:
                        return (f"calls {n.func.id}() (line {n.lineno}), which is not a function of the project it "
                                "can read, so its effects are unknown")
                    why = self.function(*found, depth + 1)
                    if why:
                        return f"calls {n.func.id}(), which {why}"
                    continue
                if root in given or isinstance(n.func, ast.Attribute):
                    return (f"calls {ast.unparse(n.func)}() (line {n.lineno}), a method whose effects the project "
                            "does not show")
                return f"calls {ast.unparse(n.func)} (line {n.lineno}), whose effects are unknown"
        return ""

    def function(self, file: str, tree: ast.Module, node: ast.FunctionDef, depth: int) -> str:
        key = (file, node.name)
        if key in self.seen:
            return ""
        if depth > 4:
            return f"reaches {node.name}() too deep to follow"
        self.seen.add(key)
        a = node.args
        given = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
        return self._skip_warp(list(node.body), given, file, tree, depth)

    def _skip_warp(self, nodes: list[ast.AST], given: set[str], file: str, tree: ast.Module, depth: int) -> str:
        flat: list[ast.AST] = []
        for top in nodes:
            flat += _without_warp_bodies(top)
        return self.of(flat, given, file, tree, depth)


def _is_warp(fn: ast.FunctionDef) -> bool:
    return any(last_ident(d.func if isinstance(d, ast.Call) else d) in ("kernel", "func", "func_native")
               or _root(d) in ("wp", "warp") for d in fn.decorator_list)


def _runs(fn: ast.FunctionDef) -> list[ast.AST]:
    """What a warp def statement runs in Python: its decorators and defaults (annotations are types, such as
    `wp.array(dtype=float)`, not allocations)."""
    a = fn.args
    return [*fn.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None)]


def _without_warp_bodies(top: ast.AST) -> list[ast.AST]:
    """Statements and expressions of `top` to check, warp function bodies left out (what their def runs kept)."""
    if isinstance(top, ast.FunctionDef) and _is_warp(top):
        return _runs(top)
    if isinstance(top, ast.FunctionDef):
        out: list[ast.AST] = _runs(top)
        for s in top.body:
            out += _without_warp_bodies(s)
        return out
    if isinstance(top, ast.stmt) and any(isinstance(getattr(top, f, None), list) for f in ("body", "orelse")):
        out = []
        for f, v in ast.iter_fields(top):
            if f in ("body", "orelse", "finalbody", "handlers") and isinstance(v, list):
                for s in v:
                    out += _without_warp_bodies(s)
            elif isinstance(v, ast.AST):
                out.append(v)
            elif isinstance(v, list):
                out += [x for x in v if isinstance(x, ast.AST)]
        return out
    return [top]


def _attribute_reads(fn: ast.FunctionDef, param: str) -> set[str] | None:
    """The attributes a function reads of its parameter `param`, when reading attributes is all it does with it."""
    parents = syntax.parents_of(fn)
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == param and n is not None:
            if isinstance(n.ctx, ast.Store):
                return None
            if isinstance(getattr(n, "ctx", None), ast.Load):
                up = parents.get(n)
                if not (isinstance(up, ast.Attribute) and isinstance(up.ctx, ast.Load)):
                    return None
                if isinstance(parents.get(up), ast.Call) and parents[up].func is up:
                    return None
                if isinstance(parents.get(up), ast.Attribute):
                    return None
                out.add(up.attr)
    return out


def split_maker(ctx: Project, file: str, function: str, made: list[KernelCreation]) -> Step:
    """The step that splits `function` of `file` (which made `made` at every call) into a cached maker of its kernel
    and the rest, or why not (see the module's docstring)."""
    src = syntax.parsed(ctx.sources, file)
    line = made[0].line if made else 0
    if src is None or not function or function == "<module>" or "<locals>" in function:
        return failed(STEP, f"{function}() is not a function of {file} that can be split")
    lines, tree = src
    fn = def_by_path(tree, function, line)
    if fn is None:
        return failed(STEP, f"{function}() was not found in {file}")
    kernels: list[ast.FunctionDef] = []
    for at_line in sorted({c.line for c in made} or {line}):
        k = syntax.def_at(fn, at_line)
        if k is None or k is fn:
            return failed(STEP, f"the kernel made at {file}:{at_line} is not defined in {function}()")
        if not any(s is k for s in fn.body):
            return failed(STEP, f"{k.name} is defined under a branch or loop of {function}(): the statements that "
                                "make it depend on the path taken")
        if k not in kernels:
            kernels.append(k)
    index = {id(s): i for i, s in enumerate(fn.body)}
    kernels.sort(key=lambda k: index[id(k)])
    kernel = kernels[-1]  # the maker is called where the last of them was defined
    names_made = ", ".join(k.name for k in kernels)
    a = fn.args
    params = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    if a.vararg or a.kwarg:
        return failed(STEP, f"{function}() takes *args or **kwargs: the values its kernel reads are not named")
    at = next(i for i, s in enumerate(fn.body) if s is kernel)
    before = fn.body[:at]
    # the slice: backward from the kernel over the statements above it
    need: set[str] = set().union(*(_reads(k)[0] for k in kernels))
    taken: list[ast.stmt] = list(kernels)
    fn_binds = [n for s in fn.body for n in _binds(s)]
    values: list[str] = []  # names bound to plain values computed from the arguments: keys, computed where they were
    for stmt in reversed(before):
        if any(stmt is k for k in kernels):
            continue
        binds = _binds(stmt)
        if not binds & need:
            continue
        value = _plain_value(stmt, set(params), set(fn_binds))
        if value and fn_binds.count(value) == 1:
            values.insert(0, value)
            need.discard(value)
            continue
        if not _takeable(stmt):
            return failed(STEP, f"{', '.join(sorted(binds & need))}, which {names_made} needs, is bound by a "
                                f"{type(stmt).__name__.lower()} statement at line {stmt.lineno}: not a statement "
                                "the maker can take whole")
        reads, _ = _reads(stmt)
        need = (need - binds) | reads
        taken.append(stmt)
    taken.sort(key=lambda s: index[id(s)])
    slice_binds = set().union(*(_binds(s) for s in taken))
    rest_stmts = [s for s in fn.body if not any(s is t for t in taken)]
    again = sorted(n for s in rest_stmts for n in _binds(s) & slice_binds)
    if again:
        return failed(STEP, f"{function}() binds {', '.join(again)} again outside the statements that make "
                            f"{names_made}: the kernel would capture another value")
    rebound = sorted(n for s in fn.body for n in _binds(s) & set(params) & need)
    if rebound:
        return failed(STEP, f"{function}() assigns its parameter(s) {', '.join(rebound)}: the values the kernel "
                            "reads would depend on where they are read")
    early = sorted(n for s in before if not any(s is t for t in taken) for n in syntax.read_names(s) & slice_binds)
    if early:
        return failed(STEP, f"{function}() reads {', '.join(early)} before {names_made} is defined: the maker's "
                            "results would not exist yet there")
    bound_in_fn = syntax.bound_names(fn) - set(params)
    missing = sorted(need & bound_in_fn - slice_binds)
    if missing:
        return failed(STEP, f"{names_made} reads {', '.join(missing)}, which {function}() binds in a way the maker "
                            "cannot take")
    # effects of the slice, its callees followed
    eff = _Effects(ctx, file, tree)
    nodes: list[ast.AST] = []
    for s in taken:
        nodes += _runs(s) if s in kernels else _without_warp_bodies(s)
    why = eff.of(nodes, set(params), file, tree)
    if why:
        return failed(STEP, f"the statements that make {names_made} have effects a cache would skip: {why}")
    for s in before:
        w = "" if any(s is t for t in taken) else _writes(s, set(params))
        if w:
            return failed(STEP, f"line {s.lineno} of {function}(), above {names_made}, {w}: the maker, called where "
                                f"{names_made} was, would read the arguments after that change")
    # the keys: what the slice reads of each parameter
    used = {p for p in params if p in need}
    if not used and not values and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in taken
                                       if s not in kernels):
        return failed(STEP, f"{names_made} reads nothing of {function}(): defining it once at module scope is the "
                            "plainer edit")
    keys: dict[str, set[str]] = {}
    whole: list[str] = []
    parents = syntax.parents_of(fn)
    for p in sorted(used):
        attrs: set[str] = set()
        bare = False
        for s in taken:
            tops: list[ast.AST] = [s]
            if isinstance(s, ast.FunctionDef):  # its body reads `p` only when it does not bind a `p` of its own
                tops = [*_eager(s), *(s.body if p in _local_free(s) else [])]
            for n in (x for t in tops for x in ast.walk(t)):
                if not (isinstance(n, ast.Name) and n.id == p and isinstance(n.ctx, ast.Load)):
                    continue
                up = parents.get(n)
                if isinstance(up, ast.Attribute) and isinstance(up.ctx, ast.Load):
                    if isinstance(parents.get(up), ast.Attribute):
                        return failed(STEP, f"{names_made}'s maker reads {ast.unparse(parents[up])}: {p}.{up.attr} "
                                            "would be a key kept by identity (an object), not a value")
                    attrs.add(up.attr)
                    continue
                call = up if isinstance(up, ast.Call) and n in up.args else None
                callee = eff._resolve(call.func.id, file, tree) if call is not None and isinstance(
                    call.func, ast.Name) else None
                if callee is not None:
                    idx = call.args.index(n)
                    cparams = [x.arg for x in [*callee[2].args.posonlyargs, *callee[2].args.args]]
                    got = _attribute_reads(callee[2], cparams[idx]) if idx < len(cparams) else None
                    if got is not None:
                        attrs |= got
                        continue
                bare = True
        if bare:
            kinds = {str(c.args.get(p, {}).get("kind", "")) for c in made}
            shown = sorted({str(c.args.get(p, {}).get("type") or c.args.get(p, {}).get("kind")) for c in made
                            if p in c.args})
            if "" in kinds:
                return failed(STEP, f"the kernel's maker uses {p} itself, not values read from it, and the run did "
                                    f"not record {p}: whether a cache can key on it is unknown")
            if not kinds <= _HASHABLE:
                return failed(STEP, f"the kernel's maker uses {p} itself, not values read from it, and the run passed "
                                    f"{'/'.join(shown)}: a cache would key on that object (by identity, or raise)")
            fresh = next((f for f in fresh_arguments(ctx, made, params) if f.param == p), None)
            if fresh is not None:
                return failed(STEP, f"the kernel's maker would key on {p}, a new function at every call "
                                    f"({ctx.rel(fresh.site_file)}:{fresh.site_line} calls {fresh.maker}(), which "
                                    f"defines {fresh.value.get('name')} anew): a cache on it never hits")
            whole.append(p)
        else:
            keys[p] = attrs
    # the rest of the function reads what of the slice
    rest_reads: set[str] = set()
    for s in rest_stmts:
        rest_reads |= syntax.read_names(s) if not isinstance(s, ast.FunctionDef) else _reads(s)[0]
    returned = [k.name for k in kernels] + sorted((rest_reads & slice_binds) - {k.name for k in kernels})
    # the maker's text
    names = syntax.module_bindings(tree)
    stem = f"_{fn.name.lstrip('_')}_kernel" + ("s" if len(kernels) > 1 else "")  # `__x` in a class is mangled
    maker = next(n for n in [stem] + [f"{stem}_{k}" for k in range(2, 99)]
                 if n not in names)
    # (parameter of the maker, expression at the call)
    args: list[tuple[str, str]] = [(v, v) for v in values] + [(p, p) for p in whole]
    for p, attrs in keys.items():
        args += [(f"{p}_{x}", f"{p}.{x}") for x in sorted(attrs)]
    body_indent = syntax.indent_of(lines[syntax.span_of(fn.body[0])[0] - 1])
    text = [CACHE + "\n", f"def {maker}({', '.join(n for n, _ in args)}):\n"]
    if keys:
        for p, attrs in keys.items():
            fields = ", ".join(f"{x}={p}_{x}" for x in sorted(attrs))
            text.append(f"    {p} = types.SimpleNamespace({fields})  # what it reads of {p}\n")
    for s in taken:
        first, last = syntax.span_of(s)
        block = syntax.dedent_lines(lines[first - 1 : last], body_indent)
        if block is None:
            return failed(STEP, f"the lines {first}-{last} of {function}() are not uniformly indented")
        if s in kernels and text[-1].strip():
            text.append("\n")
        text += [("    " + ln) if ln.strip() else ln for ln in block]
    if text[-1].strip():
        text.append("\n")
    text.append(f"    return {', '.join(returned)}\n")
    top = syntax.top_statement(tree, fn.lineno)
    assert top is not None
    insert_at = syntax.span_of(top)[0]
    while insert_at > 1 and lines[insert_at - 2].lstrip().startswith(("#", "@")):
        insert_at -= 1
    step = Step(what=STEP)
    add = insert_before(ctx.sources, file, insert_at, "".join(text) + "\n\n")
    call = " " * body_indent + f"{', '.join(returned)} = {maker}({', '.join(e for _, e in args)})\n"
    edits = [add]
    groups: list[list[ast.stmt]] = []  # runs of consecutive taken statements: removed with the blank lines between
    for s in taken:
        if groups and index[id(groups[-1][-1])] + 1 == index[id(s)]:
            groups[-1].append(s)
        else:
            groups.append([s])
    for g in groups:
        first, last = syntax.span_of(g[0])[0], syntax.span_of(g[-1])[1]
        edits.append(replace_lines(ctx.sources, file, first, last, call if g[-1] is kernel else ""))
    _, has = _import_line(tree)
    imports = [] if has else ["functools"]
    if keys and not any(isinstance(s, ast.Import) and any(x.name == "types" and not x.asname for x in s.names)
                        for s in tree.body):
        imports.append("types")
    for name in imports:
        edits.append(insert_before(ctx.sources, file, _stdlib_slot(tree, lines, name), f"import {name}"))
    if any(e is None for e in edits):
        return failed(STEP, f"{file} is not a file of the project")
    step.edits = [e for e in edits if e is not None]
    shown = ", ".join(e for _, e in args) or "no values"
    step.done = (f"split {function}(): {maker}() makes {names_made} (functools.lru_cache on {shown}), and "
                 f"{function}() calls it where {names_made} was defined and keeps the rest as it was")
    step.review.append(
        f"{maker}() returns the kernel made for the same values of {shown}: a value the slice read from a global "
        "or a config is kept from the first call, and a value read from the arguments that is a mutable object "
        "would be keyed by identity"
    )
    return step


def _stdlib_slot(tree: ast.Module, lines: list[str], name: str) -> int:
    """The line `import name` goes before: in order within the file's first block of imports (the standard
    library's, by convention), else where a first import would go."""
    at, _ = _import_line(tree)
    block: list[ast.stmt] = []
    for s in tree.body:
        if s.lineno < at:
            continue
        if not isinstance(s, (ast.Import, ast.ImportFrom)) or (block and s.lineno > (block[-1].end_lineno or 0) + 1):
            break
        block.append(s)
    for s in block:
        if isinstance(s, ast.Import) and s.names[0].name > name:
            return s.lineno
    plain = [s for s in block if isinstance(s, ast.Import)]
    return (plain[-1].end_lineno or plain[-1].lineno) + 1 if plain else at


def _plain_value(stmt: ast.stmt, params: set[str], bound: set[str]) -> str:
    """The name a statement binds to a plain value computed from the arguments (`masked = mask is not None`,
    `W = cfg.width`), or "": one name assigned, reading nothing else the function binds, calling only builtins.
    Such a value is passed to the maker as a key and computed where it was."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return ""
    for n in ast.walk(stmt.value):
        if isinstance(n, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return ""
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PURE_BUILTINS):
            return ""
    if syntax.read_names(stmt.value) & (bound - params):
        return ""
    return stmt.targets[0].id


def _takeable(stmt: ast.stmt) -> bool:
    """A statement the maker can take whole: an assignment, a def, an import, or an `if` made only of those (a
    predicate turned into a func one way or another)."""
    if isinstance(stmt, ast.If):
        return all(_takeable(s) for s in [*stmt.body, *stmt.orelse])
    return isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.Import, ast.ImportFrom, ast.Pass))


def _writes(stmt: ast.stmt, given: set[str]) -> str:
    """How a statement changes an argument in place ("" when it does not): a write to a part of it, or a call of a
    method that changes it."""
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                and _root(n) in given:
            return f"writes {ast.unparse(n)}"
        if isinstance(n, ast.Call) and last_ident(n.func) in _MUTATORS and _root(n.func) in given:
            return f"calls {ast.unparse(n.func)}()"
    return ""
