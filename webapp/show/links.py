"""Links: a page's state as URL parameters and back, made from the model's option table.

Everything here reads text a visitor may have typed or pasted, so it is parsed, never
evaluated: every value is length-checked before it is looked at, numbers must be short
runs of digits (so `1e400`, `Infinity` or `-1` are refused, not converted), and every
problem is a `LinkError` whose message says what a good value looks like.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import urlencode, urlsplit, urlunsplit

from model.design import BOUND_LIMITS, BOUNDS, REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.options import BY_OPTION, OPTIONS
from model.presets import PRESETS, matching

MAX_PARAM_CHARS: Final = 300
"""Longest value of one URL parameter that is read at all."""

MAX_DIGITS: Final = 7
"""Longest run of digits accepted for a number in a link."""

PRESET_PARAM: Final = "preset"
DESIGN_PARAM: Final = "d"
BOUNDS_PARAM: Final = "b"


class LinkError(ValueError):
    """A link (URL parameters) that does not describe a page; the message says what is wrong."""


def param(params: Mapping[str, str], name: str) -> str | None:
    """One parameter's text, or None when absent; refused when longer than the limit."""
    value = params.get(name)
    if value is None:
        return None
    if len(value) > MAX_PARAM_CHARS:
        raise LinkError(f"the link's {name} is longer than {MAX_PARAM_CHARS} characters")
    return value


def whole_number(text: str, what: str, low: int, high: int) -> int:
    """A short run of digits within [low, high]; anything else is refused with the range."""
    text = text.strip()
    if not text.isdigit() or len(text) > MAX_DIGITS or not low <= int(text) <= high:
        raise LinkError(f"{what} in the link must be a whole number from {low:,} to {high:,}")
    return int(text)


def matching_preset(design: Design) -> str | None:
    """The name of the preset with exactly this design, if any."""
    found = matching(design)
    return found.name if found else None


def file_name(design: Design, what: str, extension: str) -> str:
    """A download's name after its design and content: `fencing-strict-P4.json`,
    `token-random_receiver-none-P2.itf.json` for a design that is no preset."""
    label = matching_preset(design) or encode_design(design).replace(":", "-").replace("~", "_")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in label)
    return f"{safe}-{what}.{extension}"


# ----- a design as separate parameters (explore, state space, proofs) ----------------------


def design_params(design: Design) -> dict[str, str]:
    """The design as parameters: its preset's name (when it is one) and every changed option.

    The options are written even for a preset, so a link says the whole design by itself.
    """
    params = {PRESET_PARAM: name} if (name := matching_preset(design)) else {}
    params.update({k: BY_OPTION[k].to_text(v) for k, v in design.changes().items()})
    return params


def design_from_params(params: Mapping[str, str]) -> Design:
    """The design of a link: a preset (or the core), with any option parameter applied."""
    preset_name = param(params, PRESET_PARAM)
    if preset_name is not None and preset_name not in PRESETS:
        raise LinkError(f"the link names no known preset: choose one of {', '.join(PRESETS)}")
    base = PRESETS[preset_name].design if preset_name else Design()
    changes: dict[str, object] = {}
    try:
        for option in OPTIONS:
            text = param(params, option.name)
            if text is not None:
                changes[option.name] = option.parse_text(text)
        return base.with_changes(changes)
    except DesignError as error:
        raise LinkError(f"the link's design is refused: {error}") from None


def bounds_params(bounds: Bounds) -> dict[str, str]:
    """The bounds as one parameter per size."""
    return {name: str(getattr(bounds, name)) for name in BOUND_LIMITS}


def bounds_from_params(params: Mapping[str, str], default: Bounds) -> Bounds:
    """The bounds of a link (a missing size keeps the default's), each within its limits."""
    sizes = {}
    for name, (low, high) in BOUND_LIMITS.items():
        text = param(params, name)
        sizes[name] = (
            getattr(default, name) if text is None else whole_number(text, name, low, high)
        )
    return Bounds(**sizes)


# ----- a design and bounds as compact text (the playground's `d=` and `b=`) ----------------


def encode_design(design: Design) -> str:
    """A preset's name when the design is one, else `opt:value` pairs joined by `~`."""
    if (name := matching_preset(design)) is not None:
        return name
    parts = [f"{k}:{BY_OPTION[k].to_text(v)}" for k, v in design.changes().items()]
    return "~".join(parts) or "fencing"


def decode_design(text: str) -> Design:
    """A design from a preset name or `opt:value~opt:value`; unknown options are refused."""
    text = text.strip()
    if text in PRESETS:
        return PRESETS[text].design
    if len(text) > MAX_PARAM_CHARS:
        raise LinkError("the link's design is too long")
    options: dict[str, str] = {}
    for part in filter(None, text.split("~")):
        name, sep, raw = part.partition(":")
        if not sep or name not in BY_OPTION:
            raise LinkError(
                "the link's design is neither a preset nor a list of options such as "
                "receiver:none~worker_check:1"
            )
        options[name] = raw
    return design_from_params(options)


BOUND_LETTERS: Final = ".".join(bound.letter for bound in BOUNDS)
"""`W.L.T.G.K`: the order of the sizes in a playground link."""
BOUND_COUNT_WORD: Final = {5: "five"}.get(len(BOUNDS), str(len(BOUNDS)))


def encode_bounds(bounds: Bounds) -> str:
    """Bounds as `W.L.T.G.K`, e.g. `2.2.6.3.2`."""
    return ".".join(str(getattr(bounds, name)) for name in BOUND_LIMITS)


def decode_bounds(text: str) -> Bounds:
    """Bounds from `W.L.T.G.K`; out-of-range values are refused with the limit named."""
    parts = text.strip().split(".")
    if len(text) > MAX_PARAM_CHARS or len(parts) != len(BOUND_LIMITS):
        raise LinkError(
            f"bounds in a link are {BOUND_COUNT_WORD} whole numbers {BOUND_LETTERS} such as "
            f"{encode_bounds(REFERENCE_BOUNDS)}"
        )
    sizes = dict(zip(BOUND_LIMITS, parts, strict=True))
    return bounds_from_params(sizes, Bounds())


def full_link(page_url: str, page_path: str, params: Mapping[str, str]) -> str:
    """A link to a page with these parameters, for someone else: the scheme, host and path of
    the address the visitor's browser shows (its own query dropped), or the page's path from
    the site's root when that address is unknown."""
    parts = urlsplit(page_url)
    query = urlencode(dict(params), safe=":~.")
    if parts.scheme in ("http", "https") and parts.netloc:
        return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    return f"/{page_path}?{query}"
