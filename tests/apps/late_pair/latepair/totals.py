"""A generic reduction, instantiated per argument type when launched (CS-6 when a type arrives late)."""

from typing import Any

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def weighted_sum(values: wp.array(dtype=Any), weights: wp.array(dtype=Any), total: wp.array(dtype=Any)):
    i = wp.tid()
    v = values[i]
    w = weights[i]
    acc = v * w
    for k in range(12):
        acc = acc + wp.sin(acc * v) * wp.cos(w + acc) * values.dtype(0.001) + wp.tanh(acc - w) * values.dtype(0.0001)
    wp.atomic_add(total, 0, acc)


def accumulate(values: wp.array, weights: wp.array) -> float:
    total = wp.zeros(1, dtype=values.dtype, device=values.device)
    wp.launch(weighted_sum, dim=values.shape[0], inputs=[values, weights, total], device=values.device)
    return float(total.numpy()[0])
