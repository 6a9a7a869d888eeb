"""The catalogue of real parts and `fencing advise`: the mapping, the verdicts and every fix.

The mapping below is the specification of the catalogue (which model options each real
part stands for); the advice is checked against fresh explorations, never against itself.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from itertools import product

import pytest

from advise import advice as advisor
from advise.advice import (
    FENCING_PROPERTIES,
    Advice,
    Fix,
    Tier,
    advise,
    candidate_changes,
    dimension_moves,
)
from advise.catalogue import (
    ASSUMED,
    BY_ID,
    CATALOGUE,
    EXAMPLES,
    SERVICE_BY_ID,
    Role,
    Slot,
    Stack,
    parts_of,
    same_service,
)
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.properties import BY_NAME, PROPERTY_NAMES
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
    "redis-incr-persisted": {"token": "counter"},
    "worker-clock": {"token": "local-clock"},
    "wrapping-sequence": {"token": "wrapping", "wrap": 2},
    "plain-write": {"receiver": "none"},
    "sql-plain-update": {"receiver": "none"},
    "sql-conditional-update": {"receiver": "fenced"},
    "sql-select-for-update": {"receiver": "fenced"},
    "sql-serializable": {"receiver": "fenced"},
    "sql-conditional-update-strict": {"receiver": "fenced-strict"},
    "sql-select-then-update": {"receiver": "fenced-nonatomic"},
    "first-token-wins": {"receiver": "equality"},
    "object-plain-put": {"receiver": "none"},
    "object-read-then-put": {"receiver": "fenced-nonatomic"},
    "object-conditional-put": {"receiver": "fenced"},
    "file-write": {"receiver": "none"},
    "etcd-plain-put": {"receiver": "none"},
    "etcd-txn-on-lock-key": {"receiver": "lease-aware"},
    "zookeeper-multi-check": {"receiver": "lease-aware"},
    "redis-plain-set": {"receiver": "none"},
    "redis-lua-fence": {"receiver": "fenced"},
    "redis-lua-lock-check": {"receiver": "lease-aware"},
    "fence-in-memory": {"hwm": "volatile", "storage_restarts": 1},
    "fence-at-grant": {"grant_fences": True},
    "worker-checks-lease": {"worker_check": True},
    "read-modify-write": {"workload": "rmw"},
    "fenced-reads": {"fenced_reads": True},
    "keepalive": {"renew": True},
    "lock-without-lease": {"expiry": "never"},
    "holder-may-crash": {"crashes": 1},
}
"""Each part's meaning in the model: the specification the catalogue is checked against."""

CRASH = {"crashes": 1}
TOKENS = [p.id for p in parts_of(Slot.TOKEN)]
RESOURCES = [p.id for p in parts_of(Slot.RESOURCE)]


def coherent_pairs() -> Iterator[tuple[str, str]]:
    """Every token × resource pair whose parts can belong to one system."""
    for token, resource in product(TOKENS, RESOURCES):
        if Stack.of(token, resource).coherence_problem() is None:
            yield token, resource


# ----- the catalogue -----------------------------------------------------------------------


def test_the_catalogue_maps_each_part_to_its_options() -> None:
    assert {p.id: dict(p.options) for p in CATALOGUE} == EXPECTED_MODEL


def test_each_part_has_a_service_words_a_build_instruction_and_a_source() -> None:
    for entry in CATALOGUE:
        assert entry.service in SERVICE_BY_ID, entry.id
        assert entry.words and entry.build and entry.source, entry.id
        assert "`" not in entry.words + entry.build + entry.noun, f"{entry.id} shows code marks"
        if not entry.slot.single:
            assert entry.drop, f"{entry.id} says nothing of giving it up"
        if entry.slot is Slot.TOKEN:
            assert entry.noun, f"{entry.id} has no name for its token"
        if entry.role is Role.HIDES:
            assert entry.cost, f"{entry.id} hides the bug without saying what it costs"


def test_every_part_a_fix_can_move_to_shows_a_snippet() -> None:
    """The first ordered token of each lock service and every atomic resource come with what
    to write in that service's own terms."""
    first_token = {}
    for entry in parts_of(Slot.TOKEN):
        if entry.orders_grants:
            first_token.setdefault(entry.service, entry)
    assert set(first_token) == {"etcd", "zookeeper", "redis", "consul"}
    targets = [
        *first_token.values(),
        *(p for p in parts_of(Slot.RESOURCE) if p.checks_atomically and p.fix_may_choose),
    ]
    for entry in targets:
        assert entry.snippet, f"{entry.id} is a fix target without a snippet"


