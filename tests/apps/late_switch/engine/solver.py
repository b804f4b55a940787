import warp as wp


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    p = x[i]
    for _ in range(8):
        p = p + v[i] * (dt / 8.0) + wp.vec3(wp.sin(p[1]), wp.cos(p[0]), 0.0) * 0.001
    x[i] = p
