"""The explore page offers each counterexample as ITF beside the project's JSON."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

from model.design import REFERENCE_BOUNDS

Opener = Callable[..., AppTest]


def test_counterexamples_download_as_json_and_itf(open_page: Opener) -> None:
    at = open_page("explore")
    at.selectbox(key="preset_choice").select("lease-only").run()
    for name, value in REFERENCE_BOUNDS.to_dict().items():
        at.number_input(key=name).set_value(value)
    at.run()
    at.button(key="run-button").click().run()
    assert not at.exception
    labels = [button.proto.label for button in at.get("download_button")]
    assert "Download this trace (JSON)" in labels and "Download this trace (ITF)" in labels
