"""WC-1's application-side lever when Warp's `wp.map` makes its kernel again at every call: the mapped kernel written
once, as a `@wp.kernel` of the project's own, and launched where `wp.map` was called.

Before warp-lang 1.11 (NVIDIA/warp #1108) `wp.map(fn, *inputs)` generated, exec'd and wrapped a new `map_kernel` at
every call; the module it joins loads once, but a loop of maps pays the kernel's construction each pass. The
library's fix is a cache; what the application can do on any release is what the map does, written once: a kernel
that applies `fn` element-wise, an output allocated like the first input, and a launch.

Written only where the run's record fixes every choice, and refused otherwise, with the reason: every call at the
line mapped the same function with the same input types (one kernel serves them); the function is a module-level
def of the calling file (no lambda, no builtin); every input is a plain `wp.array` of one ndim with no dimension
of size 1 (the map would broadcast it), or a bool, int or float; the map kernel was launched with one output more
than its inputs (one return value), an array of that ndim whose dtype the file can name; the call is the whole
value of `name = wp.map(fn, ...)` with positional arguments that are names, attributes or literals (read twice:
for the launch and for the output's shape and device) and no `out=`/`device=`. When the target is also an input,
the output goes to a fresh name first and is bound after the launch, as the map's return value was.
"""

from __future__ import annotations

import ast

from ...models import KernelCreation, Launch
from ..edits import insert_before, replace_lines
from ..transform import syntax
from ..transform.context import Project
from ..transform.plan import Step, failed
from .map_kernels import _binds, _free, _function_site, made_by_map
from .overload_edits import ARRAY_RE

STEP = "write the mapped kernel once"
_VALUE_TYPES = {"float": "float", "int": "int", "bool": "bool"}
_INDEX = ("i", "j", "k", "l")


def _pure(node: ast.expr) -> bool:
    """A name, an attribute of one, or a literal: evaluating it twice reads the same value and does nothing."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, bool))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _pure(node.operand)
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _statement(tree: ast.Module, line: int) -> ast.Assign | None:
    """The `name = <call>` statement whose call starts on `line` (the line the run recorded)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and node.value.lineno <= line <= (node.value.end_lineno or line)):
            return node
    return None


def _launch(ctx: Project, c: KernelCreation) -> Launch | None:
    return next((la for la in ctx.report.launches if la.kernel == c.key and la.module == c.module and la.site
                 and la.site.line == c.line and la.dtypes), None)


def _scalar(dtype: str, warp: str) -> str:
    return dtype if dtype in ("float", "int", "bool") else f"{warp}.{dtype}"


