"""Each receiver rule is one row that carries its meaning: complete, and agreeing with the model."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest

from fencing.golden import REGIONS, receiver_values_table
from model.design import Bounds, Design, DesignError
from model.layout import domain_sizes
from model.options import BY_OPTION, RECEIVER_ROWS, RECEIVER_TABLE, Receiver, ReceiverRow
from model.system import System
from proofs.invariants import CATALOG, RECEIVER_SPECIFIC

BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def _resolve(qualified: str) -> Any:
    """The object a name such as `model.rules:RuleBuilder.admission` names."""
    module_name, _, rest = qualified.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in rest.split("."):
        target = getattr(target, part)
    return target


def test_every_receiver_has_exactly_one_row_in_its_order() -> None:
    """No `Receiver` member without a row, none with two, and rows in the members' order."""
    assert [row.receiver for row in RECEIVER_TABLE] == list(Receiver)
    assert set(RECEIVER_ROWS) == set(Receiver) and len(RECEIVER_ROWS) == len(RECEIVER_TABLE)
    for receiver in Receiver:
        assert receiver.row.receiver is receiver


def test_a_row_has_every_field_and_only_the_shared_functions_have_defaults() -> None:
    """A new row must say everything but the rule and narrator that all rows share."""
    defaults = [
        f.name
        for f in dataclasses.fields(ReceiverRow)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    ]
    assert defaults == ["rule", "narrator"]


@pytest.mark.parametrize("row", RECEIVER_TABLE, ids=lambda row: str(row.receiver))
def test_each_rows_test_is_the_rules_own_and_its_functions_exist(row: ReceiverRow) -> None:
    """The row's test is the one the rule makes, the rule has a case for the receiver, the
    narrator exists, and the candidates are the prover's."""
    system = System(Design(receiver=row.receiver), BOUNDS)
    admission = system.builder.admission(system.view(system.initial()), 1)
    assert admission.test == row.test
    rule = _resolve(row.rule)
    assert f"Receiver.{row.receiver.name}" in inspect.getsource(rule)
    assert callable(_resolve(row.narrator))
    assert set(row.candidates) <= RECEIVER_SPECIFIC
    assert row.words.strip() and BY_OPTION["receiver"].word(row.receiver) == row.words


def test_every_receiver_specific_candidate_is_named_by_some_row() -> None:
    """A candidate the rows never name would never be tried."""
    named = {name for row in RECEIVER_TABLE for name in row.candidates}
    assert named == RECEIVER_SPECIFIC
    assert {builder.__name__ for builder in CATALOG} >= RECEIVER_SPECIFIC


@pytest.mark.parametrize("receiver", list(Receiver), ids=str)
def test_the_marks_and_steps_agree_with_the_layout_and_the_rules(receiver: Receiver) -> None:
    """The marks a row keeps are the columns the layout gives it; a split receiver has Check
    and Apply steps; fenced reads are accepted exactly where the row checks reads."""
    row = receiver.row
    sizes = domain_sizes(Design(receiver=receiver), BOUNDS)
    assert (sizes["hwm"] > 1) is row.keeps_high_water_mark
    assert (sizes["mark"] > 1) is row.keeps_equality_mark
    actions = {rule.action.name for rule in System(Design(receiver=receiver), BOUNDS).rules}
    assert ({"Check", "Apply"} <= actions) is row.splits_check_and_write
    assert ("Deliver" in actions) is not row.splits_check_and_write
    fenced_reads = {"receiver": receiver, "workload": "rmw", "fenced_reads": True}
    if row.checks_reads:
        assert Design().with_changes(fenced_reads).fenced_reads
    else:
        with pytest.raises(DesignError, match="fenced_reads has no effect"):
            Design().with_changes(fenced_reads)


def test_the_docs_table_of_values_is_rendered_from_the_rows() -> None:
    """docs/model.md's table of these values is exactly the rendering of the rows."""
    (region,) = [r for r in REGIONS if r.make is receiver_values_table]
    assert region.current() == "\n".join(receiver_values_table({})) + "\n"
    assert region.current().count("\n") == len(RECEIVER_TABLE) + 2
