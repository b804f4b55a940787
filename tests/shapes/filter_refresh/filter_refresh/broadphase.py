"""Box broadphase: move the boxes, then count the overlapping pairs the filter accepts."""

import warp as wp

from .memo import memo_kernel

SKIP_SAME_GROUP = 1
SKIP_STATIC = 2


@wp.kernel
def move_boxes(
    center: wp.array(dtype=wp.vec3),
    vel: wp.array(dtype=wp.vec3),
    half: wp.array(dtype=wp.vec3),
    dt: float,
    extent: float,
    lower: wp.array(dtype=wp.vec3),
    upper: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    c = center[i] + vel[i] * dt
    v = vel[i]
    for k in range(3):
        if c[k] < 0.0 or c[k] > extent:
            v[k] = -v[k]
            c[k] = wp.clamp(c[k], 0.0, extent)
    center[i] = c
    vel[i] = v
    lower[i] = c - half[i]
    upper[i] = c + half[i]


def make_filter(mode: int):
    @wp.func
    def accept(group_a: int, group_b: int, static_a: int, static_b: int) -> bool:
        if wp.static(mode & SKIP_SAME_GROUP):
            if group_a == group_b:
                return False
        if wp.static(mode & SKIP_STATIC):
            if static_a != 0 and static_b != 0:
                return False
        return True

    return accept


@wp.func
def boxes_overlap(la: wp.vec3, ua: wp.vec3, lb: wp.vec3, ub: wp.vec3, margin: float) -> bool:
    for k in range(3):
        if la[k] > ub[k] + margin or lb[k] > ua[k] + margin:
            return False
    return True


@memo_kernel
def sweep_kernel(accept_fn):
    @wp.kernel(module="unique", enable_backward=False)
    def sweep(
        lower: wp.array(dtype=wp.vec3),
        upper: wp.array(dtype=wp.vec3),
        group: wp.array(dtype=int),
        is_static: wp.array(dtype=int),
        margin: float,
        count: wp.array(dtype=int),
    ):
        i, j = wp.tid()
        if j <= i:
            return
        if not boxes_overlap(lower[i], upper[i], lower[j], upper[j], margin):
            return
        if accept_fn(group[i], group[j], is_static[i], is_static[j]):
            wp.atomic_add(count, 0, 1)

    return sweep


@memo_kernel
def sweep_kernel_by_mode(mode: int):
    @wp.kernel(module="unique", enable_backward=False)
    def sweep_mode(
        lower: wp.array(dtype=wp.vec3),
        upper: wp.array(dtype=wp.vec3),
        group: wp.array(dtype=int),
        is_static: wp.array(dtype=int),
        margin: float,
        count: wp.array(dtype=int),
    ):
        i, j = wp.tid()
        if j <= i:
            return
        if not boxes_overlap(lower[i], upper[i], lower[j], upper[j], margin):
            return
        if wp.static(make_filter(mode))(group[i], group[j], is_static[i], is_static[j]):
            wp.atomic_add(count, 0, 1)

    return sweep_mode


def broadphase(model, data, fixed: bool) -> int:
    if fixed:
        kernel = sweep_kernel_by_mode(model.filter_mode)
    else:
        kernel = sweep_kernel(make_filter(model.filter_mode))  # a new wp.func every step: the memo misses
    count = wp.zeros(1, dtype=int, device=model.device)
    n = data.lower.shape[0]
    wp.launch(
        kernel,
        dim=(n, n),
        inputs=[data.lower, data.upper, model.group, model.is_static, 0.02],
        outputs=[count],
        device=model.device,
    )
    return int(count.numpy()[0])
