import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def blur_x(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    n = a.shape[1]
    b[i, j] = (a[i, wp.max(j - 1, 0)] + a[i, j] + a[i, wp.min(j + 1, n - 1)]) / 3.0


@wp.kernel
def blur_y(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    n = a.shape[0]
    b[i, j] = (a[wp.max(i - 1, 0), j] + a[i, j] + a[wp.min(i + 1, n - 1), j]) / 3.0