def test_each_service_offers_what_it_really_has() -> None:
    """A service's offers are its parts: etcd, ZooKeeper and Redis give an ordered token and a
    store that asks their lock; SQL and object stores compare a fence; a file compares nothing."""

    def offers(service: str) -> set[str]:
        return {
            str(p.receiver or p.token) for p in CATALOGUE if p.service == service and p.slot.single
        }

    for lock in ("etcd", "zookeeper", "redis"):
        assert {"counter", "lease-aware"} <= offers(lock), lock
    assert "counter" in offers("consul")
    assert {"none", "fenced", "fenced-nonatomic"} <= offers("sql")
    assert {"none", "fenced", "fenced-nonatomic"} == offers("object-store")
    assert offers("file") == {"none"}


def test_only_tokens_that_grow_with_every_grant_are_fencing_tokens() -> None:
    ordered = {p.id for p in parts_of(Slot.TOKEN) if p.orders_grants}
    assert ordered == {
        "etcd-create-revision",
        "etcd-mod-revision",
        "zookeeper-sequence",
        "consul-modify-index",
        "redis-incr-persisted",
    }


def test_the_mirrors_the_option_words_name_are_catalogue_parts() -> None:
    token = parts_of(Slot.TOKEN)
    assert any("create_revision" in p.words for p in token)
    assert "etcd transaction" in BY_ID["etcd-txn-on-lock-key"].build


@pytest.mark.parametrize(("token", "resource"), list(coherent_pairs()))
def test_a_stack_is_the_union_of_its_parts_options_and_a_crash(token: str, resource: str) -> None:
    expected = {**EXPECTED_MODEL[token], **EXPECTED_MODEL[resource], **CRASH}
    assert Stack.of(token, resource).design() == Design(**expected)


def test_every_stack_is_checked_with_a_holder_that_may_crash() -> None:
    assert [p.id for p in ASSUMED] == ["holder-may-crash"]
    plain = Stack.of("etcd-create-revision", "sql-conditional-update")
    assert plain.design().crashes == 1
    # an old link that names the assumption gives the same stack and the same link
    named = Stack.of("etcd-create-revision", "sql-conditional-update", ["holder-may-crash"])
    assert named == plain and named.ids()["practices"] == []


def test_a_part_in_the_wrong_slot_is_refused_by_name() -> None:
    with pytest.raises(DesignError, match="'plain-write' is not a choice for the token"):
        Stack.of("plain-write", "plain-write")
    with pytest.raises(DesignError, match="'etcd-lease-id' is not a practice"):
        Stack.of("etcd-version", "plain-write", ["etcd-lease-id"])


def test_parts_that_do_not_fit_together_are_refused_with_the_models_reason() -> None:
    with pytest.raises(DesignError, match=r"does not fit together.*keeps no mark"):
        Stack.of("etcd-create-revision", "plain-write", ["fence-in-memory"]).design()


def test_a_store_that_asks_another_services_lock_is_refused() -> None:
    """An etcd transaction cannot check a lock that ZooKeeper keeps."""
    with pytest.raises(DesignError, match="checks a lock kept in etcd, but the token comes from"):
        Stack.of("zookeeper-sequence", "etcd-txn-on-lock-key").design()
    assert Stack.of("worker-clock", "etcd-txn-on-lock-key").coherence_problem() is None


# ----- the changes a fix may make -----------------------------------------------------------


def test_a_fix_never_moves_to_a_part_that_hides_the_bug_or_a_token_that_does_not_fence() -> None:
    for example in EXAMPLES:
        for moves in dimension_moves(example.stack()):
            for change in moves:
                if change.new is None:
                    continue
                assert change.new.fix_may_choose, change.new.id
                if change.slot is Slot.TOKEN:
                    assert change.new.orders_grants, change.new.id
                if change.slot is Slot.RESOURCE:
                    assert change.new.checks_atomically, change.new.id


def test_the_assumption_and_the_application_are_never_changed() -> None:
    stack = Stack.of("zookeeper-sequence", "sql-plain-update", ["read-modify-write"])
    touched = {change.dimension for moves in dimension_moves(stack) for change in moves}
    assert "holder-may-crash" not in touched and "read-modify-write" not in touched


def test_candidates_stay_in_the_stacks_services_before_moving() -> None:
    stack = Stack.of("etcd-lease-id", "sql-select-then-update")
    moved = [sum(c.moves_to() is not None for c in changes) for changes in candidate_changes(stack)]
    assert moved == sorted(moved) and moved[0] == 0 and moved[-1] >= 1
    first_token = next(
        c for changes in candidate_changes(stack) for c in changes if c.slot is Slot.TOKEN
    )
    assert first_token.new is BY_ID["etcd-create-revision"]
    assert [p.id for p in first_token.also] == ["etcd-mod-revision"]


