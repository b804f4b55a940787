"""Memoise kernel factories on hashed arguments (objects hash by identity unless they say otherwise)."""

from __future__ import annotations

import functools

_MEMO: dict = {}


def memo_kernel(factory):
    @functools.wraps(factory)
    def get(*args):
        key = (factory.__name__, *(hash(a) for a in args))
        if key not in _MEMO:
            _MEMO[key] = factory(*args)
        return _MEMO[key]

    return get
