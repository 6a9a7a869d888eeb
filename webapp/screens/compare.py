"""Compare designs: the verdict matrix and a with-versus-without view."""

from webapp.compare_page import render_compare

render_compare()
