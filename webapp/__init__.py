"""The web app: walkthroughs, exploring, comparing, checking a stack, classes and the live lab.

`screens/` holds every page and the only Streamlit calls; `show/` the facts a page shows
(pure functions), `draw/` the figures made from them, `content/` every sentence a page says,
`jobs/` the work done apart from a page (proof jobs, the background set checker, the
heavy-work slots). The entry script is `app.py`.

May import every other package of the project.
"""
