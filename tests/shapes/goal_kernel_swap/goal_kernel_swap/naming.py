"""Helpers that give closure kernels readable names which change with their constants."""

from __future__ import annotations

import warp as wp


def named_kernel(name: str, **options):
    def wrap(fn):
        fn.__name__ = name
        fn.__qualname__ = name
        return wp.kernel(fn, module="unique", **options)

    return wrap
