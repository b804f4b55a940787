"""A kernel factory's versions kept and created at import: the step that lets a factory's kernels share a module.

A factory (`make_drag_kernel(coef)`, `make_spin(*, module="unique")`, `kernel_for(dtype)`) makes a new kernel at each
call. Called between launches (create, launch, create, launch), every new kernel joins its module after it loaded
and rebuilds it; with module="unique" every version pays a module of its own. The step writes what a person would:

- `@functools.lru_cache(maxsize=None)` on the factory: the same arguments return the same kernel object, never a new
  registration (not added when the factory already caches);
- the versions the code asks for created right after the factory, at module scope of its file, so they exist before
  their module first loads: one call per distinct argument list of its calls, with the arguments as those calls
  write them (a cache keys on the form too), carried into the factory's file.

Preconditions, each named when it fails: the factory is a module-level function (a method needs an instance);
every call's arguments are fixed in the source (literals, Warp types and constants, module constants the factory's
file can name, the items of a loop over a literal tuple), hashable (a cache cannot key a list), and as many distinct
versions as the run made. Where the source does not show them fixed, the versions are the ones the run recorded
(`Report.kernel_creations`: hook_kernels.py notes which app call made each kernel, with its arguments), said so for
review; a function of another project module among them is imported for the calls (unless that closes a cycle).
`made_at_import_from_run` starts from the record alone: the innermost module-level app function that made the late
kernels (`make_stretch`, not its `_renamed` helper) is the one called at import, or a method module scope can name
(reached.py: `LMSolver._specialize(key)` for a classmethod). A late import that call runs, kept late because its
module imports the file back, must still resolve there: the names that module takes back are bound above the call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...models.scan import FactoryCallFact, KernelDef
from ...scan.common import last_ident
from ..edits import insert_before
from . import syntax
from .context import Project
from .graph import BackImport, imported_back, imports_back
from .plan import Step, failed
from .reached import Reach, def_by_path, method_binder, reached_as

CACHE = "@functools.lru_cache(maxsize=None)"
STEP = "create at import"


def _factory_node(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    return None


def _import_line(tree: ast.Module) -> tuple[int, bool]:
    """(the line a new stdlib import goes before, whether `functools` is imported at module scope already)."""
    has = any(isinstance(s, ast.Import) and any(a.name == "functools" and not a.asname for a in s.names)
              for s in tree.body)
    for s in tree.body:
        if isinstance(s, ast.ImportFrom) and s.module == "__future__":
            continue
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            return s.lineno, has
    first = next((s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))), None)
    return (first.lineno if first is not None else len(tree.body) + 1), has


def _caches(node: ast.FunctionDef) -> bool:
    """The factory already returns one object per argument list (functools.cache / lru_cache)."""
    for d in node.decorator_list:
        if last_ident(d.func if isinstance(d, ast.Call) else d) in ("cache", "lru_cache"):
            return True
    return False


def _modules_bound(tree: ast.Module) -> dict[str, str]:
    """Module-scope name -> the module an `import x as name` binds it to (`wp` -> `warp`)."""
    out: dict[str, str] = {}
    for s in tree.body:
        if isinstance(s, ast.Import):
            for a in s.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    return out


@dataclass
class _Home:
    """The factory's file, as a place the precreated calls are written in."""

    file: str
    tree: ast.Module
    bound: dict[str, int]  # module-scope name -> first line binding it
    modules: dict[str, str]  # module-scope import aliases
    imports: dict[str, str] = field(default_factory=dict)  # imports the written calls need: line -> its module


