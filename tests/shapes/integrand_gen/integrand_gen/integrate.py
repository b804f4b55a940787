"""Generate, cache and launch the integration kernel of an integrand for a value type."""

from __future__ import annotations

import ast

import numpy as np
import warp as wp

from .integrand import FieldReads, Integrand

DEVICE = "cpu"

_TEMPLATE = """\
def {key}({field_params}, h: {scalar}, out: wp.array2d(dtype={scalar})):
    i, j = wp.tid()
    sx = h * ({scalar}(i) + {scalar}(0.5))
    sy = h * ({scalar}(j) + {scalar}(0.5))
    out[i, j] = ({expr}) * h * h
"""

_SCALARS = {np.dtype(np.float32): "wp.float32", np.dtype(np.float64): "wp.float64"}


def integrand_kernel(itg: Integrand, np_dtype) -> wp.Kernel:
    scalar = _SCALARS[np.dtype(np_dtype)]
    cache_key = (scalar,)
    if cache_key in itg.cached_kernels:
        return itg.cached_kernels[cache_key]
    fields = [a for a in itg.args if a not in ("x", "y")]
    rewriter = FieldReads(fields, {"x": "sx", "y": "sy"}, scalar)
    expr = ast.unparse(ast.fix_missing_locations(rewriter.visit(itg.expression())))
    key = f"integrate_{itg.name}_{scalar.split('.')[-1]}"
    params = ", ".join(f"{f}_values: wp.array2d(dtype={scalar})" for f in fields)
    source = _TEMPLATE.format(key=key, field_params=params, scalar=scalar, expr=expr)
    namespace = {"wp": wp}
    exec(compile(source, f"<integrand {key}>", "exec"), namespace)
    module = wp.get_module(f"{itg.module_name}.dyn.{key}")
    kernel = wp.Kernel(func=namespace[key], key=key, module=module, source=source)
    itg.cached_kernels[cache_key] = kernel
    return kernel


def integrate(itg: Integrand, fields: dict, np_dtype) -> float:
    kernel = integrand_kernel(itg, np_dtype)
    wdt = wp.float64 if np.dtype(np_dtype) == np.float64 else wp.float32
    names = [a for a in itg.args if a not in ("x", "y")]
    arrays = [wp.array(fields[n].astype(np_dtype), dtype=wdt, device=DEVICE) for n in names]
    n = arrays[0].shape[0]
    out = wp.zeros((n, n), dtype=wdt, device=DEVICE)
    wp.launch(kernel, dim=(n, n), inputs=[*arrays, wdt(1.0 / n)], outputs=[out], device=DEVICE)
    return float(out.numpy().astype(np.float64).sum())
