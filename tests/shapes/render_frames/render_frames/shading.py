"""Ray-cast and shading funcs specialised on the scene's geometry types."""

import warp as wp

from .scene import BOX, PLANE, SPHERE


def make_ray(geom_types: tuple):
    HAS_SPHERE = SPHERE in geom_types
    HAS_PLANE = PLANE in geom_types
    HAS_BOX = BOX in geom_types

    @wp.func
    def cast(
        o: wp.vec3,
        d: wp.vec3,
        spheres: wp.array(dtype=wp.vec4),
        plane: wp.vec4,
        box_center: wp.array(dtype=wp.vec3),
        box_half: wp.array(dtype=wp.vec3),
    ) -> wp.vec4:
        best = float(1.0e9)  # noqa: UP018 (a mutable warp variable)
        n = wp.vec3(0.0, 0.0, 0.0)
        if wp.static(HAS_SPHERE):
            for s in range(spheres.shape[0]):
                c = wp.vec3(spheres[s][0], spheres[s][1], spheres[s][2])
                oc = o - c
                b = wp.dot(oc, d)
                disc = b * b - (wp.dot(oc, oc) - spheres[s][3] * spheres[s][3])
                if disc > 0.0:
                    t = -b - wp.sqrt(disc)
                    if t > 1.0e-3 and t < best:
                        best = t
                        n = wp.normalize(o + t * d - c)
        if wp.static(HAS_PLANE):
            pn = wp.vec3(plane[0], plane[1], plane[2])
            denom = wp.dot(pn, d)
            if wp.abs(denom) > 1.0e-6:
                t = (plane[3] - wp.dot(pn, o)) / denom
                if t > 1.0e-3 and t < best:
                    best = t
                    n = pn
        if wp.static(HAS_BOX):
            for k in range(box_center.shape[0]):
                lo = box_center[k] - box_half[k]
                hi = box_center[k] + box_half[k]
                tnear = float(-1.0e9)  # noqa: UP018 (a mutable warp variable)
                tfar = float(1.0e9)  # noqa: UP018 (a mutable warp variable)
                axis = int(0)  # noqa: UP018 (a mutable warp variable)
                for a in range(3):
                    inv = 1.0 / wp.where(wp.abs(d[a]) > 1.0e-8, d[a], 1.0e-8)
                    t0 = (lo[a] - o[a]) * inv
                    t1 = (hi[a] - o[a]) * inv
                    if t0 > t1:
                        tmp = t0
                        t0 = t1
                        t1 = tmp
                    if t0 > tnear:
                        tnear = t0
                        axis = a
                    tfar = wp.min(tfar, t1)
                if tnear <= tfar and tnear > 1.0e-3 and tnear < best:
                    best = tnear
                    n = wp.vec3(0.0, 0.0, 0.0)
                    n[axis] = -wp.sign(d[axis])
        return wp.vec4(best, n[0], n[1], n[2])

    return cast


def make_shading(ray_fn, nlight: int):
    NLIGHT = nlight

    @wp.func
    def shade(
        o: wp.vec3,
        d: wp.vec3,
        spheres: wp.array(dtype=wp.vec4),
        plane: wp.vec4,
        box_center: wp.array(dtype=wp.vec3),
        box_half: wp.array(dtype=wp.vec3),
        lights: wp.array(dtype=wp.vec3),
    ) -> float:
        hit = ray_fn(o, d, spheres, plane, box_center, box_half)
        if hit[0] > 1.0e8:
            return 0.1 + 0.1 * d[1]
        p = o + hit[0] * d
        n = wp.vec3(hit[1], hit[2], hit[3])
        c = float(0.05)  # noqa: UP018 (a mutable warp variable)
        for li in range(NLIGHT):
            lit = wp.max(wp.dot(n, lights[li]), 0.0)
            if lit > 0.0:
                shadow = ray_fn(p + 1.0e-3 * n, lights[li], spheres, plane, box_center, box_half)
                if shadow[0] > 1.0e8:
                    c += 0.6 * lit
        return c

    return shade
