"""Variants of the corpus apps' kernel-creation shapes (issue 39, item 4): `fix` judged on shapes nobody tuned it to.

    python -m tests.shapes_variants.mutate [--only SHAPE ...] [--family F ...] [--out DIR] [--no-check] [--json FILE]

Each transformation below rewrites an app of tests/shapes/ with Python's `ast` (parse, transform, `ast.unparse`
of the files it changed; the other files are copied byte for byte) into a program that computes the same thing
with its kernels made somewhere else, at another time, cached another way, and so on. Each checks its precondition
on the syntax tree first and, when it does not hold, names it and writes nothing. A variant counts only if it
prints what the original prints (`python -m APP` in the app folder, a fresh WARP_CACHE_PATH each): `check()` runs
both and drops those that do not, with the difference. (LibCST would keep the comments of the changed files; it
was weighed and not taken: a comment changes no kernel, and `ast` is what the fix engine reads too.)
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ROOT / "tests" / "shapes"


@functools.cache
def _bench_shapes() -> ModuleType:
    """bench/shapes.py (the corpus' manifest and which printed lines are the app's), loaded without leaving bench/
    on sys.path: its file names (coverage.py, load.py) would shadow packages in a test process."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("bench_shapes", ROOT / "bench" / "shapes.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def manifest() -> list[dict]:
    return _bench_shapes().manifest()


def _app_lines(stdout: str) -> list[str]:
    return _bench_shapes()._app_lines(stdout)

FuncDef = ast.FunctionDef | ast.AsyncFunctionDef
CACHE_NAMES = ("cache", "lru_cache")


class NotApplicable(Exception):
    """The transformation's precondition failed; the message names it."""


@dataclass
class App:
    """One corpus app: its name and the sources of its package (path relative to the app folder -> text)."""

    name: str
    folder: Path
    files: dict[str, str]

    @classmethod
    def load(cls, name: str, root: Path = SHAPES) -> App:
        folder = root / name
        files = {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*.py"))
                 if "__pycache__" not in p.parts}
        return cls(name, folder, files)

    def trees(self) -> dict[str, ast.Module]:
        """Fresh syntax trees of the package (each transformation edits its own)."""
        return {path: ast.parse(src) for path, src in self.files.items()}

    @functools.cached_property
    def makers(self) -> frozenset[str]:
        return package_makers(self.trees())


@dataclass
class Variant:
    """What a transformation changed: the new text of each changed file, and where it applied."""

    shape: str
    family: str
    transform: str
    changed: dict[str, str]
    sites: list[str]
    checked: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.shape}:{self.family}/{self.transform}"

    def write(self, app: App, dest: Path) -> Path:
        """The variant as a whole app folder under dest (the original's files, the changed ones replaced)."""
        shutil.copytree(app.folder, dest, ignore=shutil.ignore_patterns("__pycache__"))
        for path, text in self.changed.items():
            (dest / path).write_text(text)
        return dest


# ---- what the transformations look for -------------------------------------------------------------------------


