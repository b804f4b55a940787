"""A memo for kernel factories, keyed on the hashed arguments and the factory's name."""

from __future__ import annotations

import functools

_KERNELS: dict = {}


def memo_kernel(factory):
    @functools.wraps(factory)
    def lookup(*args):
        key = tuple(hash(tuple(a)) if isinstance(a, list) else hash(a) for a in args) + (hash(factory.__name__),)
        kernel = _KERNELS.get(key)
        if kernel is None:
            kernel = _KERNELS[key] = factory(*args)
        return kernel

    return lookup
