"""The prover's budgets, apart from the prover so that reading them imports no solver."""

from __future__ import annotations

from typing import Final

PROVE_MAX_STATES: Final = 1_000_000
"""State budget of the exploration a proof starts with (the web app's budget too)."""
PROVE_MAX_SECONDS: Final = 120.0
"""One overall deadline for a whole `prove`: exploration, induction, BMC and Spacer."""