def _is_wp(node: ast.expr, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "wp"


def is_kernel_decorator(dec: ast.expr) -> bool:
    """`@wp.kernel` or `@wp.kernel(...)`."""
    return _is_wp(dec, "kernel") or (isinstance(dec, ast.Call) and _is_wp(dec.func, "kernel"))


def is_wp_decorated(fn: FuncDef) -> bool:
    """A kernel, function or any other `@wp.` decorator: its body is Warp code, not Python that runs."""
    return any(isinstance(d, ast.Attribute | ast.Call) and
               isinstance(d.func if isinstance(d, ast.Call) else d, ast.Attribute) and
               isinstance((d.func if isinstance(d, ast.Call) else d).value, ast.Name) and
               (d.func if isinstance(d, ast.Call) else d).value.id == "wp" for d in fn.decorator_list)


def is_kernel_def(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and any(is_kernel_decorator(d) for d in node.decorator_list)


def makes_kernels(fn: FuncDef, makers: frozenset[str] = frozenset()) -> bool:
    """A function whose body defines a kernel, calls `wp.kernel(...)`, `wp.Kernel(...)`, `wp.overload(...)` or
    `wp.map(...)`, or calls a function of the package (named in makers) that does."""
    for node in ast.walk(fn):
        if node is not fn and is_kernel_def(node):
            return True
        if isinstance(node, ast.Call):
            f = node.func
            if any(_is_wp(f, a) for a in ("Kernel", "kernel", "overload", "map")) or is_kernel_decorator(f):
                return True
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in makers and name != fn.name:
                return True
    return False


def package_makers(trees: dict[str, ast.Module]) -> frozenset[str]:
    """Names of the package's functions and methods that make kernels themselves (the helpers a factory calls)."""
    return frozenset(n.name for t in trees.values() for n in ast.walk(t)
                     if isinstance(n, FuncDef) and not is_wp_decorated(n) and makes_kernels(n))


def cache_decorator(fn: FuncDef) -> ast.expr | None:
    """The decorator that caches fn's results: functools.cache / lru_cache or a project memo (`*cache*`, `*memo*`)."""
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if "cache" in name.lower() or "memo" in name.lower():
            return dec
    return None


def module_factories(tree: ast.Module, makers: frozenset[str] = frozenset()) -> list[FuncDef]:
    return [n for n in tree.body if isinstance(n, FuncDef) and not is_wp_decorated(n) and makes_kernels(n, makers)]


def kernel_methods(tree: ast.Module, makers: frozenset[str] = frozenset()) -> list[tuple[ast.ClassDef, FuncDef]]:
    return [(c, n) for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body
            if isinstance(n, FuncDef) and makes_kernels(n, makers)]


def names_used(node: ast.AST) -> set[str]:
    """Every name read, bound or taken as a parameter in node."""
    return {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(node) if isinstance(n, ast.Name | ast.arg)}


def insert_after_imports(tree: ast.Module, stmts: list[ast.stmt]) -> None:
    """stmts after the module's docstring, `__future__` and other leading imports."""
    at = 0
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Import | ast.ImportFrom) or (
                i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            at = i + 1
        else:
            break
    tree.body[at:at] = stmts


def ensure_functools(tree: ast.Module) -> None:
    """`import functools` unless the file has it; the name must not mean anything else there."""
    if any(isinstance(n, ast.Import) and any(a.name == "functools" and not a.asname for a in n.names)
           for n in tree.body):
        return
    if "functools" in names_used(tree):
        raise NotApplicable("the name functools is taken in this file")
    insert_after_imports(tree, [ast.Import(names=[ast.alias("functools")])])


def parse_stmts(src: str) -> list[ast.stmt]:
    return ast.parse(src).body


def _unparse(tree: ast.Module) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _fresh(tree: ast.AST, base: str) -> str:
    taken = names_used(tree) | {n.name for n in ast.walk(tree) if isinstance(n, FuncDef | ast.ClassDef)}
    name, i = base, 2
    while name in taken:
        name, i = f"{base}{i}", i + 1
    return name


# ---- the transformations ----------------------------------------------------------------------------------------
# Each takes the app's parsed files and returns {path: new tree} for the files it changed plus where it applied,
# or raises NotApplicable naming the precondition that failed.

Result = tuple[dict[str, ast.Module], list[str]]


def _per_factory(app: App, edit: Callable[[ast.Module, FuncDef], None], what: str) -> Result:
    trees, out, sites = app.trees(), {}, []
    makers = app.makers
    for path, tree in trees.items():
        facs = module_factories(tree, makers)
        for fn in facs:
            if any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(fn)):
                continue
            edit(tree, fn)
            sites.append(f"{path}:{fn.lineno} {fn.name}()")
        if facs:
            out[path] = tree
    if not sites:
        raise NotApplicable(f"no module-level function makes kernels ({what} needs a module-level kernel factory)")
    return out, sites


def where_method(app: App) -> Result:
    """A module-level kernel factory becomes a method of a class; the module name stays bound to a bound method."""

    def edit(tree: ast.Module, fn: FuncDef) -> None:
        holder = _fresh(tree, f"_{fn.name.title().replace('_', '')}Kernels")
        method = copy.deepcopy(fn)
        args = method.args
        (args.posonlyargs if args.posonlyargs else args.args).insert(0, ast.arg("self"))
        cls = ast.ClassDef(name=holder, bases=[], keywords=[], body=[method], decorator_list=[])
        bind = parse_stmts(f"{fn.name} = {holder}().{fn.name}")
        i = tree.body.index(fn)
        tree.body[i:i + 1] = [cls, *bind]

    return _per_factory(app, edit, "a method")


def where_init_closure(app: App) -> Result:
    """A module-level kernel factory becomes a closure defined in a class's `__init__` and kept on the instance."""

    def edit(tree: ast.Module, fn: FuncDef) -> None:
        holder = _fresh(tree, f"_{fn.name.title().replace('_', '')}Factory")
        init = parse_stmts("def __init__(self):\n    self.make = None")[0]
        assert isinstance(init, ast.FunctionDef)
        init.body = [copy.deepcopy(fn), *parse_stmts(f"self.make = {fn.name}")]
        cls = ast.ClassDef(name=holder, bases=[], keywords=[], body=[init], decorator_list=[])
        i = tree.body.index(fn)
        tree.body[i:i + 1] = [cls, *parse_stmts(f"{fn.name} = {holder}().make")]

    return _per_factory(app, edit, "a closure in __init__")


def where_module_function(app: App) -> Result:
    """A method that makes kernels becomes a module-level function the class body binds (as itself, or wrapped in
    staticmethod/classmethod)."""
    trees, out, sites, why = app.trees(), {}, [], []
    makers = app.makers
    for path, tree in trees.items():
        for cls, fn in kernel_methods(tree, makers):
            decs = [d.id for d in fn.decorator_list if isinstance(d, ast.Name)]
            if len(decs) != len(fn.decorator_list) or any(d not in ("staticmethod", "classmethod") for d in decs):
                why.append(f"{path}:{fn.lineno} {cls.name}.{fn.name} has a decorator other than "
                           "staticmethod/classmethod")
                continue
            if (fn.name.startswith("__") and not fn.name.endswith("__")) or any(
                    (isinstance(n, ast.Name) and n.id in ("super", "__class__")) or
                    (isinstance(n, ast.Attribute) and n.attr.startswith("__") and not n.attr.endswith("__"))
                    for n in ast.walk(fn)):
                why.append(f"{path}:{fn.lineno} {cls.name}.{fn.name} uses super(), __class__ or a private name")
                continue
            top = _fresh(tree, f"_{cls.name}_{fn.name.strip('_')}")
            moved = copy.deepcopy(fn)
            moved.name, moved.decorator_list = top, []
            bound = f"{decs[0]}({top})" if decs else top
            cls.body[cls.body.index(fn)] = parse_stmts(f"{fn.name} = {bound}")[0]
            i = tree.body.index(cls)
            tree.body.insert(i, moved)
            out[path] = tree
            sites.append(f"{path}:{fn.lineno} {cls.name}.{fn.name}")
    if not sites:
        raise NotApplicable("no method of a module-level class makes kernels" + (f" ({'; '.join(why)})" if why else ""))
    return out, sites


def where_module_factory(app: App) -> Result:
    """A module-level kernel is made by a module-level factory called at import, its result bound to the same name
    (so every import and launch of it is unchanged)."""
    trees, out, sites = app.trees(), {}, []
    for path, tree in trees.items():
        for kernel in [n for n in tree.body if is_kernel_def(n)]:
            maker = _fresh(tree, f"_make_{kernel.name}")
            fn = parse_stmts(f"def {maker}():\n    return {kernel.name}\n\n{kernel.name} = {maker}()")
            fn[0].body.insert(0, kernel)  # type: ignore[attr-defined]
            i = tree.body.index(kernel)
            tree.body[i:i + 1] = fn
            out[path] = tree
            sites.append(f"{path}:{kernel.lineno} {kernel.name}")
    if not sites:
        raise NotApplicable("no kernel is defined at module level")
    return out, sites


def _module_kernels_used_lazily(app: App) -> Iterator[tuple[str, ast.Module, ast.FunctionDef]]:
    """Module-level kernels referred to only inside functions of their own file, never imported by another."""
    trees = app.trees()
    for path, tree in trees.items():
        stem = Path(path).stem
        local_names = {n.arg if isinstance(n, ast.arg) else n.id
                       for f in ast.walk(tree) if isinstance(f, FuncDef) and not is_wp_decorated(f)
                       for n in ast.walk(f)
                       if isinstance(n, ast.arg) or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))}
        for node in tree.body:
            if not is_kernel_def(node):
                continue
            name = node.name
            at_top = [n for stmt in tree.body if stmt is not node and not isinstance(stmt, FuncDef | ast.ClassDef)
                      for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name]
            in_decorators = [n for stmt in tree.body if isinstance(stmt, FuncDef | ast.ClassDef)
                             for d in stmt.decorator_list for n in ast.walk(d)
                             if isinstance(n, ast.Name) and n.id == name]
            bound_locally = name in local_names
            elsewhere = [p for p, t in trees.items() if p != path and any(
                (isinstance(n, ast.ImportFrom) and any(a.name == name for a in n.names)) or
                (isinstance(n, ast.Attribute) and n.attr == name) or
                (isinstance(n, ast.ImportFrom) and any(a.name == stem for a in n.names))
                for n in ast.walk(t))]
            if not (at_top or in_decorators or bound_locally or elsewhere):
                yield path, tree, node