def carry(expr: ast.expr, caller: ast.Module | None, home: _Home, same_file: bool) -> tuple[str, int] | str:
    """(the argument as the factory's file can write it, the last line it needs bound) or why it cannot travel."""
    if isinstance(expr, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return "a call passes a list, dict or set, which a cache cannot key"
    try:
        ast.literal_eval(expr)
        return ast.unparse(expr), 0
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(expr, ast.Constant):
        return ast.unparse(expr), 0
    root = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or any(not isinstance(n, (ast.Attribute, ast.Name, ast.Load))
                                             for n in ast.walk(expr)):
        return f"the argument {ast.unparse(expr)} is computed, not a name or constant"
    name = root.id
    if same_file:
        if name not in home.bound:
            return f"{name} is not bound at module scope of {home.file}"
        return ast.unparse(expr), home.bound[name]
    theirs = _modules_bound(caller) if caller is not None else {}
    if name in theirs:  # a module alias (`wp.float32`): the factory's file names that module its own way
        alias = next((a for a, m in home.modules.items() if m == theirs[name]), None)
        if alias is None:
            return f"{home.file} does not import {theirs[name]}, which {ast.unparse(expr)} needs"
        text = ast.unparse(expr)
        return alias + text[len(name):], home.bound.get(alias, 0)
    if name in home.bound:
        return ast.unparse(expr), home.bound[name]
    return f"{name} is the caller's own name, which {home.file} cannot see"


def _loop_items(tree: ast.Module, call_line: int, name: str) -> list[ast.expr] | None:
    """The items of a `for name in (a, b, ...)` (or `for name, other in ((a, x), (b, y))`) around the call at
    `call_line`, when the loop is over a literal tuple or list; None when there is no such loop."""
    for n in ast.walk(tree):
        if not (isinstance(n, ast.For) and n.lineno <= call_line <= (n.end_lineno or n.lineno)
                and isinstance(n.iter, (ast.Tuple, ast.List))):
            continue
        if isinstance(n.target, ast.Name) and n.target.id == name:
            return list(n.iter.elts)
        if isinstance(n.target, ast.Tuple):
            at = next((i for i, t in enumerate(n.target.elts) if isinstance(t, ast.Name) and t.id == name), None)
            rows = n.iter.elts
            if at is not None and all(isinstance(r, (ast.Tuple, ast.List)) and len(r.elts) == len(n.target.elts)
                                      for r in rows):
                return [r.elts[at] for r in rows]  # type: ignore[attr-defined]
    return None


def render(value: dict, home: _Home, ctx: Project) -> str | None:
    """A recorded argument (hook_kernels.encode) as source the factory's file can write, or None."""
    kind = value.get("kind")
    if kind in ("int", "float", "bool", "str", "none"):
        return str(value.get("text"))
    if kind == "tuple":
        items = [render(v, home, ctx) for v in value.get("items", [])]
        if any(i is None for i in items):
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"  # type: ignore[arg-type]
    module, name = str(value.get("module", "")), str(value.get("name", ""))
    if kind in ("type", "function", "global") and module and name and "<" not in name:
        alias = next((a for a, m in home.modules.items() if m == module), None)
        if alias is not None:
            return f"{alias}.{name}"
        info = ctx.scan.module_of_file(home.file) if ctx.scan is not None else None
        if info is not None and module in (info.name, info.main_alias) and name in home.bound:
            return name  # a function of the factory's own file
        imported = [i for i in (ctx.scan.imports_in(home.file) if ctx.scan is not None else [])
                    if i.scope == "module" and i.module == module and i.names]
        if imported:  # `from pkg import mod` binds the module under a name of this file
            return f"{imported[0].names[0]}.{name}"
        if kind in ("function", "global") and "." not in name and ctx.scan is not None \
                and ctx.scan.module_info(module):
            # a function of another module of the project: imported by the line the calls need
            line = f"from {_relative(info.name if info else '', module)} import {name}"
            home.imports[line] = module
            return name
    return None


def _relative(here: str, module: str) -> str:
    """`module` as an import in module `here` writes it: relative within the same package, else absolute."""
    package = here.rpartition(".")[0]
    if package and module.startswith(package + "."):
        return "." + module[len(package) + 1:]
    return module


def _recorded(ctx: Project, factory: str, node: ast.FunctionDef, home: _Home) -> list[str] | str:
    """The argument lists of the calls the run recorded making this factory's kernels (hook_kernels.py), written
    as the factory's file can write them: a parameter the call left at its default is left out."""
    made = [c for c in ctx.report.kernel_creations if c.function == factory and ctx.rel(c.file) == home.file]
    if not made:
        return f"the run recorded no call of {factory}()"
    forms: list[str] = []
    for c in made:
        ok, form = _form(ctx, node, c.args, home)
        if not ok:
            return form
        forms.append(form)
    return list(dict.fromkeys(forms))


def home_of(ctx: Project, file: str, tree: ast.Module) -> _Home:
    """A file as a place calls are written in: its module-scope names and import aliases."""
    return _Home(file, tree, syntax.module_bindings(tree), _modules_bound(tree))


def _versions(ctx: Project, c: FactoryCallFact, home: _Home) -> tuple[list[str], int] | str:
    """The calls to make at import for one call site (one, or one per item of a literal loop around it), with the
    last module-scope line they need; or why they cannot be made there."""
    if not c.constant_args:
        return f"{c.callee or c.factory}() is called with run-time arguments ({', '.join(c.runtime_args)})"
    try:
        call = ast.parse(f"f({', '.join(c.args)})", mode="eval").body
    except SyntaxError:
        return f"the arguments of {c.file}:{c.line} could not be read back"
    assert isinstance(call, ast.Call)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return f"{c.file}:{c.line} passes *args or **kwargs"
    caller = ctx.sources.tree(c.file)
    same = c.file == home.file
    forms: list[list[tuple[str | None, ast.expr]]] = [[*((None, a) for a in call.args),
                                                      *((k.arg, k.value) for k in call.keywords)]]
    for i, (kw, expr) in enumerate(forms[0]):
        if isinstance(expr, ast.Name) and caller is not None and (items := _loop_items(caller, c.line, expr.id)):
            forms = [[*f[:i], (kw, item), *f[i + 1:]] for f in forms for item in items]
    out: list[str] = []
    need = 0
    for form in forms:
        texts = []
        for kw, expr in form:
            got = carry(expr, caller, home, same)
            if isinstance(got, str):
                return got
            texts.append(f"{kw}={got[0]}" if kw else got[0])
            need = max(need, got[1])
        out.append(", ".join(texts))
    return out, need


def _write_versions(ctx: Project, step: Step, file: str, tree: ast.Module, node: ast.FunctionDef,
                    versions: list[str], need: int, cache: bool, imports_done: set[str],
                    home: _Home | None = None, callee: str = "") -> str:
    """The edits that cache `node` (when asked and it does not cache yet) and call it at import with `versions`,
    after line `need` (the last module-scope line the calls read), with the imports the calls need; "" or why
    not."""
    factory = callee or node.name
    if home is not None and home.imports:
        cycle = imports_back(ctx, file, list(home.imports.values()))
        if cycle is not None:
            return f"{cycle} imports {file} back, so the functions the calls pass cannot be imported there"
        top = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        at = (top[-1].end_lineno or top[-1].lineno) + 1 if top else 1
        e = insert_before(ctx.sources, file, at, "".join(f"{line}\n" for line in home.imports))
        if e is None:
            return f"{file} is not a file of the project"
        step.edits.append(e)
        step.review.append(f"{file} now imports {', '.join(home.imports)} for the calls made at import")
    if cache and not _caches(node):
        binder = method_binder(node)  # the cache wraps the function, inside @classmethod / @staticmethod
        at = (binder.end_lineno or binder.lineno) + 1 if binder is not None else syntax.span_of(node)[0]
        cached = insert_before(ctx.sources, file, at, " " * node.col_offset + CACHE)
        if cached is None:
            return f"{file} is not a file of the project"
        step.edits.append(cached)
        if file not in imports_done:
            at, has = _import_line(tree)
            if not has:
                e = insert_before(ctx.sources, file, at, "import functools")
                if e is None:
                    return f"{file} is not a file of the project"
                step.edits.append(e)
            imports_done.add(file)
    after = syntax.top_statement(tree, need)
    at_line = (after.end_lineno or need) + 1 if after is not None else need + 1
    note = f"# {factory}()'s versions, made at import so they exist before their module first loads"
    e = insert_before(ctx.sources, file, at_line, "\n\n" + note + "\n" + "\n".join(versions) + "\n")
    if e is None:
        return f"{file} is not a file of the project"
    step.edits.append(e)
    return ""


def _needs(tree: ast.Module, node: ast.FunctionDef, forms: list[str]) -> int:
    """The last module-scope line the calls `factory(form)` read a name from (and the factory's own end)."""
    bound = syntax.module_bindings(tree)
    names = {n for f in forms for n in syntax.read_names(ast.parse(f"f({f})", mode="eval"))}
    return max([node.end_lineno or node.lineno, *(bound.get(n, 0) for n in names)])


def _finish(step: Step, made: list[str], cached: bool) -> Step:
    shown = ", ".join(made[:4]) + (" ..." if len(made) > 4 else "")
    step.done = f"create {shown} at import" + (", each factory cached (functools.lru_cache)" if cached else "")
    step.review.append(
        f"{len(made)} version(s) are now made at import ({shown})"
        + (" and each factory returns the one kernel per argument list it made (functools.lru_cache): callers now "
           "share kernel objects" if cached else "")
        + "; a caller that passes other values gets a new kernel after the module loaded, which rebuilds it (CS-1)"
    )
    return step


def made_at_import(ctx: Project, defs: list[KernelDef], calls: list[FactoryCallFact],
                   versions_made: dict[str, int] | None = None) -> Step:
    """The step for every factory that makes `defs` (each a module-level function of its file): cache it and call
    it at import with the argument lists its calls use (or, where the source does not show them fixed, the ones the
    run recorded). `versions_made`: factory -> the distinct versions the run made (when it is known), which the
    calls found must cover."""
    step = Step(what=STEP)
    made: list[str] = []
    imports_done: set[str] = set()
    done: set[tuple[str, str]] = set()
    for k in defs:
        factory = (k.enclosing_function or "").split(".<locals>.")[0]
        if (k.file, factory) in done:
            continue
        done.add((k.file, factory))
        if "." in factory or not factory:
            return failed(STEP, f"{k.name} is made inside {k.enclosing_function}(), not by a module-level factory "
                                "that can be called at import")
        src = syntax.parsed(ctx.sources, k.file)
        if src is None:
            return failed(STEP, f"{k.file} could not be read as the project's Python source")
        node = _factory_node(src[1], factory)
        if node is None:
            return failed(STEP, f"the factory {factory}() of {k.name} was not found at module scope of {k.file}")
        home = home_of(ctx, k.file, src[1])
        mine = [c for c in calls if c.factory == factory and c.factory_file == k.file]
        forms: list[str] = []
        need = node.end_lineno or node.lineno
        why = "" if mine else f"no call of {factory}() was found in the scanned sources"
        for c in mine:
            got = _versions(ctx, c, home)
            if isinstance(got, str):
                why, forms = got, []
                break
            forms += got[0]
            need = max(need, got[1])
        if why:  # the source does not show the versions: the ones this run made, from its record
            rec = _recorded(ctx, factory, node, home)
            if isinstance(rec, str):
                return failed(STEP, f"{why}; {rec}")
            forms, need = rec, _needs(src[1], node, rec)
            step.review.append(f"{factory}()'s versions are the ones this run made ({', '.join(rec[:4])}); the "
                               f"source does not show them fixed ({why}): a run with other values builds those "
                               "after the module loaded, as before")
        versions = list(dict.fromkeys(f"{factory}({a})" for a in forms))
        wanted = (versions_made or {}).get(factory)
        if wanted is not None and wanted > len(versions):
            return failed(STEP, f"the run made {wanted} versions of {factory}()'s kernels, the calls in the source "
                                f"give {len(versions)}: some come from elsewhere")
        why = _write_versions(ctx, step, k.file, src[1], node, versions, need, True, imports_done, home)
        if why:
            return failed(STEP, why)
        made += versions
    return _finish(step, made, cached=True)


def _frame_factories(ctx: Project, frames: list[dict]) -> tuple[list[tuple[str, ast.Module, ast.FunctionDef, dict,
                                                                         Reach]], str, dict[int, str]]:
    """The creation's app frames that a call at import can repeat, innermost first: project functions that ran late
    and that module scope of their file can call, each as (file, tree, its def, the frame, how module scope calls
    it): a module-level function by its own name, a method or closure by the module-scope name its caller called it
    by (reached.py); why the last frame that is not one is not; and each such frame's reason by its index."""
    out = []
    why = "the run recorded no app frame that made it"
    skipped: dict[int, str] = {}
    for i, f in enumerate(frames):
        fn = str(f.get("function", ""))
        if f.get("at_import") or fn == "<module>":
            break
        rel = ctx.sources.rel(str(f.get("file", "")))
        src = syntax.parsed(ctx.sources, rel) if rel is not None else None
        if rel is None or src is None:
            why = skipped[i] = f"{fn}() is not in a file of the project"
            continue
        if "." not in fn:
            node = _factory_node(src[1], fn)
            if node is None:
                why = skipped[i] = f"{fn}() is not a module-level function, which a call at import could repeat"
                continue
            out.append((rel, src[1], node, f, Reach(name=fn, after=node.end_lineno or node.lineno,
                                                    bound_first=False)))
            continue
        node = def_by_path(src[1], fn, int(f.get("line") or 0))
        if node is None:
            why = skipped[i] = f"{fn}() could not be read back in {rel}"
            continue
        reach = reached_as(ctx, frames, i, rel, src[1], node)
        if isinstance(reach, str):
            why = skipped[i] = reach
            continue
        out.append((rel, src[1], node, f, reach))
    return out, why, skipped


def _defaults(node: ast.FunctionDef) -> dict[str, ast.expr]:
    """Each parameter with a default, and that default."""
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    out = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults):], a.defaults, strict=True))
    out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    return out


