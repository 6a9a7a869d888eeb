"""What a visitor is told when the server's slots for heavy work are all taken."""

from __future__ import annotations


def busy_sentence(what: str) -> str:
    """What a visitor is told when no slot came free in time."""
    return (
        f"The server is busy with other visitors' work, so {what} was not started. "
        "Try again in a moment."
    )


def waiting_sentence(seconds_left: float) -> str:
    """The note a visitor sees while their request waits for a slot."""
    return (
        "Waiting for a free slot while other visitors' work runs "
        f"(at most {seconds_left:.0f} s more)…"
    )


def sharing_sentence(seconds_waited: float) -> str:
    """The note a visitor sees while another visitor's request computes the same result."""
    return (
        "Another visitor asked for the same result a moment ago: it is being computed once "
        f"for everyone, and shown here when it is ready ({seconds_waited:.0f} s so far)…"
    )
