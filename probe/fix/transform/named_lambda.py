"""A lambda handed to a call, given a name: `def _centred_fn(v): return ...` on the line before the statement.

Some Warp releases name the function they generate from a lambda after Python's `hash()` of its source, which is
salted per process, so every process makes modules of new names and the kernel cache never hits. A named function
is keyed on its qualified name instead. The def stands in the same block as the statement, so it sees the same
variables the lambda saw (closures read them when called, for both); a lambda whose scope is not that block's (inside
a comprehension or another lambda) or a statement that is not a plain one of a function or the file is left alone.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .syntax import ancestors, indent_of, parents_of

_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*_OWN_SCOPE, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class NamedLambdas:
    """Lines start..end replaced by `new` (the defs, then the statement naming them), or why not."""

    start: int = 0
    end: int = 0
    new: str = ""
    names: list[str] = field(default_factory=list)
    why_not: str = ""


def _offset(lines: list[str], line: int, col: int) -> tuple[int, int]:
    """(line index, character column) of an AST position (its column counts UTF-8 bytes)."""
    text = lines[line - 1]
    return line - 1, len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _statement(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement spanning `line` (the one of smallest span)."""
    spans = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return min(spans, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)


def _scope_ok(parents: dict[ast.AST, ast.AST], stmt: ast.stmt) -> bool:
    """A statement in a block of a function or of the file (through if/for/while/with/try), not a class body."""
    for p in ancestors(parents, stmt):
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return True
        if isinstance(p, ast.ClassDef):
            return False
    return False


def _free_name(taken: set[str], base: str) -> str:
    name = f"_{base}_fn"
    n = 2
    while name in taken:
        name, n = f"_{base}_fn{n}", n + 1
    return name


def name_lambdas(lines: list[str], tree: ast.Module, line: int) -> NamedLambdas:
    """The lambdas passed as arguments of the calls in the statement at `line`, each defined by name before it."""
    parents = parents_of(tree)
    stmt = _statement(tree, line)
    if stmt is None or not isinstance(stmt, _SIMPLE):
        return NamedLambdas(why_not=f"the code at line {line} is not a plain statement (an assignment or a call)")
    if not _scope_ok(parents, stmt):
        return NamedLambdas(why_not="the statement is in a class body, where a def would become an attribute")
    first = lines[stmt.lineno - 1]
    _, col = _offset(lines, stmt.lineno, stmt.col_offset)
    lo, hi = stmt.lineno, stmt.end_lineno or stmt.lineno
    around = ancestors(parents, stmt)
    shares = any(isinstance(n, ast.stmt) and n is not stmt and not any(a is n for a in around)
                 and n.lineno <= hi and (n.end_lineno or n.lineno) >= lo for n in ast.walk(tree))
    if first[:col].strip() or shares:
        return NamedLambdas(why_not=f"line {stmt.lineno} holds more than one statement")
    lambdas: list[ast.Lambda] = []
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Lambda):
            continue
        call = parents.get(node)
        if not isinstance(call, ast.Call) and isinstance(call, ast.keyword):
            call = parents.get(call)
        if not isinstance(call, ast.Call) or node is call.func:
            continue
        up = ancestors(parents, call)
        if not any(isinstance(a, _OWN_SCOPE) for a in up[: next(i for i, a in enumerate(up) if a is stmt)]):
            lambdas.append(node)
    if not lambdas:
        return _bound_lambda(lines, tree, parents, stmt)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    taken |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    one = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
    target = stmt.targets[0] if one else getattr(stmt, "target", None)
    base = target.id.lstrip("_") if isinstance(target, ast.Name) else "mapped"
    pad = " " * indent_of(first)
    source = "".join(lines)
    defs, names = [], []
    for lam in lambdas:
        name = _free_name(taken, base or "mapped")
        taken.add(name)
        names.append(name)
        body = (ast.get_source_segment(source, lam.body) or ast.unparse(lam.body)).strip()
        if "\n" in body:
            body = f"({body})"
        defs.append(f"{pad}def {name}({ast.unparse(lam.args)}):\n{pad}    return {body}\n")
    # the statement's text with each lambda replaced by its name, last first so earlier offsets stay valid
    text = lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno]
    rows = list(text)
    for lam, name in sorted(zip(lambdas, names, strict=True), key=lambda p: (p[0].lineno, p[0].col_offset),
                            reverse=True):
        (l0, c0) = _offset(lines, lam.lineno, lam.col_offset)
        (l1, c1) = _offset(lines, lam.end_lineno or lam.lineno, lam.end_col_offset or 0)
        i0, i1 = l0 - (stmt.lineno - 1), l1 - (stmt.lineno - 1)
        merged = rows[i0][:c0] + name + rows[i1][c1:]
        rows[i0 : i1 + 1] = [merged]
    new = "".join(defs) + "".join(rows)
    try:
        ast.parse("if True:\n" + new if pad else new)
    except SyntaxError:
        return NamedLambdas(why_not=f"the statement at line {stmt.lineno} does not parse with the lambdas named")
    return NamedLambdas(start=stmt.lineno, end=stmt.end_lineno or stmt.lineno, new=new, names=names)


