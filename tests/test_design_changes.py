"""One way from a preset plus changes to a design: the command line and links agree."""

from __future__ import annotations

import pytest

from fencing.arguments import design_from_args
from fencing.cli import build_parser
from model.design import Design, DesignError
from model.options import BY_OPTION, Kind
from model.presets import PRESETS
from webapp.show.design_form import design_from_values, values_of
from webapp.show.links import LinkError, decode_design, design_from_params

REQUESTS = [
    ("volatile-counter", {"token": "counter"}),
    ("volatile-counter", {"token": "counter", "coordinator_restarts": "0"}),
    ("volatile-counter", {"coordinator_restarts": "2"}),
    ("volatile-hwm", {"hwm": "durable"}),
    ("volatile-hwm", {"hwm": "durable", "storage_restarts": "0"}),
    ("lease-only", {"receiver": "fenced"}),
    ("fencing", {"fenced_reads": "1"}),
    ("fencing", {"workload": "rmw", "fenced_reads": "1"}),
    ("fencing", {"token": "local-clock", "skew": "0,2"}),
    ("fencing", {"skew": "1,0"}),
    (None, {"token": "wrapping", "wrap": "3"}),
    (None, {"expiry": "never", "renew": "1"}),
    (None, {"receiver": "none", "grant_fences": "1"}),
]
"""Requests as a preset (or none) and option values as a link writes them."""


def _flags(preset: str | None, changes: dict[str, str]) -> list[str]:
    """The same request as `fencing check` flags."""
    flags = ["check"] + (["--preset", preset] if preset else [])
    for name, text in changes.items():
        option = BY_OPTION[name]
        if option.kind is Kind.FLAG:
            flags.append(option.flag if text == "1" else "--no-" + option.flag[2:])
        else:
            flags += [option.flag, text]
    return flags


def _from_cli(preset: str | None, changes: dict[str, str]) -> Design | str:
    """The design the command line makes, or the model's refusal."""
    args = build_parser().parse_args(_flags(preset, changes))
    try:
        return design_from_args(args)
    except DesignError as error:
        return str(error)


def _from_link(preset: str | None, changes: dict[str, str]) -> Design | str:
    """The design a link makes, or the model's refusal inside the link's message."""
    params = {**({"preset": preset} if preset else {}), **changes}
    try:
        return design_from_params(params)
    except LinkError as error:
        return str(error).removeprefix("the link's design is refused: ")


@pytest.mark.parametrize("preset, changes", REQUESTS)
def test_the_command_line_and_a_link_make_the_same_design_or_refusal(
    preset: str | None, changes: dict[str, str]
) -> None:
    """Each request gives the same design, or the same refusal, from flags and from a link."""
    assert _from_cli(preset, changes) == _from_link(preset, changes)


def test_a_changed_token_keeps_the_presets_restarts_and_says_what_to_change() -> None:
    """`--preset volatile-counter --token counter` is refused in both, with what to change
    and which option of the preset was kept."""
    refusal = _from_cli("volatile-counter", {"token": "counter"})
    assert refusal == (
        "coordinator_restarts only apply to token counter-volatile: change the "
        "token or set coordinator_restarts to 0 (coordinator_restarts = 1 kept from the design "
        "you started from)"
    )
    assert _from_cli("volatile-counter", {"token": "counter", "coordinator_restarts": "0"}) == (
        Design()
    )


def test_with_changes_refuses_unknown_options_and_keeps_the_rest() -> None:
    """Unknown names are refused with the known ones; untouched options keep their values."""
    base = PRESETS["volatile-counter"].design
    assert base.with_changes({"coordinator_restarts": 2}).token == base.token
    assert base.with_changes({}) == base
    with pytest.raises(DesignError, match="is not a design option: use token"):
        base.with_changes({"colour": "red"})


def test_forms_and_compact_links_go_the_same_way() -> None:
    """The form and the `d=` link of every preset give back the preset's design."""
    for preset in PRESETS.values():
        assert design_from_values(values_of(preset.design)) == preset.design
        assert (
            decode_design(
                "~".join(
                    f"{k}:{BY_OPTION[k].to_text(v)}" for k, v in preset.design.changes().items()
                )
            )
            == preset.design
        )


def test_the_kept_note_names_only_options_the_changes_left_at_a_preset_value() -> None:
    """No note when every option of the refusing combination was given, or when the kept
    one is at its default; the model's message itself is unchanged."""
    volatile = PRESETS["volatile-counter"].design
    with pytest.raises(DesignError) as refused:
        volatile.with_changes({"token": "counter", "coordinator_restarts": 2})
    assert str(refused.value).endswith("set coordinator_restarts to 0")
    with pytest.raises(DesignError) as refused:
        Design().with_changes({"fenced_reads": True})
    assert str(refused.value) == "fenced_reads needs workload rmw: set workload to rmw or drop it"
    with pytest.raises(DesignError) as refused:
        volatile.with_changes({"token": "teapot"})
    assert "kept" not in str(refused.value) and "choose one of" in str(refused.value)
