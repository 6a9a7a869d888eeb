"""The application layer: the `fencing` command, the preset matrix and scripted stories.

It sits above every engine (the model, the prover, the live lab), so it may import any of
them; `model/` imports nothing from here.
"""

# Here, not in `fencing.cli`: the entry point needs them before it loads anything else.
EXIT_INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""
INTERRUPTED = "fencing: interrupted"
"""The one line a command stopped by Ctrl-C prints on standard error."""