def _lazy(app: App, wrap: Callable[[ast.Module, ast.FunctionDef], tuple[list[ast.stmt], str]], what: str) -> Result:
    out, sites = {}, []
    for path, tree, kernel in list(_module_kernels_used_lazily(app)):
        stmts, getter = wrap(tree, kernel)
        i = tree.body.index(kernel)
        tree.body[i:i + 1] = stmts
        call = ast.parse(getter, mode="eval").body
        for fn in [s for s in tree.body if isinstance(s, FuncDef | ast.ClassDef) and s not in stmts]:
            for parent in ast.walk(fn):
                for fld, value in ast.iter_fields(parent):
                    if isinstance(value, ast.Name) and value.id == kernel.name and isinstance(value.ctx, ast.Load):
                        setattr(parent, fld, copy.deepcopy(call))
                    elif isinstance(value, list):
                        for j, item in enumerate(value):
                            if isinstance(item, ast.Name) and item.id == kernel.name and isinstance(item.ctx, ast.Load):
                                value[j] = copy.deepcopy(call)
        out[path] = tree
        sites.append(f"{path}:{kernel.lineno} {kernel.name}")
    if not sites:
        raise NotApplicable(f"no module-level kernel is used only inside functions of its own file ({what})")
    return out, sites


def when_first_use(app: App) -> Result:
    """A module-level kernel is made on first use instead of at import: a `functools.cache`d getter, called where
    the kernel was named."""

    def wrap(tree: ast.Module, kernel: ast.FunctionDef) -> tuple[list[ast.stmt], str]:
        ensure_functools(tree)
        getter = _fresh(tree, f"_get_{kernel.name}")
        fn = parse_stmts(f"@functools.cache\ndef {getter}():\n    return {kernel.name}")[0]
        assert isinstance(fn, ast.FunctionDef)
        fn.body.insert(0, kernel)
        return [fn], f"{getter}()"

    return _lazy(app, wrap, "made on first use")


def when_first_use_global(app: App) -> Result:
    """A module-level kernel is made on first use and kept in a module global (`global _k; if _k is None: ...`)."""

    def wrap(tree: ast.Module, kernel: ast.FunctionDef) -> tuple[list[ast.stmt], str]:
        slot, getter = _fresh(tree, f"_{kernel.name}_made"), _fresh(tree, f"_get_{kernel.name}")
        stmts = parse_stmts(f"{slot} = None\n\ndef {getter}():\n    global {slot}\n    if {slot} is None:\n"
                            f"        {slot} = {kernel.name}\n    return {slot}")
        guard = stmts[1].body[1]  # type: ignore[attr-defined]
        guard.body.insert(0, kernel)
        return stmts, f"{getter}()"

    return _lazy(app, wrap, "made on first use, kept in a global")


def _cached_factories(app: App) -> Iterator[tuple[str, ast.Module, FuncDef, ast.expr]]:
    trees = app.trees()
    makers = app.makers
    for path, tree in trees.items():
        for fn in module_factories(tree, makers):
            dec = cache_decorator(fn)
            if dec is not None:
                yield path, tree, fn, dec


def _recache(app: App, new: Callable[[ast.Module, FuncDef, ast.expr], str | None], what: str) -> Result:
    out, sites, same = {}, [], []
    for path, tree, fn, dec in list(_cached_factories(app)):
        was = ast.unparse(dec)
        got = new(tree, fn, dec)
        if got is None:
            same.append(f"{fn.name}() already uses {was}")
            continue
        out[path] = tree
        sites.append(f"{path}:{fn.lineno} {fn.name}(): @{was} -> {got}")
    if not sites:
        raise NotApplicable("no module-level kernel factory has a caching decorator (functools.cache, lru_cache, a "
                            "*cache*/*memo* decorator)" if not same else "; ".join(same))
    return out, sites


def _swap_decorator(text: str) -> Callable[[ast.Module, FuncDef, ast.expr], str | None]:
    def new(tree: ast.Module, fn: FuncDef, dec: ast.expr) -> str | None:
        if ast.unparse(dec) in (text, text.removeprefix("functools.")):
            return None
        ensure_functools(tree)
        fn.decorator_list[fn.decorator_list.index(dec)] = ast.parse(text, mode="eval").body
        return f"@{text}"

    return new


def cache_functools(app: App) -> Result:
    """The factory's cache becomes `@functools.cache`."""
    return _recache(app, _swap_decorator("functools.cache"), "functools.cache")


def cache_lru(app: App) -> Result:
    """The factory's cache becomes `@functools.lru_cache(maxsize=None)`."""
    return _recache(app, _swap_decorator("functools.lru_cache(maxsize=None)"), "lru_cache")


