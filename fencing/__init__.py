"""The `fencing` command: check, replay, matrix, presets, prove, advise, export, exercises.

It sits above every engine (the model, the advisor, the classroom, the prover, the live
lab). May import every package but the web app; nothing below imports it.
"""

# Here, not in `fencing.cli`: the entry point needs them before it loads anything else.
EXIT_INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""
INTERRUPTED = "fencing: interrupted"
"""The one line a command stopped by Ctrl-C prints on standard error."""
EXIT_USAGE = 2
"""Bad input: a flag, design, bound, budget, stack or file (one line says what to change)."""
EXIT_IO_ERROR = 74
"""The output could not be written (the value of EX_IOERR in sysexits.h)."""
EXIT_BROKEN_PIPE = 141
"""The reader of the output went away (`| head`): no error, and nothing more is written."""
