"""Sphere contact kernels, one per (writer, speculative) combination, each in a module named after it."""

import warp as wp


def make_contact_kernel(writer, speculative: bool = False):
    modname = f"contacts_{writer.key}_{speculative}"

    @wp.func(module=modname)
    def admit(dist: float, radius_sum: float, margin: float) -> bool:
        if wp.static(speculative):
            return dist < radius_sum + margin
        return dist < radius_sum

    @wp.kernel(enable_backward=False, module=modname)
    def sphere_contacts(
        pairs: wp.array(dtype=wp.vec2i),
        centers: wp.array(dtype=wp.vec3),
        radii: wp.array(dtype=float),
        margin: float,
        count: wp.array(dtype=int),
        points: wp.array(dtype=wp.vec3),
        values: wp.array(dtype=float),
    ):
        t = wp.tid()
        p = pairs[t]
        a = centers[p[0]]
        b = centers[p[1]]
        rsum = radii[p[0]] + radii[p[1]]
        dist = wp.length(b - a)
        if admit(dist, rsum, margin):
            slot = wp.atomic_add(count, 0, 1)
            if slot < points.shape[0]:
                writer(slot, a, b, rsum - dist, points, values)

    return sphere_contacts