def cache_dict_registry(app: App) -> Result:
    """The factory's cache becomes a module-level dict the factory looks itself up in, keyed on its arguments."""

    def new(tree: ast.Module, fn: FuncDef, dec: ast.expr) -> str:
        fn.decorator_list.remove(dec)
        registry, made = _fresh(tree, f"_{fn.name.upper()}_REGISTRY"), _fresh(tree, f"_{fn.name}_uncached")
        a = fn.args
        params = [x.arg for x in [*a.posonlyargs, *a.args]]
        if a.vararg or a.kwarg or a.kwonlyargs:
            raise NotApplicable(f"{fn.name}() takes *args, **kwargs or keyword-only arguments")
        inner = copy.deepcopy(fn)
        inner.name = made
        outer = parse_stmts(f"def {fn.name}():\n    key = ({', '.join(params)}{',' if params else ''})\n"
                            f"    if key not in {registry}:\n        {registry}[key] = {made}({', '.join(params)})\n"
                            f"    return {registry}[key]")[0]
        assert isinstance(outer, ast.FunctionDef)
        outer.args = copy.deepcopy(fn.args)
        for arg in [*outer.args.posonlyargs, *outer.args.args]:
            arg.annotation = None
        outer.decorator_list = list(fn.decorator_list)
        inner.decorator_list = []
        i = tree.body.index(fn)
        tree.body[i:i + 1] = [*parse_stmts(f"{registry}: dict = {{}}"), inner, outer]
        return f"a dict {registry}"

    return _recache(app, new, "a dict registry")


MEMO_MODULE = '''"""A memo for kernel factories, keyed on the arguments."""

import functools


def memo_kernels(factory):
    made = {}

    @functools.wraps(factory)
    def lookup(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in made:
            made[key] = factory(*args, **kwargs)
        return made[key]

    return lookup
'''


def cache_project_decorator(app: App) -> Result:
    """The factory's cache becomes `@memo_kernels`, a decorator of the project's own (a new file of the package)."""
    holder = f"{app.name}/_kernel_memo.py"
    if holder in app.files:
        raise NotApplicable(f"{holder} exists")

    def new(tree: ast.Module, fn: FuncDef, dec: ast.expr) -> str:
        if "memo_kernels" in names_used(tree):
            raise NotApplicable("the name memo_kernels is taken")
        fn.decorator_list[fn.decorator_list.index(dec)] = ast.Name("memo_kernels")
        if not any(isinstance(n, ast.ImportFrom) and n.module == "_kernel_memo" for n in tree.body):
            insert_after_imports(tree, [ast.ImportFrom(module="_kernel_memo", names=[ast.alias("memo_kernels")],
                                                       level=1)])
        return "@memo_kernels"

    out, sites = _recache(app, new, "a project decorator")
    out[holder] = ast.parse(MEMO_MODULE)
    return out, sites


def _module_literal_sites(fn: FuncDef) -> list[ast.keyword]:
    """`module="..."` keywords of wp.kernel calls and decorators in fn's own scope (kernels' decorators included)."""
    found = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, FuncDef | ast.Lambda):
            stack.extend(getattr(node, "decorator_list", []))
            continue
        if isinstance(node, ast.Call) and _is_wp(node.func, "kernel"):
            found += [k for k in node.keywords if k.arg == "module"]
        stack.extend(ast.iter_child_nodes(node))
    return found


def _lift_module(app: App, how: str) -> Result:
    trees, out, sites, why = app.trees(), {}, [], []
    all_calls_ok: dict[str, bool] = {}
    for path, tree in trees.items():
        cands: list[FuncDef] = [*module_factories(tree)]
        if how == "kwonly_default":
            cands += [m for _, m in kernel_methods(tree)]
        for fn in cands:
            kws = _module_literal_sites(fn)
            if not kws:
                continue
            values = {ast.unparse(k.value) for k in kws}
            if not all(isinstance(k.value, ast.Constant) and isinstance(k.value.value, str) for k in kws):
                why.append(f"{fn.name}() passes module= a {', '.join(sorted(values))}, not a string literal")
                continue
            if len(values) > 1:
                why.append(f"{fn.name}() passes different modules: {', '.join(sorted(values))}")
                continue
            literal = kws[0].value
            used = names_used(fn)
            pname = next((p for p in ("module", "kernel_module") if p not in used), None)
            if pname is None:
                why.append(f"{fn.name}() already uses the names module and kernel_module")
                continue
            a = fn.args
            if how == "kwonly_default":
                a.kwonlyargs.append(ast.arg(pname))
                a.kw_defaults.append(copy.deepcopy(literal))
            else:
                if a.vararg or a.kwarg or a.kwonlyargs or (how == "positional" and a.defaults):
                    why.append(f"{fn.name}() has *args, **kwargs, keyword-only arguments or defaults")
                    continue
                calls = _calls_everywhere(trees, fn.name)
                if calls is None:
                    why.append(f"{fn.name} is referred to other than by a plain call somewhere in the package")
                    continue
                npos = len(a.posonlyargs) + len(a.args)
                if how == "positional" and any(c.keywords or len(c.args) != npos or
                                               any(isinstance(x, ast.Starred) for x in c.args) for c in calls):
                    why.append(f"a call of {fn.name}() does not pass every argument positionally")
                    continue
                if how == "keyword" and any(any(k.arg is None for k in c.keywords) for c in calls):
                    why.append(f"a call of {fn.name}() passes **kwargs")
                    continue
                if how == "keyword" and any(not ast.unparse(d).startswith(("functools.", "cache", "lru_cache"))
                                            for d in fn.decorator_list):
                    why.append(f"{fn.name}() has a decorator that may not pass keyword arguments on: "
                               + ", ".join(f"@{ast.unparse(d)}" for d in fn.decorator_list))
                    continue
                if how == "positional":
                    a.args.append(ast.arg(pname))
                    for c in calls:
                        c.args.append(copy.deepcopy(literal))
                else:
                    a.kwonlyargs.append(ast.arg(pname))
                    a.kw_defaults.append(None)
                    for c in calls:
                        c.keywords.append(ast.keyword(arg=pname, value=copy.deepcopy(literal)))
                for p, t in trees.items():
                    if any(c in ast.walk(t) for c in calls):
                        out[p] = t
            for k in kws:
                k.value = ast.Name(pname)
            out[path] = tree
            all_calls_ok[fn.name] = True
            sites.append(f"{path}:{fn.lineno} {fn.name}(): module={ast.unparse(literal)} -> parameter {pname} "
                         f"({how})")
    if not sites:
        raise NotApplicable("no kernel factory passes wp.kernel a string literal module= in its own scope"
                            + (f" ({'; '.join(why)})" if why else ""))
    return out, sites