# ----- the advice, checked against fresh explorations ----------------------------------------


def fresh(design: Design, bounds: Bounds = REFERENCE_BOUNDS) -> dict[str, Status]:
    """Every property's status in a fresh exploration (not the advisor's)."""
    result = explore(design, bounds, SearchOptions(max_seconds=600))
    assert result.complete
    return {name: result.status(name) for name in PROPERTY_NAMES}


@pytest.fixture(scope="module")
def examples() -> dict[str, Advice]:
    """The advice on every example stack at the reference bounds (computed once)."""
    return {example.title: advise(example.stack()) for example in EXAMPLES}


def _check_fix(fix: Fix, base: dict[str, Status]) -> None:
    """A fix's design explored afresh says what the fix says, breaks nothing that held
    (the gap aside, under a complete fix), and makes nothing hold by leaving it untested."""
    after = fresh(fix.design)
    assert fix.stack.design() == fix.design
    assert set(fix.holds) == {n for n, s in after.items() if s is Status.HOLDS}
    assert set(fix.vacuous) == {n for n, s in after.items() if s is Status.VACUOUS}
    assert set(fix.still_violated) == {n for n, s in after.items() if s is Status.VIOLATED}
    assert set(fix.repaired) == {
        n for n in PROPERTY_NAMES if base[n] is Status.VIOLATED and after[n] is Status.HOLDS
    }
    assert fix.repaired
    for name in PROPERTY_NAMES:
        if after[name] is Status.VACUOUS:
            assert base[name] is Status.VACUOUS, f"{fix.design.label()} hides {name}"
        if after[name] is Status.VIOLATED and base[name] is not Status.VIOLATED:
            assert name == "P2" and fix.tier is Tier.COMPLETE, f"{fix.design.label()} breaks {name}"
    complete = all(
        after[n] is Status.HOLDS or not BY_NAME[n].applies(fix.design) for n in FENCING_PROPERTIES
    )
    assert (fix.tier is not Tier.PARTIAL) == complete


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.title for e in EXAMPLES])
def test_every_example_stacks_first_fix_is_complete_and_in_its_own_services(
    example: object, examples: dict[str, Advice]
) -> None:
    advice = examples[example.title]  # type: ignore[attr-defined]
    base = fresh(advice.design)
    assert {n: s for n, s in base.items()} == {
        n: v.status for n, v in advice.exploration.verdicts.items()
    }
    assert advice.violated and advice.fixes and advice.unexplored == 0
    first = advice.fixes[0]
    assert first.tier is not Tier.PARTIAL
    own = [f for f in advice.fixes if f.tier is not Tier.PARTIAL and not f.service_changes]
    if own:
        assert first.service_changes == 0
    for fix in advice.fixes:
        _check_fix(fix, base)
        kept = {p for p in advice.stack.practices if p.role is Role.APPLICATION}
        assert kept <= set(fix.stack.practices), "a fix changed what the application does"
    ranks = [advisor._rank(fix) for fix in advice.fixes]
    assert ranks == sorted(ranks)


@pytest.mark.slow
def test_the_stores_that_can_fence_are_fixed_where_they_are(examples: dict[str, Advice]) -> None:
    """SQL, object stores and Redis keep the data: the first fix does not move it; a plain
    file cannot compare, so its first fix says where the data moves."""
    for example in EXAMPLES:
        first = examples[example.title].fixes[0]
        stays = SERVICE_BY_ID[example.stack().store].id in ("sql", "object-store", "redis")
        if stays:
            assert first.service_changes == 0, example.title
    file_fix = examples["A timestamp as the token, a plain file"].fixes[0]
    assert any(c.build().startswith("move the data into ") for c in file_fix.changes)


@pytest.mark.slow
def test_the_engineers_etcd_and_postgres_stack(examples: dict[str, Advice]) -> None:
    """Keep the database, make the check atomic, take create_revision as the token."""
    advice = examples["etcd lease ID, PostgreSQL read then write"]
    first = advice.fixes[0]
    assert first.tier is Tier.COMPLETE and first.service_changes == 0
    assert {(c.old.id if c.old else None, c.new.id if c.new else None) for c in first.changes} == {
        ("etcd-lease-id", "etcd-create-revision"),
        ("sql-select-then-update", "sql-conditional-update"),
    }
    resource = next(c for c in first.changes if c.slot is Slot.RESOURCE)
    assert {p.id for p in resource.also} == {"sql-select-for-update", "sql-serializable"}
    closing = [f for f in advice.fixes if f.tier is Tier.CLOSES_GAP]
    assert closing and all(
        any(c.build().startswith("move the data into etcd: ") for c in f.changes) for f in closing
    )


