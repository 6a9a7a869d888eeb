"""z3 proofs per property, with invariants and counterexamples animated."""

from webapp.proofs_page import render_proofs

render_proofs()