def _register_switch(node: ast.FunctionDef, line: int) -> tuple[str, ast.If] | None:
    """A parameter that makes the function return before its work, once its kernels exist: `register_only=False`
    tested by a body-level `if register_only: return` below `line` (the line whose call made the kernel). Warp's own
    tests register every kernel this way before the first launch (warp/tests/unittest_utils.py,
    add_function_test_register_kernel: `func(..., register_kernels=True)`)."""
    defaults = _defaults(node)
    for stmt in node.body:
        if (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and not stmt.orelse
                and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Return) and stmt.lineno > line):
            d = defaults.get(stmt.test.id)
            if isinstance(d, ast.Constant) and d.value is False:
                return stmt.test.id, stmt
    return None


_LAUNCHES = {"launch", "launch_tiled", "capture_launch"}
# calls a maker may make on its way to the kernel without doing a program's work: names, types, Warp's own type
# constructors (wp.vec, wp.types.matrix), numpy dtypes
_PURE_ROOTS = {"wp", "warp", "np", "numpy", "math"}
_PURE_BUILTINS = {"len", "range", "str", "int", "float", "bool", "tuple", "dict", "list", "set", "frozenset",
                  "isinstance", "getattr", "hasattr", "type", "min", "max", "sorted", "enumerate", "zip", "repr"}


