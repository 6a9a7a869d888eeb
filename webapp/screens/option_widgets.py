"""One widget per design option, made from the model's option table, for every page's form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from advise.catalogue import mirrors
from model.options import Kind, Option


def word_with_mirrors(option: Option, value: Any) -> str:
    """An option value in words, with the real parts it stands for (from the catalogue)."""
    parts = mirrors(option.name, value)
    words = option.word(value)
    return f"{words} — {', '.join(p.mirror for p in parts)}" if parts else words


def option_input(
    option: Option,
    key: str,
    value: Any = None,
    offered: Sequence[str] | None = None,
    **extra: Any,
) -> Any:
    """The option's widget, labelled in words with the code name in its help.

    `value` is the starting value (None: leave it to the session state under `key`);
    `offered` the choices to show (None: all of them); `extra` goes to the widget
    (`on_change`, `bind`, …).
    """
    label = option.label
    settings: dict[str, Any] = {"help": f"{option.help} (option `{option.name}`)", "key": key}
    settings.update(extra)
    match option.kind:
        case Kind.CHOICE:
            values = tuple(offered) if offered is not None else option.values
            if value is not None:
                settings["index"] = values.index(str(value))
            return st.selectbox(
                label, values, format_func=lambda v: word_with_mirrors(option, v), **settings
            )
        case Kind.COUNT:
            if value is not None:
                settings["value"] = int(value)
            return st.number_input(
                label, min_value=option.low, max_value=option.high, step=1, **settings
            )
        case Kind.FLAG:
            if value is not None:
                settings["value"] = bool(value)
            return st.checkbox(label, **settings)
        case Kind.OFFSETS:
            if value is not None:
                settings["value"] = str(value)
            return st.text_input(label, max_chars=40, **settings)
