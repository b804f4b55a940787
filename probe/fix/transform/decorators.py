"""Which Warp module a kernel joins, as an edit on its decorator: shared (the defining file's module), `"unique"` (a
module of its own), or a named module; and a factory's `module` parameter default.

The decorator is edited where it is written, keyword added or removed in place, so a multi-line decorator keeps
its layout and comments.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ...models.diagnosis import Edit
from ...models.scan import KernelDef
from ...scan.common import last_ident
from ..edits import SourceView, replace_lines

# module_options= on @wp.kernel (it requires module="unique"): present in 1.15 and 1.19, absent in 1.10
_MODULE_OPTIONS_SINCE = (1, 15)


def _version(text: str | None) -> tuple[int, int] | None:
    try:
        major, minor = (text or "").split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def takes_module_options(warp_version: str | None) -> bool:
    v = _version(warp_version)
    return v is not None and v >= _MODULE_OPTIONS_SINCE


def _kernel_decorator(node: ast.FunctionDef, makers: frozenset[str] = frozenset()) -> ast.expr | None:
    """The `@wp.kernel` / `@wp.kernel(...)` decorator (any alias ending in `kernel`), or one of `makers` (the project's
    own decorators that hand a `module` keyword on to Warp)."""
    for d in node.decorator_list:
        name = last_ident(d.func if isinstance(d, ast.Call) else d)
        if name == "kernel" or name in makers:
            return d
    return None


@dataclass
class DecoratorChange:
    start: int  # 1-based, inclusive
    end: int
    new: str  # the replacement for lines start..end


def unique_decorator(lines: list[str], node: ast.FunctionDef, extra: dict[str, str]) -> DecoratorChange | None:
    """The decorator of `node` with `module="unique"` (and `extra` keywords) added; None when it already names a
    module or is not a plain `@wp.kernel` decorator."""
    return decorator_with(lines, node, {"module": '"unique"', **extra})


def decorator_with(lines: list[str], node: ast.FunctionDef, kwargs: dict[str, str],
                   replace: bool = False, makers: frozenset[str] = frozenset()) -> DecoratorChange | None:
    """The `@wp.kernel` decorator of `node` with the keywords `kwargs` (name -> source text, one of them module=)
    added; None when it already names a module (unless `replace`: then that keyword's value is the new one) or is not
    a plain `@wp.kernel` decorator (or one of `makers`)."""
    d = _kernel_decorator(node, makers)
    if d is None or d.end_lineno is None or d.end_col_offset is None:
        return None
    if isinstance(d, ast.Call):
        if any(k.arg is None for k in d.keywords):
            return None
        named = [k for k in d.keywords if k.arg in kwargs]
        if named and replace:
            return _replaced(lines, d, named, kwargs)
        if any(k.arg == "module" for k in d.keywords):
            return None
        row, col = d.end_lineno - 1, d.end_col_offset - 1  # the closing parenthesis
        text = lines[row]
        if text[col : col + 1] != ")":
            return None
        head = lines[d.lineno - 1 : row]
        if not text[:col].strip() and head:  # the closing parenthesis on a line of its own: one keyword per line
            last = head[-1].rstrip("\r\n")
            eol = head[-1][len(last):]
            indent = last[: len(last) - len(last.lstrip())] or "    "
            head[-1] = (last if last.rstrip().endswith((",", "(")) else last + ",") + eol
            added = "".join(f"{indent}{k}={v},{eol}" for k, v in kwargs.items())
            return DecoratorChange(d.lineno, d.end_lineno, "".join(head) + added + text)
        before = "".join(head) + text[:col]
        stripped = before.rstrip()
        sep = "" if stripped.endswith("(") else " " if stripped.endswith(",") else ", "
        added = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        keep = text[:col].rstrip() if sep == " " else text[:col]
        new_row = keep + sep + added + text[col:]
        return DecoratorChange(d.lineno, d.end_lineno, "".join(head + [new_row]))
    row = d.end_lineno - 1
    if d.lineno != d.end_lineno:
        return None
    text = lines[row]
    col = d.end_col_offset
    added = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    return DecoratorChange(d.lineno, d.end_lineno, text[:col] + f"({added})" + text[col:])



def _replaced(lines: list[str], d: ast.Call, named: list[ast.keyword], kwargs: dict[str, str]
              ) -> DecoratorChange | None:
    """The decorator with the values of the keywords it already has replaced (each on one line), the others added
    after them; None when a value spans lines."""
    rows = lines[d.lineno - 1: (d.end_lineno or d.lineno)]
    for k in sorted(named, key=lambda k: (k.value.lineno, k.value.col_offset), reverse=True):
        v = k.value
        if v.lineno != v.end_lineno or v.end_col_offset is None:
            return None
        r = v.lineno - d.lineno
        rows[r] = rows[r][: v.col_offset] + kwargs[k.arg or ""] + rows[r][v.end_col_offset:]
    rest = {k: v for k, v in kwargs.items() if k not in {n.arg for n in named}}
    if rest:
        return None  # both replacing and adding: not needed by any plan yet
    return DecoratorChange(d.lineno, d.end_lineno or d.lineno, "".join(rows))


_UNIQUE_KW = r'module\s*=\s*["\']unique["\']'


def _unique_kw(arg_text: str | None) -> str:
    """The `module=` keyword that makes the kernel unique: the literal, or the name the scan resolved to "unique"
    (`module=KERNEL_MODULE`, a module constant): the edit changes this call's keyword, never the constant, which other
    code may read."""
    if arg_text and re.fullmatch(r"[A-Za-z_][\w.]*", arg_text.strip()):
        return rf"module\s*=\s*{re.escape(arg_text.strip())}(?![\w.])"
    return _UNIQUE_KW


def unique_to(text: str, value: str, arg_text: str | None = None) -> str | None:
    """One line with `module="unique"` (or `module=NAME`, NAME resolved to "unique": `arg_text`) changed to
    `module=<value>` (a string literal naming a module), or dropped when `value` is "None" (the kernel joins its
    Python module); None when the line has no such keyword."""
    for kw in dict.fromkeys((_unique_kw(arg_text), _UNIQUE_KW)):  # the name, else the literal a move wrote in
        if value != "None":
            new, n = re.subn(kw, f"module={value}", text, count=1)
            if n:
                return new
            continue
        for pat in (rf"\(\s*{kw}\s*\)", rf",\s*{kw}", rf"{kw}\s*,\s*"):
            new, n = re.subn(pat, "", text, count=1)
            if n:
                return new
    return None


def moved_to(text: list[str], value: str, arg_text: str | None = None) -> list[str]:
    """A moved definition (hoisted text) whose decorator says `module="unique"` (or `module=NAME`, NAME a module
    constant reading "unique": `arg_text`), sent to `value` instead."""
    out = list(text)
    for i, line in enumerate(out):
        if line.lstrip().startswith("@"):
            new = unique_to(line, value, arg_text)
            if new is not None:
                out[i] = new
                break
    return out


def drop_unique(view: SourceView, k: KernelDef, value: str = "None") -> Edit | None:
    """`@wp.kernel(module="unique")` (or `wp.kernel(f, module="unique")`) without the module argument, or with
    `module=<value>` when the kernels go to a named module."""
    line = k.module_arg_line or k.line
    lines = view.lines(k.file)
    if lines is None or line > len(lines):
        return None
    new = unique_to(lines[line - 1], value, k.module_arg_text if k.module_arg == "unique" else None)
    return replace_lines(view, k.file, line, line, new) if new is not None else None


def default_to_shared(view: SourceView, k: KernelDef, value: str = "None") -> Edit | None:
    """A factory's `module="unique"` parameter default changed to None (or to a named module's literal)."""
    line = k.module_default_line if k.module_default_line and k.module_default_line > 0 else None
    lines = view.lines(k.file)
    if line is None or lines is None or line > len(lines):
        return None
    target = value.replace("\\", "\\\\")
    new, n = re.subn(r'(\bmodule\s*(?::[^=,)]*)?=\s*)["\']unique["\']', rf"\g<1>{target}", lines[line - 1], count=1)
    return replace_lines(view, k.file, line, line, new) if n else None
