"""The second pass: facts linked across files (kernel modules, what imports reach, callers, factory calls)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from ..models.scan import CallerRef, CallFact, FactoryCallFact, ImportFact, ImportRef, ScanFacts
from .common import _CallSite
from .files import _Project
from .guards import GuardIndex
from .visitor import _FileScan


def _link(facts: ScanFacts, scans: list[_FileScan], project: _Project) -> None:
    facts.uses_warp = any(m.imports_warp for m in facts.modules)
    mod_of_file = {m.file: m for m in facts.modules}

    # kernels per module
    for k in facts.kernels:
        facts.python_modules_with_kernels.setdefault(k.python_module, k.file)
        info = mod_of_file[k.file]
        info.kernel_count += 1
        info.module_scope_kernel_count += not k.nested
    for f in facts.functions:
        mod_of_file[f.file].function_count += 1
    for la in facts.launches:
        mod_of_file[la.file].launch_count += 1
    kernel_mods = set(facts.python_modules_with_kernels)
    import_time_mods = {k.python_module for k in facts.kernels if not k.nested}
    warp_mods = {k.warp_module for k in facts.kernels if k.warp_module}
    main_has_kernels = any(m.main_alias == "__main__" and m.name in warp_mods for m in facts.modules)

    # what each import executes (module-scope imports, parent packages), transitively
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in facts.imports:
        if imp.project_module and imp.scope == "module" and not imp.type_checking:
            edges[mod_of_file[imp.file].name].add(imp.project_module)
    for name in project.index:
        parent = name.rpartition(".")[0]
        while parent:
            if parent in project.index:
                edges[name].add(parent)
                break
            parent = parent.rpartition(".")[0]
    memo: dict[str, frozenset[str]] = {}

    def closure(start: str) -> frozenset[str]:
        if start not in memo:
            seen = {start}
            todo = [start]
            while todo:
                cur = todo.pop()
                for nxt in edges.get(cur, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            memo[start] = frozenset(seen)
        return memo[start]

    def reach(start: str) -> frozenset[str]:
        return closure(start) & kernel_mods

    for imp in facts.imports:
        if imp.project_module:
            imp.defines_kernels = imp.project_module in kernel_mods
            imp.reaches_kernels = bool(reach(imp.project_module))

    # config sets after kernel imports / kernels
    imports_by_file: dict[str, list[ImportFact]] = defaultdict(list)
    for imp in facts.imports:
        imports_by_file[imp.file].append(imp)
    for cs in facts.config_sets:
        for imp in imports_by_file[cs.file]:
            if not imp.project_module or imp.type_checking or imp.line >= cs.line:
                continue
            if not (imp.scope == "module" or (cs.scope == "function" and imp.function == cs.function)):
                continue
            if imp.defines_kernels:
                cs.after_kernel_imports.append(
                    ImportRef(
                        module=imp.project_module,
                        line=imp.line,
                        kernel_modules=[imp.project_module],
                        created_at_import=imp.project_module in import_time_mods,
                    )
                )
            if imp.reaches_kernels:
                mods = sorted(reach(imp.project_module))
                cs.after_kernel_imports_transitive.append(
                    ImportRef(
                        module=imp.project_module,
                        line=imp.line,
                        kernel_modules=mods,
                        created_at_import=any(m in import_time_mods for m in mods),
                    )
                )
        cs.after_package_imports = _package_refs(
            mod_of_file[cs.file].name, project, imports_by_file, closure, kernel_mods, import_time_mods
        )
        cs.after_kernels_in_file = [
            k.name
            for k in facts.kernels
            if k.file == cs.file and not k.nested and (cs.scope == "function" or k.line < cs.line)
        ]

    # module options: ordering against launches, and whether the target has kernels
    first_launch: dict[tuple[str, str], int] = {}
    for la in facts.launches:
        key = (la.file, la.function)
        first_launch[key] = min(first_launch.get(key, la.line), la.line)
    for mo in facts.module_options:
        fl = first_launch.get((mo.file, mo.function))
        mo.before_launch_in_file = None if fl is None else mo.line < fl
        mo.target_has_kernels = bool(mo.target) and (
            mo.target in warp_mods or (mo.target == "__main__" and main_has_kernels)
        )

    # `some_kernel.module`: the Warp module of that kernel (same file first, else unique in the project)
    def module_of_kernel(expr: str, file: str) -> str | None:
        name = expr[: -len(".module")].split(".")[-1]
        cands = [k for k in facts.kernels if k.name == name]
        local = [k for k in cands if k.file == file] or cands
        mods = {k.warp_module for k in local}
        return mods.pop() if len(mods) == 1 else None

    for mo in facts.module_options:
        if not mo.target_resolved and mo.target and mo.target.endswith(".module"):
            resolved = module_of_kernel(mo.target, mo.file)
            if resolved:
                mo.target, mo.target_resolved = resolved, True
                mo.target_has_kernels = True
    for op in facts.cache_ops:
        if op.kind == "unload" and op.target is None and op.value and op.value.endswith(".module"):
            op.target = module_of_kernel(op.value, op.file)

    # launches of kernels made by a factory: name the kernel when the factory defines exactly one
    by_factory: dict[str, set[str]] = defaultdict(set)
    for k in facts.kernels:
        if k.enclosing_function:
            by_factory[k.enclosing_function.split(".")[-1]].add(k.name)
    for la in facts.launches:
        if la.kernel_name is None and la.kernel_factory and len(by_factory.get(la.kernel_factory, ())) == 1:
            la.kernel_name = next(iter(by_factory[la.kernel_factory]))

    _link_factory_calls(facts, scans, project)
    _link_module_params(facts)
    _link_calls(facts, scans)
    _link_option_callers(facts, scans, project)

    # tapes: kernels launched by functions called inside the with-block (matched by name, transitively)
    launched_by: dict[str, set[str]] = defaultdict(set)
    for la in facts.launches:
        launched_by[la.function.split(".")[-1]].add(la.kernel_name or la.kernel)
    calls_by: dict[str, set[str]] = defaultdict(set)
    for fs in scans:
        for qual, names in fs.calls.items():
            calls_by[qual.split(".")[-1]] |= names
    for t in facts.tapes:
        if not t.calls:
            continue
        seen: set[str] = set()
        level = list(t.calls)
        found: set[str] = set()
        for _ in range(6):
            nxt: list[str] = []
            for name in level:
                if name in seen:
                    continue
                seen.add(name)
                found |= launched_by.get(name, set())
                nxt.extend(calls_by.get(name, ()))
            level = nxt
            if not level or len(seen) > 500:
                break
        t.indirect_kernels = sorted(found)


# How many calls out from a function-scope wp.overload registration ScanFacts.calls reaches (the rules that order a
# registration against a kernel's first load follow at most this many).
CALL_LEVELS = 3


def _link_calls(facts: ScanFacts, scans: list[_FileScan]) -> None:
    """ScanFacts.calls: the calls of functions that hold a function-scope wp.overload registration, of their callers,
    and so on, CALL_LEVELS names deep, matched by name; in scan order. Every other call is dropped: keeping all of a
    large tree's calls costs more (objects for the garbage collector to walk) than the scan itself."""
    index = GuardIndex()
    for fs in scans:
        index.add_file(fs.rel, fs.guards, fs.raw_calls)
    index.keep_callers_of({f[2] for fs in scans for f in fs.guards.functions})
    facts.set_guard_index(index)
    wanted = {o.function.rsplit(".", 1)[-1] for o in facts.overloads if o.scope == "function"}
    level = set(wanted)
    for _ in range(CALL_LEVELS - 1):
        if not level:
            break
        callers = {fn.rsplit(".", 1)[-1] for fs in scans for _l, fn, name in fs.raw_calls if name in level}
        level = callers - wanted - {"<module>"}
        wanted |= level
    for fs in scans:
        for line, function, name in fs.raw_calls if wanted else ():
            if name in wanted:
                scope = "module" if function == "<module>" else "function"
                facts.calls.append(CallFact(file=fs.rel, line=line, function=function, scope=scope, name=name))
        fs.raw_calls = []


