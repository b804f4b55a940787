"""Shape i (+d, a): integration kernels generated from a rewritten user function, one small module per specialisation.

Seen in NVIDIA/warp, warp/_src/fem/integrate.py:1162-1290 (_generate_integrate_kernel) with the
PassFieldArgsToIntegrand `ast.NodeTransformer` at :547, and warp/_src/fem/cache.py:290-318
(get_integrand_kernel) (9934a4eb2): a user integrand is rewritten through the AST, a kernel is made with
`wp.Kernel(func=..., key=..., module=wp.get_module(f"{module}.{key}"))` and stored in the integrand's own
dict of cached kernels, keyed on the field and value types.

Here an `@integrand` function is rewritten (field reads become array reads, literals get the value type),
the kernel source is generated and created in its own module `<module>.dyn.<key>`; two integrands in two
precisions give four one-kernel modules, each built on its own. The integrands and types are fixed, so the
kernels could be made, and share a module, up front.
"""

__version__ = "0.5.0"
