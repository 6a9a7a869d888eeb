"""The specification: what a design is, the state and its rules, the properties, the presets.

A design is a set of options (`options`, `design`, `combinations`); its state is a row of
small integers (`layout`); each action is a guard and an effect written once (`actions`,
`rules`, with the helpers of `terms` and `expression` that work on numbers, numpy arrays,
z3 terms and text alike); the properties say which transitions they speak of and what
those must satisfy (`properties`); `system` is the step interpreter; `presets` are named
designs with their lessons as claims checked by the tests (`claims`); `verdicts` is the one
vocabulary every engine answers in. This package imports nothing outside itself; its
subpackages build on it: `model.check` (the checker), `model.explain` (the words made from
the model) and `model.formats` (every file in and out).
"""
