"""Cache facts: what defeats kernel-cache reuse (cache dirs, clears, unloads, rmtree of a cache dir)."""

from __future__ import annotations

import ast

from ..models.scan import CacheOp
from .common import (
    _ENV_KEYS,
    _STAMP_ATTRS,
    _STAMP_FUNCS,
    _STAMP_MODULES,
    _TEMP_FUNCS,
    _TEMP_NAMES,
    _TEMP_PREFIXES,
    _const_str,
    _RmtreeCandidate,
    _text,
)


class CachesMixin:
    """Cache directories, environment variables and removals of one file (part of the per-file visitor)."""

    def _taint(self, node: ast.AST, line: int, depth: int = 0) -> tuple[bool, bool, list[str], set[str]]:
        """(temporary, timestamped, texts, names) of an expression, following local variables a few steps."""
        temp = stamp = False
        texts = [_text(node)]
        names: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                q = self._q(n.func) or ""
                last = q.rsplit(".", 1)[-1]
                if q in _TEMP_FUNCS:
                    temp = True
                if (
                    q in _STAMP_FUNCS
                    or q.startswith(_STAMP_MODULES)
                    or (isinstance(n.func, ast.Attribute) and last in _STAMP_ATTRS)
                    or q.endswith((".datetime.now", ".datetime.utcnow", ".date.today"))
                ):
                    stamp = True
            elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith(_TEMP_PREFIXES):
                temp = True
            elif isinstance(n, ast.Name):
                names.add(n.id)
                if n.id in _TEMP_NAMES:
                    temp = True
                if depth < 4:
                    v = self._expr_of(n.id, line)
                    if v is not None and v is not node:
                        t2, s2, x2, n2 = self._taint(v, getattr(v, "lineno", line), depth + 1)
                        temp, stamp = temp or t2, stamp or s2
                        texts += x2
                        names |= n2
        return temp, stamp, texts, names

    def _cache_dir(self, w: dict, value: ast.AST, node: ast.AST, api: str, via: str, kind: str) -> None:
        temp, stamp, _texts, names = self._taint(value, getattr(node, "lineno", 0))
        self.cache_dir_names |= names
        self.cache_ops.append(
            CacheOp(**w, kind=kind, api=api, value=_text(value), via=via, temporary=temp, timestamped=stamp)
        )

    def _env_set(self, key: str, value: ast.AST | None, node: ast.AST, via: str, api: str) -> None:
        w = self._where(node)
        if key == "WARP_CACHE_PATH" and value is not None:
            self._cache_dir(w, value, node, api, via, "kernel_cache_dir")
        elif key == "CUDA_CACHE_PATH" and value is not None:
            self._cache_dir(w, value, node, api, via, "cuda_cache_path")
        elif key == "CUDA_CACHE_DISABLE":
            self.cache_ops.append(
                CacheOp(**w, kind="cuda_cache_disable", api=api, value=_text(value) if value else None, via=via)
            )

    def visit_Dict(self, node: ast.Dict) -> None:
        if id(node) not in self.handled:
            for k, v in zip(node.keys, node.values, strict=False):
                key = _const_str(k)
                if key in _ENV_KEYS:
                    self._env_set(key, v, node, "env_dict", _text(k))
        self.generic_visit(node)

    def _other_call(self, node: ast.Call, fq: str | None) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and "setattr" not in self.names.map:
            if len(node.args) >= 3 and self._is_warp_config(node.args[0]) and _const_str(node.args[1]):
                self._config_set(_const_str(node.args[1]), node.args[2], node, _text(func), "setattr")
            return
        if fq == "shutil.rmtree" and node.args:
            self._rmtree(node, node.args[0], self._in_atexit())
        elif fq == "weakref.finalize" and len(node.args) >= 3 and self._q(node.args[1]) == "shutil.rmtree":
            self._rmtree(node, node.args[2], True)
        elif len(node.args) >= 2 and self._q(node.args[0]) == "shutil.rmtree":  # atexit.register / partial
            self._rmtree(node, node.args[1], fq == "atexit.register" or self._in_atexit())
        if fq in ("os.environ.setdefault", "os.putenv") or (isinstance(func, ast.Attribute) and func.attr == "setenv"):
            key = _const_str(node.args[0]) if node.args else None
            if key in _ENV_KEYS:
                self._env_set(key, node.args[1] if len(node.args) > 1 else None, node, "env", _text(func))
            return
        if not isinstance(func, ast.Attribute):
            return
        if func.attr == "update":
            if self._q(func.value) == "os.environ":
                for a in node.args:
                    if isinstance(a, ast.Dict):
                        self.handled.add(id(a))
                        for k, v in zip(a.keys, a.values, strict=False):
                            if _const_str(k) in _ENV_KEYS:
                                self._env_set(_const_str(k), v, node, "env", _text(func))
                for kw in node.keywords:
                    if kw.arg in _ENV_KEYS:
                        self._env_set(kw.arg, kw.value, node, "env", _text(func))
            elif isinstance(func.value, ast.Attribute) and func.value.attr == "options":
                gm = self._get_module_target(func.value.value, node.lineno)
                if gm is not None:
                    options, rest = self._dict_of(node.args[0], node.lineno) if node.args else ({}, None)
                    options.update({kw.arg: _text(kw.value) for kw in node.keywords if kw.arg})
                    for a in node.args:
                        self.handled.add(id(a))
                    self._module_options_fact(node, "get_module_options", options, rest, gm)
        elif func.attr == "unload":
            gm = self._get_module_target(func.value, node.lineno)
            if gm is not None or self.imports_warp:
                self.cache_ops.append(
                    CacheOp(
                        **self._where(node),
                        kind="unload",
                        api=_text(func),
                        value=_text(func.value),
                        target=gm[0] if gm and gm[1] else None,
                        via="call",
                        certain=gm is not None,
                    )
                )
        elif func.attr == "backward":
            self.backward_calls.append((_text(func.value), self._where(node)))

    def _rmtree(self, node: ast.Call, arg: ast.AST, atexit: bool) -> None:
        _t, _s, texts, names = self._taint(arg, node.lineno)
        self.rmtree.append(_RmtreeCandidate(self._where(node), arg, atexit, " ".join(texts), names))
