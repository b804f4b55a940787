"""Call facts: every call of a name (for CallFact), and calls that may be of a kernel factory with how fixed their
arguments are (for FactoryCallFact / CallerRef)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .common import _PURE_CALLS, _RUNTIME_NAMES, _CallSite, _text, last_ident
from .guards import FileGuards, GuardIndex

# (line, enclosing function's qualname or "<module>", callee's last identifier)
RawCall = tuple[int, str, str]


# Node types that never hold a call: not descended into (a set of exact types: cheaper than isinstance).
_NO_CALLS = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.alias,
        *ast.expr_context.__subclasses__(),
        *ast.operator.__subclasses__(),
        *ast.unaryop.__subclasses__(),
        *ast.cmpop.__subclasses__(),
        *ast.boolop.__subclasses__(),
    }
)


def collect_calls(tree: ast.Module, guards: FileGuards | None = None) -> list[RawCall]:
    """Every call `name(...)` / `obj.name(...)` of one file.

    Runs on every parsed file, also those the main visitor only skims, so a rule can follow calls through any file;
    a plain recursive walk, several times cheaper than an ast.NodeVisitor. The walk is pre-order (an outer call
    before the calls in its arguments), a def's decorators and arguments before its body, class bases and return
    annotations skipped: the order the call facts keep, since rules that try call sites in turn take the first that
    fits. A file nested too deeply to walk keeps the calls found up to that point.

    With `guards`, the same walk also records what `probe.scan.guards` indexes: the functions' line spans, the
    spans each `if` test guards, and the argparse switches the file declares.
    """
    calls: list[RawCall] = []

    def child(kind: str | None, parent: str | None, name: str) -> str:
        if parent is None:
            return name
        return f"{parent}.{name}" if kind == "class" else f"{parent}.<locals>.{name}"

    def walk(node: ast.AST, fn: str, kind: str | None, parent: str | None) -> None:
        t = type(node)
        if t is ast.Call:
            f = node.func
            if type(f) is ast.Name:
                calls.append((node.lineno, fn, f.id))
            elif type(f) is ast.Attribute:
                calls.append((node.lineno, fn, f.attr))
                if guards is not None and f.attr == "add_argument":
                    guards.add_switch(node)
        elif guards is not None and (t is ast.If or t is ast.IfExp):
            guards.add_test(node)
        elif t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            if guards is not None:
                guards.add_function(node)
            for d in node.decorator_list:
                walk(d, fn, kind, parent)
            walk(node.args, fn, kind, parent)
            q = child(kind, parent, node.name)
            for stmt in node.body:
                walk(stmt, q, "def", q)
            return
        elif t is ast.ClassDef:
            for d in node.decorator_list:
                walk(d, fn, kind, parent)
            q = child(kind, parent, node.name)
            for stmt in node.body:
                walk(stmt, fn, "class", q)
            return
        for field in t._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                for x in v:
                    if type(x) not in _NO_CALLS and isinstance(x, ast.AST):
                        walk(x, fn, kind, parent)
            elif type(v) not in _NO_CALLS and isinstance(v, ast.AST):
                walk(v, fn, kind, parent)

    try:
        walk(tree, "<module>", None, None)
    except RecursionError:
        pass
    return calls


def index_trees(trees: Iterable[tuple[str, ast.Module]]) -> GuardIndex:
    """A GuardIndex from parsed trees (a diagnosis without a scan's index, e.g. facts built by hand)."""
    index = GuardIndex()
    for rel, tree in trees:
        fg = FileGuards()
        index.add_file(rel, fg, collect_calls(tree, fg))
    return index


class CallsMixin:
    """Factory call candidates of one file (part of the per-file visitor)."""

    def _call_site(self, node: ast.Call, fq: str | None) -> None:
        """Keep a call that may be of a kernel factory (a project function), with how fixed its arguments are."""
        if self._warp_body() is not None:
            return
        func = node.func
        name = last_ident(func)
        if name is None:
            return
        # only what can name a project function: a def of this file (bare or self./cls. method), or a dotted name
        # whose module part is a project module; everything else (numpy, methods of objects) is skipped cheaply
        fq = fq or name
        if isinstance(func, ast.Name) and name not in self.names.map:
            bound = self._lookup(name, node.lineno)
            if not isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef)) and not (
                    name in self.bound_functions and isinstance(bound, ast.Attribute)):
                return  # neither a def of this file nor a module-scope name binding a method or kept closure
            local = True
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            if not any(
                fr.kind == "class" and isinstance((fr.assigns.get(name) or [(0, None)])[-1][1], ast.FunctionDef)
                for fr in self.frames
            ):
                return
            local = True
        elif "." in fq and self.project.resolve(fq.rpartition(".")[0], self.rel) is not None:
            local = False
        else:
            return
        args: list[str] = []
        runtime: list[str] = []
        for a in node.args:
            args.append(_text(a))
            if not self._fixed_expr(a, node.lineno):
                runtime.append(_text(a))
        for kw in node.keywords:
            text = f"{kw.arg}={_text(kw.value)}" if kw.arg else f"**{_text(kw.value)}"
            args.append(text)
            if not self._fixed_expr(kw.value, node.lineno):
                runtime.append(text)
        fn = self._fn_frame()
        self.call_sites.append(
            _CallSite(
                name=name,
                qual=fq,
                local=local,
                where=self._where(node),
                callee=_text(func),
                args=args,
                runtime_args=runtime,
                in_loop=any(e.frame is fn for e in self.loop_stack),
                decorator=id(node) in self.decorators,
            )
        )

    def _fixed_expr(self, node: ast.AST | None, line: int, depth: int = 0) -> bool:
        """Whether an expression's value is fixed by the source: literals, module-level constants and what they are
        built from, imported names, functions, loop variables of loops over such values. Parameters, values read
        from sys.argv / os.environ / input(), and calls of anything but a few pure builtins, math and Warp are not."""
        if node is None:
            return True
        if depth > 6:
            return False

        def rec(n: ast.AST | None) -> bool:
            return self._fixed_expr(n, line, depth + 1)

        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(rec(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(rec(k) for k in node.keys if k is not None) and all(rec(v) for v in node.values)
        if isinstance(node, ast.Starred):
            return rec(node.value)
        if isinstance(node, ast.JoinedStr):
            return all(rec(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return rec(node.value)
        if isinstance(node, ast.UnaryOp):
            return rec(node.operand)
        if isinstance(node, ast.BinOp):
            return rec(node.left) and rec(node.right)
        if isinstance(node, ast.BoolOp):
            return all(rec(v) for v in node.values)
        if isinstance(node, ast.Compare):
            return rec(node.left) and all(rec(c) for c in node.comparators)
        if isinstance(node, ast.IfExp):
            return rec(node.test) and rec(node.body) and rec(node.orelse)
        if isinstance(node, ast.Subscript):
            return rec(node.value) and rec(node.slice)
        if isinstance(node, ast.Slice):
            return rec(node.lower) and rec(node.upper) and rec(node.step)
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, (ast.Name, ast.Attribute)):
            q = self._q(node) or ""
            if any(q == r or q.startswith(r + ".") for r in _RUNTIME_NAMES):
                return False
        if isinstance(node, ast.Name):
            for e in reversed(self.loop_stack):
                if node.id in e.targets:
                    if e.fixed is None:
                        e.fixed = False  # a loop over itself is not fixed
                        e.fixed = e.iter_node is not None and self._fixed_expr(e.iter_node, e.line, depth + 1)
                    return e.fixed
            v = self._lookup(node.id, line)
            if v is None:
                return True  # imported, builtin, or a module global bound elsewhere
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return True
            if isinstance(v, ast.AST):
                return self._fixed_expr(v, getattr(v, "lineno", line), depth + 1)
            return False  # a parameter, an unpacked or loop-bound name
        if isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in ("self", "cls"):
                return False
            if isinstance(root, ast.Name) and root.id in self.names.map:
                return True  # an attribute of an imported module (math.pi, wp.float32, cfg.GAIN)
            return rec(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            q = self._q(func) or ""
            pure = (
                self._api(func) is not None
                or q.startswith("math.")
                or (isinstance(func, ast.Name) and func.id in _PURE_CALLS and self._lookup(func.id, line) is None)
            )
            return pure and all(rec(a) for a in node.args) and all(rec(k.value) for k in node.keywords)
        return False
