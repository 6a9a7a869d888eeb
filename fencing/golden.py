"""The product's recorded figures (docs/golden.json) and the tables generated from them.

`make golden` explores every preset at the reference bounds and the core rows of
docs/model.md#reference-figures, writes the counts and verdicts once to docs/golden.json,
and regenerates from that file the verdict matrix of docs/checker.md and docs/model.md's
reference tables, each between its markers, the lab's table of lock services in
docs/lab.md, along with docs/model.md's refused combinations (made
from the model's rows in model/combinations.py) and its tables of token sources and
receiver rules (made from the rows in model/options.py). Presets and properties are read
from the model, so a new preset or property shows up in the file and the tables by
running it again. The tests read the figures from the file and check the file against a
fresh exploration.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lab.lock_table import SERVICES_LIST
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.combinations import combination_table
from model.design import BOUNDS, REFERENCE_BOUNDS, Bounds, Design, Receiver
from model.options import RECEIVER_TABLE, TOKEN_TABLE
from model.presets import PRESETS_LIST

ROOT: Final = Path(__file__).resolve().parents[1]
GOLDEN: Final = ROOT / "docs" / "golden.json"
CHECKER_DOC: Final = ROOT / "docs" / "checker.md"
LAB_DOC: Final = ROOT / "docs" / "lab.md"
MODEL_DOC: Final = ROOT / "docs" / "model.md"

CORE_ROWS: Final = (
    (Bounds(2, 2, 4, 2, 1), "fenced"),
    (Bounds(2, 2, 4, 2, 1), "none"),
    (Bounds(3, 2, 6, 3, 2), "fenced"),
)
"""docs/model.md's core rows: bounds and receiver (every other option at its default)."""
CORE_PROPERTIES: Final = ("P1", "P2")
"""The properties whose shortest violation the core table shows."""
DOC_PRESETS: Final = (
    "lease-only",
    "fencing",
    "key-version-token",
    "rmw-fencing-unfenced-reads",
    "lock-without-lease",
    "keepalive-fencing",
)
"""The presets of docs/model.md's table of shortest violations at the reference bounds."""
BENCHMARK: Final = Bounds(3, 3, 10, 5, 2)
"""The core at the bounds `make bench` times."""


def _verdicts(design: Design, bounds: Bounds) -> dict[str, Any]:
    """Counts and per-property verdicts of a complete exploration."""
    found = explore(design, bounds)
    if not found.complete:
        raise RuntimeError(f"{design.label()} at {bounds.short()}: {found.stopped_by}")
    return {
        "states": found.states,
        "transitions": found.transitions,
        "depth": found.depth,
        "verdicts": {
            name: {"status": str(v.status), "shortest": v.shortest}
            for name, v in found.verdicts.items()
        },
    }


def compute_golden() -> dict[str, Any]:
    """Every recorded figure, freshly explored."""
    presets = {preset.name: _verdicts(preset.design, REFERENCE_BOUNDS) for preset in PRESETS_LIST}
    core = []
    for bounds, receiver in CORE_ROWS:
        design = Design(receiver=Receiver(receiver))
        row = {"bounds": bounds.to_dict(), "receiver": receiver, **_verdicts(design, bounds)}
        row["orbits"] = explore(design, bounds, SearchOptions(symmetry=True)).states
        core.append(row)
    benchmark = {"bounds": BENCHMARK.to_dict(), **_verdicts(Design(), BENCHMARK)}
    return {
        "reference_bounds": REFERENCE_BOUNDS.to_dict(),
        "presets": presets,
        "core": core,
        "benchmark": benchmark,
    }


def golden_text(golden: dict[str, Any]) -> str:
    """The file's text: stable, with each verdict and each bounds on one line."""
    text = json.dumps(golden, indent=1)
    flat = re.compile(r"\{\n\s+([^{}\[\]]*?)\n\s+\}")
    text = flat.sub(lambda m: "{" + re.sub(r",\n\s+", ", ", m.group(1)) + "}", text)
    return text + "\n"


def read_golden(path: Path = GOLDEN) -> dict[str, Any]:
    """The recorded figures."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def property_names(golden: dict[str, Any]) -> list[str]:
    """The properties, in the model's order, as the file records them."""
    first = next(iter(golden["presets"].values()))
    return list(first["verdicts"])