def _link_factory_calls(facts: ScanFacts, scans: list[_FileScan], project: _Project) -> None:
    """Calls of kernel factories: a bare name (or self./cls. attribute) in the factory's own file, or a dotted name
    whose module part resolves to the factory's module; a method or kept closure also by the module-scope name that
    binds it (`make = _Factory().make`), recorded under its own qualname. Anything else (other aliases, instances
    passed around) stays unmatched."""
    factories: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # last ident -> (qualname, file, module)
    for k in facts.kernels:
        if not k.enclosing_function:
            continue
        top = k.enclosing_function.split(".<locals>.")[0]
        entry = (top, k.file, k.python_module)
        last = top.split(".")[-1]
        if entry not in factories[last]:
            factories[last].append(entry)
    # a method or a closure kept by an object, called through the module-scope name that binds it (scan/bound.py)
    makers = {(k.enclosing_function, k.file): k.python_module for k in facts.kernels if k.enclosing_function}
    for fs in scans:
        for alias, qual in fs.bound_functions.items():
            module = makers.get((qual, fs.rel))
            if module is not None and (qual, fs.rel, module) not in factories[alias]:
                factories[alias].append((qual, fs.rel, module))
    if not factories:
        return
    for fs in scans:
        for cs in fs.call_sites:
            for top, file, module in factories.get(cs.name, ()):
                if cs.local:
                    hit = file == fs.rel
                else:
                    modpart = cs.qual.rpartition(".")[0]
                    hit = bool(modpart) and (modpart == module or project.resolve(modpart, fs.rel) == module)
                if not hit:
                    continue
                facts.factory_calls.append(
                    FactoryCallFact(
                        **cs.where,
                        factory=top,
                        factory_file=file,
                        callee=cs.callee,
                        args=cs.args,
                        constant_args=not cs.runtime_args,
                        runtime_args=cs.runtime_args,
                        in_loop=cs.in_loop,
                        decorator=cs.decorator,
                    )
                )
    facts.factory_calls.sort(key=lambda c: (c.file, c.line))


