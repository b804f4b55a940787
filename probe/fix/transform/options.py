"""A module option set before its module first loads: the late `wp.set_module_options` call joined to the module-scope
one of the kernels' file, or a module-scope call added after that file imports warp; the late call removed.

Only for calls that set nothing else and whose values are literals (the call is moved as text); a caller that
computes the values at run time keeps its call, and the rule says to move it earlier by hand.
"""

from __future__ import annotations

import re

from ...models.diagnosis import Edit
from ...models.scan import ModuleOptionsFact
from ..edits import replace_lines
from .context import Project
from .statements import after_statement_edit, remove_statement_edit, statement_end
from .syntax import literal_dict

# options whose value changes what a kernel computes (a person confirms the results when one starts to apply)
NUMERICS_OPTIONS = frozenset({"fast_math", "mode", "fuse_fp", "max_unroll", "deterministic"})
STEP = "option"


def sets_only(f: ModuleOptionsFact, keys: set[str]) -> bool:
    return bool(f.options) and f.options_text is None and set(f.options) <= keys


def merge_into_module_call(ctx: Project, f: ModuleOptionsFact, host: ModuleOptionsFact,
                           opts: dict[str, str]) -> list[Edit]:
    """The late options join the module-scope call, and the late call goes (only when it sets nothing else)."""
    if host.options_text is not None or host.module_arg or not sets_only(f, set(opts)):
        return []
    lines = ctx.sources.lines(host.file) or []
    if not 1 <= host.line <= len(lines) or statement_end(ctx.sources, host.file, host.line) != host.line:
        return []
    text = lines[host.line - 1]
    indent = text[: len(text) - len(text.lstrip())]
    comment = "  #" + text.split("#", 1)[1].rstrip("\n") if "#" in text and ")" in text.split("#", 1)[0] else ""
    call = f"{indent}{call_name(text)}({literal_dict({**host.options, **opts})}){comment}"
    merge = replace_lines(ctx.sources, host.file, host.line, host.line, call)
    drop = remove_statement_edit(ctx.sources, f.file, f.line)
    return [merge, drop] if merge is not None and drop is not None else []


def call_name(text: str) -> str:
    """`wp.set_module_options` as written on the line (any alias of warp)."""
    m = re.search(r"([\w.]*set_module_options)\s*\(", text)
    return m.group(1) if m else "wp.set_module_options"


def module_scope_call(ctx: Project, f: ModuleOptionsFact, module: str, opts: dict[str, str]) -> list[Edit]:
    """No module-scope call yet: add one after the kernels' file imports warp, and drop the late call."""
    scan = ctx.scan
    if scan is None or f.module_arg or not sets_only(f, set(opts)):
        return []
    file = scan.python_modules_with_kernels.get(module)
    if file is None:
        return []
    warp = [i for i in scan.imports_in(file) if i.module == "warp" and i.scope == "module" and i.names]
    if not warp:
        return []
    imp = min(warp, key=lambda i: i.line)
    add = after_statement_edit(ctx.sources, file, imp.line, f"{imp.names[0]}.set_module_options({literal_dict(opts)})")
    drop = remove_statement_edit(ctx.sources, f.file, f.line)
    if add is None or drop is None or (add.file == drop.file and add.start_line == drop.start_line):
        return []
    return [add, drop]
