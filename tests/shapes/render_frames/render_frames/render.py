"""Render one frame: build the scene's funcs and the megakernel, then launch it over the pixels."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np
import warp as wp

from .post import tonemap
from .shading import make_ray, make_shading

DEVICE = "cpu"
_HAS_MODULE_OPTIONS = "module_options" in inspect.signature(wp.kernel).parameters


@dataclass
class RenderConfig:
    width: int = 48
    height: int = 32
    fast_math: bool = True
    exposure: float = 1.5


def _megakernel_decorator(cfg: RenderConfig):
    if _HAS_MODULE_OPTIONS:
        return wp.kernel(module="unique", enable_backward=False, module_options={"fast_math": cfg.fast_math})

    def decorate(fn):
        kernel = wp.kernel(fn, module="unique", enable_backward=False)
        kernel.module.options["fast_math"] = cfg.fast_math
        return kernel

    return decorate


def render(scene, cfg: RenderConfig, angle: float) -> np.ndarray:
    ray_fn = make_ray(scene.geom_types)
    shade_fn = make_shading(ray_fn, scene.nlight)
    W = cfg.width
    H = cfg.height

    @_megakernel_decorator(cfg)
    def megakernel(
        eye: wp.vec3,
        forward: wp.vec3,
        right: wp.vec3,
        up: wp.vec3,
        spheres: wp.array(dtype=wp.vec4),
        plane: wp.vec4,
        box_center: wp.array(dtype=wp.vec3),
        box_half: wp.array(dtype=wp.vec3),
        lights: wp.array(dtype=wp.vec3),
        image: wp.array2d(dtype=float),
    ):
        y, x = wp.tid()
        u = (2.0 * (float(x) + 0.5) / float(W) - 1.0) * float(W) / float(H)
        v = 1.0 - 2.0 * (float(y) + 0.5) / float(H)
        d = wp.normalize(forward + 0.6 * u * right + 0.6 * v * up)
        image[y, x] = shade_fn(eye, d, spheres, plane, box_center, box_half, lights)

    eye = np.array([4.0 * math.sin(angle), 1.6, 4.0 * math.cos(angle)])
    fwd = -eye / np.linalg.norm(eye)
    right = np.cross(fwd, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    image = wp.zeros((cfg.height, cfg.width), dtype=float, device=DEVICE)
    vecs = [wp.vec3(*a.astype(np.float32).tolist()) for a in (eye, fwd, right, up)]
    wp.launch(megakernel, dim=(cfg.height, cfg.width), inputs=[*vecs, *scene.device_arrays(), image], device=DEVICE)
    wp.launch(tonemap, dim=(cfg.height, cfg.width), inputs=[image, cfg.exposure], device=DEVICE)
    return image.numpy()