def _calls_everywhere(trees: dict[str, ast.Module], name: str) -> list[ast.Call] | None:
    """Every call of `name` in the package, or None when the name appears other than as a call's callee (passed as
    a value, decorated with, read as an attribute of a module) or an import of it."""
    calls = []
    for tree in trees.values():
        callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and ((isinstance(n.func, ast.Name) and n.func.id == name) or
                                            (isinstance(n.func, ast.Attribute) and n.func.attr == name)):
                calls.append(n)
            elif isinstance(n, ast.Name | ast.Attribute) and (n.id if isinstance(n, ast.Name) else n.attr) == name \
                    and id(n) not in callees:
                return None
    return calls


def module_constant(app: App) -> Result:
    """Every `wp.kernel(module="...")` string literal becomes a module-level constant of its file, passed by name."""
    trees, out, sites = app.trees(), {}, []
    for path, tree in trees.items():
        kws = [k for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_wp(n.func, "kernel")
               for k in n.keywords if k.arg == "module" and isinstance(k.value, ast.Constant)
               and isinstance(k.value.value, str)]
        if not kws:
            continue
        consts: dict[str, str] = {}
        for k in kws:
            literal = k.value.value  # type: ignore[attr-defined]
            if literal not in consts:
                base = "KERNEL_MODULE" if not consts else f"KERNEL_MODULE_{len(consts) + 1}"
                consts[literal] = _fresh(tree, base)
            k.value = ast.Name(consts[literal])
            sites.append(f"{path}:{k.lineno} module={literal!r} -> {consts[literal]}")
        insert_after_imports(tree, parse_stmts("\n".join(f"{c} = {v!r}" for v, c in consts.items())))
        out[path] = tree
    if not sites:
        raise NotApplicable("no wp.kernel(...) passes module= a string literal")
    return out, sites


def module_kwonly_default(app: App) -> Result:
    """The factory's `module="..."` literal becomes a keyword-only parameter with that default."""
    return _lift_module(app, "kwonly_default")


def module_positional(app: App) -> Result:
    """The literal becomes a trailing positional parameter, passed positionally at every call."""
    return _lift_module(app, "positional")


def module_keyword(app: App) -> Result:
    """The literal becomes a keyword-only parameter without default, passed by keyword at every call."""
    return _lift_module(app, "keyword")


def _module_file(app: App, here: str, node: ast.ImportFrom, name: str | None = None) -> str | None:
    """The package file a relative `from .x import ...` (or `from . import name`) in file `here` reads."""
    if node.level != 1:
        return None
    base = Path(here).parent
    parts = (node.module.split(".") if node.module else []) + ([name] if name else [])
    for cand in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts) / "__init__.py"):
        if str(cand) in app.files:
            return str(cand)
    return None


def _imports_back(app: App, target: str, here: str) -> bool:
    """Does target import the module in file `here` (a cycle: the reason a late import is late)?"""
    tree = ast.parse(app.files[target])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            files = {_module_file(app, target, node)} | {_module_file(app, target, node, a.name) for a in node.names}
            if here in files:
                return True
    return False


def _outer_scopes(tree: ast.Module) -> list[FuncDef]:
    """Module-level functions and methods of module-level classes (not Warp's)."""
    return [n for n in tree.body if isinstance(n, FuncDef) and not is_wp_decorated(n)] + \
        [m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body
         if isinstance(m, FuncDef) and not is_wp_decorated(m)]


def import_late(app: App) -> Result:
    """A module-level `from .x import f` whose names only functions read moves into each of those functions."""
    trees, out, sites, why = app.trees(), {}, [], []
    for path, tree in trees.items():
        if path.endswith("__init__.py"):
            continue
        scopes = _outer_scopes(tree)
        bodies = {id(n) for s in scopes for stmt in s.body for n in ast.walk(stmt)}
        for imp in [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level >= 1]:
            movable = []
            for alias in imp.names:
                local = alias.asname or alias.name
                uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == local]
                reexported = any(p != path and any(isinstance(n, ast.ImportFrom) and any(
                    a.name == local for a in n.names) and _module_file(app, p, n) == path for n in ast.walk(t))
                                 for p, t in trees.items())
                if not uses:
                    continue
                if any(id(u) not in bodies for u in uses) or reexported:
                    why.append(f"{path}: {local} is read at module level, in a Warp function, in a signature or "
                               "imported from this file by another")
                    continue
                movable.append(alias)
            if not movable:
                continue
            imp.names = [a for a in imp.names if a not in movable]
            if not imp.names:
                tree.body.remove(imp)
            for scope in scopes:
                need = [a for a in movable if any(isinstance(n, ast.Name) and n.id == (a.asname or a.name)
                                                  for stmt in scope.body for n in ast.walk(stmt))]
                if need:
                    at = 1 if ast.get_docstring(scope) else 0
                    scope.body.insert(at, ast.ImportFrom(module=imp.module, names=copy.deepcopy(need),
                                                         level=imp.level))
                    sites.append(f"{path}:{scope.lineno} {scope.name}(): from {'.' * imp.level}{imp.module or ''} "
                                 f"import {', '.join(a.name for a in need)}")
            out[path] = tree
    if not sites:
        raise NotApplicable("no module-level relative import is read only inside functions"
                            + (f" ({'; '.join(dict.fromkeys(why))})" if why else ""))
    return out, sites


def _makes_at_import(app: App, target: str) -> bool:
    """Does the module in file `target` make kernels or kernel instances while it is imported: a module-level call of
    `wp.kernel`/`wp.Kernel`/`wp.overload`/`wp.map`, of a package function that makes kernels, or of a package class
    whose methods do (`IndexDispatch(kernel, ...)` registering overloads)? Definitions alone (`@wp.kernel def`,
    `@wp.func`) join their own module before it first loads, whenever the import runs."""
    trees = app.trees()
    makers = app.makers
    classes = {c.name for t in trees.values() for c in t.body if isinstance(c, ast.ClassDef)
               and any(isinstance(m, FuncDef) and m.name in makers for m in c.body)}
    for stmt in trees[target].body:
        if isinstance(stmt, FuncDef | ast.ClassDef | ast.Import | ast.ImportFrom):
            continue
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if any(_is_wp(f, a) for a in ("Kernel", "kernel", "overload", "map")) or name in makers | classes:
                return True
    return False


