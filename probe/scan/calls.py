"""Call facts: every call of a name (for CallFact), and calls that may be of a kernel factory with how fixed their
arguments are (for FactoryCallFact / CallerRef)."""

from __future__ import annotations

import ast

from .common import (
    _PURE_CALLS,
    _RUNTIME_NAMES,
    _CallSite,
    _last_ident,
    _text,
)

# (line, enclosing function's qualname or "<module>", callee's last identifier)
RawCall = tuple[int, str, str]


class CallCollector(ast.NodeVisitor):
    """Every call `name(...)` / `obj.name(...)` of one file, and the names it defines with `def`.

    Runs on every parsed file, also those the main visitor only skims, so a rule can follow calls through any file.
    The walk order (decorators, then arguments, then the body; class bases and return annotations skipped) is the
    order the call facts keep: rules that try call sites in turn take the first that fits.
    """

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []  # (kind, qualname) of the enclosing defs and classes
        self.calls: list[RawCall] = []
        self.defs: set[str] = set()

    def _qualname(self, name: str) -> str:
        if not self.stack:
            return name
        kind, parent = self.stack[-1]
        return f"{parent}.{name}" if kind == "class" else f"{parent}.<locals>.{name}"

    def _function(self) -> str:
        for kind, qual in reversed(self.stack):
            if kind == "def":
                return qual
        return "<module>"

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.defs.add(node.name)
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)
        self.stack.append(("def", self._qualname(node.name)))
        for stmt in node.body:
            self.visit(stmt)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        self.stack.append(("class", self._qualname(node.name)))
        for stmt in node.body:
            self.visit(stmt)
        self.stack.pop()

    def visit_Call(self, node: ast.Call) -> None:
        name = _last_ident(node.func)
        if name:
            self.calls.append((node.lineno, self._function(), name))
        self.generic_visit(node)


def collect_calls(tree: ast.Module) -> tuple[list[RawCall], set[str]]:
    """(every call of the file, the names it defines with `def`)."""
    c = CallCollector()
    c.visit(tree)
    return c.calls, c.defs


class CallsMixin:
    """Factory call candidates of one file (part of the per-file visitor)."""

    def _call_site(self, node: ast.Call, fq: str | None) -> None:
        """Keep a call that may be of a kernel factory (a project function), with how fixed its arguments are."""
        if self._warp_body() is not None:
            return
        func = node.func
        name = _last_ident(func)
        if name is None:
            return
        # only what can name a project function: a def of this file (bare or self./cls. method), or a dotted name
        # whose module part is a project module; everything else (numpy, methods of objects) is skipped cheaply
        fq = fq or name
        if isinstance(func, ast.Name) and name not in self.names.map:
            if not isinstance(self._lookup(name, node.lineno), (ast.FunctionDef, ast.AsyncFunctionDef)):
                return
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
