import warp as wp


@wp.kernel
def ground(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    if p[1] < 0.0:
        x[i] = wp.vec3(p[0], 0.0, p[2])
        v[i] = wp.vec3(v[i][0] * 0.8, -v[i][1] * 0.5, v[i][2] * 0.8)