def import_module_level(app: App) -> Result:
    """A function-local `from .x import f` moves to module level, unless x imports this file back (a cycle) or x makes
    kernels or instances while it is imported: then the late import is when they are made, the shape's mechanism
    (index_dispatch's `from . import joints` registers generic instances after their module loaded), and moving it
    would remove what the variant is meant to keep."""
    trees, out, sites, why = app.trees(), {}, [], []
    for path, tree in trees.items():
        top = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | \
            {n.name for n in tree.body if isinstance(n, FuncDef | ast.ClassDef)}
        for scope in _outer_scopes(tree):
            for imp in [s for s in scope.body if isinstance(s, ast.ImportFrom) and s.level >= 1]:
                targets = {_module_file(app, path, imp)} | {_module_file(app, path, imp, a.name) for a in imp.names}
                targets.discard(None)
                if any(_imports_back(app, t, path) for t in targets if t):
                    back = ", ".join(sorted(t for t in targets if t))
                    why.append(f"{path}:{imp.lineno} {ast.unparse(imp)} in {scope.name}(): {back} imports this "
                               "file back (a cycle)")
                    continue
                made = sorted(t for t in targets if t and _makes_at_import(app, t))
                if made:
                    why.append(f"{path}:{imp.lineno} {ast.unparse(imp)} in {scope.name}(): {', '.join(made)} makes "
                               "kernels or kernel instances while it is imported, so the late import is when they are "
                               "made (moving it changes the shape's mechanism)")
                    continue
                if any((a.asname or a.name) in top for a in imp.names):
                    why.append(f"{path}:{imp.lineno}: a name it imports is bound at module level")
                    continue
                scope.body.remove(imp)
                if not scope.body:
                    scope.body.append(ast.Pass())
                insert_after_imports(tree, [imp])
                out[path] = tree
                sites.append(f"{path}:{imp.lineno} {ast.unparse(imp)} (was in {scope.name}())")
    if not sites:
        raise NotApplicable("no function-local relative import can move to module level"
                            + (f" ({'; '.join(why)})" if why else ""))
    return out, sites


def _dataclass_decorator(cls: ast.ClassDef) -> ast.expr | None:
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if (isinstance(target, ast.Name) and target.id == "dataclass") or \
                (isinstance(target, ast.Attribute) and target.attr == "dataclass"):
            return d
    return None


def class_plain(app: App) -> Result:
    """A `@dataclass` becomes a plain class with the `__init__`, `__repr__`, `__eq__` (and, frozen, `__hash__` and
    no assignment) the decorator would write."""
    trees, out, sites, why = app.trees(), {}, [], []
    introspects = sorted({f"{p}:{n.lineno} {ast.unparse(n.func)}()" for p, t in trees.items() for n in ast.walk(t)
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute | ast.Name)
                          and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id)
                          in ("fields", "asdict", "astuple", "replace", "is_dataclass")})
    if introspects:
        raise NotApplicable("the package reads dataclasses as dataclasses: " + ", ".join(introspects))
    for path, tree in trees.items():
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
            dec = _dataclass_decorator(cls)
            if dec is None:
                continue
            opts = {k.arg: k.value for k in dec.keywords} if isinstance(dec, ast.Call) else {}
            if set(opts) - {"frozen"} or any(not isinstance(v, ast.Constant) for v in opts.values()):
                why.append(f"{cls.name}: @{ast.unparse(dec)} has options other than frozen=")
                continue
            frozen = bool(opts.get("frozen") and opts["frozen"].value)  # type: ignore[attr-defined]
            fields, bad = [], ""
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if "ClassVar" in ast.unparse(stmt.annotation):
                        continue
                    default = stmt.value
                    factory = None
                    if isinstance(default, ast.Call) and ast.unparse(default.func).endswith("field"):
                        kw = {k.arg: k.value for k in default.keywords}
                        if set(kw) == {"default_factory"}:
                            default, factory = None, kw["default_factory"]
                        elif set(kw) == {"default"}:
                            default = kw["default"]
                        else:
                            bad = f"{cls.name}.{stmt.target.id} = {ast.unparse(stmt.value)}"  # type: ignore[arg-type]
                    fields.append((stmt.target.id, stmt.annotation, default, factory))
            if bad or cls.bases or any(isinstance(s, FuncDef) and s.name in ("__init__", "__eq__", "__repr__",
                                                                              "__hash__") for s in cls.body):
                why.append(f"{cls.name}: {bad or 'a base class or its own __init__/__eq__/__repr__/__hash__'}")
                continue
            names = [f[0] for f in fields]
            params = ", ".join(f"{n}=None" if fac is not None else f"{n}={ast.unparse(d)}" if d is not None else n
                               for n, _, d, fac in fields)
            assign = "object.__setattr__(self, {n!r}, {v})" if frozen else "self.{n} = {v}"
            lines = [f"def __init__(self, {params}):" if names else "def __init__(self):"]
            for n, _, _, fac in fields:
                v = f"({ast.unparse(fac)})() if {n} is None else {n}" if fac is not None else n
                lines.append("    " + assign.format(n=n, v=v))
            if any(isinstance(s, FuncDef) and s.name == "__post_init__" for s in cls.body):
                lines.append("    self.__post_init__()")
            if not names:
                lines.append("    pass")
            tup = "(" + "".join(f"self.{n}, " for n in names) + ")"
            other = "(" + "".join(f"other.{n}, " for n in names) + ")"
            shown = ", ".join(f"{n}={{self.{n}!r}}" for n in names)
            lines += ["def __repr__(self):", f"    return f'{{type(self).__qualname__}}({shown})'",
                      "def __eq__(self, other):", "    if other.__class__ is not self.__class__:",
                      "        return NotImplemented", f"    return {tup} == {other}"]
            if frozen:
                lines += ["def __hash__(self):", f"    return hash({tup})", "def __setattr__(self, name, value):",
                          "    raise AttributeError(f'cannot assign to field {name!r}')"]
            else:
                lines += ["__hash__ = None"]
            cls.decorator_list.remove(dec)
            keep = [s for s in cls.body if not (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                                                 and s.target.id in names)]
            keep = [s for s in keep if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                            and s is not cls.body[0])]
            cls.body = [*keep[:1 if keep and isinstance(keep[0], ast.Expr) else 0], *parse_stmts("\n".join(lines)),
                        *keep[1 if keep and isinstance(keep[0], ast.Expr) else 0:]]
            out[path] = tree
            sites.append(f"{path}:{cls.lineno} {cls.name} ({'frozen ' if frozen else ''}dataclass -> plain class)")
    if not sites:
        raise NotApplicable("no @dataclass to write out" + (f" ({'; '.join(why)})" if why else ""))
    return out, sites


