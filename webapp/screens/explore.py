"""Explore a design: choose options and bounds, explore every interleaving, see each violation."""

from webapp.screens.explore_page import render_explore

render_explore()
