"""Reset worlds to their initial state, all of them or the ones selected by a mask."""

from __future__ import annotations

import warp as wp

DEVICE = "cpu"


def reset(model, data, mask=None) -> None:
    masked = mask is not None

    @wp.kernel(module="unique", enable_backward=False)
    def clear_forces(mask: wp.array(dtype=bool), force: wp.array2d(dtype=float)):
        w, b = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        force[w, b] = 0.0

    @wp.kernel(module="unique", enable_backward=False)
    def restore_positions(mask: wp.array(dtype=bool), qpos0: wp.array2d(dtype=float), qpos: wp.array2d(dtype=float)):
        w, b = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        qpos[w, b] = qpos0[w, b]

    @wp.kernel(module="unique", enable_backward=False)
    def zero_velocities(mask: wp.array(dtype=bool), qvel: wp.array2d(dtype=float)):
        w, b = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        qvel[w, b] = 0.0

    @wp.kernel(module="unique", enable_backward=False)
    def reset_counters(mask: wp.array(dtype=bool), time: wp.array(dtype=float), nstep: wp.array(dtype=int)):
        w = wp.tid()
        if wp.static(masked):
            if not mask[w]:
                return
        time[w] = 0.0
        nstep[w] = 0

    shape = (model.nworld, model.nbody)
    wp.launch(clear_forces, dim=shape, inputs=[mask, data.force], device=DEVICE)
    wp.launch(restore_positions, dim=shape, inputs=[mask, model.qpos0, data.qpos], device=DEVICE)
    wp.launch(zero_velocities, dim=shape, inputs=[mask, data.qvel], device=DEVICE)
    wp.launch(reset_counters, dim=model.nworld, inputs=[mask, data.time, data.nstep], device=DEVICE)
