"""A tool-pose cost that keeps a kernel specialised on the current goal set."""

from __future__ import annotations

import numpy as np
import warp as wp

from .pose_kernels import build_pose_kernel

DEVICE = "cpu"


@wp.kernel
def forward_kinematics(
    angles: wp.array2d(dtype=float), link: float, pos: wp.array(dtype=wp.vec3), rot: wp.array(dtype=wp.quat)
):
    i = wp.tid()
    a0 = angles[i, 0]
    a1 = angles[i, 1]
    a2 = angles[i, 2]
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), a0) * wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), a1)
    p = wp.quat_rotate(q, wp.vec3(link, 0.0, 0.0))
    q = q * wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), a2)
    pos[i] = p + wp.quat_rotate(q, wp.vec3(link, 0.0, 0.0))
    rot[i] = q


class PoseCost:
    def __init__(self, method: str, weight=(1.0, 0.5)):
        self.method = method
        self.weight = wp.vec2(*weight)
        self._consts = None
        self._kernel = None

    def forward(self, angles: np.ndarray, goal_pos: np.ndarray, goal_rot: np.ndarray):
        consts = (goal_pos.shape[0], self.method)
        if consts != self._consts:
            self._consts = consts
            self._kernel = build_pose_kernel(*consts)
        n = angles.shape[0]
        a = wp.array(angles.astype(np.float32), dtype=float, device=DEVICE)
        pos = wp.zeros(n, dtype=wp.vec3, device=DEVICE)
        rot = wp.zeros(n, dtype=wp.quat, device=DEVICE)
        wp.launch(forward_kinematics, dim=n, inputs=[a, 0.5, pos, rot], device=DEVICE)
        gp = wp.array(goal_pos.astype(np.float32), dtype=wp.vec3, device=DEVICE)
        gr = wp.array(goal_rot.astype(np.float32), dtype=wp.quat, device=DEVICE)
        cost = wp.zeros(n, dtype=float, device=DEVICE)
        goal = wp.zeros(n, dtype=int, device=DEVICE)
        wp.launch(self._kernel, dim=n, inputs=[pos, rot, gp, gr, self.weight], outputs=[cost, goal], device=DEVICE)
        return cost.numpy(), goal.numpy()