@pytest.mark.slow
def test_a_stack_that_already_asks_the_lock_service_keeps_the_gap_closed(
    examples: dict[str, Advice],
) -> None:
    advice = examples["etcd lease ID, the write in an etcd transaction"]
    assert advice.violated == ("P1",)
    (fix,) = advice.fixes
    assert fix.tier is Tier.CLOSES_GAP and fix.service_changes == 0
    assert [c.new.id for c in fix.changes if c.new] == ["etcd-create-revision"]


def test_a_lock_without_a_lease_is_fixed_with_a_lease_not_by_assuming_away_the_crash(
    examples: dict[str, Advice],
) -> None:
    advice = examples["An etcd key with no lease, a plain UPDATE"]
    assert advice.violated == ("P6",)
    assert "the lock never expires" in advice.stories["P6"][0]
    first = advice.fixes[0]
    assert first.tier is Tier.COMPLETE and first.service_changes == 0
    assert {c.dimension for c in first.changes} == {"resource", "lock-without-lease"}
    assert "P2" in first.still_violated  # the gap, said as such


def test_hiding_changes_are_never_fixes_and_say_what_the_model_shows_they_cost(
    examples: dict[str, Advice],
) -> None:
    hiders = {p for p in CATALOGUE if p.role is Role.HIDES}
    for advice in examples.values():
        for fix in advice.fixes:
            assert not hiders & set(fix.stack.parts) - set(advice.stack.parts)
        for hiding in advice.hiding:
            after = fresh(hiding.exploration.design)
            assert set(hiding.broken) == {
                n
                for n in PROPERTY_NAMES
                if after[n] is Status.VIOLATED
                and advice.exploration.status(n) is not Status.VIOLATED
            }
            assert hiding.repaired
    no_lease = [
        h
        for h in examples["etcd create_revision, a plain UPDATE"].hiding
        if h.change.new is BY_ID["lock-without-lease"]
    ]
    assert no_lease and no_lease[0].broken == ("P6",)


def test_what_each_hiding_part_costs_is_what_the_model_shows() -> None:
    """The cost sentences are claims: no lease, and a crashed holder keeps the lock (P6);
    only the first token, and every later holder is refused (P4)."""
    assert fresh(Design(expiry="never", crashes=1))["P6"] is Status.VIOLATED
    assert fresh(Design(receiver="equality", crashes=1))["P4"] is Status.VIOLATED


@pytest.mark.slow
def test_early_stopping_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cutting a hopeless neighbour's exploration short gives the advice a full search gives."""
    stack = Stack.of("etcd-lease-id", "sql-select-then-update")
    quick = advise(stack)
    advisor._FINISHED.clear()
    monkeypatch.setattr(advisor._Search, "hopeless", lambda self, changes, violated: False)
    full = advise(stack)
    assert full.to_dict() == quick.to_dict()


