"""Check my stack: real parts in, verdicts, the bug on the timeline, and the change to make.

The stack lives in the link (`token`, `resource`, `does`), so a design review can be
shared; the answer is `advise.advice.advise`, exactly what `fencing advise` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import streamlit as st

from advise import words as advice_words
from advise.advice import Advice, Fix, advise
from advise.catalogue import ASSUMED, BY_ID, CATALOGUE, EXAMPLES, Slot, Stack, parts_of
from fencing.advise import advise_command, review_note
from fencing.command_line import check_command
from model.design import REFERENCE_BOUNDS, Bounds, DesignError
from model.formats.trace import Trace, TraceError, replay
from model.properties import BY_NAME
from webapp.content import stack as words
from webapp.screens import url_state
from webapp.screens.cache import replay_cached
from webapp.screens.limits import heavy_work
from webapp.screens.player import show_traces
from webapp.show.downloads import offer_download
from webapp.show.links import LinkError, param
from webapp.show.text import escape_markdown
from webapp.show.verdicts import property_rows

DEFAULT_STACK: Final = ("etcd-lease-id", "sql-conditional-update", ())
"""The stack a first visit shows: the common etcd plus PostgreSQL design."""
PRACTICES: Final = tuple(p for p in CATALOGUE if not p.slot.single and p not in ASSUMED)
EXAMPLE_KEY: Final = "stack-example"


def stack_from_params(params: Mapping[str, str]) -> Stack:
    """The stack of a link: `token`, `resource` and `does` (practice ids joined by commas)."""
    token = param(params, "token") or DEFAULT_STACK[0]
    resource = param(params, "resource") or DEFAULT_STACK[1]
    does = param(params, "does")
    practices = DEFAULT_STACK[2] if does is None else tuple(filter(None, does.split(",")))
    try:
        return Stack.of(token.strip(), resource.strip(), (p.strip() for p in practices))
    except DesignError as error:
        raise LinkError(words.stack_refused(str(error))) from None


def stack_params(stack: Stack) -> dict[str, str]:
    """The stack as link parameters."""
    ids = stack.ids()
    return {"token": ids["token"], "resource": ids["resource"], "does": ",".join(ids["practices"])}


@st.cache_resource(show_spinner=False, max_entries=64)
def _advice_of(token: str, resource: str, practices: tuple[str, ...], bounds: Bounds) -> Advice:
    """The advice for a stack named by ids, computed once and shared by every visitor."""
    return advise(Stack.of(token, resource, practices), bounds)


def advice_cached(stack: Stack, bounds: Bounds) -> Advice:
    """The advice for a stack (cached by its catalogue ids)."""
    ids = stack.ids()
    return _advice_of(ids["token"], ids["resource"], tuple(ids["practices"]), bounds)


def fix_run(advice: Advice, fix: Fix, prop: str) -> Trace | None:
    """The stack's counterexample to `prop` replayed under the fix, or None when its steps
    cannot all happen there (a fix that changes what the workers do)."""
    original = advice.traces.get(prop)
    if original is not None:
        try:
            return replay(fix.design, advice.bounds, original.actions, title=f"{prop}'s run, fixed")
        except TraceError:
            pass
    return None


def _words(identifier: str) -> str:
    """A catalogue id in its words, for the dropdowns (which show no code marks)."""
    return BY_ID[identifier].words.replace("`", "")


def _choose_example() -> Stack | None:
    """A stack people run, to start from (None until one is chosen)."""
    titles = [example.title for example in EXAMPLES]
    chosen = st.selectbox(
        words.EXAMPLE_CHOICE, titles, index=None, placeholder=words.EXAMPLE_HINT, key=EXAMPLE_KEY
    )
    if chosen is None:
        return None
    return EXAMPLES[titles.index(str(chosen))].stack()


def _choose_stack(current: Stack) -> Stack:
    """The three choices as dropdowns in words; a change goes into the link."""
    tokens = [p.id for p in parts_of(Slot.TOKEN)]
    resources = [p.id for p in parts_of(Slot.RESOURCE)]
    practices = [p.id for p in PRACTICES]
    left, middle, right = st.columns(3)
    with left:
        token = st.selectbox(
            words.TOKEN_CHOICE,
            tokens,
            index=tokens.index(current.token.id),
            format_func=_words,
        )
    with middle:
        resource = st.selectbox(
            words.RESOURCE_CHOICE,
            resources,
            index=resources.index(current.resource.id),
            format_func=_words,
        )
    with right:
        chosen = st.multiselect(
            words.PRACTICES_CHOICE,
            practices,
            default=[p.id for p in PRACTICES if p in current.practices],
            format_func=_words,
        )
    return Stack.of(str(token), str(resource), [str(p) for p in chosen])


def _show_verdicts(advice: Advice) -> None:
    """The verdict table, why each vacuous property was never put to the test, and the good
    news when nothing is violated."""
    st.table(property_rows({words.YOUR_STACK: advice.exploration}), hide_index=True)
    if (good_news := words.all_hold(advice)) is not None:
        st.success(good_news)
    else:
        for sentence in words.untested(advice):
            st.caption(sentence)


def _show_counterexample(advice: Advice) -> None:
    """One violated property's shortest run on the timeline, told for this stack."""
    names = list(advice.violated)
    shown = url_state.get("prop")
    chosen = st.radio(
        "Counterexample to show",
        names,
        index=names.index(shown) if shown in names else 0,
        format_func=lambda n: f"{n} {BY_NAME[n].title}",
        horizontal=True,
    )
    trace = advice.traces[chosen]
    if shown != chosen or not url_state.has("step"):
        # A run opens on the step that breaks the property, not on an empty timeline.
        url_state.put(step=str(len(trace.steps)))
    url_state.put(prop=chosen)
    st.error(advice.stories[chosen][0])
    show_traces(
        [replay_cached(advice.design, advice.bounds, trace.actions, f"your stack: {chosen}")],
        param="step",
        key=f"stack-{chosen}",
    )


