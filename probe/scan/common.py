"""Shared pieces of the static scan: the names it knows, source-text helpers and the visitor's scope records."""

from __future__ import annotations

import ast
import keyword
import re
from collections import defaultdict
from dataclasses import dataclass, field

SKIP_DIRS = frozenset({"__pycache__", "site-packages", "build", "dist", "node_modules"})
# Settings collected in ScanFacts.settings (plus every enable_mathdx_* name).
SETTING_NAMES = frozenset(
    {
        "use_precompiled_headers",
        "enable_backward",
        "max_unroll",
        "load_module_max_workers",
        "mode",
        "fast_math",
        "block_dim",
        "lineinfo",
        "optimization_level",
        "verify_fp",
        "fuse_fp",
        "deterministic",
        "compile_time_trace",
        "cuda_output",
    }
)
_TEXT_MAX = 300
_WARP_INTERNAL = frozenset({"_src", "context", "types", "tape", "utils", "builtins", "codegen", "build"})
_WARP_STAR = frozenset(
    {
        "launch",
        "launch_tiled",
        "kernel",
        "func",
        "overload",
        "config",
        "set_module_options",
        "get_module",
        "force_load",
        "load_module",
        "clear_kernel_cache",
        "clear_lto_cache",
        "Tape",
        "static",
        "constant",
        "Int",
        "Float",
        "Scalar",
    }
)
_GENERIC = frozenset(
    {"Any", "typing.Any", "typing_extensions.Any", "warp.Any", "warp.Int", "warp.Float", "warp.Scalar"}
)
_TEMP_FUNCS = frozenset(
    {
        "tempfile.mkdtemp",
        "tempfile.TemporaryDirectory",
        "tempfile.gettempdir",
        "tempfile.gettempdirb",
        "tempfile.mkstemp",
        "tempfile.NamedTemporaryFile",
    }
)
_TEMP_NAMES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory"})
_TEMP_PREFIXES = ("/tmp", "/var/tmp", "/dev/shm")
_STAMP_FUNCS = frozenset(
    {
        "time.time",
        "time.time_ns",
        "time.strftime",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.localtime",
        "time.gmtime",
        "time.ctime",
        "os.getpid",
        "os.urandom",
    }
)
_STAMP_MODULES = ("uuid.", "secrets.", "random.")
_STAMP_ATTRS = frozenset({"strftime", "isoformat", "now", "utcnow", "today", "timestamp", "getpid"})
_ENV_KEYS = frozenset({"WARP_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH"})
_FORCE_LOAD_ARGS = ("device", "modules", "block_dim", "max_workers")
_LOAD_MODULE_ARGS = ("module", "device", "recursive", "block_dim", "max_workers")
_CALL_RE = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_KEYWORDS = frozenset(k.encode() for k in keyword.kwlist)
_UNKNOWN = object()  # a binding whose value is not a plain expression (parameter, loop target, tuple unpacking)
# Calls whose result is fixed when their arguments are (for the factory-argument check).
_PURE_CALLS = frozenset(
    "float int str bool complex tuple list dict set frozenset range len min max abs round pow sum sorted reversed "
    "enumerate zip".split()
)
# Names whose value comes from outside the source: an argument read from them varies from run to run.
_RUNTIME_NAMES = ("sys.argv", "sys.stdin", "os.environ", "os.getenv", "os.environ.get", "input", "open")


@dataclass
class _LoopEntry:
    """A for loop (or comprehension) being visited: its target names and whether it iterates a constant sequence."""

    targets: set[str]
    iter_node: ast.AST | None  # what it iterates (None: a while loop, never constant)
    line: int
    frame: object  # the innermost function frame it runs in (None: module scope)
    loop_line: int | None = None  # line of its LoopFact (a constant-range loop in a kernel body)
    fixed: bool | None = None  # whether iter_node is fixed by the source; worked out when first asked


@dataclass
class _CallSite:
    """A call that may be of a kernel factory; resolved against the project's factories after every file is read."""

    name: str  # last identifier of the callee
    qual: str  # the callee as a dotted name (imports resolved), e.g. "pkg.kernels.make"
    local: bool  # a bare name or self./cls. attribute: may name a def of the same file
    where: dict
    callee: str
    args: list[str]
    runtime_args: list[str]
    in_loop: bool
    decorator: bool


def _text(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        s = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop the scan
        s = "<?>"
    return s if len(s) <= _TEXT_MAX else s[: _TEXT_MAX - 1] + "…"


def _canon(q: str | None) -> str | None:
    """`warp._src.context.launch` -> `warp.launch`; other dotted names unchanged."""
    if q is None or not (q == "warp" or q.startswith("warp.")):
        return q
    parts = q.split(".")
    keep = [parts[0]] + [p for i, p in enumerate(parts[1:], 1) if not (p in _WARP_INTERNAL and i < len(parts) - 1)]
    return ".".join(keep)


def last_ident(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _trivial(body: list[ast.stmt]) -> bool:
    return all(
        isinstance(s, (ast.Pass, ast.Continue)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in body
    )


def _is_main_guard(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        _const_str(s) == "__main__" for s in sides
    )


def _is_setting(name: str) -> bool:
    return name in SETTING_NAMES or name.startswith("enable_mathdx")


@dataclass
class _Frame:
    kind: str  # "module" | "class" | "function"
    name: str
    qualname: str
    node: ast.AST | None = None
    assigns: dict[str, list[tuple[int, object]]] = field(default_factory=lambda: defaultdict(list))
    warp_kind: str | None = None  # "kernel" | "func" when this def is a Warp kernel / function
    atexit: bool = False


class _Names:
    """Name -> fully qualified dotted name, from the file's imports (and `cfg = wp.config`-style aliases)."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.warp_star = False

    def qual(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.map.get(node.id)
        if root is None:
            if self.warp_star and (node.id in _WARP_STAR or node.id.startswith("tile")):
                root = "warp." + node.id
            else:
                root = node.id
        return ".".join([root, *reversed(parts)])


@dataclass
class _RmtreeCandidate:
    where: dict
    arg: ast.AST
    atexit: bool
    reach_text: str
    reach_names: set[str]


def _iter_stmts(body: list[ast.stmt]):
    """Every statement, nested ones included (imports and assignments are statements: no need to walk expressions)."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            part = getattr(node, name, None)
            if isinstance(part, list):
                yield from _iter_stmts(part)
        for sub in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
            yield from _iter_stmts(sub.body)
