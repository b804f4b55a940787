"""A kernel's definition read from the run's record when the scan did not list it.

The scan lists definitions decorated by Warp's own `@wp.kernel` (or `wp.kernel(f)` calls). A project's own decorator
that ends in `wp.kernel` (`@stage_kernel`, a method of an object bound to a module-scope name) is not one it can
follow. The run says where the kernel's function was defined: Warp records the line of its first decorator
(`co_firstlineno`). When the function defined there is decorated, that decorator is what made the kernel, so the
definition is the one a move (hoist) or a placement works on, whatever its decorator is called. An undecorated
function at the line (a closure handed to a helper that calls `wp.kernel(fn)`, often renamed first) is left to the
scan and the record's creating frames: its kernel is not made where it is defined.
"""

from __future__ import annotations

import ast

from ...models import KernelInfo
from ...models.scan import KernelDef
from . import syntax
from .context import Project


def _scopes(tree: ast.Module, node: ast.FunctionDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The functions and classes `node` is defined in, outermost first."""
    parents = syntax.parents_of(tree)
    out: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = []
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, ast.Module):
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.insert(0, cur)
        cur = parents.get(cur)
    return out


def _qualname(scopes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef], name: str) -> str:
    parts: list[str] = []
    for s in scopes:
        parts += [s.name, "<locals>"] if not isinstance(s, ast.ClassDef) else [s.name]
    return ".".join([*parts, name])


def _module_kw(node: ast.FunctionDef) -> tuple[str | None, str | None, int | None]:
    """(literal module= of the decorator, its source text, its line), from the first decorator that is a call."""
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "module":
                    value = kw.value.value if isinstance(kw.value, ast.Constant) else None
                    return (value if isinstance(value, str) else None), ast.unparse(kw.value), kw.value.lineno
    return None, None, None


def _generic(node: ast.FunctionDef) -> list[str]:
    """Parameters annotated with `Any` (typing.Any or wp.Any): the kernel is generic in them."""
    a = node.args
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs] if p.annotation is not None
            and any((isinstance(n, ast.Name) and n.id == "Any") or (isinstance(n, ast.Attribute) and n.attr == "Any")
                    for n in ast.walk(p.annotation))]


def kernel_def_at(ctx: Project, info: KernelInfo) -> KernelDef | None:
    """The decorated definition at the line the run recorded for `info` (see the module docstring), or None."""
    if not info.file or not info.line:
        return None
    rel = ctx.sources.rel(info.file)
    src = syntax.parsed(ctx.sources, rel) if rel is not None else None
    if rel is None or src is None:
        return None
    node = next((n for n in ast.walk(src[1]) if isinstance(n, ast.FunctionDef) and n.decorator_list
                 and min(d.lineno for d in n.decorator_list) == info.line), None)
    if node is None:
        return None
    scopes = _scopes(src[1], node)
    qualname = _qualname(scopes, node.name)
    inner = scopes[-1] if scopes else None
    in_function = inner is not None and not isinstance(inner, ast.ClassDef)
    enclosing = _qualname(scopes[:-1], inner.name) if inner is not None and in_function else None
    module_arg, module_text, module_line = _module_kw(node)
    info_mod = ctx.scan.module_of_file(rel) if ctx.scan is not None else None
    generic = _generic(node)
    return KernelDef(
        file=rel, line=node.lineno, function=enclosing or "<module>", scope="function" if enclosing else "module",
        name=node.name, qualname=qualname, python_module=info_mod.name if info_mod is not None else "",
        form="decorator", nested=enclosing is not None, enclosing_function=enclosing, module_arg=module_arg,
        module_arg_text=module_text, module_arg_line=module_line,
        warp_module=None,  # a decorator of the project's own chooses it; the run's builds say which
        generic=bool(generic), generic_params=generic,
    )


def created_at(ctx: Project, info: KernelInfo) -> KernelDef | None:
    """The scanned creation of a kernel whose Warp key is not the name its function was defined under (renamed
    before `wp.kernel`, bound to an alias), found through the run's record.

    The hook records the line that ran `wp.kernel` for each kernel it made (`KernelCreation`); the scan lists each
    `wp.kernel(...)(f)` call and decorated definition with its line. The one scanned creation on that line, in the
    file where the run says the kernel's function is defined (at a line that defines a function), is the kernel's:
    the key is never compared with a name, so any rename or alias is followed. None when the record has no creation
    for it (an older hook) or the lines do not agree on exactly one definition.
    """
    if ctx.scan is None or not info.file or not info.line:
        return None
    key = info.generic_parent or info.key
    sites = {(ctx.sources.rel(c.file), c.line) for c in ctx.report.kernel_creations
             if c.made_by == "kernel" and c.key == key and c.file}
    rel = ctx.sources.rel(info.file)
    src = syntax.parsed(ctx.sources, rel) if rel is not None else None
    if len(sites) != 1 or src is None or None in next(iter(sites)):
        return None
    file, line = next(iter(sites))
    if file != rel:
        return None
    if not any(isinstance(n, ast.FunctionDef) and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == info.line
               for n in ast.walk(src[1])):
        return None
    found = []
    for k in ctx.scan.kernels:
        if k.file != file:
            continue
        node = syntax.def_at(src[1], k.line, k.name) if k.form == "decorator" else None
        first = syntax.span_of(node)[0] if node is not None else k.line
        if first <= line <= k.line:  # the call's line, or a decorator's of the definition
            found.append(k)
    return found[0] if len(found) == 1 else None
