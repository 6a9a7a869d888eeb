"""The catalogue of real parts and `fencing advise`: the mapping, the verdicts and every fix.

The mapping below is the specification of the catalogue (which model options each real
part stands for); the advice is checked against fresh explorations, never against itself.
"""

from __future__ import annotations

import json
from itertools import product

import pytest

from model.advice import Fix, advise, single_changes
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.explorer import explore
from model.stack import BY_ID, CATALOGUE, Slot, Stack, parts_of
from model.verdicts import Status
from tests.cli_helpers import run

EXPECTED_MODEL = {
    "etcd-create-revision": {"token": "counter"},
    "etcd-mod-revision": {"token": "counter"},
    "etcd-version": {"token": "key-version"},
    "etcd-lease-id": {"token": "random"},
    "zookeeper-sequence": {"token": "counter"},
    "zookeeper-data-version": {"token": "key-version"},
    "consul-modify-index": {"token": "counter"},
    "redis-random-value": {"token": "random"},
    "redis-incr": {"token": "counter-volatile", "coordinator_restarts": 1},
    "worker-clock": {"token": "local-clock"},
    "wrapping-sequence": {"token": "wrapping", "wrap": 2},
    "plain-write": {"receiver": "none"},
    "sql-conditional-update": {"receiver": "fenced"},
    "sql-conditional-update-strict": {"receiver": "fenced-strict"},
    "sql-select-then-update": {"receiver": "fenced-nonatomic"},
    "first-token-wins": {"receiver": "equality"},
    "etcd-txn-on-lock-key": {"receiver": "lease-aware"},
    "fence-in-memory": {"hwm": "volatile", "storage_restarts": 1},
    "fence-at-grant": {"grant_fences": True},
    "worker-checks-lease": {"worker_check": True},
    "read-modify-write": {"workload": "rmw"},
    "fenced-reads": {"fenced_reads": True},
    "keepalive": {"renew": True},
    "lock-without-lease": {"expiry": "never"},
    "holder-may-crash": {"crashes": 1},
}

TOKENS = [p.id for p in parts_of(Slot.TOKEN)]
RESOURCES = [p.id for p in parts_of(Slot.RESOURCE)]


def test_the_catalogue_maps_each_part_to_its_options() -> None:
    assert {p.id: dict(p.options) for p in CATALOGUE} == EXPECTED_MODEL


def test_each_part_has_words_a_build_instruction_and_a_source() -> None:
    for entry in CATALOGUE:
        assert entry.words and entry.build and entry.source, entry.id
        if not entry.slot.single:
            assert entry.drop, f"{entry.id} says nothing of giving it up"
        if entry.slot is Slot.TOKEN:
            assert entry.noun, f"{entry.id} has no name for its token"


def test_the_mirrors_the_option_words_name_are_catalogue_parts() -> None:
    token = parts_of(Slot.TOKEN)
    assert any("create_revision" in p.words for p in token)
    assert "same etcd transaction" in BY_ID["etcd-txn-on-lock-key"].build


@pytest.mark.parametrize(("token", "resource"), list(product(TOKENS, RESOURCES)))
def test_a_stack_is_the_union_of_its_parts_options(token: str, resource: str) -> None:
    expected = {**EXPECTED_MODEL[token], **EXPECTED_MODEL[resource]}
    assert Stack.of(token, resource).design() == Design(**expected)


def test_a_part_in_the_wrong_slot_is_refused_by_name() -> None:
    with pytest.raises(DesignError, match="'plain-write' is not a choice for the token"):
        Stack.of("plain-write", "plain-write")
    with pytest.raises(DesignError, match="'etcd-lease-id' is not a practice"):
        Stack.of("etcd-version", "plain-write", ["etcd-lease-id"])


def test_parts_that_do_not_fit_together_are_refused_with_the_models_reason() -> None:
    with pytest.raises(DesignError, match=r"does not fit together.*keeps no mark"):
        Stack.of("etcd-create-revision", "plain-write", ["fence-in-memory"]).design()


