"""Compiled loops for large levels: each rule's guard, effect and properties in one pass.

The rules are evaluated once on symbolic variables (`model.expression`), whose Python
form is written into a small module: one function per rule that reads each state's key,
decodes the columns the rule reads, and, where the guard holds, writes
the successor's key and checks the properties the rule can violate. numba compiles the
module. It is kept in this user's private folder (`model.check.private_cache`), named by the
sha256 of its text, and run only when the file holds exactly the text this version writes
(anything else there is overwritten, never run); with no private folder the module is
compiled in memory. So a design and bounds are compiled once and loaded afterwards. The
text is derived from the same rules as every other engine, and the tests check that both
paths of the explorer give identical results. Compiling takes seconds, so the explorer
compiles only for large levels, and uses loops compiled before (by any earlier run) from
smaller levels on.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from model.check.keys import KeyCodec
from model.check.private_cache import numba_cache, private_folder
from model.expression import Expr
from model.layout import Vars
from model.system import System

Kernel = Callable[..., int]
"""(keys, out_keys, out_rows, first, triggered, look, watch) -> successors written."""

_LOADING = threading.Lock()
"""One module is written and run at a time (sessions of the web app share the process)."""


def _view(system: System) -> Vars:
    """The state as variables `c0`, `c1`, … (0 for columns with one value)."""
    layout = system.layout
    values = [
        Expr.variable(column, f"c{i}") if size > 1 else 0
        for i, (column, size) in enumerate(zip(layout.columns, layout.sizes, strict=True))
    ]
    return Vars(layout, values)


def _python(value: object) -> str:
    """Python text of a rule's term (an Expr or a constant)."""
    if isinstance(value, Expr):
        return value.python
    return repr(bool(value)) if isinstance(value, bool) else str(int(value))  # type: ignore[call-overload]


def _names(*values: object) -> set[str]:
    """Columns read by some terms."""
    found: set[str] = set()
    for value in values:
        if isinstance(value, Expr):
            found |= value.names
    return found


def _decode_lines(codec: KeyCodec, columns: Sequence[str], indent: str) -> list[str]:
    """Lines that decode these columns from the key `k`."""
    index = codec.layout.index
    lines = []
    for column in sorted(columns, key=lambda c: index[c]):
        i = index[column]
        word = f"k{codec.word_of[i]}" if codec.wide else "k"
        lines.append(f"{indent}c{i} = {codec.decoder(i, word)}")
    return lines


def rule_function(
    system: System,
    codec: KeyCodec,
    name: str,
    rule_index: int,
    violable: Sequence[str],
    triggerable: Sequence[str],
    cache: bool = True,
) -> str:
    """The source of one rule's loop (`cache`: whether numba keeps its machine code)."""
    rule = system.rules[rule_index]
    view = _view(system)
    layout = system.layout
    by_name = {p.name: p for p in system.properties}
    order = [p.name for p in system.properties]
    guard = rule.guard(view)
    changes = {c: v for c, v in rule.effect(view).items() if layout.sizes[layout.index[c]] > 1}
    broken = {p: by_name[p].violated(view, rule) for p in violable}
    touched = {p: by_name[p].triggered(view, rule) for p in triggerable}
    early = _names(guard)
    later = _names(*changes.values(), *broken.values(), *touched.values()) | set(changes)
    deltas = ["0"] * codec.words
    for column, value in changes.items():
        i = layout.index[column]
        change = f"(({_python(value)}) - c{i}) * {codec.strides[i]}"
        word = codec.word_of[i]
        deltas[word] = change if deltas[word] == "0" else f"{deltas[word]} + {change}"
    if codec.wide:
        read = [f"        k{w} = keys[i, {w}]" for w in range(codec.words)]
        write = [f"        out_keys[n, {w}] = k{w} + ({deltas[w]})" for w in range(codec.words)]
    else:
        read = ["        k = keys[i]"]
        write = [f"        out_keys[n] = k + ({deltas[0]})"]
    lines = [
        f"@njit(cache={cache}, nogil=True)",
        f"def {name}(keys, out_keys, out_rows, first, triggered, look, watch):",
        f"    # {rule.action.label()}",
        "    n = 0",
        "    for i in range(keys.shape[0]):",
        *read,
        *_decode_lines(codec, sorted(early), "        "),
        f"        if not ({_python(guard)}):",
        "            continue",
        *_decode_lines(codec, sorted(later - early), "        "),
        *write,
        "        out_rows[n] = i",
        "        n += 1",
    ]
    for prop, condition in broken.items():
        p = order.index(prop)
        lines += [
            f"        if look[{p}] and first[{p}] < 0 and ({_python(condition)}):",
            f"            first[{p}] = i",
        ]
    for prop, condition in touched.items():
        p = order.index(prop)
        lines += [
            f"        if watch[{p}] and not triggered[{p}] and ({_python(condition)}):",
            f"            triggered[{p}] = True",
        ]
    lines.append("    return n")
    return "\n".join(lines)


