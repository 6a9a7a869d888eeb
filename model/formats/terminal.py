"""Text for a terminal: what a user typed or a file held, with its control characters shown.

Both command lines (`fencing` and the live lab's) print text that came from outside (a
flag, a file, a service's message); an escape code in it must show as text, never move the
cursor or recolour the terminal.
"""

from __future__ import annotations


def terminal_safe(text: str) -> str:
    """Text for a terminal: control characters (escape codes among them) shown as escapes."""
    return "".join(ch if ch.isprintable() or ch == "\n" else repr(ch)[1:-1] for ch in text)


def printable(text: str) -> str:
    """Text with control characters (terminal escape codes among them) made visible."""
    return repr(text) if any(not ch.isprintable() for ch in text) else f"'{text}'"
