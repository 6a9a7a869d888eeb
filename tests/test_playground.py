"""Unit tests of the playground's logic: links, buttons, statuses, undo, finish-from-here."""

from __future__ import annotations

import pytest

from model.design import Bounds, Design
from model.presets import PRESETS
from model.rules import Action
from webapp.show.playground import (
    DEFAULT_BOUNDS,
    LinkError,
    Run,
    choices,
    decode_actions,
    decode_bounds,
    decode_design,
    encode_actions,
    encode_design,
    finish,
    play,
    property_statuses,
    run_from_params,
    take,
    undo,
)

SEED = (
    Action("Acquire", 1),
    Action("Send", 1),
    Action("Tick"),
    Action("Tick"),
    Action("Deliver", 1),
)


def test_actions_round_trip_through_the_link() -> None:
    actions = (*SEED, Action("Acquire", 2, 3), Action("StorageRestart"), Action("Apply", 1))
    text = encode_actions(actions)
    assert text == "A1.S1.T.T.D1.A2v3.RS.P1"
    assert decode_actions(text) == actions
    assert decode_actions("") == ()


def test_renewals_and_crashes_have_codes_and_labels() -> None:
    """A keepalive run with a crash survives the link, and its buttons say what they do."""
    design = Design(renew=True, crashes=1)
    actions = (Action("Acquire", 1), Action("Tick"), Action("Renew", 1), Action("Crash", 1))
    assert encode_actions(actions) == "A1.T.N1.K1"
    assert decode_actions("A1.T.N1.K1") == actions
    run = Run(design, DEFAULT_BOUNDS)
    for action in actions:
        run = take(run, action)
    assert run.actions == actions
    after_tick = {c.label: c.actor for c in choices(play(Run(design, DEFAULT_BOUNDS, actions[:2])))}
    assert after_tick["Renew W1's lease"] == "W1" and after_tick["Crash W1"] == "environment"
    renewed = {c.label for c in choices(play(Run(design, DEFAULT_BOUNDS, actions[:3])))}
    assert "Renew W1's lease" not in renewed and "Crash W1" in renewed


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("A1.X9", "step 2"),
        ("T1", "takes no worker"),
        ("A", "needs a worker"),
        ("__import__('os')", "not an action code"),
        (".".join(["T"] * 500), "at most"),
        ("A123", "too large"),
    ],
)
def test_bad_links_are_refused_with_a_message(text: str, words: str) -> None:
    with pytest.raises(LinkError, match=words):
        decode_actions(text)


def test_bounds_and_designs_round_trip_and_refuse_limits() -> None:
    assert decode_bounds("2.2.6.3.2") == DEFAULT_BOUNDS
    with pytest.raises(LinkError, match=r"workers in the link must be a whole number from 1 to 5"):
        decode_bounds("9.2.6.3.2")
    with pytest.raises(LinkError, match="five whole numbers"):
        decode_bounds("2.2")
    assert encode_design(PRESETS["fencing"].design) == "fencing"
    custom = Design(receiver="none", token="random")
    assert decode_design(encode_design(custom)) == custom
    skewed = Design(token="local-clock", skew=(0, 2))
    assert decode_design(encode_design(skewed)) == skewed
    with pytest.raises(LinkError, match="neither a preset nor a list of options"):
        decode_design("colour:red")
    with pytest.raises(LinkError, match="refused"):
        decode_design("receiver:teapot")
    with pytest.raises(LinkError, match="1 or 0"):
        decode_design("receiver:none~worker_check:maybe")


def test_run_from_params_defaults_and_replay_errors() -> None:
    run = run_from_params({})
    assert run.actions == () and run.bounds == DEFAULT_BOUNDS
    good = run_from_params({"d": "lease-only", "b": "2.2.6.3.2", "a": "A1.S1.T.T.D1"})
    assert good.actions == SEED
    with pytest.raises(LinkError, match="step 2: Deliver\\(W1\\) is not enabled"):
        run_from_params({"a": "A1.D1"})
    with pytest.raises(LinkError, match="skew"):
        run_from_params({"d": "token:local-clock~skew:1,0,0", "b": "2.2.6.3.2"})


def test_buttons_are_the_enabled_actions_in_words() -> None:
    run = Run(PRESETS["lease-only"].design, DEFAULT_BOUNDS, (Action("Acquire", 1),))
    labels = [c.label for c in choices(play(run))]
    assert labels == ["Tick (time passes)", "Send W1's write"]
    rmw = Run(PRESETS["rmw-lease-only"].design, DEFAULT_BOUNDS, (Action("Acquire", 1),))
    assert "Send W1's read" in [c.label for c in choices(play(rmw))]
    faults = Run(PRESETS["volatile-hwm"].design, DEFAULT_BOUNDS)
    assert "Restart storage" in [c.label for c in choices(play(faults))]


def test_statuses_name_the_violating_step_and_why() -> None:
    run = Run(PRESETS["lease-only"].design, DEFAULT_BOUNDS, SEED)
    statuses = {s.name: s for s in property_statuses(play(run))}
    assert statuses["P2"].violated and statuses["P2"].step == 5
    assert "P2 violated at step 5" in statuses["P2"].line()
    assert "lease expired" in statuses["P2"].reason
    assert statuses["P1"].line().startswith("✔ P1 holds so far")
    assert statuses["P1"].exercised and not statuses["P4"].exercised
    assert statuses["P4"].line() == (
        "○ P4 never put to the test in this design (no false rejection): the resource checks "
        "nothing, so it never rejects a request"
    )
    fresh = {s.name: s for s in property_statuses(play(Run(Design(), DEFAULT_BOUNDS)))}
    assert fresh["P1"].line() == (
        "○ P1 not put to the test yet (monotonic acceptance): no step so far has an accepted write"
    )
    assert not any(s.line().startswith("✔") for s in fresh.values())


def test_take_and_undo() -> None:
    run = Run(PRESETS["fencing"].design, DEFAULT_BOUNDS)
    run = take(run, Action("Acquire", 2))
    assert run.actions == (Action("Acquire", 2),)
    with pytest.raises(LinkError, match="not enabled"):
        take(run, Action("Deliver", 1))
    assert undo(run).actions == ()
    assert undo(undo(run)).actions == ()


def test_link_params_reopen_the_same_run() -> None:
    run = Run(Design(receiver="none", worker_check=True), Bounds(3, 2, 5, 2, 1), SEED)
    assert run_from_params(run.link_params()) == run


def test_finish_appends_the_shortest_violation_from_here() -> None:
    start = Run(PRESETS["lease-only"].design, DEFAULT_BOUNDS, SEED[:2])
    completion = finish(start, "P2")
    assert completion.found and len(completion.actions) == 3
    trace = play(Run(start.design, start.bounds, start.actions + completion.actions))
    assert "P2" in trace.steps[-1].violations
    none = finish(Run(PRESETS["fencing"].design, DEFAULT_BOUNDS), "P1")
    assert not none.found and "No continuation" in none.message


def test_finish_says_when_it_stops_at_its_budget() -> None:
    start = Run(PRESETS["lease-only"].design, DEFAULT_BOUNDS, SEED[:2])
    stopped = finish(start, "P1", max_states=5)
    assert not stopped.found
    assert stopped.message.startswith("The search stopped at its budget of 5 states and 10 s")
    assert "state budget of 5 states reached" in stopped.message
