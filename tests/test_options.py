"""One option table: the CLI, the forms, the links and the exercise files all come from it."""

from __future__ import annotations

from dataclasses import fields

import pytest

from fencing.cli import build_parser
from model.design import Bounds, Design, DesignError
from model.layout import Layout
from model.options import OPTIONS, Kind, Receiver
from model.presets import PRESETS_LIST
from webapp.design_form import OPTION_FIELDS, design_from_values, values_of
from webapp.links import decode_design, design_from_params, design_params, encode_design


def test_the_design_has_exactly_the_options_of_the_table() -> None:
    assert [f.name for f in fields(Design)] == [o.name for o in OPTIONS]
    assert [o.name for o in OPTION_FIELDS] == [o.name for o in OPTIONS]


def test_every_choice_has_plain_words_and_every_option_a_label() -> None:
    for option in OPTIONS:
        assert option.label and option.help and not option.label.islower()
        if option.kind is Kind.CHOICE:
            assert set(option.words) == set(option.values), option.name


def test_every_option_has_exactly_one_cli_flag() -> None:
    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    flags = {s for action in check._actions for s in action.option_strings}
    for option in OPTIONS:
        assert option.flag in flags, option.flag


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_every_preset_round_trips_through_links_and_forms(preset: object) -> None:
    design = preset.design  # type: ignore[attr-defined]
    assert design_from_params(design_params(design)) == design
    assert decode_design(encode_design(design)) == design
    assert design_from_values(values_of(design)) == design
    assert Design.from_dict(design.to_dict()) == design


def test_text_values_are_parsed_never_evaluated() -> None:
    receiver = next(o for o in OPTIONS if o.name == "receiver")
    with pytest.raises(DesignError, match="is not known"):
        receiver.parse_text("__import__('os')")
    skew = next(o for o in OPTIONS if o.name == "skew")
    assert skew.parse_text(" 1, 0 ") == (1, 0)
    for bad in ("1e3", "-1", "0x10", "1,,2a", "9" * 50):
        with pytest.raises(DesignError):
            skew.parse_text(bad)


def test_every_receiver_value_gets_its_mark_columns_from_the_enum() -> None:
    """A receiver's properties in the enum decide which mark columns its states have."""
    for receiver in Receiver:
        layout = Layout.of(Design(receiver=receiver), Bounds())
        sizes = dict(zip(layout.columns, layout.sizes, strict=True))
        assert (sizes["hwm"] > 1) == receiver.keeps_high_water_mark, receiver
        assert (sizes["mark"] > 1) == receiver.keeps_equality_mark, receiver
        assert (sizes["pending[1]"] == 3) == receiver.splits_check_and_write, receiver
