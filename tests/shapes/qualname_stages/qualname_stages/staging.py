"""A kernel decorator that files each nested kernel under the function that defines it."""

from __future__ import annotations

import warp as wp


def _enclosing_module_name(fn) -> str:
    outer = [part for part in fn.__qualname__.split(".") if part != "<locals>"][:-1]
    return ".".join([fn.__module__, *outer])


def stage_kernel(fn=None, *, enable_backward=None, module=None):
    """`@stage_kernel` or `@stage_kernel(module=...)`: like `wp.kernel`, but the default module is one Warp
    module per enclosing Python function (`pkg.file.function`) instead of one per file."""

    def decorate(f):
        target = module if module is not None else wp.get_module(_enclosing_module_name(f))
        return wp.kernel(f, enable_backward=enable_backward, module=target)

    if fn is None:
        return decorate
    return decorate(fn)