def class_dataclass(app: App) -> Result:
    """A plain class whose `__init__` only stores its parameters under their own names becomes
    `@dataclass(eq=False)` (eq=False keeps the identity hash and equality a plain class has)."""
    trees, out, sites = app.trees(), {}, []
    for path, tree in trees.items():
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)]:
            init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if init is None or _dataclass_decorator(cls) or cls.bases or any(
                    isinstance(s, FuncDef) and s.name == "__repr__" for s in cls.body):
                continue
            a = init.args
            params = a.args[1:]
            if a.posonlyargs or a.vararg or a.kwarg or a.kwonlyargs or not params:
                continue
            stores = [s for s in init.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(stores) != len(params) or not all(
                    isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute)
                    and isinstance(s.targets[0].value, ast.Name) and s.targets[0].value.id == "self"
                    and s.targets[0].attr == p.arg and isinstance(s.value, ast.Name) and s.value.id == p.arg
                    for s, p in zip(stores, params, strict=True)):
                continue
            if "dataclasses" in names_used(tree):
                continue
            defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
            fields = [ast.AnnAssign(target=ast.Name(p.arg, ctx=ast.Store()),
                                    annotation=copy.deepcopy(p.annotation) or ast.Name("object"),
                                    value=copy.deepcopy(d), simple=1) for p, d in zip(params, defaults, strict=True)]
            i = cls.body.index(init)
            cls.body[i:i + 1] = fields
            cls.decorator_list.insert(0, ast.parse("dataclasses.dataclass(eq=False)", mode="eval").body)
            if not any(isinstance(n, ast.Import) and any(x.name == "dataclasses" for x in n.names) for n in tree.body):
                insert_after_imports(tree, [ast.Import(names=[ast.alias("dataclasses")])])
            out[path] = tree
            sites.append(f"{path}:{cls.lineno} {cls.name} (plain class -> dataclass)")
    if not sites:
        raise NotApplicable("no plain class whose __init__ only stores its parameters under their own names")
    return out, sites


def _kernel_statements(tree: ast.Module, makers: frozenset[str]) -> list[tuple[list[ast.stmt], ast.stmt]]:
    """(the statement list holding it, the statement) for every module-level kernel definition and every statement
    of a function that makes a kernel: a kernel definition, or an assignment from a call that makes one."""
    found: list[tuple[list[ast.stmt], ast.stmt]] = [(tree.body, s) for s in tree.body if is_kernel_def(s)]
    probe = ast.FunctionDef(name="", args=ast.arguments([], [], None, [], [], None, []), body=[], decorator_list=[])
    for scope in [n for n in ast.walk(tree) if isinstance(n, FuncDef) and not is_wp_decorated(n)]:
        for node in ast.walk(scope):
            for _, value in ast.iter_fields(node):
                if not isinstance(value, list):
                    continue
                for s in value:
                    probe.body = [s.value] if isinstance(s, ast.Assign) else []  # type: ignore[list-item]
                    if is_kernel_def(s) or (isinstance(s, ast.Assign) and makes_kernels(probe, makers)):
                        found.append((value, s))
    seen, unique = set(), []
    for block, k in found:
        if id(k) not in seen:
            seen.add(id(k))
            unique.append((block, k))
    return unique


def control_branch(app: App) -> Result:
    """Each kernel defined at module level, and each statement of a function that makes a kernel, sits under both
    branches of an `if` on a Warp setting (the same statement in each, so either branch computes the same)."""
    trees, out, sites = app.trees(), {}, []
    makers = app.makers
    for path, tree in trees.items():
        if not any(isinstance(n, ast.Import) and any(a.name == "warp" and a.asname == "wp" for a in n.names)
                   for n in tree.body):
            continue  # the test reads wp.config: only files that import warp as wp
        for block, k in _kernel_statements(tree, makers):
            if any(isinstance(n, ast.Lambda) for n in ast.walk(k)):
                continue  # wp.map reads a lambda's source from its line: the same line twice is not the same
            test = ast.parse('wp.config.mode == "release"', mode="eval").body
            block[block.index(k)] = ast.If(test=test, body=[k], orelse=[copy.deepcopy(k)])
            out[path] = tree
            sites.append(f"{path}:{k.lineno} {k.name if isinstance(k, ast.FunctionDef) else ast.unparse(k)[:60]}")
    if not sites:
        raise NotApplicable("no kernel is defined at module level and no function statement makes one, in a file "
                            "that imports warp as wp")
    return out, sites


def control_loop(app: App) -> Result:
    """Two or more consecutive assignments of one kernel factory's results (`a = make(x); b = make(y)`) become a
    loop over the argument lists, the results unpacked after it."""
    trees, out, sites = app.trees(), {}, []
    makers = app.makers
    factories = {f.name for t in trees.values() for f in module_factories(t, makers)} | \
        {m.name for t in trees.values() for _, m in kernel_methods(t, makers)}
    for path, tree in trees.items():
        for node in list(ast.walk(tree)):
            for _, block in ast.iter_fields(node):
                if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                    continue
                i = 0
                while i < len(block):
                    run = _factory_run(block, i, factories)
                    if len(run) < 2:
                        i += 1
                        continue
                    made, a, k = _fresh(tree, "_made"), _fresh(tree, "_args"), _fresh(tree, "_kwargs")
                    callee = ast.unparse(run[0].value.func)  # type: ignore[attr-defined]
                    rows = ", ".join(
                        f"(({''.join(ast.unparse(x) + ', ' for x in s.value.args)}), "  # type: ignore[attr-defined]
                        f"{{{', '.join(f'{kw.arg!r}: {ast.unparse(kw.value)}' for kw in s.value.keywords)}}})"  # type: ignore[attr-defined]
                        for s in run)
                    targets = ", ".join(ast.unparse(s.targets[0]) for s in run)  # type: ignore[attr-defined]
                    new = parse_stmts(f"{made} = []\nfor {a}, {k} in ({rows},):\n"
                                      f"    {made}.append({callee}(*{a}, **{k}))\n{targets} = {made}")
                    block[i:i + len(run)] = new
                    out[path] = tree
                    sites.append(f"{path}:{run[0].lineno} {len(run)} calls of {callee}() in a loop")
                    i += len(new)
    if not sites:
        raise NotApplicable("no two consecutive assignments of one kernel factory's results (with arguments that "
                            "are names, constants or attributes, none reading an earlier target)")
    return out, sites


