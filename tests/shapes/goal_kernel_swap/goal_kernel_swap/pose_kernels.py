"""Pose distance kernels, one per (goal-set size, rotation method)."""

import warp as wp

from .naming import named_kernel

METHODS = ("quat_dot", "axis_angle")


def build_pose_kernel(num_goals: int, method: str):
    GOALS = num_goals
    AXIS_ANGLE = method == "axis_angle"

    @named_kernel(f"pose_dist_{num_goals}_{method}", enable_backward=False)
    def pose_distance(
        pos: wp.array(dtype=wp.vec3),
        rot: wp.array(dtype=wp.quat),
        goal_pos: wp.array(dtype=wp.vec3),
        goal_rot: wp.array(dtype=wp.quat),
        weight: wp.vec2,
        out_cost: wp.array(dtype=float),
        out_goal: wp.array(dtype=int),
    ):
        i = wp.tid()
        best = float(1.0e30)  # noqa: UP018 (a mutable warp variable)
        best_g = int(-1)  # noqa: UP018 (a mutable warp variable)
        for g in range(GOALS):
            dp = wp.length(pos[i] - goal_pos[g])
            d = wp.abs(wp.dot(rot[i], goal_rot[g]))
            if wp.static(AXIS_ANGLE):
                dr = 2.0 * wp.acos(wp.min(d, 1.0))
            else:
                dr = 1.0 - d
            c = weight[0] * dp + weight[1] * dr
            if c < best:
                best = c
                best_g = g
        out_cost[i] = best
        out_goal[i] = best_g

    return pose_distance
