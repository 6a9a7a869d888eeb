"""One option table: the CLI, the forms, the links and the exercise files all come from it."""

from __future__ import annotations

from dataclasses import fields

import pytest

from fencing.cli import build_parser
from model.design import Bounds, Design, DesignError
from model.layout import Layout
from model.options import BY_OPTION, OPTIONS, Kind, Receiver
from model.options import option as option_named
from model.presets import PRESETS_LIST
from webapp.show.design_form import OPTION_FIELDS, design_from_values, values_of
from webapp.show.links import decode_design, design_from_params, design_params, encode_design


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


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("worker_check", "1", True),
        ("worker_check", "TRUE", True),
        ("worker_check", " yes ", True),
        ("worker_check", "on", True),
        ("worker_check", "0", False),
        ("worker_check", "false", False),
        ("worker_check", "no", False),
        ("worker_check", "Off", False),
        ("storage_restarts", "3", 3),
        ("wrap", " 0 ", 0),
        ("receiver", "lease-aware", Receiver.LEASE_AWARE),
        ("skew", "", ()),
        ("skew", "2", (2,)),
    ],
)
def test_option_text_is_read_exactly(name: str, text: str, value: object) -> None:
    option = BY_OPTION[name]
    assert option.parse_text(text) == value
    assert option.parse_text(option.to_text(value)) == value


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("worker_check", "maybe", "worker_check must be 1 or 0, not 'maybe'"),
        ("storage_restarts", "4", "storage_restarts = 4 is out of range: allowed 0..3"),
        ("storage_restarts", "1000", "storage_restarts must be a whole number, not '1000'"),
        ("wrap", "x", "wrap must be a whole number, not 'x'"),
        ("receiver", "x" * 41, "the value is longer than 40 characters"),
        ("token", "Counter", "token = 'Counter' is not known: choose one of counter,"),
    ],
)
def test_bad_option_text_is_refused_with_what_is_allowed(
    name: str, text: str, message: str
) -> None:
    with pytest.raises(DesignError) as refused:
        BY_OPTION[name].parse_text(text)
    assert message in str(refused.value)


def test_option_words_and_labels() -> None:
    receiver, flag, skew = BY_OPTION["receiver"], BY_OPTION["worker_check"], BY_OPTION["skew"]
    assert receiver.word("none") == "nothing (plain store)"
    assert flag.word(True) == "yes" and flag.word(False) == "no"
    assert skew.word((1, 0)) == "1, 0" and skew.word(()) == "default"
    assert receiver.flag == "--receiver" and BY_OPTION["storage_restarts"].flag == (
        "--storage-restarts"
    )
    assert option_named("hwm") is BY_OPTION["hwm"]
    with pytest.raises(DesignError, match="is not a design option"):
        option_named("colour")


def test_designs_and_bounds_in_words() -> None:
    assert Bounds().in_words() == (
        "2 workers, lease 2 ticks, horizon 4 ticks, 2 grants, 1 write per grant"
    )
    assert Bounds(1, 1, 1, 1, 2).in_words() == (
        "1 worker, lease 1 tick, horizon 1 tick, 1 grant, 2 writes per grant"
    )
    assert Design().in_words().startswith("the core design")
    assert Design(receiver="none", worker_check=True).in_words() == (
        "What the resource checks: nothing (plain store); Worker checks its own lease: yes"
    )
    assert Design(receiver="none", worker_check=True).label() == (
        "receiver=none, worker_check=true"
    )


def test_words_fall_back_to_the_value_and_text_limits_are_exact() -> None:
    assert BY_OPTION["storage_restarts"].word(2) == "2"
    assert BY_OPTION["token"].word("counter") == "durable counter (1, 2, 3, …)"
    skew = BY_OPTION["skew"]
    forty = "1,0".ljust(40)
    assert len(forty) == 40 and skew.parse_text(forty) == (1, 0)
    with pytest.raises(DesignError, match="longer than 40 characters"):
        skew.parse_text("1" + " " * 40)
    assert BY_OPTION["wrap"].parse_text("008") == 8
    with pytest.raises(DesignError, match="must be a whole number, not '0008'"):
        BY_OPTION["wrap"].parse_text("0008")