def _show_fix(number: int, fix: Fix, advice: Advice, prop: str) -> None:
    """One fix: its heading, each change with its snippet, what then holds, its command
    line and, on demand, the stack's counterexample replayed under it."""
    with st.container(border=True):
        st.markdown(f"**{escape_markdown(advice_words.fix_heading(number, fix), 200)}**")
        for change in fix.changes:
            st.markdown(f"- {escape_markdown(change.build(), 800)}")
            if change.snippet:
                st.code(change.snippet, language=None)
        for sentence in advice_words.fix_outcome(fix, advice):
            st.caption(escape_markdown(sentence[:1].upper() + sentence[1:] + ".", 600))
        st.code(check_command(fix.design, advice.bounds), language="bash")
        if st.toggle("Show its run", key=f"fix-run-{number}"):
            run = fix_run(advice, fix, prop)
            if run is None:
                st.info(words.steps_cannot_happen(prop))
            else:
                st.markdown(words.fixed_run_outcome(prop, run))
                show_traces([run], param=f"fix{number}", key=f"stack-fix-{number}")


def _show_fixes(advice: Advice) -> None:
    """The fixes, best first, each with its snippets, command line and its own run; then the
    changes that only hide the bug, and what no change repairs."""
    st.subheader(words.WHAT_TO_CHANGE)
    if (nothing := advice_words.no_fix(advice)) is not None:
        st.info(nothing)
    prop = url_state.get("prop") or (advice.violated or ("",))[0]
    for number, fix in enumerate(advice.fixes, 1):
        _show_fix(number, fix, advice, prop)
    if advice.hiding:
        st.markdown(f"**{words.HIDING_TITLE}**")
        for hiding in advice.hiding:
            st.markdown(f"- {escape_markdown(advice_words.hiding_sentence(hiding), 800)}.")
    for sentence in advice_words.unrepaired_sentences(advice):
        st.warning(sentence)
    if (left := advice_words.unexplored_sentence(advice)) is not None:
        st.caption(left)


def _show_catalogue() -> None:
    """The catalogue of parts with the options each stands for and where that comes from."""
    with st.expander(words.CATALOGUE_TITLE):
        st.dataframe(
            [
                {
                    "part": p.words,
                    "id": p.id,
                    "model": p.model_words(),
                    "source": p.source,
                }
                for p in CATALOGUE
            ],
            hide_index=True,
        )


def render_stack_page() -> None:
    """The page: choose the stack, read the verdicts, see the bug, pick the change."""
    st.title(words.TITLE)
    st.markdown(words.INTRO)
    try:
        current = stack_from_params(url_state.read())
    except LinkError as error:
        st.warning(words.link_part_not_understood(escape_markdown(str(error))))
        current = stack_from_params({})
    example = _choose_example()
    if example is not None:
        del st.session_state[EXAMPLE_KEY]  # the example is a starting point, not a setting
        url_state.replace({})
        url_state.put_all(stack_params(example))
        st.rerun()
    chosen = _choose_stack(current)
    if chosen.ids() != current.ids():
        url_state.replace({})
        url_state.put_all(stack_params(chosen))
        st.rerun()
    url_state.put_all(stack_params(chosen))
    try:
        chosen.design()
    except DesignError as error:
        st.error(escape_markdown(str(error), 600))
        return
    bounds = REFERENCE_BOUNDS
    with heavy_work(words.CHECKING_WORK) as admitted:
        if not admitted:
            return
        with st.spinner(words.CHECKING):
            advice = advice_cached(chosen, bounds)
    st.caption(words.checked_at(bounds))
    _show_verdicts(advice)
    if advice.violated:
        _show_counterexample(advice)
        _show_fixes(advice)
    st.subheader(words.SAME_CHECK)
    st.code(
        f"{advise_command(chosen, bounds)}\n{check_command(advice.design, bounds)}",
        language="bash",
    )
    offer_download(
        None,
        words.REVIEW_NOTE,
        review_note(advice),
        file_name=f"design-review-{chosen.token.id}-{chosen.resource.id}.md",
        mime="text/markdown",
    )
    _show_catalogue()
