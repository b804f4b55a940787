"""An import that runs late inside a function, made at module scope too: the step for kernels or instances a module
creates at its import, when that import happens only after the kernels' module first loaded.

`from . import joints` inside `add_articulation()` imports a module whose body registers kernel instances; run late,
it adds them after their module loaded, which rebuilds it. The same import at module scope of the function's file
runs it at the file's import instead. Preconditions: the statement is an import of the project, and the imported
module does not import this file back (the cycle a late import often avoids). The function keeps its own import
(it still binds the name there).
"""

from __future__ import annotations

import ast

from ..edits import insert_before
from .context import Project
from .graph import import_targets, imports_back, package_of
from .plan import Step, failed
from .syntax import dedent_lines, indent_of, parsed

STEP = "create at import"


def import_at_module_scope(ctx: Project, file: str, line: int) -> Step:
    """The late import at `file:line` (inside a function) added at module scope after the file's imports."""
    src = parsed(ctx.sources, file)
    if src is None:
        return failed(STEP, f"{file} is not a file of the project")
    lines, tree = src
    stmt = next((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno == line), None)
    if stmt is None or stmt in tree.body:
        return failed(STEP, f"{file}:{line} is not an import inside a function")
    cycle = imports_back(ctx, file, import_targets(stmt, package_of(ctx, file)))
    if cycle is not None:
        return failed(STEP, f"{cycle} imports {file} back: the import at {file}:{line} is late on purpose (a cycle)")
    text = dedent_lines(lines[stmt.lineno - 1: stmt.end_lineno or stmt.lineno], indent_of(lines[stmt.lineno - 1]))
    if text is None:
        return failed(STEP, f"the import at {file}:{line} is not uniformly indented")
    top = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    at = (top[-1].end_lineno or top[-1].lineno) + 1 if top else 1
    e = insert_before(ctx.sources, file, at, "".join(text))
    if e is None:
        return failed(STEP, f"{file} is not a file of the project")
    shown = "".join(text).strip()
    return Step(what=STEP, edits=[e], done=f"run `{shown}` at import of {file} too",
                review=[f"`{shown}` now runs when {file} is imported (it ran late inside a function): its module's "
                        "kernels exist before the first load; importing it costs at start-up what it cost later"])


# Warp calls a file makes at its import that only configure or define that file's own kernels
_DEFINING_WARP_CALLS = {"set_module_options", "overload", "init"}
# builtins that only build a value (a module-level table)
_VALUE_BUILTINS = {"dict", "list", "tuple", "set", "frozenset", "int", "float", "str", "bool", "range", "object"}


def _roots(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names the file binds by an import, names of the functions and classes it defines)."""
    imported = {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return imported, defined


def _call_root(call: ast.Call) -> tuple[str, str]:
    """(the name a call's expression starts from, the called attribute or name)."""
    f = call.func
    last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    while isinstance(f, (ast.Attribute, ast.Call, ast.Subscript)):
        f = f.func if isinstance(f, ast.Call) else f.value
    return (f.id if isinstance(f, ast.Name) else ""), last


def _work_in(stmts: list[ast.stmt], warp: set[str], libraries: set[str], own: set[str]) -> ast.AST | None:
    """The first module-level statement (or call in one) that does more than define: None when they only import,
    define functions and classes, bind values built from libraries, and configure their own Warp module."""
    for s in stmts:
        if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                          ast.Pass)):
            continue
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue  # a docstring
        if isinstance(s, ast.If):
            test = ast.unparse(s.test)
            if "__name__" in test or "TYPE_CHECKING" in test:
                continue  # the script's own block, or imports that never run
            hit = _work_in(s.body, warp, libraries, own) or _work_in(s.orelse, warp, libraries, own)
            if hit is not None:
                return hit
            continue
        if isinstance(s, ast.Try):
            for block in (s.body, s.orelse, s.finalbody, *[h.body for h in s.handlers]):
                hit = _work_in(block, warp, libraries, own)
                if hit is not None:
                    return hit
            continue
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            root, last = _call_root(s.value)
            if root in warp and last in _DEFINING_WARP_CALLS:
                continue
            return s
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if not all(isinstance(n, ast.Name) for t in targets for n in ([t] if not isinstance(t, ast.Tuple)
                                                                           else t.elts)):
                return s  # writes into another object (`wp.config.mode = ...`): state beyond this file
            for c in (n for n in ast.walk(s) if isinstance(n, ast.Call)):
                root, _last = _call_root(c)
                if root in own or (root not in libraries and root not in _VALUE_BUILTINS):
                    return c
            continue
        return s  # a loop, a `with`, a bare expression: code that runs
    return None


def import_work(ctx: Project, module: str) -> str:
    """Why importing the project module `module` earlier could change what the program does: "" when its file, and
    every project module it imports at module scope, only defines things (imports, functions, classes, values built
    by libraries or plain constructors, its own Warp module's options), else the first statement that does more (a
    print, a loop, a call of the program's own functions, a write into another module's state), as
    "file:line runs `...` at its import"."""
    scan = ctx.scan
    if scan is None:
        return f"no scan of the project to read {module}'s import"
    project = {m.name for m in scan.modules}
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        info = scan.module_info(name)
        if info is None:
            continue
        src = parsed(ctx.sources, info.file)
        if src is None:
            return f"{info.file} could not be read, so what its import runs is unknown"
        lines, tree = src
        imported, defined = _roots(tree)
        local = {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom)
                 for a in n.names if n.level or (n.module or "").split(".")[0] in project}
        local |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.Import)
                  for a in n.names if a.name.split(".")[0] in project}
        warp = {(a.asname or a.name) for n in tree.body if isinstance(n, ast.Import) for a in n.names
                if a.name == "warp"}
        hit = _work_in(tree.body, warp, imported - local, defined | local)
        if hit is not None:
            text = lines[hit.lineno - 1].strip()
            return f"{info.file}:{hit.lineno} runs `{text}` at its import"
        todo += [i.project_module for i in scan.imports_in(info.file)
                 if i.scope == "module" and i.project_module and not i.type_checking]
    return ""
