import warp as wp


@wp.func
def mix(p: wp.vec3, q: wp.vec3, s: float):
    r = p
    for k in range(3):
        r = r + wp.cross(q, r) * (s / float(k + 1)) + wp.vec3(wp.sin(r[0] * s), wp.cos(r[1] + s), wp.tanh(r[2]))
        r = wp.normalize(r + q * 0.01) * wp.length(p + q)
    return r


@wp.kernel
def step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    q = v[i]
    for j in range(2):
        p = mix(p, q, s + float(j))
        q = mix(q, p, s - float(j))
    out[i] = p + q


@wp.kernel
def norm(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    m = wp.mat33(x[i][0], x[i][1], x[i][2], x[i][1], x[i][2], x[i][0], x[i][2], x[i][0], x[i][1])
    for _ in range(3):
        m = m * wp.transpose(m) * 0.1 + wp.identity(n=3, dtype=float)
    wp.atomic_add(out, 0, wp.determinant(m))
