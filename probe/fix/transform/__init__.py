"""The transformation layer: every code change a rule proposes is written here.

A rule decides *what* should change, from the run and the scan: which kernel moves to module scope, which factory
keeps its kernels and creates them at import, which captured values become kernel arguments, which module a kernel
joins, which option moves before the first load. The layer writes it as `Edit`s on the project's own files (the
file's formatting and comments kept: only the lines a change needs are replaced), checks each change's
preconditions on the syntax tree and the facts it is given, and, when one fails, says which (`Step.why_not`), so a
finding is `manual` only with the precondition that failed. Steps compose into one `Plan` in the order they need:
create at import, then share a module, then the option, then the header.

Modules, one transformation each: `syntax` (reading the tree), `statements` (moving, inserting and removing
statements), `decorators` (a kernel's module: share, unique, named), `hoist` (a kernel to module scope), `params`
(captured values as kernel arguments), `split` (a function that makes its kernel and launches it, split into a
cached maker keyed on the values it reads and the launch), `memoize` (a factory's versions kept and created at
import), `options` (an option call before the first load), `plan` (steps composed). Nothing here imports a rule.
"""