def map_launch(ctx: Project, made: list[KernelCreation]) -> Step:
    """The step for the map kernels `made` again at one app line (see the module docstring), or a failed step that
    says why."""
    made = [c for c in made if made_by_map(c)]
    if not made:
        return failed(STEP, "the kernels were not made by Warp's map()")
    sites = {(c.file, c.line) for c in made}
    records = [c.mapped for c in made]
    if None in records:
        return failed(STEP, "the run did not record what map() was given (an older hook)")
    if len(sites) != 1 or any(r != records[0] for r in records):
        return failed(STEP, "map() was called at more than one line, or with other input types at one line")
    c, mapped = made[0], records[0]
    assert mapped is not None
    file = ctx.sources.rel(c.file)
    if file is None:
        return failed(STEP, f"{c.file} is not a file of the project")
    site = _function_site(ctx, mapped.get("function") or {})
    if isinstance(site, str):
        return failed(STEP, site)
    if ctx.sources.rel(site[0]) != file:
        return failed(STEP, f"{site[1]} is defined in another file than the call at {file}:{c.line}")
    name = site[1]
    if mapped.get("out"):
        return failed(STEP, f"the map at {file}:{c.line} writes into an out= array")
    inputs = list(mapped.get("inputs") or [])
    arrays = [i for i in inputs if "array" in i]
    if not arrays or any(i.get("array") != "array" for i in arrays):
        return failed(STEP, "an input is not a plain wp.array (or no input is an array)")
    ndims = {int(i.get("ndim") or 0) for i in arrays}
    if len(ndims) != 1 or any(i.get("ones") for i in arrays) or not 1 <= min(ndims) <= len(_INDEX):
        return failed(STEP, "the input arrays differ in ndim or have a dimension of size 1, which map() broadcasts")
    ndim = ndims.pop()
    la = _launch(ctx, c)
    if la is None or len(la.dtypes) != len(inputs) + 1:
        return failed(STEP, f"the map kernel's launch at {file}:{c.line} was not recorded with one output")
    out = ARRAY_RE.match(la.dtypes[-1])
    if out is None or int(out.group("ndim")) != ndim:
        return failed(STEP, f"the map's output is a {la.dtypes[-1]}, not one array of the inputs' ndim")
    src = syntax.parsed(ctx.sources, file)
    if src is None:
        return failed(STEP, f"{file} cannot be parsed")
    lines, tree = src
    warp = next((a for s in tree.body if isinstance(s, ast.Import) for a in
                 [x.asname or x.name for x in s.names if x.name == "warp"]), None)
    if warp is None:
        return failed(STEP, f"{file} does not `import warp` at module scope")
    stmt = _statement(tree, c.line)
    call = stmt.value if stmt is not None else None
    if (stmt is None or not isinstance(call, ast.Call) or ast.unparse(call.func) != f"{warp}.map" or call.keywords
            or not call.args or not isinstance(call.args[0], ast.Name) or call.args[0].id != name):
        return failed(STEP, f"{file}:{c.line} is not `name = {warp}.map({name}, ...)` with positional arguments")
    args = call.args[1:]
    if len(args) != len(inputs) or not all(_pure(a) for a in args) or any(isinstance(a, ast.Starred) for a in args):
        return failed(STEP, "map()'s inputs are not names, attributes or literals the launch can read again")
    fn = next((s for s in reversed(tree.body) if isinstance(s, ast.FunctionDef) and s.name == name), None)
    if fn is None:
        return failed(STEP, f"{name} is not a def at module scope of {file}")
    params = [a.arg for a in fn.args.args]
    bound = syntax.module_bindings(tree)
    kernel = _free(bound, f"_{name}_map")
    index = list(_INDEX[:ndim])
    if len(params) != len(inputs) or set(params) & {*index, "out", warp, name}:
        params = [f"a{n}" for n in range(len(inputs))]
    typed = []
    for p, item, dt in zip(params, inputs, la.dtypes, strict=False):
        m = ARRAY_RE.match(dt)
        if "array" in item:
            if m is None:
                return failed(STEP, f"an array input was launched as {dt}")
            typed.append(f"{p}: {warp}.array(dtype={_scalar(m.group('dtype'), warp)}, ndim={ndim})")
        else:
            if _VALUE_TYPES.get(str(item.get("value"))) is None or m is not None:
                return failed(STEP, f"an input is a {item.get('value', 'value')}, not a bool, int or float")
            typed.append(f"{p}: {_scalar(dt, warp)}")
    odt = _scalar(out.group("dtype"), warp)
    at = ", ".join(index)
    reads = ", ".join(f"{p}[{at}]" if "array" in i else p for p, i in zip(params, inputs, strict=True))
    text = (f"\n\n# {name} mapped over arrays, written once: wp.map made this kernel again at every call\n"
            f"@{warp}.kernel\ndef {kernel}({', '.join(typed)}, out: {warp}.array(dtype={odt}, ndim={ndim})):\n"
            f"    {at} = {warp}.tid()\n    out[{at}] = {name}({reads})\n")
    end = (fn.end_lineno or fn.lineno) + 1
    if [s for s in tree.body if name in _binds(s)][-1] is not fn:
        return failed(STEP, f"{name} is bound again at module scope after its def")
    first = next(a for a, i in zip(args, inputs, strict=True) if "array" in i)
    seg = "".join(lines)
    shown = [ast.get_source_segment(seg, a) or ast.unparse(a) for a in args]
    ref = ast.get_source_segment(seg, first) or ast.unparse(first)
    target = stmt.targets[0].id  # type: ignore[union-attr,attr-defined]
    read = {n.id for a in args for n in ast.walk(a) if isinstance(n, ast.Name)}
    enclosing = next((f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and f.lineno < stmt.lineno <= (f.end_lineno or 0) and f is not fn), None)  # type: ignore[union-attr]
    taken = (syntax.bound_names(enclosing) | syntax.read_names(enclosing)) if enclosing is not None else set(bound)
    fresh = target if target not in read else _free({n: 0 for n in taken}, f"{target}_out")
    pad = " " * syntax.indent_of(lines[stmt.lineno - 1])  # type: ignore[union-attr]
    new = [f"{pad}{fresh} = {warp}.empty({ref}.shape, dtype={odt}, device={ref}.device)",
           f"{pad}{warp}.launch({kernel}, dim={ref}.shape, inputs=[{', '.join(shown)}], outputs=[{fresh}], "
           f"device={ref}.device)"]
    if fresh != target:
        new.append(f"{pad}{target} = {fresh}")
    first_line, last_line = syntax.span_of(stmt)  # type: ignore[arg-type]
    e_call = replace_lines(ctx.sources, file, first_line, last_line, "\n".join(new))
    e_def = insert_before(ctx.sources, file, end, text)
    if e_call is None or e_def is None:
        return failed(STEP, f"{file} is not a file of the project")
    return Step(
        what=STEP, edits=[e_def, e_call],
        done=f"write {name} mapped as the kernel {kernel} once in {file} and launch it at line {c.line} instead of "
             f"{warp}.map",
        review=[f"{file}:{c.line} now allocates the output like {ref} and launches {kernel}: the same element-wise "
                f"{name} wp.map ran, without a new kernel object at every call; inputs of other types than the run's "
                "need a kernel of their own"],
    )
