"""The words made from the model: each step of a run, its actors and why a property broke.

`narration` tells a step as a sentence from the rules' own predicates (who acted, what the
receiver compared, which lease was current), and the reason a property was violated.

May import the specification and the checker.
"""