def _stores(scope: ast.AST, parents: dict[ast.AST, ast.AST]) -> dict[str, list[ast.AST]]:
    """What binds each name in `scope` itself (not in a function, class, lambda or comprehension inside it)."""
    out: dict[str, list[ast.AST]] = {}
    for n in ast.walk(scope):
        if n is scope or any(isinstance(a, _SCOPES) and a is not scope
                             for a in ancestors(parents, n)[: _depth(parents, n, scope)]):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.setdefault(n.id, []).append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name, []).append(n)
        elif isinstance(n, ast.alias):
            out.setdefault((n.asname or n.name).split(".")[0], []).append(n)
        elif isinstance(n, ast.arg):
            out.setdefault(n.arg, []).append(n)
    return out


def _depth(parents: dict[ast.AST, ast.AST], node: ast.AST, scope: ast.AST) -> int:
    """How many of `node`'s ancestors lie below `scope`."""
    up = ancestors(parents, node)
    return next((i for i, a in enumerate(up) if a is scope), len(up))


def _bound_lambda(lines: list[str], tree: ast.Module, parents: dict[ast.AST, ast.AST], stmt: ast.stmt) -> NamedLambdas:
    """`f = lambda ...` bound once in the statement's scope (or, when that scope never binds `f`, in the file's) and
    `f` handed to a call in the statement: that assignment becomes `def f(...): return ...`, the same name bound to a
    function of the same body, now named after it."""
    inner = next((p for p in ancestors(parents, stmt) if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    handed = {a.id for n in ast.walk(stmt) if isinstance(n, ast.Call)
              for a in [*n.args, *(k.value for k in n.keywords)] if isinstance(a, ast.Name)}
    local = _stores(inner, parents) if inner is not None else {}
    file = _stores(tree, parents)
    source = "".join(lines)
    for name in sorted(handed):
        if inner is not None and _declared(inner, name):
            continue
        in_file = name not in local
        binds = file.get(name, []) if in_file else local[name]
        if len(binds) != 1 or not isinstance(binds[0], ast.Name):
            continue  # bound more than once, or as a parameter, an import, a def
        assign = parents.get(binds[0])
        if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.value, ast.Lambda)
                and (in_file or (assign.end_lineno or assign.lineno) < stmt.lineno) and _scope_ok(parents, assign)):
            continue
        first = lines[assign.lineno - 1]
        _, col = _offset(lines, assign.lineno, assign.col_offset)
        if first[:col].strip() or (assign.end_lineno or assign.lineno) != assign.value.end_lineno:
            continue
        tail = lines[(assign.end_lineno or assign.lineno) - 1]
        _, end_col = _offset(lines, assign.end_lineno or assign.lineno, assign.end_col_offset or 0)
        comment = tail[end_col:].strip()
        if comment and not comment.startswith("#"):
            continue  # another statement follows on the line
        lam = assign.value
        pad = " " * indent_of(first)
        body = (ast.get_source_segment(source, lam.body) or ast.unparse(lam.body)).strip()
        head = f"{pad}def {name}({ast.unparse(lam.args)}):" + (f"  {comment}" if comment else "")
        new = f"{head}\n{pad}    return {f'({body})' if chr(10) in body else body}\n"
        return NamedLambdas(start=assign.lineno, end=assign.end_lineno or assign.lineno, new=new, names=[name])
    return NamedLambdas(why_not=f"no lambda is passed to a call in the statement at line {stmt.lineno}, nor bound "
                                "once, in its scope or the file's, to a name the statement hands to a call")


def _declared(fn: ast.AST, name: str) -> bool:
    """`global name` / `nonlocal name` in `fn`: the name is then not the file's plain binding to follow."""
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(fn))