def test_the_advice_is_the_same_on_a_machine_fifty_times_slower(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every clock the search could read runs 50 times faster: the answer does not change."""
    stack = Stack.of("redis-random-value", "redis-plain-set")
    quick = advise(stack).to_dict()
    advisor._FINISHED.clear()
    real = time.perf_counter
    start = real()
    monkeypatch.setattr(time, "perf_counter", lambda: start + 50 * (real() - start))
    monkeypatch.setattr(time, "monotonic", lambda: start + 50 * (real() - start))
    slow = advise(stack).to_dict()
    assert slow == quick


def test_a_safe_stack_needs_no_fix() -> None:
    advice = advise(Stack.of("etcd-create-revision", "etcd-txn-on-lock-key"))
    assert advice.violated == () and advice.fixes == () and advice.stories == {}
    assert advice.exploration.status("P6") is Status.HOLDS  # put to the test: a holder crashes


SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


@pytest.mark.slow
@pytest.mark.parametrize(("token", "resource"), list(coherent_pairs()))
def test_every_fix_of_every_token_and_resource_holds_when_explored(
    token: str, resource: str
) -> None:
    stack = Stack.of(token, resource)
    advice = advise(stack, SMALL)
    base = fresh(advice.design, SMALL)
    assert set(advice.violated) == {n for n, s in base.items() if s is Status.VIOLATED}
    for fix in advice.fixes:
        after = fresh(fix.design, SMALL)
        assert {n for n, s in after.items() if s is Status.VIOLATED} == set(fix.still_violated)
        for name in PROPERTY_NAMES:
            if after[name] is Status.VACUOUS:
                assert base[name] is Status.VACUOUS
    for name in advice.violated:
        summary = advice.stories[name][0]
        assert summary.startswith(name) and stack.token.noun in summary


# ----- the command line -----------------------------------------------------------------------


def test_advise_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["advise", "--token", "etcd-lease-id", "--resource", "plain-write", "--json"], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["stack"] == {"token": "etcd-lease-id", "resource": "plain-write", "practices": []}
    design = Stack.of("etcd-lease-id", "plain-write").design()
    assert data["design"] == design.to_dict() and data["design"]["crashes"] == 1
    assert data["bounds"] == REFERENCE_BOUNDS.to_dict()
    found = explore(design, REFERENCE_BOUNDS)
    for name, verdict in found.verdicts.items():
        assert data["properties"][name]["status"] == str(verdict.status)
        assert data["properties"][name]["shortest"] == verdict.shortest
        vacuous = data["properties"][name]["vacuous_because"]
        assert (vacuous is not None) == (verdict.status is Status.VACUOUS)
    first = data["fixes"][0]
    assert first["kind"] in ("complete", "closes_gap")
    assert set(first) >= {"changes", "build", "snippets", "holds", "vacuous", "still_violated"}
    assert set(first["changes"][0]) == {"choice", "from", "to", "also", "moves_to"}
    assert data["neighbours_unexplored"] == 0 and data["neighbours_explored"] > 0


def test_advise_text_numbers_each_fix_once_and_says_what_p2_needs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        ["advise", "--token", "etcd-lease-id", "--resource", "sql-select-then-update"], capsys
    )
    assert code == 0
    assert "P2 no write outside its lease     VIOLATED (shortest run: 6 steps)" in out
    assert "P5 no lost update                 holds vacuously: the workers write blind" in out
    numbers = [m.group(1) for m in re.finditer(r"^  (\d+)\. ", out, re.MULTILINE)]
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)] and len(numbers) >= 2
    assert "  1. Complete fencing, in the parts you already run" in out
    assert "WHERE id = $id AND fence <= $token;" in out  # the snippet, in SQL
    assert "only a store that asks the lock service in the same step as the write closes it" in out
    assert "Changes that hide the bug (not fixes):" in out
    assert "P5 holds vacuously: the workers write blind" in out


def test_the_review_note_says_vacuous_as_vacuous(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["advise", "--token", "etcd-create-revision", "--resource", "sql-plain-update", "--note"],
        capsys,
    )
    assert code == 0
    assert "| P5 no lost update | holds vacuously: the workers write blind" in out
    assert "| P6 lock freed after a crash | holds |" in out
    assert "a holder may crash" in out
    assert "### 1. Complete fencing, in the parts you already run" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "nope", "--resource", "plain-write"], "'nope' is not a choice for the token"),
        (["--resource", "plain-write"], "give --token ID and --resource ID"),
        (
            ["--token", "etcd-version", "--resource", "plain-write", "--also", "fence-in-memory"],
            "does not fit together",
        ),
        (
            ["--token", "redis-random-value", "--resource", "zookeeper-multi-check"],
            "checks a lock kept in ZooKeeper",
        ),
        (["--token", "etcd-version", "--resource", "plain-write", "--workers", "9"], "workers"),
        (
            ["--token", "etcd-version", "--resource", "plain-write", "--max-seconds", "5"],
            "max-seconds",
        ),
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


def test_the_fixes_words_follow_the_most_changes_a_fix_makes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sentences say how many parts a fix may change from the advisor's own bound."""
    assert advisor.changes_in_words() == "one, two or three parts"
    monkeypatch.setattr(advisor, "MOST_CHANGES", 2)
    assert advisor.changes_in_words() == "one or two parts"
    monkeypatch.setattr(advisor, "MOST_CHANGES", 1)
    assert advisor.changes_in_words() == "one part"


def test_services_of_a_change_are_told_first() -> None:
    stack = Stack.of("zookeeper-sequence", "sql-plain-update")
    moved = next(
        c
        for changes in candidate_changes(stack)
        for c in changes
        if c.new is BY_ID["zookeeper-multi-check"]
    )
    assert moved.build().startswith("move the data into ZooKeeper: ")
    assert same_service("any", "etcd") and not same_service("sql", "etcd")
    assert replace(moved, old=None).moves_to() is None  # an added practice moves nothing
