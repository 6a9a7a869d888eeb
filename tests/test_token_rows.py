"""Each token source is one row that carries its meaning: complete, and agreeing with the model."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest

from fencing.golden import REGIONS, token_values_table
from model.design import Bounds, Design, DesignError
from model.layout import domain_sizes
from model.options import BY_OPTION, OPTION_NAMES, TOKEN_ROWS, TOKEN_TABLE, Token, TokenRow
from proofs.invariants import CATALOG, TOKEN_SPECIFIC

BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=3, writes=1)


def _resolve(qualified: str) -> Any:
    """The object a name such as `model.rules:RuleBuilder.new_token` names."""
    module_name, _, rest = qualified.partition(":")
    target: Any = importlib.import_module(module_name)
    for part in rest.split("."):
        target = getattr(target, part)
    return target


def _valid_design(token: Token) -> Design:
    """A design with this token and the fewest other options it needs."""
    changes: dict[str, Any] = {"token": token}
    if token.row.reset_by_coordinator_restart:
        changes["coordinator_restarts"] = 1
    return Design().with_changes(changes)


def test_every_token_has_exactly_one_row_in_its_order() -> None:
    """No `Token` member without a row, none with two, and rows in the members' order."""
    assert [row.token for row in TOKEN_TABLE] == list(Token)
    assert set(TOKEN_ROWS) == set(Token) and len(TOKEN_ROWS) == len(TOKEN_TABLE)
    for token in Token:
        assert token.row.token is token


def test_a_row_has_every_field_and_no_field_has_a_default_but_the_rule() -> None:
    """A new row must say everything: only `rule` may be left out (all share one rule)."""
    defaults = [
        f.name
        for f in dataclasses.fields(TokenRow)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    ]
    assert defaults == ["rule"]
    with pytest.raises(TypeError):
        TokenRow(Token.COUNTER, "words", "mirrors")  # type: ignore[call-arg]


@pytest.mark.parametrize("row", TOKEN_TABLE, ids=lambda row: str(row.token))
def test_each_rows_fields_are_filled_and_point_at_real_things(row: TokenRow) -> None:
    """Words and mirrors are sentences, shaping options and candidates exist, the rule has a
    case for the token, and the ceiling is a positive whole number."""
    assert row.words.strip() and row.mirrors.strip() and row.words != str(row.token)
    assert set(row.shaped_by) <= set(OPTION_NAMES)
    assert set(row.candidates) <= TOKEN_SPECIFIC
    rule = _resolve(row.rule)
    assert callable(rule) and f"Token.{row.token.name}" in inspect.getsource(rule)
    ceiling = row.ceiling(_valid_design(row.token), BOUNDS)
    assert isinstance(ceiling, int) and ceiling >= 1


def test_every_token_specific_candidate_is_named_by_some_row() -> None:
    """A candidate the rows never name would never be tried: each is named, and is in the
    prover's catalogue."""
    named = {name for row in TOKEN_TABLE for name in row.candidates}
    assert named == TOKEN_SPECIFIC
    assert {builder.__name__ for builder in CATALOG} >= TOKEN_SPECIFIC


@pytest.mark.parametrize("token", list(Token), ids=str)
def test_the_rows_implications_agree_with_the_model(token: Token) -> None:
    """The counter, the unused-value column, restarts, shaping options and the form's words
    each behave as the row says."""
    row, design = token.row, _valid_design(token)
    sizes = domain_sizes(design, BOUNDS)
    assert (sizes["issued"] > 1) is row.uses_counter
    assert ("used[1]" in sizes) is row.picks_unused_value
    assert sizes["tok[1]"] == row.ceiling(design, BOUNDS) + 1
    restarted = {"token": token, "coordinator_restarts": 1}
    if row.reset_by_coordinator_restart:
        assert Design().with_changes(restarted).coordinator_restarts == 1
    else:
        with pytest.raises(DesignError, match="coordinator_restarts only apply"):
            Design().with_changes(restarted)
    for name, value in (("skew", (1, 0)), ("wrap", 3)):
        shaped = {
            "token": token,
            name: value,
            **({"coordinator_restarts": 1} if row.reset_by_coordinator_restart else {}),
        }
        if name in row.shaped_by:
            assert getattr(Design().with_changes(shaped), name) == value
        else:
            with pytest.raises(DesignError, match=f"{name} only applies"):
                Design().with_changes(shaped)
    assert BY_OPTION["token"].word(token) == row.words


def test_the_docs_table_of_values_is_rendered_from_the_rows() -> None:
    """docs/model.md's table of these values is exactly the rendering of the rows."""
    (region,) = [r for r in REGIONS if r.make is token_values_table]
    assert region.current() == "\n".join(token_values_table({})) + "\n"
    assert region.current().count("\n") == len(TOKEN_TABLE) + 2
