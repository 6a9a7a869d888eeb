"""Every file format in and out: trace JSON, ITF, Promela, the schemas and bounded reading.

`reading` reads a file or an upload within its limits; `schemas` turns a size-checked value
into the model's types, every problem a sentence naming its field; `trace` replays a run
into states and sentences and reads and writes trace files; `itf` is the Informal Trace
Format; `promela` writes a design for spin; `terminal` shows outside text on a terminal
with its control characters made visible.

May import the specification, the checker and the explanations (a trace file carries each
step's sentence).
"""
