"""Option facts: wp.config assignments, module options, and load calls (force_load / load_module)."""

from __future__ import annotations

import ast

from ..models.scan import (
    CREATION_OPTIONS,
    CacheOp,
    ConfigSetFact,
    LoadCallFact,
    ModuleOptionsFact,
    SettingFact,
)
from .common import _FORCE_LOAD_ARGS, _LOAD_MODULE_ARGS, _const_str, _is_setting, _text


class OptionsMixin:
    """wp.config / module options / load calls of one file (part of the per-file visitor)."""

    def _dict_of(self, node: ast.AST | None, line: int, depth: int = 0) -> tuple[dict[str, str], str | None]:
        if node is None:
            return {}, None
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if isinstance(v, (ast.Dict, ast.Call)):
                return self._dict_of(v, getattr(v, "lineno", line), depth + 1)
        if isinstance(node, ast.Dict):
            out: dict[str, str] = {}
            rest = None
            for k, v in zip(node.keys, node.values, strict=False):
                if k is None:
                    rest = _text(node)
                    continue
                out[_const_str(k) if _const_str(k) is not None else _text(k)] = _text(v)
            return out, rest
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            out = {kw.arg: _text(kw.value) for kw in node.keywords if kw.arg}
            return out, (_text(node) if node.args or any(kw.arg is None for kw in node.keywords) else None)
        return {}, _text(node)

    def _get_module_target(self, node: ast.AST, line: int, depth: int = 0) -> tuple[str | None, bool] | None:
        """If `node` is a Warp Module (wp.get_module(...), a name bound to one, k.module): (target, resolved)."""
        if isinstance(node, ast.Call) and self._api(node.func) == "get_module":
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if arg is None:
                return None, False
            if _const_str(arg) is not None:
                return _const_str(arg), True
            if isinstance(arg, ast.Name) and arg.id == "__name__":
                return self.modname, True
            if isinstance(arg, ast.Name) and arg.id in self.str_consts:
                return self.str_consts[arg.id], True
            return _text(arg), False
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if v is not None:
                return self._get_module_target(v, getattr(v, "lineno", line), depth + 1)
        if isinstance(node, ast.Attribute) and node.attr == "module" and self.imports_warp:
            return _text(node), False
        return None

    def _config_set(self, name: str, value: ast.AST, node: ast.AST, api: str, via: str) -> None:
        w = self._where(node)
        text = _text(value)
        self.config_sets.append(
            ConfigSetFact(**w, name=name, value=text, copied_at_module_creation=name in CREATION_OPTIONS)
        )
        if _is_setting(name):
            self.settings.append(SettingFact(**w, name=name, value=text, via="config"))
        if name == "cache_kernels" and isinstance(value, ast.Constant) and value.value in (False, 0):
            self.cache_ops.append(CacheOp(**w, kind="cache_kernels_false", api=api, value=text, via=via))
        elif name == "kernel_cache_dir":
            self._cache_dir(w, value, node, api, via, "kernel_cache_dir")

    def _module_options_fact(
        self,
        node: ast.AST,
        api: str,
        options: dict[str, str],
        options_text: str | None,
        target: tuple[str | None, bool],
        module_arg: str | None = None,
        is_get_module: bool = False,
    ) -> None:
        w = self._where(node)
        self.module_options.append(
            ModuleOptionsFact(
                **w,
                api=api,
                options=options,
                options_text=options_text,
                module_arg=module_arg,
                module_arg_is_get_module=is_get_module,
                target=target[0],
                target_resolved=target[1],
            )
        )
        for k, v in options.items():
            if _is_setting(k):
                self.settings.append(SettingFact(**w, name=k, value=v, via="module_options", target=target[0]))

    def _set_module_options(self, node: ast.Call) -> None:
        opts = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "options"), None)
        mod = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "module"), None)
        options, rest = self._dict_of(opts, node.lineno)
        if opts is not None:
            self.handled.add(id(opts))
        if mod is None:
            target: tuple[str | None, bool] = (self.modname, True)
            is_gm = False
        else:
            target, is_gm = self._python_module_target(mod, node.lineno)
        self._module_options_fact(
            node, "set_module_options", options, rest, target, _text(mod) if mod is not None else None, is_gm
        )

    def _python_module_target(self, mod: ast.AST, line: int, depth: int = 0) -> tuple[tuple[str | None, bool], bool]:
        """set_module_options(module=...): ((target, resolved), passed a wp.get_module(...) instead)."""
        name = _const_str(mod)
        if name is not None:  # module="pkg.name": Warp looks the module up by that name (1.10.1 rejects a string)
            return (name, True), False
        if isinstance(mod, ast.Call):
            gm = self._get_module_target(mod, line)
            if gm is not None:
                return gm, True
            if self._q(mod.func) == "importlib.import_module" and _const_str(mod.args[0] if mod.args else None):
                name = _const_str(mod.args[0])
                return (self.project.resolve(name, self.rel) or name, True), False
        if isinstance(mod, ast.Subscript) and self._q(mod.value) == "sys.modules":
            if isinstance(mod.slice, ast.Name) and mod.slice.id == "__name__":
                return (self.modname, True), False
            name = _const_str(mod.slice)
            if name:
                return (self.project.resolve(name, self.rel) or name, True), False
        root = mod
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.names.map:
            q = self._q(mod)
            resolved = self.project.resolve(q, self.rel) if q else None
            if resolved:
                return (resolved, True), False
        if isinstance(mod, ast.Name) and depth < 3:
            v = self._expr_of(mod.id, line)
            if v is not None:
                return self._python_module_target(v, getattr(v, "lineno", line), depth + 1)
        return (_text(mod), False), False

    def _load_call(self, node: ast.Call, api: str) -> None:
        args = self._call_args(node, _FORCE_LOAD_ARGS if api == "force_load" else _LOAD_MODULE_ARGS)
        mods = args.get("modules" if api == "force_load" else "module")
        mw = args.get("max_workers")
        max_workers: int | str | None = None
        if mw is not None:
            is_int = isinstance(mw, ast.Constant) and isinstance(mw.value, int) and not isinstance(mw.value, bool)
            max_workers = mw.value if is_int else _text(mw)
        device = args.get("device")
        self.load_calls.append(
            LoadCallFact(
                **self._where(node),
                api=api,
                modules_none=api == "force_load"
                and (mods is None or (isinstance(mods, ast.Constant) and mods.value is None)),
                modules=_text(mods) if mods is not None else None,
                modules_list=[_text(e) for e in mods.elts] if isinstance(mods, (ast.List, ast.Tuple)) else None,
                max_workers=max_workers,
                device=_text(device) if device is not None else None,
                cpu_possible=self._cpu_possible(device, node.lineno),
                block_dim=_text(args["block_dim"]) if "block_dim" in args else None,
                recursive=_text(args["recursive"]) if "recursive" in args else None,
                swallowed=self.swallow > 0,
                kwargs={k.arg: _text(k.value) for k in node.keywords if k.arg},
            )
        )

    def _cpu_possible(self, node: ast.AST | None, line: int, depth: int = 0) -> bool:
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return True
        s = _const_str(node)
        if s is not None:
            return not s.startswith("cuda")
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return any(self._cpu_possible(e, line, depth + 1) for e in node.elts) if node.elts else True
        if isinstance(node, ast.Call):
            api = self._api(node.func)
            if api in ("get_cuda_device", "get_cuda_devices"):
                return False
            if api == "get_device" and node.args:
                return self._cpu_possible(node.args[0], line, depth + 1)
        if isinstance(node, ast.Name) and depth < 3:
            v = self._expr_of(node.id, line)
            if v is not None:
                return self._cpu_possible(v, getattr(v, "lineno", line), depth + 1)
        return True
