"""Import facts and the names a file binds (aliases of warp / os names, module-level constants)."""

from __future__ import annotations

import ast
from collections import defaultdict

from ..models.scan import ImportFact
from .common import _canon, _iter_stmts


class ImportsMixin:
    """Imports, aliases and constants of one file (part of the per-file visitor)."""

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = self.package.split(".") if self.package else []
        if level - 1 > len(base):
            return "." * level + (module or "")
        base = base[: len(base) - (level - 1)]
        if module:
            base.append(module)
        return ".".join(base)

    def _collect_aliases(self) -> None:
        m = self.names.map
        assigns: list[ast.Assign] = []
        for node in _iter_stmts(self.tree.body):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports_warp |= a.name == "warp" or a.name.startswith("warp.")
                    if a.asname:
                        m[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        m[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module, node.level)
                self.imports_warp |= node.level == 0 and (base == "warp" or base.startswith("warp."))
                for a in node.names:
                    if a.name == "*":
                        if base == "warp":
                            self.names.warp_star = True
                        continue
                    m[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Name, ast.Attribute))
            ):
                assigns.append(node)
        # `cfg = wp.config`, `env = os.environ`, `launch = wp.launch`: plain aliases of warp / os names
        for node in assigns:
            q = _canon(self.names.qual(node.value))
            name = node.targets[0].id
            if q and (q.startswith("warp.") or q in ("warp", "os.environ")) and name not in m:
                m[name] = q

    def _collect_constants(self) -> None:
        seen: dict[str, int] = defaultdict(int)
        values: dict[str, ast.AST] = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                name, value = node.target.id, node.value
            else:
                continue
            seen[name] += 1
            values[name] = value
        for name, value in values.items():
            if seen[name] != 1:
                continue
            if isinstance(value, ast.Call) and self._api(value.func) == "constant" and value.args:
                value = value.args[0]
            if isinstance(value, ast.Constant):
                if isinstance(value.value, bool):
                    continue
                if isinstance(value.value, int):
                    self.int_consts[name] = value.value
                elif isinstance(value.value, str):
                    self.str_consts[name] = value.value

    # ---- imports -----------------------------------------------------------------------------------------------

    def _import_fact(self, node: ast.AST, module: str, names: list[str], level: int = 0) -> None:
        self.imports.append(
            ImportFact(
                **self._where(node),
                module=module,
                names=names,
                level=level,
                project_module=self.project.resolve(module, self.rel),
                type_checking=self.type_checking > 0,
                source_line=self._source_line(getattr(node, "lineno", 0)),
            )
        )

    def _source_line(self, line: int) -> str | None:
        """The physical line `line` of the file as text (what a fix quotes)."""
        if not 0 < line <= len(self.source_lines):
            return None
        return self.source_lines[line - 1].decode("utf-8", errors="replace")

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name == "warp" or a.name.startswith("warp."):
                self.imports_warp = True
            self._import_fact(node, a.name, [a.asname or a.name.split(".")[0]])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module, node.level)
        if node.level == 0 and (base == "warp" or base.startswith("warp.")):
            self.imports_warp = True
        plain: list[str] = []
        for a in node.names:
            sub = f"{base}.{a.name}" if base else a.name
            if a.name != "*" and self.project.resolve(sub, self.rel) is not None:
                self._import_fact(node, sub, [a.asname or a.name], node.level)
            else:
                plain.append(a.asname or a.name)
        if plain:
            self._import_fact(node, base, plain, node.level)
