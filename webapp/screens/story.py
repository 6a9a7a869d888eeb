"""The paused worker: one scripted run, with a plain store and with a fencing receiver."""

import streamlit as st

from fencing.stories import PAUSED_WORKER_STORY, paused_worker_story
from webapp.player import show_traces
from webapp.story import story_verdicts

st.title("The paused worker")
st.markdown(PAUSED_WORKER_STORY)
runs = (paused_worker_story("none").trace(), paused_worker_story("fenced").trace())
for line in story_verdicts(runs):
    st.markdown(line)
st.caption("Use the buttons to step through both runs together; Play steps through them for you.")
show_traces(runs, param="step", key="story")