def test_single_changes_touch_each_part_once() -> None:
    stack = Stack.of("etcd-lease-id", "sql-conditional-update", ["worker-checks-lease"])
    changes = list(single_changes(stack))
    choices = [p for p in CATALOGUE if not p.slot.single and not p.assumption]
    assert len(changes) == (len(TOKENS) - 1) + (len(RESOURCES) - 1) + len(choices)
    dropped = [c for c in changes if c.new is None]
    assert [c.old.id for c in dropped if c.old] == ["worker-checks-lease"]


def _violated(design: Design, bounds: Bounds) -> set[str]:
    """Violated properties of a fresh exploration (not the advisor's)."""
    result = explore(design, bounds)
    assert result.complete
    return {n for n, v in result.verdicts.items() if v.status is Status.VIOLATED}


def _check_fix(fix: Fix, broken: set[str], bounds: Bounds) -> None:
    """A fix's design explored afresh: it breaks nothing that held and repairs what it says."""
    after = _violated(fix.design, bounds)
    assert after == set(fix.still_violated)
    assert after <= broken, f"{fix.design.label()} breaks {after - broken}"
    assert after < broken
    assert set(fix.holds).isdisjoint(after)
    assert fix.stack.design() == fix.design


SMALL = Bounds(workers=2, lease=2, horizon=5, grants=2, writes=2)


@pytest.mark.parametrize(("token", "resource"), list(product(TOKENS, RESOURCES)))
def test_every_fix_of_every_token_and_resource_holds_when_explored(
    token: str, resource: str
) -> None:
    stack = Stack.of(token, resource)
    advice = advise(stack, SMALL)
    broken = _violated(advice.design, SMALL)
    assert set(advice.violated) == broken
    for fix in advice.fixes:
        _check_fix(fix, broken, SMALL)
    if broken:
        repaired = {n for f in advice.fixes for n in broken - set(f.still_violated)}
        assert repaired | {u.prop for u in advice.unfixed} == broken
    for name in broken:
        summary = advice.stories[name][0]
        assert summary.startswith(name) and stack.token.noun in summary


def test_the_engineers_etcd_and_postgres_stack_at_the_reference_bounds() -> None:
    stack = Stack.of("etcd-lease-id", "sql-conditional-update", ["worker-checks-lease"])
    advice = advise(stack)
    broken = _violated(advice.design, REFERENCE_BOUNDS)
    assert set(advice.violated) == broken == {"P2", "P3", "P4"}
    first = advice.fixes[0]
    assert [(c.old.id if c.old else None, c.new.id if c.new else None) for c in first.changes] == [
        ("etcd-lease-id", "etcd-create-revision")
    ]
    assert first.changes[0].build() == (
        "use the lock key's create_revision as the token instead of the lease ID"
    )
    for fix in advice.fixes:
        _check_fix(fix, broken, REFERENCE_BOUNDS)
    assert any(not fix.still_violated for fix in advice.fixes)


def test_a_safe_stack_needs_no_fix() -> None:
    advice = advise(Stack.of("etcd-create-revision", "etcd-txn-on-lock-key"), SMALL)
    assert advice.violated == () and advice.fixes == () and advice.stories == {}


def test_advise_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["advise", "--token", "etcd-lease-id", "--resource", "plain-write", "--json"], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["stack"] == {"token": "etcd-lease-id", "resource": "plain-write", "practices": []}
    assert data["design"] == Stack.of("etcd-lease-id", "plain-write").design().to_dict()
    assert data["bounds"] == REFERENCE_BOUNDS.to_dict()
    fresh = explore(Stack.of("etcd-lease-id", "plain-write").design(), REFERENCE_BOUNDS)
    for name, verdict in fresh.verdicts.items():
        assert data["properties"][name]["status"] == str(verdict.status)
        assert data["properties"][name]["shortest"] == verdict.shortest
    assert data["fixes"] and set(data["fixes"][0]) >= {"changes", "design", "holds"}
    assert set(data["fixes"][0]["changes"][0]) == {"choice", "from", "to"}