def _factory_run(block: list[ast.stmt], i: int, factories: set[str]) -> list[ast.Assign]:
    run: list[ast.Assign] = []
    for s in block[i:]:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name | ast.Attribute)
                and isinstance(s.value, ast.Call)):
            break
        func = s.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in factories or (run and ast.dump(func) != ast.dump(run[0].value.func)):  # type: ignore[attr-defined]
            break
        args = [*s.value.args, *(kw.value for kw in s.value.keywords)]
        if any(kw.arg is None for kw in s.value.keywords) or not all(
                all(isinstance(n, ast.Name | ast.Constant | ast.Attribute | ast.Load | ast.expr_context | ast.Tuple)
                    for n in ast.walk(x)) for x in args):
            break
        read = {ast.unparse(n) for x in args for n in ast.walk(x) if isinstance(n, ast.Name | ast.Attribute)}
        if any(ast.unparse(r.targets[0]) in read for r in [*run, s]):
            break
        run.append(s)
    return run


TRANSFORMS: dict[str, dict[str, Callable[[App], Result]]] = {
    "where": {"method": where_method, "init_closure": where_init_closure, "module_function": where_module_function,
              "module_factory": where_module_factory},
    "when": {"first_use": when_first_use, "first_use_global": when_first_use_global},
    "cache": {"functools_cache": cache_functools, "lru_cache": cache_lru, "dict_registry": cache_dict_registry,
              "project_decorator": cache_project_decorator},
    "module": {"constant": module_constant, "kwonly_default": module_kwonly_default, "positional": module_positional,
               "keyword": module_keyword},
    "import": {"late": import_late, "module_level": import_module_level},
    "class": {"plain": class_plain, "dataclass": class_dataclass},
    "control": {"branch": control_branch, "loop": control_loop},
}


def generate(app: App, families: list[str] | None = None) -> tuple[list[Variant], dict[str, str]]:
    """Every transformation of the chosen families applied to the app: the variants made, and for each
    transformation that did not apply, the precondition that failed."""
    made, skipped = [], {}
    for family, transforms in TRANSFORMS.items():
        if families and family not in families:
            continue
        for tname, fn in transforms.items():
            try:
                changed, sites = fn(app)
            except NotApplicable as exc:
                skipped[f"{family}/{tname}"] = str(exc)
                continue
            texts = {path: _unparse(tree) for path, tree in changed.items()}
            made.append(Variant(app.name, family, tname, texts, sites))
    return made, skipped


# ---- does the variant print what the original prints ------------------------------------------------------------


def plain_lines(folder: Path, module: str, py: str = sys.executable, timeout: float = 600) -> tuple[int, list[str],
                                                                                                    str]:
    """One plain run `py -m module` in folder with a fresh, private Warp kernel cache: (exit code, the printed
    lines without Warp's banner and module-load lines, stderr's tail)."""
    with tempfile.TemporaryDirectory(prefix="variant-cache-") as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache)
        env.pop("PYTHONPATH", None)
        done = subprocess.run([py, "-m", module], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=timeout)
    return done.returncode, _app_lines(done.stdout), done.stderr[-600:]


def check(app: App, variants: list[Variant], original: list[str] | None = None,
          py: str = sys.executable) -> list[Variant]:
    """The variants that print exactly what the original prints; every variant's `checked` says what happened."""
    if original is None:
        code, original, err = plain_lines(app.folder, app.name, py)
        if code != 0:
            raise RuntimeError(f"the original {app.name} failed: {err}")
    kept = []
    with tempfile.TemporaryDirectory(prefix=f"variants-{app.name}-") as tmp:
        for v in variants:
            folder = v.write(app, Path(tmp) / f"{v.family}-{v.transform}")
            try:
                code, lines, err = plain_lines(folder, app.name, py)
            except subprocess.TimeoutExpired:
                code, lines, err = -1, [], "timed out"
            same = code == 0 and lines == original
            v.checked = {"same_output": same, "exit": code}
            if not same:
                v.checked["difference"] = err.strip().splitlines()[-1:] if code != 0 else \
                    [f"original: {' | '.join(original)}", f"variant: {' | '.join(lines)}"]
            else:
                kept.append(v)
    return kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="mutate")
    ap.add_argument("--only", nargs="*", help="shape names (default: every app of tests/shapes/MANIFEST.json)")
    ap.add_argument("--family", nargs="*", choices=list(TRANSFORMS))
    ap.add_argument("--out", help="write the variants (those that print the same) under this folder")
    ap.add_argument("--no-check", action="store_true", help="do not run them (no Warp runs)")
    ap.add_argument("--json", help="write the per-shape record here")
    ns = ap.parse_args(argv)
    names = [a["name"] for a in manifest() if not ns.only or a["name"] in ns.only]
    record = []
    for name in names:
        app = App.load(name)
        variants, skipped = generate(app, ns.family)
        kept = variants if ns.no_check else check(app, variants)
        if ns.out:
            for v in kept:
                v.write(app, Path(ns.out) / name / f"{v.family}-{v.transform}")
        row = {"shape": name, "generated": len(variants), "same_output": None if ns.no_check else len(kept),
               "variants": [{"family": v.family, "transform": v.transform, "sites": v.sites, **v.checked}
                            for v in variants], "not_applicable": skipped}
        record.append(row)
        print(f"{name}: {len(variants)} generated, "
              f"{'not run' if ns.no_check else f'{len(kept)} print the same'}; "
              f"dropped: {[v.key for v in variants if v not in kept] if not ns.no_check else '-'}",
              file=sys.stderr, flush=True)
    if ns.json:
        Path(ns.json).write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