def _root(func: ast.expr) -> str:
    """The name a call's dotted function starts from: "wp" for wp.types.matrix(...), "len" for len(...)."""
    while isinstance(func, (ast.Attribute, ast.Call)):
        func = func.value if isinstance(func, ast.Attribute) else func.func
    return func.id if isinstance(func, ast.Name) else ""


def _thin(stmt: ast.stmt) -> bool:
    """A statement that names, types or returns, and calls nothing that could be a program's work."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Pass, ast.Global,
                         ast.Nonlocal)):
        return True
    if not isinstance(stmt, (ast.Return, ast.Assign, ast.AnnAssign, ast.Expr)):
        return False
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(n, ast.Call):
            root, last = _root(n.func), last_ident(n.func)
            if last in _LAUNCHES or not (root in _PURE_ROOTS or (root == last and root in _PURE_BUILTINS)
                                         or (root == "super" and last in ("__new__", "__init__", "super"))):
                return False
    return True


def own_work(node: ast.FunctionDef, line: int, role: str) -> str:
    """Why calling `node` at import would do more than make its kernels ("" when it would not). `line` is the line
    whose call made (or led to) the kernel; `role` is "maker" (the frame that made it), "first" (the innermost
    module-level caller of a maker that is not one) or "outer" (a caller further out).

    Every role: a launch in the body (above a register switch, whose return comes first). "first": a statement that
    runs after the kernel exists and does more than name, type or return (in a loop that holds the call, every
    sibling, since it runs again); what comes before is the maker's own set-up (curobo's builder computes its
    constants there, tests/shapes/mapper_constants). "outer", without a register switch: any such statement. In
    newton's IK solver (tests/shapes/ik_specializer) the first module-level caller was `run()`, which probes a cost
    kernel and solves after the solver is made: called at import, it ran the whole workload."""
    switch = _register_switch(node, line)
    until = switch[1].lineno if switch is not None else None
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and last_ident(n.func) in _LAUNCHES and (until is None or n.lineno < until):
            return f"{node.name}() launches kernels itself (line {n.lineno}), so a call at import would run them"
    if role == "maker" or switch is not None:
        return ""
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    busy = _busy(body, line, strict=role == "outer")
    if busy is None:
        return ""
    return (f"{node.name}() goes on to its own work besides making the kernel (line {busy.lineno}; no register switch "
            "that returns first), so a call at import would run it")


def _busy(stmts: list[ast.stmt], line: int, strict: bool) -> ast.stmt | None:
    """The first statement off the path to `line` that does more than name, type or return: every one when
    `strict`, else those after `line` (and, inside a loop that holds the call, all its siblings: they run again)."""
    for stmt in stmts:
        if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            if (strict or stmt.lineno > line) and not _thin(stmt):
                return stmt
            continue
        inner_strict = strict or isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        for inner in ("body", "orelse", "finalbody"):
            found = _busy(getattr(stmt, inner, None) or [], line, inner_strict)
            if found is not None:
                return found
    return None


def _thin_class(tree: ast.Module | None, name: str) -> bool:
    """Constructing class `name` of `tree` does nothing but store what it is given: a dataclass, or an `__init__`
    with no work of its own (`own_work`, strict)."""
    node = next((s for s in (tree.body if tree is not None else []) if isinstance(s, ast.ClassDef) and s.name == name),
                None)
    if node is None:
        return False
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return any(last_ident(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in node.decorator_list)
    return not own_work(init, init.lineno, "outer")


def _call_line_work(node: ast.FunctionDef, line: int, callee: str, callee_tree: ast.Module | None = None) -> str:
    """What the statement on `line` of `node` does besides calling `callee` (the next frame in), or "": a call at import
    of `node` runs that statement whole (`print(pipeline.run(values))` runs the pipeline). Constructing the callee's
    class on that line (`Effect(name).kernel()`) is part of reaching it when the construction does no work."""
    inner = callee.split(".")
    allowed = {inner[-1]}
    if len(inner) > 1 and (inner[-1] in ("__init__", "__new__") or _thin_class(callee_tree, inner[-2])):
        allowed.add(inner[-2])
    held = [s for s in ast.walk(node) if isinstance(s, ast.stmt) and s is not node
            and s.lineno <= line <= (s.end_lineno or s.lineno)
            and not any(isinstance(getattr(s, f, None), list) for f in ("body", "orelse", "finalbody", "handlers"))]
    for stmt in held:
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            root, last = _root(n.func), last_ident(n.func)
            if last in allowed or root in _PURE_ROOTS or (root == last and root in _PURE_BUILTINS):
                continue
            return (f"{node.name}() calls {last or 'a function'}() on the line that leads to the kernel (line {line}), "
                    "so a call at import would run that too")
    return ""


def chain_work(ctx: Project, frames: list[dict], frame: dict, node: ast.FunctionDef, line: int) -> str:
    """Why calling `node` (the function of `frame`) at import would run the program's own work through the frames
    between it and the kernel's maker, or "". Every frame in between runs whole when the outer one is called, so each
    must do nothing but lead to the kernel (`own_work` with the strict role), and the outer one's call line must call
    nothing but the next frame in. c01's chain: `main()` -> `ParticlePipeline.run()` -> `Plugin.make_kernel()`;
    `main()` at import would run the whole pipeline."""
    if frame is frames[0]:
        return ""
    at = next(i for i, f in enumerate(frames) if f is frame)
    callee_rel = ctx.sources.rel(str(frames[at - 1].get("file", "")))
    callee_src = syntax.parsed(ctx.sources, callee_rel) if callee_rel is not None else None
    work = _call_line_work(node, line, str(frames[at - 1].get("function", "")),
                           callee_src[1] if callee_src is not None else None)
    if work:
        return work
    for i, inner in enumerate(frames[:at]):
        fn = str(inner.get("function", ""))
        rel = ctx.sources.rel(str(inner.get("file", "")))
        src = syntax.parsed(ctx.sources, rel) if rel is not None else None
        between = def_by_path(src[1], fn, int(inner.get("line") or 0)) if src is not None else None
        if between is None and i == 0:
            continue  # the maker itself outside the project's files (a dependency's helper): its launches are not ours
        if between is None:
            return f"{fn}() lies between {node.name}() and the kernel and could not be read, so its work is unknown"
        # the maker runs whole too: a launch there is the program's work (its other statements are what it is for)
        work = own_work(between, int(inner.get("line") or 0), "maker" if i == 0 else "outer")
        if work:
            return f"{node.name}() reaches the kernel through {fn}(), and {work}"
    return ""


def made_at_import_from_run(ctx: Project, creations: list) -> Step:
    """The step for kernels or instances the run made late (`Report.kernel_creations`): the app function whose call
    made them (the innermost module-level one: `make_stretch`, not its `_renamed` helper), called at import with the
    arguments the run recorded, so every version exists before its module first loads. A function that makes
    kernels itself is also cached (it returns the kernel its arguments made)."""
    step = Step(what=STEP)
    made: list[str] = []
    imports_done: set[str] = set()
    targets: dict[tuple[str, str], tuple[ast.Module, ast.FunctionDef, Reach, list[str], bool]] = {}
    homes: dict[str, _Home] = {}
    for c in creations:
        frames = [{"file": c.file, "line": c.line, "function": c.function, "args": c.args, "at_import": c.at_import},
                  *c.outer]
        candidates, why, skipped = _frame_factories(ctx, frames)
        if not candidates:
            return failed(STEP, f"{c.key}: {why}")
        got = None
        whys: dict[int, str] = dict(skipped)  # frame index -> why a call at import does not repeat it
        for i, (file, tree, node, frame, reach) in enumerate(candidates):  # the innermost call source can repeat
            at = next(j for j, f in enumerate(frames) if f is frame)
            home = homes.setdefault(file, home_of(ctx, file, tree))
            line = int(frame.get("line") or 0)
            work = own_work(node, line, "maker" if frame is frames[0] else "outer" if i else "first")
            work = work or chain_work(ctx, frames, frame, node, line)
            backs = _late_cycles(ctx, frames, frame, file, tree) if not work else []
            if isinstance(backs, str):
                work = backs
            if work:
                whys[at] = work
                continue
            ok, form = _form(ctx, node, frame.get("args") or {}, home, line, reach.bound_first)
            if ok:
                got = (file, tree, node, frame, reach, form, backs)
                break
            whys[at] = form
        if got is None:  # each frame's own reason, innermost first
            return failed(STEP, "; ".join(whys[k] for k in sorted(whys)))
        file, tree, node, frame, reach, form, backs = got
        key = (file, reach.name)
        tree_, node_, reach_, forms, direct, backs_ = targets.get(key, (tree, node, reach, [], False, []))
        targets[key] = (tree_, node_, reach_, [*forms, form],
                        direct or frame is frames[0] and c.made_by == "kernel", [*backs_, *backs])
    for (file, name), (tree, node, reach, forms, direct, backs) in targets.items():
        forms = list(dict.fromkeys(forms))
        versions = [f"{name}({a})" for a in forms]
        need = max(_needs(tree, node, forms), reach.after)
        bound = syntax.module_bindings(tree)
        for b in {b.module: b for b in backs}.values():  # the call goes below what the cycle imports back
            need = max(need, *(bound[n] for n in b.names))
            step.review.append(
                f"{name}() imports {b.module} inside, which imports {', '.join(sorted(b.names))} back from {file}: "
                f"the calls at import go below line {max(bound[n] for n in b.names)}, where those are bound, so "
                f"that import still resolves while {file} is half imported; importing {b.module} before {file} "
                f"would now fail there (nothing in the project does)")
        why = _write_versions(ctx, step, file, tree, node, versions, need, direct, imports_done, homes.get(file),
                              callee=name)
        if why:
            return failed(STEP, why)
        made += versions
    step.review.append("the versions are the ones this run made late, from its record: a run that asks for others "
                       "still makes those after the module loaded")
    return _finish(step, made, cached=any(t[4] for t in targets.values()))


def _late_cycles(ctx: Project, frames: list[dict], frame: dict, file: str, tree: ast.Module) -> list[BackImport] | str:
    """The late imports a call at import of `file` (repeating `frame`) runs in that frame and the frames it leads to,
    whose modules import `file` back while it is half imported (graph.imported_back); why not when one cannot
    resolve there: it imports back a name `file` does not bind at module scope, or cannot be read."""
    at = next(i for i, f in enumerate(frames) if f is frame)
    bound = syntax.module_bindings(tree)
    out: list[BackImport] = []
    for f in frames[: at + 1]:
        fn, rel = str(f.get("function", "")), ctx.sources.rel(str(f.get("file", "")))
        src = syntax.parsed(ctx.sources, rel) if rel is not None else None
        node = None if src is None else _factory_node(src[1], fn) if "." not in fn else def_by_path(
            src[1], fn, int(f.get("line") or 0))
        if rel is None or node is None:
            continue  # outside the project (its imports are not ours) or not a def (chain_work named it)
        got = imported_back(ctx, file, rel, node, lambda p: ctx.sources.tree(p))
        if isinstance(got, str):
            return f"{fn}() imports a module late that imports {file} back: {got}"
        for b in got:
            missing = sorted(n for n in b.names if n not in bound)
            if missing:
                return (f"{fn}() imports {b.module} late, which imports {', '.join(missing)} back from {file}; "
                        f"{file} does not bind {'it' if len(missing) == 1 else 'them'} at module scope, so a call "
                        "at import would fail there")
        out += got
    return out


def _form(ctx: Project, node: ast.FunctionDef, args: dict, home: _Home, line: int = 0,
          bound_first: bool = False) -> tuple[bool, str]:
    """(True, one recorded call of `node` as an argument list its file can write, defaults left out), or (False,
    why not). A value source cannot write (an array of data) is passed as None where the function has a register
    switch (`_register_switch`) that returns before anything reads it; the switch is then passed True.
    `bound_first`: a method called through an instance, which passes its first parameter itself."""
    a = node.args
    positional = [*a.posonlyargs, *a.args][1 if bound_first else 0:]
    defaults = _defaults(node)
    switch = _register_switch(node, line) if line else None
    before = set()
    if switch is not None:
        for stmt in node.body:
            if stmt is switch[1]:
                break
            before |= syntax.read_names(stmt)
    texts: list[str] = []
    skipped = False
    for p in [*positional, *a.kwonlyargs]:
        value = args.get(p.arg)
        if value is None:
            return False, f"the run did not record {node.name}()'s argument {p.arg}"
        text = render(value, home, ctx)
        if switch is not None and p.arg == switch[0]:
            skipped = True  # passed last, by name
            continue
        if p.arg in defaults and text is not None and text == ast.unparse(defaults[p.arg]):
            skipped = True
            continue
        if text is None:
            shown = value.get("type") or value.get("name") or value.get("kind")
            why = f"{node.name}() was called with {p.arg} = a {shown}, which source at import cannot name"
            if switch is None or p.arg in before:
                return False, why + (f" (its {switch[0]}=True switch returns only after {p.arg} is read)"
                                     if switch is not None else "")
            skipped = True
            texts.append(f"{p.arg}=None")
            continue
        texts.append(f"{p.arg}={text}" if skipped or p in a.kwonlyargs else text)
    if switch is not None:  # the kernels made, nothing launched: the call at import does only what it is for
        texts.append(f"{switch[0]}=True")
    return True, ", ".join(texts)
