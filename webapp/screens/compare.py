"""Compare designs: the verdict matrix and a with-versus-without view."""

from webapp.screens.compare_page import render_compare

render_compare()
