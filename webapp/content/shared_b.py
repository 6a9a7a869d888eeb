"""Phrases several pages share: what a design or a lock service mirrors in the real world."""

from __future__ import annotations


def mirrors(what: str) -> str:
    """What real system a preset or a lock service stands for."""
    return f"Mirrors {what}."
