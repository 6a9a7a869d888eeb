"""The checker: every search over the specification's rules, and what they share.

`explorer` wires the breadth-first search (`bfs`) from its parts: level expanders
(`expanders`, `numpy_expander`, `compiled_expander` with the loops `kernels` compiles from
the rules), the native engine that runs large levels in C (`native_search`, its C text
written by `native_source`), the seen set (`seen`, `probing`), state keys (`keys`),
symmetry reduction (`symmetry`), memory tuning (`memory`) and the options, visitors and
results of a search (`search`); `reference` is the plain search that defines the answers;
`random_search` walks random runs (`random_walk`, compiled in `compiled_walk`) for bounds
beyond reach. Compiled code is kept only in this user's private folder (`private_cache`).

May import the specification (`model`) only.
"""
