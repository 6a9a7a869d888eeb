"""Real parts and the advice on them: an engineer's stack mapped to the model, and what to change.

`catalogue` is the table of services and parts (each part's service, the model options it
stands for, what it means to build, a snippet in its own terms, what a fix may do with it)
and the example stacks; `advice` checks a stack with a holder that may crash and finds the
changes that fix it, in the stack's own services first; `words` says the advice the same
way on the command line, on the page and in the review note.

May import the model (every package of it).
"""
