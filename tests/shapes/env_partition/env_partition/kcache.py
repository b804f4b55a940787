"""A kernel cache keyed on (module, qualified name, suffix, options): one small module per entry."""

from __future__ import annotations

import hashlib

import warp as wp

_SPECIALIZED: dict = {}


def _entry_name(fn, suffix: str) -> str:
    digest = hashlib.blake2b(f"{fn.__qualname__}/{suffix}".encode(), digest_size=4).hexdigest()
    return f"{fn.__name__}_{suffix}_{digest}"


def specialized_kernel(suffix: str, kernel_options: dict | None = None):
    """Decorator: return the cached kernel for (function, suffix); create it in `<module>.dyn.<name>` once."""
    options = dict(kernel_options or {})

    def wrap(fn):
        key = (fn.__module__, fn.__qualname__, suffix, tuple(sorted(options.items())))
        kernel = _SPECIALIZED.get(key)
        if kernel is None:
            name = _entry_name(fn, suffix)
            mod = wp.get_module(f"{fn.__module__}.dyn.{name}")
            mod.options = wp.get_module(fn.__module__).options | options
            kernel = wp.Kernel(func=fn, key=name, module=mod)
            _SPECIALIZED[key] = kernel
        return kernel

    return wrap
