"""A scene of environments with rigid bodies first and an articulation added later."""

from __future__ import annotations

import numpy as np
import warp as wp

from . import bodies

DEVICE = "cpu"


class Scene:
    def __init__(self, num_envs: int, seed: int):
        self.num_envs = num_envs
        self.rng = np.random.default_rng(seed)
        self.body_mass = wp.zeros(num_envs, dtype=float, device=DEVICE)
        self.joint_pos = None

    def randomize_masses(self, id_dtype) -> None:
        ids = self.rng.permutation(self.num_envs)[: self.num_envs // 2].astype(id_dtype)
        bodies.write_masses(self.body_mass, self.rng.uniform(0.5, 2.0, ids.shape[0]).astype(np.float32), ids)

    def add_articulation(self, num_joints: int) -> None:
        from . import joints  # the articulation support is loaded when the first articulation appears

        self._joints = joints
        self.joint_pos = wp.zeros((self.num_envs, num_joints), dtype=float, device=DEVICE)

    def reset_joints(self, env_dtype, joint_dtype) -> None:
        n = self.joint_pos.shape[1]
        env_ids = self.rng.permutation(self.num_envs)[: self.num_envs // 4].astype(env_dtype)
        joint_ids = np.arange(0, n, 2).astype(joint_dtype)
        values = self.rng.uniform(-1.0, 1.0, (env_ids.shape[0], joint_ids.shape[0])).astype(np.float32)
        self._joints.write_positions(self.joint_pos, values, env_ids, joint_ids)
        offsets = np.linspace(0.0, 0.5, joint_ids.shape[0]).astype(np.float32)
        self._joints.add_offsets(self.joint_pos, offsets, env_ids, joint_ids)
