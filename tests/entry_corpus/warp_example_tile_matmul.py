# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0

###########################################################################
# Example Tile MatMul
#
# Shows how to write a simple GEMM kernel using Warp tile primitives.
#
###########################################################################

import numpy as np

import warp as wp

# tile size
TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
TILE_K = wp.constant(8)

# num threads per-tile
TILE_THREADS = 64


@wp.kernel
def tile_gemm(A: wp.array2d[float], B: wp.array2d[wp.float16], C: wp.array2d[wp.float64]):
    # output tile index
    i, j = wp.tid()

    sum = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float64)

    _M = A.shape[0]
    _N = B.shape[1]
    K = A.shape[1]

    count = int(K / TILE_K)

    for k in range(0, count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))

        # sum += a*b
        wp.tile_matmul(a, b, sum)

    wp.tile_store(C, sum, offset=(i * TILE_M, j * TILE_N))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--device", type=str, default=None, help="Override the default Warp device.")
    parser.add_argument(
        "--headless",
        action="store_true",
        help="Run in headless mode, suppressing output.",
    )

    args = parser.parse_known_args()[0]

    with wp.ScopedDevice(args.device):
        # generate some tile aligned matrix dimensions
        M = TILE_M * 7
        K = TILE_K * 6
        N = TILE_N * 5

        rng = np.random.default_rng(42)
        A = rng.random((M, K), dtype=np.float32)
        B = rng.random((K, N), dtype=np.float32).astype(np.float16)
        C = np.zeros((M, N), dtype=np.float64)

        A_wp = wp.array(A, requires_grad=True)
        B_wp = wp.array(B, requires_grad=True)
        C_wp = wp.array(C, requires_grad=True)

        with wp.Tape() as tape:
            wp.launch_tiled(
                tile_gemm,
                dim=(M // TILE_M, N // TILE_N),
                inputs=[A_wp, B_wp],
                outputs=[C_wp],
                block_dim=TILE_THREADS,
            )

        np.testing.assert_allclose(C_wp.numpy(), A @ B, atol=1.0e-4)

        if not args.headless:
            print("C (Warp):\n", C_wp.numpy())
            print("C (Numpy):\n", A @ B)
            print("Example matrix multiplication passed")
