"""Mass-matrix products, dense (block levels) or sparse (diagonal + off-diagonal triplets)."""

import warp as wp


@wp.kernel
def relax_step(x: wp.array(dtype=float), mx: wp.array(dtype=float), b: wp.array(dtype=float), h: float):
    i = wp.tid()
    x[i] = x[i] - h * (mx[i] - b[i])


def apply_mass(model, x: wp.array, out: wp.array) -> None:
    if not model.sparse:

        def dense_level(madr: int, vadr: int, count: int, size: int):
            @wp.kernel
            def block_mul(
                mass: wp.array(dtype=float), madr: int, vadr: int, x: wp.array(dtype=float), out: wp.array(dtype=float)
            ):
                blk, r = wp.tid()
                first = vadr + blk * size
                row = madr + blk * size * size + r * size
                s = float(0.0)
                for c in range(wp.static(size)):
                    s += mass[row + c] * x[first + c]
                out[first + r] = s

            wp.launch(
                block_mul, dim=(count, size), inputs=[model.mass, madr, vadr, x], outputs=[out], device=model.device
            )

        for madr, vadr, count, size in model.levels:
            dense_level(madr, vadr, count, size)
    else:

        @wp.kernel
        def diag_part(diag: wp.array(dtype=float), x: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = diag[i] * x[i]

        @wp.kernel
        def offdiag_part(
            rows: wp.array(dtype=int),
            cols: wp.array(dtype=int),
            vals: wp.array(dtype=float),
            x: wp.array(dtype=float),
            out: wp.array(dtype=float),
        ):
            k = wp.tid()
            r = rows[k]
            c = cols[k]
            wp.atomic_add(out, r, vals[k] * x[c])
            wp.atomic_add(out, c, vals[k] * x[r])

        n = x.shape[0]
        wp.launch(diag_part, dim=n, inputs=[model.diag, x], outputs=[out], device=model.device)
        wp.launch(
            offdiag_part,
            dim=model.rows.shape[0],
            inputs=[model.rows, model.cols, model.vals, x],
            outputs=[out],
            device=model.device,
        )
