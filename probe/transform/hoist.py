"""A kernel defined inside a function, moved to module scope of its file: one definition, made at import.

The move is made when the parsed source shows it is safe: the kernel's code reads nothing the function binds (or
what it reads becomes arguments, see `params`), its name is free at module scope, and what its decorator and
annotations read is bound above the place it moves to. The function keeps returning the kernel, now the module's.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field

from ..edits import insert_before, replace_lines
from ..models import KernelInfo
from ..models.diagnosis import Edit
from ..models.scan import KernelDef
from . import params, syntax
from .context import Project


@dataclass
class Hoist:
    """Moving one nested kernel to module scope: the lines to remove, the text to insert, or why not."""

    name: str
    file: str
    insert_at: int = 0  # line before which the moved definition goes (before its outermost enclosing statement)
    text: list[str] = field(default_factory=list)  # the dedented definition
    remove: tuple[int, int] = (0, 0)
    keep: str = ""  # what replaces the removed lines ("" or an indented `pass`)
    why_not: str = ""  # non-empty: no edit, and this is the reason
    captures: bool = False  # it reads values its function binds: a version per call, not one definition
    params: params.ParamPlan | None = None  # those values taken as arguments instead, and its launch edits


def hoist(ctx: Project, kdef: KernelDef, info: KernelInfo | None = None, as_params: bool = False) -> Hoist:
    """Plan the move of a kernel defined inside a function to module scope of its file, when that is safe: its code
    reads nothing the function binds (no captured parameter or local), it is a direct statement of the function (not
    in a loop or branch), no module-level name is taken, and what its decorator and annotations read exists before
    the place it moves to. With `as_params`, values it captures become its arguments when closure_params can pass
    them at every launch."""
    h = Hoist(name=kdef.name, file=kdef.file)
    src = syntax.parsed(ctx.sources, kdef.file)
    if src is None:
        h.why_not = f"{kdef.file} could not be read as the project's Python source"
        return h
    lines, tree = src
    node = syntax.def_at(tree, kdef.line, kdef.name)
    parents = syntax.parents_of(tree)
    outer = parents.get(node) if node is not None else None
    if node is None or not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
        h.why_not = f"the definition of {kdef.name} at {kdef.file}:{kdef.line} is not a direct statement of a function"
        if node is not None and outer is not None:
            h.why_not = f"{kdef.name} is defined inside a loop, branch or block of its function, not once per call"
        return h
    captured: set[str] = set()
    fn: ast.AST | None = outer
    while isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if not isinstance(fn, ast.Lambda):
            captured |= syntax.bound_names(fn, skip=node)
        fn = parents.get(fn)
    reads = syntax.read_names(node) - {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
    if reads & captured and not as_params:
        names = ", ".join(sorted(reads & captured))
        h.captures = True
        h.why_not = (
            f"{kdef.name} reads {names} from {outer.name}() (captured when it is created), so its code depends on the "
            "call: move it by hand, passing those values as kernel arguments or wp.constant()s"
        )
        return h
    if kdef.name in syntax.bound_names(outer, skip=node):
        h.why_not = f"{outer.name}() binds the name {kdef.name} again, so the moved kernel would be shadowed"
        return h
    top = syntax.top_statement(tree, node.lineno)
    assert top is not None
    insert_at = syntax.span_of(top)[0]
    while insert_at > 1 and lines[insert_at - 2].lstrip().startswith("#"):
        insert_at -= 1  # keep a comment with the statement it describes
    bound = syntax.module_bindings(tree)
    if kdef.name in bound:
        h.why_not = f"{kdef.file} already binds {kdef.name} at module scope (line {bound[kdef.name]})"
        return h
    eager = set()
    for d in node.decorator_list:
        eager |= syntax.read_names(d)
    for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        if a.annotation is not None:
            eager |= syntax.read_names(a.annotation)
    for d in [*node.args.defaults, *node.args.kw_defaults]:
        if d is not None:
            eager |= syntax.read_names(d)
    late = sorted(n for n in eager if bound.get(n, 0) >= insert_at)
    if late:
        h.why_not = (
            f"its decorator or annotations use {', '.join(late)}, bound at module scope only after line {insert_at}"
        )
        return h
    first, last = syntax.span_of(node)
    text = syntax.dedent_lines(lines[first - 1 : last], syntax.indent_of(lines[first - 1]))
    if text is None:
        h.why_not = f"the lines of {kdef.name} are not uniformly indented (a multi-line string?)"
        return h
    rest = [s for s in outer.body if s is not node]
    end = last
    if end < len(lines) and not lines[end].strip() and rest and syntax.span_of(rest[-1])[0] > last:
        end += 1  # the blank line after the definition goes with it
    h.insert_at, h.text, h.remove = insert_at, text, (first, end)
    h.keep = "" if rest else " " * syntax.indent_of(lines[first - 1]) + "pass\n"
    taken = sorted(reads & captured)
    if taken:
        h.params = params.plan(ctx, info, outer, node, kdef.file, taken, kdef.enclosing_function or "")
        h.why_not = h.params.why_not
        if not h.why_not:
            h.text = params.with_params(text, node, syntax.indent_of(lines[first - 1]), h.params.params)
    return h


def took_text(h: Hoist) -> str:
    p = h.params
    assert p is not None
    args = ", ".join(f"{n}: {t}" for n, t in p.params)
    return f"{h.name} takes {args}, passed at {', '.join(p.launches)}"


def hoist_edits(ctx: Project, plans: list[Hoist]) -> list[Edit]:
    """One insertion per target line (definitions in source order), one removal per moved definition."""
    edits: list[Edit] = []
    by_target: dict[tuple[str, int], list[Hoist]] = defaultdict(list)
    for h in plans:
        by_target[(h.file, h.insert_at)].append(h)
    for (file, line), group in by_target.items():
        body = "\n\n".join("".join(h.text).rstrip("\n") + "\n" for h in sorted(group, key=lambda h: h.remove))
        e = insert_before(ctx.sources, file, line, body + "\n\n")
        if e is not None:
            edits.append(e)
    for h in plans:
        e = replace_lines(ctx.sources, h.file, h.remove[0], h.remove[1], h.keep)
        if e is not None:
            if not h.keep:
                e.new = ""
            edits.append(e)
    return edits
