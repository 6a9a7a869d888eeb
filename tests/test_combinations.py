"""Refused combinations as rows: each refuses with its own message, and the docs show them."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest

from fencing.golden import MODEL_DOC, REGIONS, refused_table
from model.combinations import COMBINATIONS, Combination, When, refusals
from model.design import Design, DesignError
from model.options import BY_OPTION, OPTIONS, Kind

FEW_VALUES: dict[Kind, tuple[Any, ...]] = {
    Kind.COUNT: (0, 1),
    Kind.FLAG: (False, True),
    Kind.OFFSETS: ((), (1, 0)),
}


def _grid() -> list[dict[str, Any]]:
    """Every combination of a few values per option."""
    choices = [
        tuple(o.choices) if o.kind is Kind.CHOICE and o.choices else FEW_VALUES[o.kind]
        for o in OPTIONS
    ]
    names = [o.name for o in OPTIONS]
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*choices)]


def test_the_docs_table_is_rendered_from_the_rows() -> None:
    """docs/model.md's refused combinations are exactly the rendering of the rows."""
    (region,) = [r for r in REGIONS if r.make is refused_table]
    assert region.path == MODEL_DOC
    assert region.current() == "\n".join(refused_table({})) + "\n"
    assert region.current().count("\n") == len(COMBINATIONS) + 2


@pytest.mark.parametrize("row", COMBINATIONS, ids=lambda row: " ∧ ".join(row.options))
@pytest.mark.slow
def test_each_row_alone_refuses_a_design_with_its_message(row: Combination) -> None:
    """Some settings match this row and no other: `Design` refuses them with its message,
    which names every option the row concerns."""
    for settings in _grid():
        shape = SimpleNamespace(**settings)
        if row.refuses(shape) and len(refusals(shape)) == 1:
            with pytest.raises(DesignError) as refused:
                Design(**settings)
            assert str(refused.value) == row.message_for(shape)
            assert all(name in str(refused.value) for name in row.options)
            return
    pytest.fail(f"no settings are refused by {row.options} alone")


def test_rows_name_real_options_and_values() -> None:
    """Every condition names an option and values of the option's own type."""
    for row in COMBINATIONS:
        for when in row.when:
            option = BY_OPTION[when.option]
            assert all(option.coerce(value) == value for value in when.values)


def test_conditions_are_written_as_the_docs_write_them() -> None:
    """`=`, `≠`, `∈` and `∉` by the number of values; a condition without values is refused."""
    with pytest.raises(ValueError, match="at least one value"):
        When("token", ())
    assert When("receiver", ("none", "equality")).text() == "receiver ∈ {none, equality}"
    assert When("token", ("random", "wrapping"), negated=True).text() == (
        "token ∉ {random, wrapping}"
    )
    assert When("skew", ((),), negated=True).text() == "skew ≠ ()"
    assert When("fenced_reads", (True,)).text() == "fenced_reads = true"
