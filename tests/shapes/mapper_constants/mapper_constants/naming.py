"""Kernel names that change whenever the compile-time constants they close over change."""

from __future__ import annotations

import hashlib

import warp as wp


def constant_suffix(*values) -> str:
    return hashlib.sha1(repr(values).encode("utf-8")).hexdigest()[:12]


def named_kernel(name: str, **options):
    def wrap(fn):
        fn.__name__ = name
        fn.__qualname__ = name
        return wp.kernel(fn, module="unique", **options)

    return wrap
