"""Kernel facts: definitions, overloads, launches, and constant-range loops in kernel bodies."""

from __future__ import annotations

import ast

from ..models.scan import KernelDef, LaunchFact, LoopFact, OverloadFact, SettingFact
from .common import _GENERIC, _const_str, _Frame, _is_setting, _is_true, _text, last_ident


class KernelsMixin:
    """Kernels, overloads, launches and loops of one file (part of the per-file visitor)."""

    def _resolve_kernel(self, node: ast.AST, line: int, depth: int = 0) -> tuple[str | None, str | None]:
        """(kernel name, factory function) for a launch's kernel expression."""
        if depth > 5:
            return None, None
        if isinstance(node, ast.Name):
            v = self._lookup(node.id, line)
            if v is None:
                return node.id, None  # a module-level def or an imported kernel
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return v.name, None
            if isinstance(v, (ast.Call, ast.Name, ast.Attribute)):
                return self._resolve_kernel(v, getattr(v, "lineno", line), depth + 1)
            return None, None
        if isinstance(node, ast.Attribute):
            return node.attr, None
        if isinstance(node, ast.Call):
            api = self._api(node.func)
            if api == "overload" and node.args:
                return self._resolve_kernel(node.args[0], line, depth + 1)
            if api == "kernel" and node.args:
                return last_ident(node.args[0]), None
            if isinstance(node.func, ast.Call) and self._api(node.func.func) == "kernel" and node.args:
                return last_ident(node.args[0]), None
            return None, last_ident(node.func)
        return None, None

    def _launch(self, node: ast.Call, api: str) -> None:
        args = self._call_args(node, ("kernel", "dim"))
        kernel = args.get("kernel")
        name, factory = self._resolve_kernel(kernel, node.lineno) if kernel is not None else (None, None)
        bd = args.get("block_dim")
        block_dim: int | str | None = None
        if bd is not None:
            is_int = isinstance(bd, ast.Constant) and isinstance(bd.value, int) and not isinstance(bd.value, bool)
            block_dim = bd.value if is_int else _text(bd)
        fact = LaunchFact(
            **self._where(node),
            api=api,
            kernel=_text(kernel),
            kernel_name=name,
            kernel_factory=factory,
            dim=_text(args["dim"]) if "dim" in args else None,
            block_dim=block_dim,
            device=_text(args["device"]) if "device" in args else None,
            adjoint=_is_true(args.get("adjoint")),
            kwargs={k.arg: _text(k.value) for k in node.keywords if k.arg},
        )
        self.launches.append(fact)
        label = name or fact.kernel
        for t in self.active_tapes:
            if label not in t.launched_kernels:
                t.launched_kernels.append(label)

    def _overload_call(self, node: ast.Call) -> None:
        types = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg), None)
        kname, _ = self._resolve_kernel(node.args[0], node.lineno)
        self.overloads.append(
            OverloadFact(
                **self._where(node),
                kernel=kname or _text(node.args[0]),
                kernel_text=_text(node.args[0]),
                types=_text(types),
                form="call",
                retained=id(node) not in self.discarded,
            )
        )

    def _kernel_call(self, node: ast.Call, kind: str, deco: ast.Call | None, fn: ast.AST) -> None:
        """`k = wp.kernel(f)` or `wp.kernel(module=...)(f)`."""
        fdef = None
        if isinstance(fn, ast.Name):
            v = self._lookup(fn.id, node.lineno)
            if isinstance(v, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fdef = v
        name = fdef.name if fdef else (last_ident(fn) or _text(fn))
        self._record_def(fdef, name, kind, deco if deco is not None else node, "call", node)

    def _module_arg(self, node: ast.AST) -> tuple[str | None, bool, int | None, str | None, int | None]:
        """(module name, whether it came from a factory parameter's default, the line of that default, and for a
        parameter of the outermost enclosing function with no literal default: its name and positional index, None
        when keyword-only; link.py then reads the value from that function's calls)."""
        s = _const_str(node)
        if s is not None:
            return s, False, None, None, None
        if isinstance(node, ast.Name):
            if node.id == "__name__":
                return self.modname, False, None, None, None
            functions = [fr for fr in self.frames
                         if fr.kind == "function" and isinstance(fr.node, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for fr in reversed(functions):
                a = fr.node.args
                positional = a.posonlyargs + a.args
                pdefaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
                pairs = list(zip(positional, pdefaults, strict=False)) + list(
                    zip(a.kwonlyargs, a.kw_defaults, strict=False)
                )
                for i, (arg, default) in enumerate(pairs):
                    if arg.arg != node.id:
                        continue
                    d = _const_str(default)
                    # the calls decide (link.py) for the outermost function without *args/**kwargs; a method's calls
                    # pass self/cls implicitly, so those are matched by keyword only
                    callers = fr is functions[0] and a.vararg is None and a.kwarg is None
                    at = self.frames.index(fr)
                    method = at > 0 and self.frames[at - 1].kind == "class"
                    index = i if i < len(positional) and not method else None
                    if d is not None:
                        return d, True, default.lineno, (arg.arg if callers else None), index
                    if default is None and callers:
                        return None, False, None, arg.arg, index
                    return None, False, None, None, None
            if node.id in self.str_consts:
                return self.str_consts[node.id], False, None, None, None
        return None, False, None, None, None

    def _is_generic(self, ann: ast.AST | None) -> bool:
        if ann is None:
            return False
        if _const_str(ann) is not None:
            try:
                ann = ast.parse(_const_str(ann), mode="eval").body
            except SyntaxError:
                return False
        for n in ast.walk(ann):
            if isinstance(n, (ast.Name, ast.Attribute)) and self._q(n) in _GENERIC:
                return True
        return False

    def _record_def(
        self,
        fdef: ast.FunctionDef | ast.AsyncFunctionDef | None,
        name: str,
        kind: str,
        call: ast.Call | None,
        form: str,
        at: ast.AST,
    ) -> None:
        w = self._where(at)
        fn = self._fn_frame()
        kw = {k.arg: k.value for k in call.keywords if k.arg} if call is not None else {}
        module_node = kw.get("module")
        module_arg, from_default, default_line, param, param_index = (
            self._module_arg(module_node) if module_node is not None else (None, False, None, None, None)
        )
        if module_node is None:
            warp_module: str | None = self.modname
        elif module_arg is not None and module_arg != "unique":
            warp_module = module_arg
        else:
            warp_module = None
        generic_params: list[str] = []
        if fdef is not None:
            a = fdef.args
            generic_params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if self._is_generic(p.annotation)]
        eb = kw.get("enable_backward")
        mo = kw.get("module_options")
        mo_dict, _ = self._dict_of(mo, w["line"]) if mo is not None else ({}, None)
        fact = KernelDef(
            **w,
            kind=kind,
            name=name,
            qualname=self._child_qualname(name) if fdef is not None else name,
            python_module=self.modname,
            form=form,
            nested=fn is not None,
            enclosing_function=fn.qualname if fn else None,
            module_arg=module_arg,
            module_arg_text=_text(module_node) if module_node is not None else None,
            module_arg_line=getattr(module_node, "lineno", None),
            module_from_default=from_default,
            module_default_line=default_line,
            module_param=param,
            module_param_index=param_index,
            warp_module=warp_module,
            generic=bool(generic_params),
            generic_params=generic_params,
            enable_backward=eb.value if isinstance(eb, ast.Constant) and isinstance(eb.value, bool) else None,
            enable_backward_text=_text(eb) if eb is not None else None,
            module_options=mo is not None,
            module_options_dict=mo_dict,
            decorator_kwargs={k: _text(v) for k, v in kw.items()},
        )
        (self.kernels if kind == "kernel" else self.functions).append(fact)
        if eb is not None:
            self.settings.append(
                SettingFact(**w, name="enable_backward", value=_text(eb), via="kernel_kwarg", target=name)
            )
        for k, v in mo_dict.items():
            if _is_setting(k):
                self.settings.append(SettingFact(**w, name=k, value=v, via="kernel_kwarg", target=name))

    # ---- kernel bodies -----------------------------------------------------------------------------------------

    def _const_int(self, node: ast.AST) -> tuple[int | None, bool, bool]:
        """(value, static used, from a module constant) of a compile-time integer expression."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value, False, False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v, s, c = self._const_int(node.operand)
            return (-v if v is not None else None), s, c
        if isinstance(node, ast.Call) and self._api(node.func) in ("static", "constant") and len(node.args) == 1:
            v, _s, c = self._const_int(node.args[0])
            return v, self._api(node.func) == "static", c
        if isinstance(node, ast.Name) and node.id in self.int_consts:
            return self.int_consts[node.id], False, True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            a, sa, ca = self._const_int(node.left)
            b, sb, cb = self._const_int(node.right)
            if a is None or b is None:
                return None, False, False
            if isinstance(node.op, ast.Add):
                v = a + b
            elif isinstance(node.op, ast.Sub):
                v = a - b
            elif isinstance(node.op, ast.Mult):
                v = a * b
            else:
                if b == 0:
                    return None, False, False
                v = a // b
            return v, sa or sb, ca or cb
        return None, False, False

    def _loop(self, node: ast.For, fr: _Frame) -> LoopFact | None:
        it = node.iter
        static = False
        if isinstance(it, ast.Call) and self._api(it.func) == "static" and len(it.args) == 1:
            it, static = it.args[0], True
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
            return None
        if not it.args or len(it.args) > 3 or it.keywords:
            return None
        vals = []
        from_const = False
        for a in it.args:
            v, s, c = self._const_int(a)
            if v is None:
                return None
            vals.append(v)
            static = static or s
            from_const = from_const or c
        if len(vals) == 3 and vals[2] == 0:
            return None
        around = [e for e in self.loop_stack if e.frame is fr]
        fact = LoopFact(
            **self._where(node),
            kernel=fr.name,
            kind=fr.warp_kind,
            bound=len(range(*vals)),
            bound_text=_text(node.iter),
            static=static,
            from_constant=from_const,
            outer_loop_lines=[e.loop_line for e in around if e.loop_line is not None],
            forced_unroll=self._static_on_loop_var(node, {t for e in around for t in e.targets}),
        )
        self.loops.append(fact)
        return fact

    def _static_on_loop_var(self, loop: ast.For, outer: set[str]) -> bool:
        """Whether a wp.static(...) inside `loop` reads a loop variable (this loop's, an enclosing or a nested one's).

        Warp evaluates other wp.static expressions before code generation and replaces them by their value; one that
        reads a loop variable stays, and a loop holding such a call is unrolled whatever max_unroll says.
        """

        def walk(n: ast.AST, active: frozenset[str]) -> bool:
            if isinstance(n, ast.For):
                active = active | {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            if isinstance(n, ast.Call) and self._api(n.func) == "static":
                expr = n.args[0] if n.args else (n.keywords[0].value if n.keywords else None)
                if expr is not None and any(isinstance(x, ast.Name) and x.id in active for x in ast.walk(expr)):
                    return True
            return any(walk(c, active) for c in ast.iter_child_nodes(n))

        return walk(loop, frozenset(outer))
