"""The `@integrand` decorator and the source rewriting behind it."""

from __future__ import annotations

import ast
import inspect
import textwrap


class Integrand:
    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self.module_name = fn.__module__
        self.args = list(inspect.signature(fn).parameters)
        self.cached_kernels = {}

    def expression(self) -> ast.expr:
        tree = ast.parse(textwrap.dedent(inspect.getsource(self.fn)))
        body = tree.body[0].body
        ret = body[-1]
        if not isinstance(ret, ast.Return) or len(body) != 1:
            raise ValueError(f"integrand {self.name} must be a single return statement")
        return ret.value


def integrand(fn) -> Integrand:
    return Integrand(fn)


class FieldReads(ast.NodeTransformer):
    """Turn reads of the field arguments into array reads, coordinates into sample positions,
    and float literals into literals of the value type."""

    def __init__(self, fields: list[str], coords: dict[str, str], scalar: str):
        self.fields = set(fields)
        self.coords = coords
        self.scalar = scalar

    def visit_Name(self, node: ast.Name):
        if node.id in self.fields:
            cell = [ast.Name(id="i", ctx=ast.Load()), ast.Name(id="j", ctx=ast.Load())]
            return ast.Subscript(
                value=ast.Name(id=f"{node.id}_values", ctx=ast.Load()),
                slice=ast.Tuple(elts=cell, ctx=ast.Load()),
                ctx=ast.Load(),
            )
        if node.id in self.coords:
            return ast.Name(id=self.coords[node.id], ctx=ast.Load())
        return node

    def visit_Constant(self, node: ast.Constant):
        if isinstance(node.value, float):
            return ast.Call(func=ast.Name(id=self.scalar, ctx=ast.Load()), args=[node], keywords=[])
        return node
