"""The seed's story: one scripted run, with a plain store and with a fencing receiver."""

import streamlit as st

from model.scenarios import SEED_STORY, seed_story
from webapp.player import show_traces
from webapp.story import story_verdicts

st.title("The seed's story")
st.markdown(SEED_STORY)
runs = (seed_story("none").trace(), seed_story("fenced").trace())
for line in story_verdicts(runs):
    st.markdown(line)
st.caption("Use the buttons to step through both runs together, or press ▶ Play on a timeline.")
show_traces(runs, param="step", key="story")
