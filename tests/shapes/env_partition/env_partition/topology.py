"""Grid topologies and cell subsets: each exposes an argument struct and device functions."""

from __future__ import annotations

import warp as wp


@wp.struct
class GridArg:
    nx: int
    ny: int


@wp.func
def quad_node(arg: GridArg, cell: int, k: int):
    i = cell % arg.nx
    j = cell // arg.nx
    di = k % 2
    dj = k // 2
    return (j + dj) * (arg.nx + 1) + i + di


@wp.func
def tri_node(arg: GridArg, cell: int, k: int):
    quad = cell // 2
    upper = cell % 2
    i = quad % arg.nx
    j = quad // arg.nx
    base = j * (arg.nx + 1) + i
    if k == 0:
        return base + upper * (arg.nx + 2)
    if k == 1:
        return base + 1
    return base + arg.nx + 1


class QuadGrid:
    name = "quad"
    Arg = GridArg
    nodes_per_cell = 4
    element_node = quad_node

    def __init__(self, nx: int, ny: int):
        self.nx, self.ny = nx, ny
        self.cell_count = nx * ny
        self.node_count = (nx + 1) * (ny + 1)

    def arg_value(self) -> GridArg:
        arg = GridArg()
        arg.nx, arg.ny = self.nx, self.ny
        return arg


class TriGrid(QuadGrid):
    name = "tri"
    nodes_per_cell = 3
    element_node = tri_node

    def __init__(self, nx: int, ny: int):
        super().__init__(nx, ny)
        self.cell_count = 2 * nx * ny


@wp.struct
class SubsetArg:
    cell_ids: wp.array(dtype=int)


class CellSubset:
    name = "subset"
    Arg = SubsetArg

    def __init__(self, cell_ids, device: str):
        self.cell_ids = wp.array(cell_ids, dtype=int, device=device)

    def arg_value(self) -> SubsetArg:
        arg = SubsetArg()
        arg.cell_ids = self.cell_ids
        return arg
