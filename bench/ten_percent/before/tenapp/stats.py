import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def moments(a: wp.array2d(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i, j = wp.tid()
    v = a[i, j]
    wp.atomic_add(out, 0, v)
    wp.atomic_add(out, 1, v * v)
    wp.atomic_max(out, 2, v)
    wp.atomic_min(out, 3, v)


@wp.kernel
def histogram(a: wp.array2d(dtype=wp.float32), bins: wp.array(dtype=wp.int32)):
    i, j = wp.tid()
    k = wp.clamp(int(a[i, j] * 16.0), 0, 15)
    wp.atomic_add(bins, k, 1)


@wp.kernel
def normalize(a: wp.array2d(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i, j = wp.tid()
    a[i, j] = (a[i, j] - out[3]) / wp.max(out[2] - out[3], 1.0e-6)


def precise():
    wp.set_module_options({"fast_math": True})


@wp.kernel
def gradient_energy(a: wp.array2d(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i, j = wp.tid()
    n = a.shape[0]
    m = a.shape[1]
    gx = a[i, wp.min(j + 1, m - 1)] - a[i, wp.max(j - 1, 0)]
    gy = a[wp.min(i + 1, n - 1), j] - a[wp.max(i - 1, 0), j]
    e = wp.sqrt(gx * gx + gy * gy) + wp.sin(gx) * wp.cos(gy) + wp.exp(-gx * gx) * wp.log(1.0 + gy * gy)
    wp.atomic_add(out, 0, e)


@wp.kernel
def laplacian(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    n = a.shape[0]
    m = a.shape[1]
    c = a[i, j]
    s = a[wp.max(i - 1, 0), j] + a[wp.min(i + 1, n - 1), j] + a[i, wp.max(j - 1, 0)] + a[i, wp.min(j + 1, m - 1)]
    b[i, j] = s - 4.0 * c + wp.tanh(c) * wp.atan2(s, c + 1.0)


@wp.kernel
def tone(a: wp.array2d(dtype=wp.float32), gamma: float):
    i, j = wp.tid()
    v = wp.clamp(a[i, j], 0.0, 1.0)
    a[i, j] = wp.pow(v, gamma) * (1.0 + 0.1 * wp.sin(6.0 * v)) / (1.0 + 0.05 * wp.cos(3.0 * v))
