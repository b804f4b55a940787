"""Placement: where a rule's fix goes and the edits that put it there, for the mechanisms whose detection lives in
rules/ (a rule says what is wrong and why; these say how the project's own lines change).

`recorded_versions` (what the run made late, at import), `unique_arguments` (captured numbers as arguments),
`merge_module` (one module for the CPU header), `closure_kernels` and `overload_edits` (generic kernels'
instances), `entry_fix` (process-wide settings at the entry point), `cuda_edits` and `preload` (the CUDA rules').
The module plan for kernels leaving module="unique" is `fix/module_plan.py` with `fix/realise.py`. Nothing here imports
a rule: the context is read through `transform/context.Project`, names and ownership from `hashdiff` and
`dependency_advice`, so placement sits below the rules that call it.
"""