def test_advise_text_names_the_fix_and_the_command_to_check_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        ["advise", "--token", "etcd-create-revision", "--resource", "sql-conditional-update"],
        capsys,
    )
    assert code == 0
    assert "P2 no write outside its lease     VIOLATED (shortest run: 5 steps)" in out
    assert "in the same etcd transaction" in out
    assert "fencing check --receiver lease-aware" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "nope", "--resource", "plain-write"], "'nope' is not a choice for the token"),
        (["--resource", "plain-write"], "give --token ID and --resource ID"),
        (
            ["--token", "etcd-version", "--resource", "plain-write", "--also", "fence-in-memory"],
            "does not fit together",
        ),
        (["--token", "etcd-version", "--resource", "plain-write", "--workers", "9"], "workers"),
    ],
)
def test_bad_stacks_get_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["advise", *args], capsys)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_catalogue_is_printed_with_its_sources(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["advise", "--catalogue", "--json"], capsys)
    assert code == 0
    shown = {entry["id"]: entry["model"] for entry in json.loads(out)}
    assert shown == EXPECTED_MODEL
    code, out, _ = run(["advise", "--catalogue"], capsys)
    assert all(entry.id in out and entry.source in out for entry in CATALOGUE)


def test_option_words_in_forms_name_the_real_parts_from_the_catalogue() -> None:
    from model.options import BY_OPTION
    from webapp.screens.option_widgets import word_with_mirrors

    counter = word_with_mirrors(BY_OPTION["token"], "counter")
    assert counter.startswith(BY_OPTION["token"].word("counter"))
    assert "etcd create_revision" in counter and "ZooKeeper" in counter
    assert "etcd lease ID" in word_with_mirrors(BY_OPTION["token"], "random")
    for entry in CATALOGUE:
        name, value = next(iter(entry.options.items()))
        if BY_OPTION[name].values:
            assert entry.mirror in word_with_mirrors(BY_OPTION[name], str(value))
    assert "same transaction as the write" in BY_OPTION["receiver"].word("lease-aware")


def test_downloads_are_named_after_their_design_and_property() -> None:
    from webapp.show.links import file_name

    assert file_name(Design(receiver="fenced-strict"), "P4", "json") == "fencing-strict-P4.json"
    custom = Design(token="random", receiver="none")
    assert file_name(custom, "P2", "itf.json") == "token-random_receiver-none-P2.itf.json"
    clock = file_name(Design(token="local-clock", skew=(1, 0)), "P1", "json")
    assert clock == "token-local-clock_skew-1-0-P1.json"


def test_a_lock_without_a_lease_is_told_and_fixed_without_assuming_away_the_crash() -> None:
    stack = Stack.of(
        "etcd-create-revision", "plain-write", ["lock-without-lease", "holder-may-crash"]
    )
    advice = advise(stack)
    assert advice.violated == ("P6",)
    assert "the lock never expires" in advice.stories["P6"][0]
    assert advice.fixes
    for fix in advice.fixes:
        assert BY_ID["holder-may-crash"] in fix.stack.practices
        assert all(change.dimension != "holder-may-crash" for change in fix.changes)
        _check_fix(fix, {"P6"}, REFERENCE_BOUNDS)
    (best,) = advice.fixes[:1]
    assert {c.dimension for c in best.changes} == {"resource", "lock-without-lease"}


def test_the_fixes_words_follow_the_most_changes_a_fix_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sentences say how many parts a fix may change from the advisor's own bound."""
    from model import advice as advisor

    assert advisor.changes_in_words() == "one or two parts"
    monkeypatch.setattr(advisor, "MOST_CHANGES", 3)
    assert advisor.changes_in_words() == "one, two or three parts"
    monkeypatch.setattr(advisor, "MOST_CHANGES", 1)
    assert advisor.changes_in_words() == "one part"