def _cell(verdict: dict[str, Any], unviolated: Callable[[str], str]) -> str:
    """A table cell: the shortest violation's length, or what the status becomes."""
    return (
        str(verdict["shortest"])
        if verdict["status"] == "violated"
        else unviolated(verdict["status"])
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def verdict_matrix_table(golden: dict[str, Any]) -> list[str]:
    """The verdict matrix: every preset x every property, as `fencing matrix` shows it."""
    names = property_names(golden)
    rows = [
        [f"`{preset}`", *(_cell(found["verdicts"][n], str) for n in names)]
        for preset, found in golden["presets"].items()
    ]
    return _table(["preset", *names], rows)


def _none(status: str) -> str:
    """docs/model.md's word for a property no run violates."""
    return "none"


def core_table(golden: dict[str, Any]) -> list[str]:
    """docs/model.md's core rows: bounds, receiver, counts, shortest P1/P2, orbits."""
    header = [*(bound.letter for bound in BOUNDS), "receiver", "states", "transitions", "depth"]
    header += [f"shortest {name}" for name in CORE_PROPERTIES] + ["orbits"]
    rows = []
    for row in golden["core"]:
        b = row["bounds"]
        sizes = [str(b[bound.name]) for bound in BOUNDS]
        counts = [f"{row[k]:,}" for k in ("states", "transitions", "depth")]
        shortest = [_cell(row["verdicts"][name], _none) for name in CORE_PROPERTIES]
        rows.append([*sizes, f"`{row['receiver']}`", *counts, *shortest, f"{row['orbits']:,}"])
    return _table(header, rows)


def preset_table(golden: dict[str, Any]) -> list[str]:
    """docs/model.md's shortest violations of a few presets at the reference bounds."""
    names = property_names(golden)
    rows = [
        [f"`{preset}`", *(_cell(golden["presets"][preset]["verdicts"][n], _none) for n in names)]
        for preset in DOC_PRESETS
    ]
    return _table(["preset", *names], rows)


def refused_table(golden: dict[str, Any]) -> list[str]:
    """docs/model.md's refused combinations, rendered from the model's rows (no figures)."""
    return combination_table()


def token_values_table(golden: dict[str, Any]) -> list[str]:
    """docs/model.md's token sources, rendered from the model's token rows (no figures)."""
    rows = [[f"`{row.token}`", row.at_acquire, row.mirrors] for row in TOKEN_TABLE]
    return _table(["value", "token at Acquire", "mirrors"], rows)


def receiver_values_table(golden: dict[str, Any]) -> list[str]:
    """docs/model.md's receiver rules, rendered from the model's receiver rows (no figures)."""
    rows = [
        [f"`{row.receiver}`", row.accepts_when, row.also_sets, row.mirrors]
        for row in RECEIVER_TABLE
    ]
    header = ["value", "accepts a checked request when", "a landed write also sets", "mirrors"]
    return _table(header, rows)


def services_table(golden: dict[str, Any]) -> list[str]:
    """The lab's lock services, rendered from the lab's service rows (no figures)."""
    rows = [
        [
            f"`{service.name}`",
            service.words,
            ", ".join(f"{token.name} ({token.model.value})" for token in service.tokens),
            service.mirrors,
        ]
        for service in SERVICES_LIST
    ]
    return _table(["service", "the lock", "tokens (model option)", "mirrors"], rows)


@dataclass(frozen=True)
class Region:
    """A generated part of a document: its file, its markers and how it is made."""

    path: Path
    name: str
    make: Callable[[dict[str, Any]], list[str]]

    def pattern(self) -> re.Pattern[str]:
        """The opening marker's line, the generated text, the closing marker."""
        name = re.escape(self.name)
        return re.compile(rf"(<!-- {name}:[^\n]*-->\n)(.*?)(<!-- end {name} -->)", re.S)

    def current(self) -> str:
        """The text between the markers now."""
        found = self.pattern().search(self.path.read_text(encoding="utf-8"))
        if found is None:
            raise RuntimeError(f"{self.path.name} has no '{self.name}' markers")
        return found.group(2)

    def generated(self, golden: dict[str, Any]) -> str:
        """The text the markers should hold."""
        return "\n".join(self.make(golden)) + "\n"

    def write(self, golden: dict[str, Any]) -> None:
        """Replace the text between the markers."""
        text = self.path.read_text(encoding="utf-8")
        body = self.generated(golden)
        new = self.pattern().sub(lambda m: m.group(1) + body + m.group(3), text, count=1)
        self.path.write_text(new, encoding="utf-8")


REGIONS: Final = (
    Region(CHECKER_DOC, "matrix", verdict_matrix_table),
    Region(LAB_DOC, "lock services", services_table),
    Region(MODEL_DOC, "core figures", core_table),
    Region(MODEL_DOC, "preset figures", preset_table),
    Region(MODEL_DOC, "refused combinations", refused_table),
    Region(MODEL_DOC, "token values", token_values_table),
    Region(MODEL_DOC, "receiver values", receiver_values_table),
)


def main() -> int:
    """`make golden`: explore, write docs/golden.json, regenerate the tables from it."""
    golden = compute_golden()
    GOLDEN.write_text(golden_text(golden), encoding="utf-8")
    for region in REGIONS:
        region.write(read_golden())
    print(f"wrote {GOLDEN.relative_to(ROOT)} and {len(REGIONS)} generated tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
