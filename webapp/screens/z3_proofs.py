"""z3 proofs per property, with invariants and counterexamples animated."""

from webapp.screens.proofs_page import render_proofs

render_proofs()
