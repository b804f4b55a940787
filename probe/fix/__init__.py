"""The fix engine: from a diagnosis to a proven, written change.

`transform/` writes edits on the syntax tree; `edits` applies and shows them; `engine` copies the project, measures
every candidate against one baseline and writes what it proved; `policy` decides which findings become candidates
and what `--write` may take; `behaviour` and `checks` judge a changed copy; `rounds` re-diagnoses a kept copy;
`settings` and `placement` turn process-wide settings into lines at the entry point; `verify` is `diagnose --verify`.
"""
