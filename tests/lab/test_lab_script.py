"""A scenario written once: the model's plan derived from its directives follows the real
run's timing (a paused worker's write is sent when it resumes, a held write lands when it
is let go, a write held between check and apply is checked at once)."""

from __future__ import annotations

import pytest

from lab.scenarios import SCENARIOS_LIST, predict
from lab.script import (
    Directive,
    Script,
    acquire,
    crash,
    hold,
    keep,
    lease_end,
    outcome,
    pause,
    release,
    resume,
    try_acquire,
    unhold,
    wait_held,
    write,
    write_later,
)


def test_a_write_told_to_a_paused_worker_is_sent_when_it_resumes() -> None:
    script = Script(
        (acquire(1), pause(1), write_later(1), lease_end(1), acquire(2), resume(1), outcome(1))
    )
    assert script.plan() == (
        ("acquire", 1),
        ("expire", 1),
        ("acquire", 2),
        ("send", 1),
        ("deliver", 1),
    )


def test_a_held_write_lands_when_let_go_and_a_read_comes_first_in_rmw() -> None:
    script = Script((acquire(1), hold(1), write_later(1), wait_held(1), write(2), unhold(1)))
    later = (*script.directives, outcome(1))
    assert Script(later).plan(rmw=True) == (
        ("acquire", 1),
        ("send", 1),
        ("deliver", 1),
        ("send", 1),
        ("send", 2),
        ("deliver", 2),
        ("send", 2),
        ("deliver", 2),
        ("deliver", 1),
    )
    apply = Script((acquire(1), hold(1, phase="apply"), write_later(1), release(2), outcome(1)))
    assert apply.plan() == (("acquire", 1), ("send", 1), ("check", 1), ("release", 2), ("apply", 1))


def test_a_kept_lock_renews_once_a_ttl_and_a_waiter_waits_for_the_lease() -> None:
    script = Script((acquire(1), keep(1, 2), crash(1), try_acquire(2, 1, 3, 3.0)))
    assert script.plan() == (
        ("acquire", 1),
        ("hold", 0),
        ("renew", 1),
        ("hold", 0),
        ("renew", 1),
        ("crash", 1),
        ("expire", 1),
        ("acquire", 2),
        ("wait", 2),
    )
    assert script.steps == 4  # acquire, keep, crash, try-acquire report progress


def test_an_unknown_directive_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown directive 'sleep'"):
        Directive("sleep", 1)


@pytest.mark.parametrize("chosen", SCENARIOS_LIST, ids=lambda s: s.name)
def test_every_scenario_is_one_script_whose_plan_the_model_replays(chosen: object) -> None:
    from lab.scenarios import LabScenario

    assert isinstance(chosen, LabScenario)
    settings = chosen.settings()
    plan = chosen.plan(settings)
    kinds = {kind for kind, _ in plan}
    directives = {d.kind for d in chosen.script.directives}
    assert ("acquire" in kinds) and ("acquire" in directives)
    assert ("restart" in kinds) == ("restart" in directives)
    assert ("crash" in kinds) == ("crash" in directives)
    assert predict(chosen, settings).trace.steps  # the model takes the plan's steps
