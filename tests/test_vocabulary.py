"""Each vocabulary of the model is one table, and every surface that speaks it has a row for
every entry: a kind of step without a narrator, a link code, a look or a rule fails here."""

from __future__ import annotations

import argparse
from dataclasses import fields, replace

import pytest

from fencing.arguments import bounds_from_args
from fencing.cli import build_parser
from fencing.command_line import bounds_flags
from fencing.golden import core_table
from model.actions import ACTION_ROWS, BY_CODE, BY_KIND, Action, ActionKind, Actor
from model.check.random_search import WEIGHTS, group_of
from model.design import (
    BOUNDS,
    BY_BOUND,
    REFERENCE_BOUNDS,
    Bound,
    Bounds,
    Design,
    DesignError,
    MarkStore,
    Receiver,
    Token,
    Workload,
)
from model.explain.narration import NARRATORS
from model.formats.trace import replay
from model.layout import BY_VARIABLE, Layout, Shape
from model.options import ADMISSION_ROWS, AdmissionTest
from model.rules import RuleBuilder
from model.system import System
from webapp.show.design_form import bounds_from_values, limits_text
from webapp.show.links import (
    BOUND_COUNT_WORD,
    LinkError,
    bounds_from_params,
    bounds_params,
    decode_bounds,
    encode_bounds,
)
from webapp.show.looks import ACTION_LOOKS, STEP_LOOKS
from webapp.show.playground import CODES, decode_action, encode_action
from webapp.show.views import actor_rows

EVERY_KIND_DESIGNS = (
    Design(renew=True, crashes=1),
    Design(storage_restarts=1, hwm=MarkStore.VOLATILE),
    Design(coordinator_restarts=1, token=Token.COUNTER_VOLATILE),
    Design(receiver=Receiver.FENCED_NONATOMIC),
)
"""Between them, designs whose rules take every kind of step."""


def instance(kind: ActionKind) -> Action:
    """An action of this kind, with worker 1 when the kind takes a worker."""
    return Action(kind, 1 if kind.row.takes_worker else 0)


def test_every_kind_has_exactly_one_row_in_order() -> None:
    assert [row.kind for row in ACTION_ROWS] == list(ActionKind)
    assert set(BY_KIND) == set(ActionKind)


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_has_a_narrator(kind: ActionKind) -> None:
    assert kind in NARRATORS


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_has_a_link_code_that_round_trips(kind: ActionKind) -> None:
    action = instance(kind)
    code = encode_action(action)
    assert code.startswith(CODES[kind])
    assert decode_action(code, 1) == action
    assert BY_CODE[kind.row.code] is kind


def test_link_codes_are_unique_and_old_links_keep_their_meaning() -> None:
    assert len(BY_CODE) == len(ActionKind)
    old = "T.A1.S1.D1.C1.P1.R1.N1.RS.RC.K1.A2v3"
    decoded = [decode_action(part, n) for n, part in enumerate(old.split("."), 1)]
    assert [str(a.name) for a in decoded] == [*ActionKind, "Acquire"]
    assert ".".join(encode_action(a) for a in decoded) == old


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_has_a_look(kind: ActionKind) -> None:
    """A reception is drawn with the receiver's outcome; every other step with its own marker."""
    if kind.row.reception:
        assert kind.row.look is None and kind not in ACTION_LOOKS
    else:
        assert ACTION_LOOKS[kind] in STEP_LOOKS
        assert ACTION_LOOKS[kind].name == kind.row.look


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_is_a_rule_taken_by_its_rows_actor(kind: ActionKind) -> None:
    rules = [
        rule
        for design in EVERY_KIND_DESIGNS
        for rule in RuleBuilder.of(design, Bounds()).rules()
        if rule.action.name is kind
    ]
    assert rules, f"no design's rules take a {kind} step"
    for rule in rules:
        assert bool(rule.action.worker) == kind.row.takes_worker
        assert rule.actor == rule.action.actor
        expected = "W" if kind.row.actor is Actor.WORKER else kind.row.actor.value
        assert rule.actor.startswith(expected)
        assert group_of(rule) in WEIGHTS, "the random search must have odds for every step"


@pytest.mark.parametrize("kind", list(ActionKind))
def test_every_kind_has_a_button_naming_its_worker(kind: ActionKind) -> None:
    label = instance(kind).button("write")
    assert label and "{" not in label
    assert ("W1" in label) == kind.row.takes_worker


def test_a_kind_and_its_name_are_the_same_key() -> None:
    assert Action("Crash", 2) == Action(ActionKind.CRASH, 2)
    assert {ActionKind.TICK: 1}["Tick"] == 1
    assert Action.from_dict({"name": "Renew", "worker": 1}).name is ActionKind.RENEW


def test_every_admission_test_has_exactly_one_row_in_order() -> None:
    assert [row.test for row in ADMISSION_ROWS] == list(AdmissionTest)
    assert all(row.compares_token <= row.checks for row in ADMISSION_ROWS)


