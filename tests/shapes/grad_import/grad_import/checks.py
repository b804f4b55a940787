"""Gradient checks: each imports its custom function when it runs and defines its kernel there."""

from __future__ import annotations

import numpy as np
import warp as wp

DEVICE = "cpu"


@wp.kernel
def prepare_inputs(raw: wp.array(dtype=float), scale: float, xs: wp.array(dtype=float)):
    i = wp.tid()
    xs[i] = scale * raw[i] + 0.25


@wp.kernel
def weighted_loss(ys: wp.array(dtype=float), weights: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, weights[i] * ys[i])


def _run_tape(kernel, xs, weights, param: float):
    n = xs.shape[0]
    ys = wp.zeros(n, dtype=float, device=DEVICE, requires_grad=True)
    loss = wp.zeros(1, dtype=float, device=DEVICE, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=n, inputs=[xs, param], outputs=[ys], device=DEVICE)
        wp.launch(weighted_loss, dim=n, inputs=[ys, weights], outputs=[loss], device=DEVICE)
    tape.backward(loss=loss)
    g = xs.grad.numpy().astype(np.float64)
    result = (float(loss.numpy()[0]), float(g.sum()), float(np.abs(g).max()))
    tape.zero()
    return result


def check_clip_grad(xs, weights):
    from .customs import soft_clip

    @wp.kernel
    def call_clip(xs: wp.array(dtype=float), k: float, ys: wp.array(dtype=float)):
        i = wp.tid()
        ys[i] = soft_clip(xs[i], k)

    return _run_tape(call_clip, xs, weights, 1.5)


def check_softabs_grad(xs, weights):
    from .customs import smooth_abs

    @wp.kernel
    def call_softabs(xs: wp.array(dtype=float), eps: float, ys: wp.array(dtype=float)):
        i = wp.tid()
        ys[i] = smooth_abs(xs[i], eps)

    return _run_tape(call_softabs, xs, weights, 0.01)


def run_rounds(count: int, rounds: int, seed: int):
    rng = np.random.default_rng(seed)
    raw = wp.array(rng.normal(size=count).astype(np.float32), dtype=float, device=DEVICE)
    weights = wp.array(rng.uniform(0.0, 1.0, size=count).astype(np.float32), dtype=float, device=DEVICE)
    clip = softabs = None
    for r in range(rounds):
        xs = wp.zeros(count, dtype=float, device=DEVICE, requires_grad=True)
        wp.launch(prepare_inputs, dim=count, inputs=[raw, 1.0 + 0.5 * r], outputs=[xs], device=DEVICE)
        clip = check_clip_grad(xs, weights)
        softabs = check_softabs_grad(xs, weights)
    return clip, softabs
