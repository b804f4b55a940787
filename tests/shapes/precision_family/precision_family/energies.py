"""Stretch energies of edges and triangles, one generic kernel per (coordinate dim, simplex dim)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import warp as wp


def _renamed(fn, name: str):
    """Give a specialised closure a stable, readable kernel name before decorating it."""
    fn.__name__ = name
    fn.__qualname__ = name
    return wp.kernel(fn)


def make_stretch(coord_dim: int, simplex_dim: int):
    def stretch(
        points: wp.array2d(dtype=Any),
        simplices: wp.array2d(dtype=wp.int32),
        rest: wp.array(dtype=Any),
        stiffness: Any,
        out: wp.array(dtype=Any),
    ):
        s = wp.tid()
        a = simplices[s, 0]
        b = simplices[s, 1]
        zero = rest.dtype(0.0)
        half = rest.dtype(0.5)
        measure = zero
        if wp.static(simplex_dim == 1):
            for d in range(wp.static(coord_dim)):
                e = points[b, d] - points[a, d]
                measure += e * e
            measure = wp.sqrt(measure)
        else:
            c = simplices[s, 2]
            # area from the Gram determinant of the two edge vectors
            uu = zero
            vv = zero
            uv = zero
            for d in range(wp.static(coord_dim)):
                u = points[b, d] - points[a, d]
                v = points[c, d] - points[a, d]
                uu += u * u
                vv += v * v
                uv += u * v
            measure = half * wp.sqrt(wp.max(uu * vv - uv * uv, zero))
        strain = measure / rest[s] - rest.dtype(1.0)
        out[s] = half * stiffness * rest[s] * strain * strain

    return _renamed(stretch, f"stretch_c{coord_dim}_s{simplex_dim}")


BASE = {(c, s): make_stretch(c, s) for c in (2, 3) for s in (1, 2)}


@functools.cache
def family(dtype):
    """Register the `dtype` instance of every kernel of the family."""
    out = {}
    for dims, kernel in BASE.items():
        out[dims] = wp.overload(
            kernel,
            {
                "points": wp.array2d(dtype=dtype),
                "simplices": wp.array2d(dtype=wp.int32),
                "rest": wp.array(dtype=dtype),
                "stiffness": dtype,
                "out": wp.array(dtype=dtype),
            },
        )
    return out


STRETCH_F32 = family(wp.float32)

_BY_NUMPY = {np.dtype(np.float32): wp.float32, np.dtype(np.float64): wp.float64}


def kernels_for(np_dtype) -> dict:
    return family(_BY_NUMPY[np.dtype(np_dtype)])
