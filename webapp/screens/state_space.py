"""The reachable state graph of a small design, states per depth and symmetry's effect."""

from webapp.screens.state_space_page import render_state_space

render_state_space()
