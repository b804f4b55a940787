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
