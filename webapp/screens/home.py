"""Home: what the app is for, and a link to each use."""

import streamlit as st

from model.properties import PROPERTIES
from webapp.show.navigation import PAGES
from webapp.show.style import ACCEPTED, REJECTED, VIOLATING
from webapp.show.views import unknown_setting

st.title("Fencing Lab")
if (problem := unknown_setting(st.query_params, ())) is not None:
    st.error(f"This link was partly not understood: {problem}.")
st.markdown(
    "A distributed lock hands out **leases**, but a worker can pause (a GC pause, a stalled VM) "
    "past its lease and wake up still believing it holds the lock. **Fencing tokens** let the "
    "protected resource refuse such late writes. This app shows, with a model that checks "
    "every interleaving, what each design guarantees and where it breaks. Every run, verdict "
    "and sentence on these pages comes from the model."
)
st.subheader("Where to go")
for entry in PAGES[1:]:
    st.page_link(entry.path, label=f"**{entry.title}**: {entry.purpose}", icon=entry.icon)

st.subheader("How to read a timeline")
st.markdown(
    "One lane per actor (coordinator, each worker W1, W2, …, the receiver), the clock along "
    "the bottom. Bars are leases: solid while current, faint with a dotted outline when the "
    "worker still holds a token past its lease. Arrows are requests from send to delivery. "
    "Outcomes are always shown by symbol, word and colour:\n\n"
    f"- {ACCEPTED.glyph} **{ACCEPTED.word}**: green circle\n"
    f"- {VIOLATING.glyph} **{VIOLATING.word}** a property: purple star\n"
    f"- {REJECTED.glyph} **{REJECTED.word}**: red cross"
)
st.subheader("The properties")
st.markdown("\n".join(f"- **{p.name}, {p.title}**: {p.statement}" for p in PROPERTIES))