def _passed(call: FactoryCallFact, name: str, index: int | None, default: str | None = None) -> str | None:
    """The literal string a call passes for the parameter `name` (by keyword, or at `index` positionally), or
    `default` when it leaves the parameter out; None when it passes something else or unpacks arguments."""
    if any(a.startswith("*") for a in call.args):
        return None
    positional = [a for a in call.args if not re.match(r"[A-Za-z_]\w*=(?!=)", a)]
    text = next((a.split("=", 1)[1] for a in call.args if a.startswith(f"{name}=")), None)
    if text is None and index is not None and index < len(positional):
        text = positional[index]
    if text is None:
        return default
    try:
        value = ast.literal_eval(text) if text is not None else None
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _link_module_params(facts: ScanFacts) -> None:
    """A kernel whose `module=` is a parameter of the function that makes it joins the module every scanned call of
    that function ends with, passed as a literal or left to a literal default, when they all agree
    (`reset(..., module="unique")`). A function no call reaches, or calls that differ or pass a variable, leave it
    as the scan read it (unknown, or the default)."""
    for k in facts.kernels:
        if k.module_param is None or not k.enclosing_function:
            continue
        calls = facts.calls_of_factory(k.enclosing_function.split(".<locals>.")[0], k.file)
        default = k.module_arg if k.module_from_default else None
        values = {_passed(c, k.module_param, k.module_param_index, default) for c in calls}
        if len(values) != 1 or None in values:
            continue  # a default some call overrides stays the scan's reading of the default
        k.module_arg = values.pop()
        k.module_from_callers = True
        k.warp_module = None if k.module_arg == "unique" else k.module_arg


def _link_option_callers(facts: ScanFacts, scans: list[_FileScan], project: _Project, max_depth: int = 3) -> None:
    """ModuleOptionsFact.callers: who calls the function that writes the options, and who calls that, and so on.

    Matched like factory calls; nested functions (`f.<locals>.g`) are never matched, their callers are not
    resolvable statically."""
    wanted = [mo for mo in facts.module_options if mo.scope == "function"]
    if not wanted:
        return
    module_of = {m.file: m.name for m in facts.modules}
    by_name: dict[str, list[tuple[str, _CallSite]]] = defaultdict(list)
    for fs in scans:
        for cs in fs.call_sites:
            if not cs.decorator:
                by_name[cs.name].append((fs.rel, cs))
    memo: dict[tuple[str, str], list[_CallSite]] = {}

    def direct(qual: str, file: str) -> list[_CallSite]:
        key = (qual, file)
        if key not in memo:
            out: list[_CallSite] = []
            if qual != "<module>" and "<locals>" not in qual:
                module = module_of.get(file)
                for rel, cs in by_name.get(qual.split(".")[-1], ()):
                    if cs.local:
                        hit = rel == file
                    else:
                        modpart = cs.qual.rpartition(".")[0]
                        hit = bool(modpart) and (modpart == module or project.resolve(modpart, rel) == module)
                    if hit:
                        out.append(cs)
            memo[key] = out
        return memo[key]

    for mo in wanted:
        refs: list[CallerRef] = []
        seen: set[tuple[str, str]] = set()
        level = [(mo.function, mo.file)]
        for depth in range(1, max_depth + 1):
            nxt: list[tuple[str, str]] = []
            for qual, file in level:
                if (qual, file) in seen:
                    continue
                seen.add((qual, file))
                for cs in direct(qual, file):
                    refs.append(CallerRef(**cs.where, callee=qual, callee_file=file, depth=depth))
                    if cs.where["scope"] == "function":
                        nxt.append((cs.where["function"], cs.where["file"]))
            level = nxt
            if not level or len(refs) >= 50:
                break
        mo.callers = sorted(refs[:50], key=lambda r: (r.depth, r.file, r.line))


def _package_refs(
    modname: str,
    project: _Project,
    imports_by_file: dict[str, list[ImportFact]],
    closure,
    kernel_mods: set[str],
    import_time_mods: set[str],
) -> list[ImportRef]:
    """Kernel modules that the parent packages of `modname` have imported before `modname` itself runs."""
    refs: list[ImportRef] = []
    parts = modname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:i])
        rel = project.index.get(parent)
        if rel is None:
            continue
        imps = [
            imp
            for imp in imports_by_file.get(rel, [])
            if imp.project_module and imp.scope == "module" and not imp.type_checking
        ]
        cutoff = next((imp.line for imp in imps if modname in closure(imp.project_module)), None)
        mods: set[str] = set(kernel_mods & {parent})
        for imp in imps:
            if cutoff is None or imp.line < cutoff:
                mods |= closure(imp.project_module) & kernel_mods
        mods.discard(modname)
        if mods:
            refs.append(
                ImportRef(
                    module=parent,
                    line=0,
                    kernel_modules=sorted(mods),
                    created_at_import=any(m in import_time_mods for m in mods),
                )
            )
    return refs
