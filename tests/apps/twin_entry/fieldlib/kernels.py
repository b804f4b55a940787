import warp as wp


@wp.kernel
def advect(src: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dt: float, dst: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = src[i] + vel[i] * dt
    for _ in range(16):
        p = p + wp.vec3(wp.sin(p[1]), wp.cos(p[2]), wp.sin(p[0])) * (0.25 * dt)
    dst[i] = p


@wp.kernel
def relax(x: wp.array(dtype=wp.vec3), k: float, out: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i]
    e = 0.0
    for _ in range(16):
        e = e + k * wp.dot(d, d) + wp.sqrt(wp.abs(d[0]) + 1.0)
        d = d * 0.9
    wp.atomic_add(out, 0, e)


@wp.kernel
def smooth(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    m = wp.mat33(p[0], p[1], p[2], p[2], p[0], p[1], p[1], p[2], p[0])
    for _ in range(12):
        m = m * wp.transpose(m) * 0.05 + wp.identity(n=3, dtype=float)
        p = m * p + wp.vec3(wp.sin(p[2]), wp.cos(p[0]), wp.tanh(p[1]))
    out[i] = p