@pytest.mark.parametrize("receiver", list(Receiver))
def test_the_rule_makes_the_test_its_receivers_row_names(receiver: Receiver) -> None:
    """`Admission.test` is the receiver row's test, whatever state it is asked in."""
    system = System(Design(receiver=receiver), Bounds())
    admission = system.builder.admission(system.view(system.initial()), 1)
    assert admission.test is receiver.row.test
    assert (admission.against is not None) == admission.test.row.compares_token
    assert receiver.checks_anything == admission.test.row.checks


def test_every_admission_test_is_some_receivers() -> None:
    assert {receiver.row.test for receiver in Receiver} == set(AdmissionTest)


VARIABLE_DESIGNS = (
    Design(
        token=Token.RANDOM,
        workload=Workload.RMW,
        worker_check=True,
        crashes=1,
        storage_restarts=1,
        hwm=MarkStore.VOLATILE,
    ),
    Design(receiver=Receiver.EQUALITY),
    Design(coordinator_restarts=1, token=Token.COUNTER_VOLATILE),
)
"""Between them, designs whose layouts use every state variable."""


def test_every_column_of_every_layout_is_a_variable_with_an_owner() -> None:
    used = set()
    for design in VARIABLE_DESIGNS:
        for column in Layout.of(design, Bounds()).used_columns():
            family = column.split("[", 1)[0]
            assert family in BY_VARIABLE, f"{column} has no row in model.layout.VARIABLES"
            used.add(family)
    assert used == set(BY_VARIABLE)


def test_the_state_table_shows_every_variable_in_its_owners_row() -> None:
    """Each used variable is shown exactly once, in the row of the actor that owns it."""
    for design in VARIABLE_DESIGNS:
        trace = replay(design, Bounds(), [])
        shown: dict[str, str] = {}
        for row in actor_rows(trace, 0):
            for part in row.variables.split(", "):
                if "=" in part:
                    shown[part.split("=", 1)[0]] = row.actor
        for column in trace.system.layout.used_columns():
            variable = BY_VARIABLE[column.split("[", 1)[0]]
            if variable.shape is Shape.PER_VALUE:
                continue  # handed-out token values are no actor's state to show
            owner = variable.owner
            expected = column[column.index("[") + 1 : -1] if owner is Actor.WORKER else None
            assert shown.pop(column) == (f"W{expected}" if expected else owner.value)
        assert not shown


def test_the_bounds_fields_are_the_bounds_table() -> None:
    assert [f.name for f in fields(Bounds)] == [bound.name for bound in BOUNDS]
    assert Bounds() == Bounds(**{bound.name: bound.default for bound in BOUNDS})


def _check_flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The flags of `fencing check`."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(commands.choices["check"]._actions)


@pytest.mark.parametrize("bound", BOUNDS, ids=lambda bound: bound.name)
def test_every_surface_reads_a_bound_as_the_table_says(bound: Bound) -> None:
    """Flags, links, forms and the shown command line agree with the bound's row: its name,
    letter, words, range and default."""
    parser = build_parser()
    flag = next(a for a in _check_flags(parser) if f"--{bound.name}" in a.option_strings)
    assert flag.metavar == bound.letter
    assert bound.label in flag.help and bound.span in flag.help
    assert flag.default == getattr(REFERENCE_BOUNDS, bound.name)
    for value in (bound.low, bound.high):
        sized = replace(Bounds(), **{bound.name: value})
        args = parser.parse_args(["check", *bounds_flags(sized)])
        assert bounds_from_args(args) == sized
        assert decode_bounds(encode_bounds(sized)) == sized
        assert bounds_from_params(bounds_params(sized), Bounds()) == sized
        assert bounds_from_values({bound.name: value}) == sized
    with pytest.raises(LinkError, match=f"from {bound.low} to {bound.high}"):
        bounds_from_params({bound.name: str(bound.high + 1)}, Bounds())
    with pytest.raises(DesignError, match=f"{bound.low}..{bound.high}"):
        Bounds(**{bound.name: bound.high + 1})
    assert BY_BOUND[bound.name].widget_label == f"{bound.form_label} ({bound.span})"
    assert f"{bound.label.lower()} {bound.span}" in limits_text()
    assert f"{bound.letter}={getattr(REFERENCE_BOUNDS, bound.name)}" in REFERENCE_BOUNDS.short()


def test_a_bad_link_names_the_bounds_in_the_tables_order() -> None:
    with pytest.raises(LinkError) as caught:
        decode_bounds("1.2")
    letters = ".".join(bound.letter for bound in BOUNDS)
    assert f"{BOUND_COUNT_WORD} whole numbers {letters}" in str(caught.value)
    assert BOUND_COUNT_WORD == "five" and len(BOUNDS) == 5


def test_the_golden_core_table_heads_its_sizes_with_the_letters() -> None:
    golden = {"core": []}
    header = core_table(golden)[0]
    assert header.startswith("| " + " | ".join(bound.letter for bound in BOUNDS) + " |")
