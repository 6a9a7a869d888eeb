"""The application layer: the `fencing` command, the preset matrix and scripted stories.

It sits above every engine (the model, the prover, the live lab), so it may import any of
them; `model/` imports nothing from here.
"""