def module_source(
    system: System, codec: KeyCodec, plans: Sequence[Plan], cache: bool = True
) -> str:
    """The whole module: one function per (rule index, violable, triggerable) plan."""
    header = [
        f'"""Fencing Lab kernels: {system.design.label()}, {system.bounds.short()}."""',
        "from numba import njit",
        "",
    ]
    functions = [
        rule_function(system, codec, f"rule_{index}", index, violable, triggerable, cache)
        for index, violable, triggerable in plans
    ]
    return "\n".join(header) + "\n\n" + "\n\n\n".join(functions) + "\n"


Plan = tuple[int, Sequence[str], Sequence[str]]
"""A rule index with the properties it can violate and those it can exercise."""


def _digest(source: str) -> str:
    """The sha256 of a module's text, which names its file and its module."""
    return hashlib.sha256(source.encode()).hexdigest()


def _module_path(folder: Path, source: str) -> Path:
    """Where the module with this text lives in the private folder."""
    return folder / f"kernels_{_digest(source)}.py"


def _holds(path: Path, text: bytes) -> bool:
    """Whether the file exists and holds exactly these bytes."""
    try:
        return path.read_bytes() == text
    except OSError:
        return False


def is_compiled(system: System, codec: KeyCodec, plans: Sequence[Plan]) -> bool:
    """Whether these loops were compiled before (loading them then costs little)."""
    folder = private_folder()
    if folder is None or not numba_cache():
        return False
    source = module_source(system, codec, plans)
    path = _module_path(folder, source)
    return path.with_suffix(".ready").exists() and _holds(path, source.encode())


def _write(path: Path, text: bytes) -> None:
    """Put exactly these bytes in the file, atomically (readers see old or new, whole)."""
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    descriptor = os.open(temporary, flags, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(text)
    temporary.replace(path)


def _run_module(name: str, source: str, filename: str) -> Any:
    """A module made by running this text (the text itself, never the file read again)."""
    module: Any = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__file__ = filename
        code = compile(source, filename, "exec")
        # Registered before it runs, so numba's cache can find the module again by name.
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)  # the text generated above, from the rules
        except BaseException:
            del sys.modules[name]
            raise
    return module


def _module(system: System, codec: KeyCodec, plans: Sequence[Plan]) -> tuple[Any, Path | None]:
    """The module of compiled loops and the marker saying it is cached (None: in memory).

    In the private folder, the file named by the text's hash is (re)written unless it holds
    that exact text; numba then finds its machine code for the same text in its cache.
    """
    folder = private_folder()
    if folder is None or not numba_cache():
        source = module_source(system, codec, plans, cache=False)
        name = f"fencing_lab_kernels_{_digest(source)}_in_memory"
        return _run_module(name, source, f"<fencing lab kernels {name}>"), None
    source = module_source(system, codec, plans)
    path = _module_path(folder, source)
    if not _holds(path, source.encode()):
        _write(path, source.encode())
    name = path.stem.replace("kernels_", "fencing_lab_kernels_")
    return _run_module(name, source, str(path)), path.with_suffix(".ready")


def load_kernels(system: System, codec: KeyCodec, plans: Sequence[Plan]) -> dict[int, Kernel]:
    """Compile (or load from the cache) the loop of every planned rule, by rule index.

    Each loop is called once on no states, so compiling happens here, before any thread
    uses them; a marker file then says the cache holds them.
    """
    with _LOADING:
        module, ready = _module(system, codec, plans)
    kernels = {index: getattr(module, f"rule_{index}") for index, _, _ in plans}
    count = len(system.properties)
    shape = (0, codec.words) if codec.wide else (0,)
    for kernel in kernels.values():
        kernel(
            np.zeros(shape, dtype=np.int64),
            np.zeros(shape, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            np.full(count, -1, dtype=np.int64),
            np.zeros(count, dtype=bool),
            np.zeros(count, dtype=bool),
            np.zeros(count, dtype=bool),
        )
    if ready is not None:
        ready.touch()
    return kernels
