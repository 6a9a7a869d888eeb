"""Validation of designs and bounds: every bad value names the field, value and range."""

from __future__ import annotations

import pytest

from model.design import Bounds, Design, DesignError
from model.layout import Layout
from model.system import System


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"workers": 0}, ["workers = 0", "1..5"]),
        ({"workers": 50}, ["workers = 50", "1..5"]),
        ({"lease": -1}, ["lease = -1", "1..12"]),
        ({"horizon": 31}, ["horizon = 31", "0..30"]),
        ({"grants": 0}, ["grants = 0"]),
        ({"writes": 9}, ["writes = 9"]),
        ({"workers": 2.5}, ["workers must be a whole number", "2.5"]),
        ({"lease": True}, ["lease must be a whole number"]),
    ],
)
def test_bad_bounds_name_field_value_and_range(kwargs: dict, words: list[str]) -> None:
    """Out-of-range or non-integer bounds are refused with a message naming them."""
    with pytest.raises(DesignError) as caught:
        Bounds(**kwargs)
    for word in words:
        assert word in str(caught.value)


@pytest.mark.parametrize(
    "kwargs, advice",
    [
        ({"token": "uuid"}, "choose one of counter"),
        ({"receiver": "magic"}, "choose one of none"),
        ({"fenced_reads": True}, "needs workload rmw"),
        ({"fenced_reads": True, "workload": "rmw", "receiver": "none"}, "has no effect"),
        ({"storage_restarts": 1}, "set hwm to volatile"),
        ({"hwm": "volatile"}, "storage_restarts of at least 1"),
        ({"hwm": "volatile", "storage_restarts": 1, "receiver": "none"}, "keeps no mark"),
        ({"coordinator_restarts": 1}, "counter-volatile"),
        ({"token": "counter-volatile"}, "coordinator_restarts of at least 1"),
        ({"skew": (1, 0)}, "local-clock"),
        ({"wrap": 3}, "token wrapping"),
        ({"grant_fences": True, "receiver": "lease-aware"}, "does not keep"),
        ({"worker_check": "yes"}, "true or false"),
    ],
)
def test_nonsense_combinations_say_what_to_change(kwargs: dict, advice: str) -> None:
    """Options that make no sense together are refused with what to change."""
    with pytest.raises(DesignError, match=advice):
        Design(**kwargs)


def test_skew_length_must_match_workers() -> None:
    """A skew list must give one offset per worker."""
    design = Design(token="local-clock", skew=(1, 0, 0))
    with pytest.raises(DesignError, match="3 offsets but there are 2 workers"):
        System(design, Bounds(workers=2))
    assert System(design, Bounds(workers=3)).layout.bounds.workers == 3


def test_designs_round_trip_through_dicts() -> None:
    """to_dict/from_dict preserve a design; unknown keys are refused."""
    design = Design(token="local-clock", skew=(2, 0), receiver="fenced-strict")
    assert Design.from_dict(design.to_dict()) == design
    with pytest.raises(DesignError, match="unknown field 'colour'"):
        Design.from_dict({"colour": "red"})
    with pytest.raises(DesignError, match="must be an object"):
        Bounds.from_dict([1, 2])


def test_unused_options_add_no_columns_values() -> None:
    """With every option at its default, only the core's variables can vary."""
    layout = Layout.of(Design(), Bounds())
    varying = {c.split("[")[0] for c in layout.used_columns()}
    assert varying == {
        "now",
        "holder",
        "expires",
        "issued",
        "grants",
        "hwm",
        "last",
        "lastg",
        "tok",
        "gid",
        "sent",
        "pending",
    }
    assert Layout.of(Design(), Bounds()).initial() == (0,) * len(layout.columns)


def test_ghosts_equal_core_variables_in_the_core() -> None:
    """In the core gid = tok, lastg = last and grants = issued (docs/model.md#variables)."""
    from model.check.reference import reference_search

    system = System(Design(receiver="none"), Bounds(2, 2, 4, 2, 1))
    for state in reference_search(system.design, system.bounds).distance:
        s = system.view(state)
        assert s.grants == s.issued and s.lastg == s.last
        assert all(s.gid[w] == s.tok[w] for w in (1, 2))


def test_each_bound_is_one_row_that_every_surface_reads() -> None:
    from model.design import BOUND_LIMITS, BOUNDS
    from webapp.show.design_form import BOUND_HELP

    assert [b.name for b in BOUNDS] == list(Bounds().to_dict())
    assert {b.name: b.default for b in BOUNDS} == Bounds().to_dict()
    assert {b.name: (b.low, b.high) for b in BOUNDS} == BOUND_LIMITS
    assert BOUND_HELP["lease"] == "Lease, in ticks (L)"
    assert Bounds(3, 4, 9, 5, 2).short() == "W=3 L=4 T=9 G=5 K=2"
    assert Bounds(1, 1, 1, 1, 1).in_words() == (
        "1 worker, lease 1 tick, horizon 1 tick, 1 grant, 1 write per grant"
    )
    for bound in BOUNDS:
        with pytest.raises(DesignError, match=f"{bound.name} = {bound.high + 1} is out of range"):
            Bounds(**{**Bounds().to_dict(), bound.name: bound.high + 1})
