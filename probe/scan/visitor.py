"""The per-file AST walk: scopes, bindings and dispatch to the fact families.

`_FileScan` holds the state of one file (frames, aliases, the fact lists); the fact-family mixins it is made of
(imports, options, caches, kernels, calls) read and fill that state through `self`.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from ..models.scan import (
    MATHDX_TILE_OPS,
    CacheOp,
    ConfigSetFact,
    ImportFact,
    KernelDef,
    LaunchFact,
    LoadCallFact,
    LoopFact,
    ModuleOptionsFact,
    OverloadFact,
    SettingFact,
    TapeBackwardCall,
    TapeFact,
    TileOpFact,
)
from .bound import bound_functions
from .caches import CachesMixin
from .calls import _NO_CALLS, CallsMixin, RawCall, collect_calls
from .common import (
    _CALL_RE,
    _KEYWORDS,
    _UNKNOWN,
    _CallSite,
    _canon,
    _const_str,
    _Frame,
    _is_main_guard,
    _LoopEntry,
    _Names,
    _RmtreeCandidate,
    _text,
    _trivial,
    last_ident,
)
from .files import _Project
from .guards import FileGuards
from .imports import ImportsMixin
from .kernels import KernelsMixin
from .options import OptionsMixin


class _FileScan(ImportsMixin, OptionsMixin, CachesMixin, KernelsMixin, CallsMixin, ast.NodeVisitor):
    def __init__(self, rel: str, tree: ast.Module, project: _Project, source: bytes = b""):
        self.rel = rel
        self.tree = tree
        self.source_lines = source.splitlines()
        self.project = project
        self.modname, self.is_package = project.name_of[rel]
        self.package = self.modname if self.is_package else self.modname.rpartition(".")[0]
        self.names = _Names()
        self.frames: list[_Frame] = [_Frame("module", "<module>", "")]
        self.type_checking = 0
        self.swallow = 0
        self.atexit = 0
        self.discarded: set[int] = set()  # Call nodes whose value is thrown away (expression statements)
        self.handled: set[int] = set()  # nodes already turned into a fact by their parent
        self.active_tapes: list[TapeFact] = []
        self.tape_vars: set[str] = set()
        self.backward_calls: list[tuple[str, dict]] = []
        self.rmtree: list[_RmtreeCandidate] = []
        self.cache_dir_names: set[str] = set()
        self.calls: dict[str, set[str]] = defaultdict(set)  # function qualname -> called names
        self.has_main_guard = False
        self.imports_warp = False
        self.int_consts: dict[str, int] = {}
        self.str_consts: dict[str, str] = {}
        self.imports: list[ImportFact] = []
        self.kernels: list[KernelDef] = []
        self.functions: list[KernelDef] = []
        self.overloads: list[OverloadFact] = []
        self.launches: list[LaunchFact] = []
        self.module_options: list[ModuleOptionsFact] = []
        self.config_sets: list[ConfigSetFact] = []
        self.cache_ops: list[CacheOp] = []
        self.settings: list[SettingFact] = []
        self.load_calls: list[LoadCallFact] = []
        self.tapes: list[TapeFact] = []
        self.tape_backward_calls: list[TapeBackwardCall] = []
        self.tile_ops: list[TileOpFact] = []
        self.loops: list[LoopFact] = []
        self.loop_stack: list[_LoopEntry] = []
        self.call_sites: list[_CallSite] = []
        self.bound_functions: dict[str, str] = {}  # module-scope name -> the method or kept closure it binds
        self.decorators: set[int] = set()  # Call nodes used as decorators
        self.raw_calls: list[RawCall] = []  # every call of the file (the link pass keeps those ScanFacts.calls needs)
        self.guards = FileGuards()  # spans of functions and if-guarded blocks, switches (for the GuardIndex)

    # ---- dispatch ----------------------------------------------------------------------------------------------
    # ast.NodeVisitor looks the method up by name for every node and walks every field of every leaf; on a large
    # tree that machinery cost more than the facts. Same order and the same methods, with the lookup cached per
    # node type and the leaves that hold nothing (names, constants, operators) not entered.

    _methods: dict[type, object] = {}

    def visit(self, node: ast.AST) -> None:
        t = type(node)
        m = self._methods.get(t)
        if m is None:
            m = getattr(type(self), "visit_" + t.__name__, None) or type(self).generic_visit
            self._methods[t] = m
        m(self, node)  # type: ignore[operator]

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            v = getattr(node, name, None)
            if type(v) is list:
                for x in v:
                    if type(x) not in _NO_CALLS and isinstance(x, ast.AST):
                        self.visit(x)
            elif v is not None and type(v) not in _NO_CALLS and isinstance(v, ast.AST):
                self.visit(v)

    # ---- driver ------------------------------------------------------------------------------------------------

    def run(self) -> None:
        self._collect_aliases()
        self._collect_constants()
        self.bound_functions = bound_functions(self.tree)
        self.visit(self.tree)
        self._finish()
        self.raw_calls = collect_calls(self.tree, self.guards)

    def run_light(self) -> None:
        """For files that cannot hold a Warp fact (no "warp", "CUDA_CACHE" or "rmtree" in the bytes): statements
        only, for imports, scopes, the main guard and the names each function calls."""
        self._light(self.tree.body)
        self.raw_calls = collect_calls(self.tree, self.guards)

    def _light(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                self.visit_Import(node)
            elif isinstance(node, ast.ImportFrom):
                self.visit_ImportFrom(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                self.frames.append(_Frame(kind, node.name, self._child_qualname(node.name), node))
                if kind == "function" and self.source_lines:  # call graph for tape blocks: names before "(" suffice
                    text = b"\n".join(self.source_lines[node.lineno : node.end_lineno or node.lineno])
                    self.calls[self.frames[-1].qualname].update(
                        m.decode("ascii") for m in _CALL_RE.findall(text) if m not in _KEYWORDS
                    )
                self._light(node.body)
                self.frames.pop()
            elif isinstance(node, ast.If):
                tc = last_ident(node.test) == "TYPE_CHECKING"
                self.has_main_guard |= _is_main_guard(node.test)
                self.type_checking += tc
                self._light(node.body)
                self.type_checking -= tc
                self._light(node.orelse)
            else:
                for name in ("body", "orelse", "finalbody"):
                    part = getattr(node, name, None)
                    if isinstance(part, list):
                        self._light(part)
                for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                    self._light(sub.body)

    def release(self) -> None:
        """Drop every reference into the syntax tree; only the facts remain."""
        self.tree = None
        self.source_lines = []
        self.frames = []
        self.rmtree = []
        self.active_tapes = []
        self.discarded = set()
        self.handled = set()
        self.loop_stack = []
        self.decorators = set()

    # ---- helpers -----------------------------------------------------------------------------------------------

    def _q(self, node: ast.AST) -> str | None:
        return _canon(self.names.qual(node))

    def _api(self, node: ast.AST) -> str | None:
        """`wp.launch` / `warp.launch` / `launch` (from warp) -> "launch"; anything else -> None."""
        q = self._q(node)
        if q and q.startswith("warp.") and q.count(".") == 1:
            return q[5:]
        return None

    def _is_warp_config(self, node: ast.AST) -> bool:
        return self._q(node) == "warp.config"

    def _fn_frame(self) -> _Frame | None:
        for fr in reversed(self.frames):
            if fr.kind == "function":
                return fr
        return None

    def _where(self, node: ast.AST) -> dict:
        fn = self._fn_frame()
        return {
            "file": self.rel,
            "line": getattr(node, "lineno", 0),
            "function": fn.qualname if fn else "<module>",
            "scope": "function" if fn else "module",
        }

    def _current_qualname(self) -> str:
        fn = self._fn_frame()
        return fn.qualname if fn else "<module>"

    def _child_qualname(self, name: str) -> str:
        parent = self.frames[-1]
        if parent.kind == "module":
            return name
        if parent.kind == "class":
            return f"{parent.qualname}.{name}"
        return f"{parent.qualname}.<locals>.{name}"

    def _bind(self, name: str, line: int, value: object) -> None:
        self.frames[-1].assigns[name].append((line, value))

    def _bind_target(self, target: ast.AST, value: ast.AST | None, line: int) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, line, value if value is not None else _UNKNOWN)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind_target(elt, None, line)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, line)

    def _lookup(self, name: str, line: int) -> object:
        """The latest value bound to `name` before `line` (innermost scope first); None if never bound here."""
        for depth, fr in enumerate(reversed(self.frames)):
            if fr.kind == "class" and depth > 0:
                continue
            entries = fr.assigns.get(name)
            if not entries:
                continue
            before = [v for ln, v in entries if ln < line]
            if before:
                return before[-1]
            if depth > 0:
                return entries[-1][1]
        return None

    def _expr_of(self, name: str, line: int) -> ast.AST | None:
        v = self._lookup(name, line)
        return v if isinstance(v, ast.AST) else None

    def _call_args(self, node: ast.Call, positional: tuple[str, ...]) -> dict[str, ast.AST]:
        args: dict[str, ast.AST] = {}
        for name, value in zip(positional, node.args, strict=False):
            args[name] = value
        for kw in node.keywords:
            if kw.arg:
                args[kw.arg] = kw.value
        return args

    def _warp_body(self) -> _Frame | None:
        fr = self._fn_frame()
        return fr if fr is not None and fr.warp_kind else None

    def _in_atexit(self) -> bool:
        return self.atexit > 0 or any(fr.atexit for fr in self.frames)

    # ---- scopes ------------------------------------------------------------------------------------------------

    def _visit_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        kind: str | None = None
        call: ast.Call | None = None
        overload = False
        atexit_dec = False
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            api = self._api(target)
            if api in ("kernel", "func"):
                kind, call = api, (dec if isinstance(dec, ast.Call) else None)
            elif api == "overload":
                overload = True
            elif self._q(target) == "atexit.register":
                atexit_dec = True
        self._bind(node.name, node.lineno, node)
        self.decorators.update(id(d) for d in node.decorator_list if isinstance(d, ast.Call))
        if overload:
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            self.overloads.append(
                OverloadFact(
                    **self._where(node),
                    kernel=node.name,
                    kernel_text=node.name,
                    types=", ".join(f"{a.arg}: {_text(a.annotation)}" for a in args if a.annotation is not None),
                    form="decorator",
                )
            )
        elif kind:
            self._record_def(node, node.name, kind, call, "decorator", node)
        for dec in node.decorator_list:
            self.visit(dec)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        frame = _Frame(
            "function",
            node.name,
            self._child_qualname(node.name),
            node,
            warp_kind=None if overload else kind,
            atexit=atexit_dec,
        )
        self.frames.append(frame)
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self._bind(a.arg, node.lineno, _UNKNOWN)
        for a in (node.args.vararg, node.args.kwarg):
            if a is not None:
                self._bind(a.arg, node.lineno, _UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)
        self.frames.pop()

    visit_FunctionDef = _visit_def
    visit_AsyncFunctionDef = _visit_def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, node.lineno, node)
        for n in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(n)
        self.frames.append(_Frame("class", node.name, self._child_qualname(node.name), node))
        for stmt in node.body:
            self.visit(stmt)
        self.frames.pop()

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        q = self._q(test) if isinstance(test, (ast.Name, ast.Attribute)) else None
        if q and q.endswith("TYPE_CHECKING"):
            self.type_checking += 1
            for s in node.body:
                self.visit(s)
            self.type_checking -= 1
            for s in node.orelse:
                self.visit(s)
            return
        if _is_main_guard(test):
            self.has_main_guard = True
        self.generic_visit(node)

    def visit_Try(self, node: ast.AST) -> None:
        swallow = any(_trivial(h.body) for h in node.handlers)
        self.swallow += swallow
        for s in node.body:
            self.visit(s)
        self.swallow -= swallow
        for part in (node.handlers, node.orelse, node.finalbody):
            for s in part:
                self.visit(s)

    visit_TryStar = visit_Try

    def _leaf(self, node: ast.AST) -> None:  # nothing to find below these
        pass

    visit_Name = visit_Constant = visit_Pass = visit_Load = visit_Store = visit_Del = _leaf

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self.discarded.add(id(node.value))
        self.generic_visit(node)

    # ---- assignments -------------------------------------------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._bind_target(t, node.value, node.lineno)
        if isinstance(node.value, ast.Call) and self._api(node.value.func) == "Tape":
            self.handled.add(id(node.value))
            for t in node.targets:
                var = _text(t)
                self.tape_vars.add(var)
                self.tapes.append(TapeFact(**self._where(node), var=var))
        for t in node.targets:
            self._assign_effects(t, node.value, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node.lineno)
            self._assign_effects(node.target, node.value, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind_target(node.target, None, node.lineno)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        fr = self._warp_body()
        fact = self._loop(node, fr) if fr is not None else None
        self._bind_target(node.target, None, node.lineno)
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        loop_line = fact.line if fact is not None else None
        self.loop_stack.append(_LoopEntry(targets, node.iter, node.lineno, self._fn_frame(), loop_line))
        try:
            self.generic_visit(node)
        finally:
            self.loop_stack.pop()

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:
        self.loop_stack.append(_LoopEntry(set(), None, node.lineno, self._fn_frame()))
        try:
            self.generic_visit(node)
        finally:
            self.loop_stack.pop()

    def _visit_comprehension(self, node: ast.AST) -> None:
        pushed = 0
        try:
            for gen in node.generators:
                self.visit(gen.iter)
                targets = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
                self.loop_stack.append(_LoopEntry(targets, gen.iter, getattr(node, "lineno", 0), self._fn_frame()))
                pushed += 1
                self.visit(gen.target)
                for cond in gen.ifs:
                    self.visit(cond)
            for name in ("key", "value", "elt"):
                part = getattr(node, name, None)
                if part is not None:
                    self.visit(part)
        finally:
            del self.loop_stack[len(self.loop_stack) - pushed :]

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    def _assign_effects(self, target: ast.AST, value: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute) and self._is_warp_config(target.value):
            self._config_set(target.attr, value, node, _text(target), "config")
        elif isinstance(target, ast.Subscript):
            key = _const_str(target.slice)
            base = target.value
            if key is None:
                return
            if self._q(base) == "os.environ":
                self._env_set(key, value, node, "env", _text(target))
            elif isinstance(base, ast.Attribute) and base.attr == "options":
                gm = self._get_module_target(base.value, node.lineno)
                if gm is not None:
                    self._module_options_fact(node, "get_module_options", {key: _text(value)}, None, gm)

    def visit_With(self, node: ast.With) -> None:
        opened: list[TapeFact] = []
        for item in node.items:
            ce = item.context_expr
            is_call = isinstance(ce, ast.Call) and self._api(ce.func) == "Tape"
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, ce, node.lineno)
            if is_call or (not isinstance(ce, ast.Call) and _text(ce) in self.tape_vars):
                if is_call:
                    self.handled.add(id(ce))
                var = _text(item.optional_vars) if item.optional_vars is not None else (None if is_call else _text(ce))
                if var:
                    self.tape_vars.add(var)
                tf = TapeFact(**self._where(node), var=var, with_block=True, end_line=node.end_lineno)
                self.tapes.append(tf)
                opened.append(tf)
        for item in node.items:
            self.visit(item)
        self.active_tapes.extend(opened)
        for s in node.body:
            self.visit(s)
        if opened:
            del self.active_tapes[-len(opened) :]

    visit_AsyncWith = visit_With

    # ---- calls -------------------------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        api = self._api(node.func)
        fq = self._q(node.func)
        if api in ("launch", "launch_tiled"):
            self._launch(node, api)
        elif api == "overload" and node.args:
            self._overload_call(node)
        elif api in ("kernel", "func") and node.args:
            fn = node.args[0]
            self._kernel_call(node, api, None, fn)
        elif isinstance(node.func, ast.Call) and self._api(node.func.func) in ("kernel", "func") and node.args:
            self._kernel_call(node, self._api(node.func.func), node.func, node.args[0])
        elif api == "set_module_options":
            self._set_module_options(node)
        elif api in ("force_load", "load_module"):
            self._load_call(node, api)
        elif api in ("clear_kernel_cache", "clear_lto_cache"):
            self.cache_ops.append(CacheOp(**self._where(node), kind=api, api=_text(node.func), via="call"))
        elif api == "init_kernel_cache" and node.args:
            self._cache_dir(
                self._where(node), node.args[0], node, _text(node.func), "init_kernel_cache", "kernel_cache_dir"
            )
        elif api == "Tape" and id(node) not in self.handled:
            self.tapes.append(TapeFact(**self._where(node)))
        elif api and (api == "tile" or api.startswith("tile_")):
            fr = self._warp_body()
            if fr is not None:
                self.tile_ops.append(
                    TileOpFact(
                        **self._where(node), op=api, kernel=fr.name, kind=fr.warp_kind, mathdx=api in MATHDX_TILE_OPS
                    )
                )
        if api is None:
            self._other_call(node, fq)
            self._call_site(node, fq)
        name = last_ident(node.func)
        if name:
            self.calls[self._current_qualname()].add(name)
            if api is None:
                for t in self.active_tapes:
                    if name not in t.calls:
                        t.calls.append(name)
        bump = fq in ("atexit.register", "weakref.finalize")
        self.atexit += bump
        self.generic_visit(node)
        self.atexit -= bump

    # ---- end of file -------------------------------------------------------------------------------------------

    def _finish(self) -> None:
        for recv, w in self.backward_calls:
            if recv in self.tape_vars or "tape" in recv.lower():
                self.tape_backward_calls.append(TapeBackwardCall(**w, var=recv))
                for t in self.tapes:
                    if t.var == recv and w["line"] not in t.backward_lines:
                        t.backward_lines.append(w["line"])
        for c in self.rmtree:
            mentions = "cache" in c.reach_text.lower() or bool(c.reach_names & self.cache_dir_names)
            if mentions or c.atexit:
                self.cache_ops.append(
                    CacheOp(
                        **c.where,
                        kind="cache_dir_removed",
                        api="shutil.rmtree",
                        value=_text(c.arg),
                        via="atexit" if c.atexit else "call",
                        mentions_cache=mentions,
                        atexit=c.atexit,
                    )
                )
        for lst in (self.cache_ops, self.settings, self.tapes):
            lst.sort(key=lambda f: f.line)
