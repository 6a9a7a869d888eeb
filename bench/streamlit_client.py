"""A protocol-level Streamlit client: one browser tab's conversation with the server, no browser.

The Streamlit server talks to a browser tab over one websocket, `/_stcore/stream`, opened
with the subprotocol `streamlit`. Everything on it is protobuf: the tab sends `BackMsg`s and
the server answers with `ForwardMsg`s (both classes ship with Streamlit in
`streamlit.proto`). A script run is asked for with `BackMsg.rerun_script`, a `ClientState`
holding the page's query string, the page (its `page_script_hash`, or its URL path as
`page_name` when the hash is not known yet) and the widget values that changed. The server
then streams the run: `new_session` when it starts, `navigation` with every page and its
hash, one `delta` per element drawn, `page_info_changed` when the script writes
`st.query_params` (the tab puts that into its URL and sends it back with the next rerun),
and `script_finished` when it is done. `FINISHED_EARLY_FOR_RERUN` ends one run of a chain
(`st.rerun()`), so waiting goes on until a run finishes for good.

Widgets are found in the element deltas of the previous run: every widget's proto carries
an `id` of the form `$$ID-<hash>-<key>`, so its `key` reads off its end. A button click is a
rerun with that button's `WidgetState(id=…, trigger_value=True)`; another widget's change
is a rerun with its new value (a dataframe selection is a JSON `string_value`). A widget drawn
inside a fragment (`st.fragment`) came in deltas carrying the fragment's id, and, as the
browser does, its change asks for a rerun of that fragment only (`ClientState.fragment_id`).
Like the browser, the client sends only what changed: the server keeps every other widget's
value.
Also like the browser, it keeps the large element messages the server marks `cacheable`,
sends their hashes with each rerun, and resolves the `ref_hash` messages the server sends
instead of repeating them.

A run that shows an exception (an `exception` element: the app's own error box, which is
all a visitor sees with `client.showErrorDetails` off), a compile error, a page the server
does not know, or no `script_finished` within the timeout is reported in `Run.errors`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

STREAM_PATH: Final = "/_stcore/stream"
SUBPROTOCOL: Final = "streamlit"
MAX_MESSAGE_BYTES: Final = 256 * 2**20
"""Largest ForwardMsg accepted; the server's own default limit is 200 MB."""
ID_PREFIX: Final = "$$ID-"
CLOSE_TIMEOUT_S: Final = 1.0
"""How long closing a tab waits for the server's goodbye (a browser does not wait at all)."""


class SessionBroken(RuntimeError):
    """The session can no longer be used: a run timed out or the connection closed."""


@dataclass(frozen=True)
class Widget:
    """One widget drawn by a run: its element type, id, user key, label and state."""

    kind: str
    id: str
    key: str | None
    label: str
    disabled: bool
    form_id: str
    fragment_id: str = ""


def widget_of(element: Element, fragment_id: str = "") -> Widget | None:
    """The widget an element is (drawn in the fragment `fragment_id`, if any), or None for
    elements that are not widgets."""
    kind = element.WhichOneof("type")
    if kind is None:
        return None
    proto = getattr(element, kind)
    fields = proto.DESCRIPTOR.fields_by_name
    widget_id = proto.id if "id" in fields else ""
    if not isinstance(widget_id, str) or not widget_id.startswith(ID_PREFIX):
        return None
    key = widget_id.split("-", maxsplit=2)[-1]
    return Widget(
        kind=kind,
        id=widget_id,
        key=None if key == "None" else key,
        label=str(proto.label) if "label" in fields else "",
        disabled=bool(proto.disabled) if "disabled" in fields else False,
        form_id=str(proto.form_id) if "form_id" in fields else "",
        fragment_id=fragment_id,
    )


@dataclass(frozen=True)
class Run:
    """What the server sent back for one rerun request, and how long it took."""

    seconds: float
    elements: tuple[Element, ...]
    errors: tuple[str, ...]
    query_string: str
    script_runs: int
    fragments: tuple[str, ...] = ()
    """The fragment each element was drawn in ('' outside any), when known."""

    @property
    def widgets(self) -> tuple[Widget, ...]:
        """Every widget the run drew, in drawing order."""
        fragments = self.fragments or ("",) * len(self.elements)
        found = (widget_of(e, f) for e, f in zip(self.elements, fragments, strict=True))
        return tuple(w for w in found if w is not None)

    def widget(self, key: str, kind: str | None = None) -> Widget:
        """The widget with this user key (and element type); LookupError when not drawn."""
        for widget in self.widgets:
            if widget.key == key and (kind is None or widget.kind == kind):
                return widget
        raise LookupError(f"no widget with key {key!r} was drawn")

    def element(self, kind: str) -> Element:
        """The first element of a type (e.g. `dataframe`); LookupError when none was drawn."""
        for element in self.elements:
            if element.WhichOneof("type") == kind:
                return element
        raise LookupError(f"no {kind} element was drawn")


@dataclass
class StreamlitSession:
    """One tab: a websocket session with the server that runs pages and clicks widgets."""

    connection: ClientConnection
    timeout: float
    query_string: str = ""
    page_hashes: dict[str, str] = field(default_factory=dict)
    page_hash: str = ""
    cache: dict[str, ForwardMsg] = field(default_factory=dict)

    @classmethod
    async def open(
        cls, base_url: str, timeout: float, cookies: dict[str, str] | None = None
    ) -> StreamlitSession:
        """Connect a new session to a server such as `ws://127.0.0.1:8501`.

        `cookies` is the browser's cookie jar for that server: its cookies are sent with the
        handshake, as a browser sends them, and those the answer sets are kept in it (a
        proxy's sticky-session cookie, say)."""
        jar = {} if cookies is None else cookies
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else None
        connection = await connect(
            base_url + STREAM_PATH,
            subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
            max_size=MAX_MESSAGE_BYTES,
            open_timeout=timeout,
            close_timeout=CLOSE_TIMEOUT_S,
            proxy=None,
            additional_headers=headers,
        )
        if connection.response is not None:
            for line in connection.response.headers.get_all("Set-Cookie"):
                name, _, value = line.split(";", 1)[0].strip().partition("=")
                if name:
                    jar[name] = value
        return cls(connection=connection, timeout=timeout)

    async def close(self) -> None:
        """Close the websocket, as a tab does when it is closed."""
        await self.connection.close()

    async def open_page(self, url_path: str, query_string: str = "") -> Run:
        """Go to a page with a query string, as the menu or a link inside the app does."""
        self.query_string = query_string
        known = self.page_hashes.get(url_path)
        state = ClientState(
            query_string=query_string,
            page_script_hash=known or "",
            page_name="" if known else url_path,
        )
        return await self._rerun(state)

    async def click(self, widget: Widget) -> Run:
        """Press a button: a rerun with its trigger set (of its fragment, if it is in one)."""
        return await self.change(
            WidgetState(id=widget.id, trigger_value=True), fragment_id=widget.fragment_id
        )

    async def change(self, *states: WidgetState, fragment_id: str = "") -> Run:
        """A rerun of the current page (or only of the fragment `fragment_id`) with these
        widget values changed."""
        state = ClientState(
            query_string=self.query_string,
            page_script_hash=self.page_hash,
            fragment_id=fragment_id,
        )
        state.widget_states.widgets.extend(states)
        return await self._rerun(state)

    async def rerun_fragment(self, fragment_id: str) -> Run:
        """The timed rerun of one fragment that the browser asks for by itself
        (`st.fragment(run_every=…)`), as a live dashboard refreshes."""
        state = ClientState(
            query_string=self.query_string,
            page_script_hash=self.page_hash,
            fragment_id=fragment_id,
            is_auto_rerun=True,
        )
        return await self._rerun(state)

    async def _rerun(self, state: ClientState) -> Run:
        """Send one rerun request and read the run it caused, timed, until it finishes."""
        state.cached_message_hashes.extend(self.cache)
        request = BackMsg(rerun_script=state)
        started = time.perf_counter()
        await self.connection.send(request.SerializeToString())
        elements: list[Element] = []
        fragments: list[str] = []
        errors: list[str] = []
        script_runs = 0
        deadline = started + self.timeout
        while True:
            message = await self._receive(deadline)
            kind = message.WhichOneof("type")
            if kind == "new_session":
                script_runs += 1
                elements.clear()
                fragments.clear()
                self.page_hash = message.new_session.page_script_hash
            elif kind == "navigation":
                self._learn_pages(message)
            elif kind == "page_info_changed":
                self.query_string = message.page_info_changed.query_string
            elif kind == "page_not_found":
                errors.append(f"page not found: {message.page_not_found.page_name!r}")
            elif kind == "session_event" and message.session_event.HasField(
                "script_compilation_exception"
            ):
                errors.append(_exception_text(message.session_event.script_compilation_exception))
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                elements.append(element)
                fragments.append(message.delta.fragment_id)
                if element.WhichOneof("type") == "exception":
                    errors.append(_exception_text(element.exception))
            elif kind == "script_finished" and _ends_request(message.script_finished):
                break
        return Run(
            seconds=time.perf_counter() - started,
            elements=tuple(elements),
            errors=tuple(errors),
            query_string=self.query_string,
            script_runs=script_runs,
            fragments=tuple(fragments),
        )

    async def _receive(self, deadline: float) -> ForwardMsg:
        """The next ForwardMsg (a cached one when the server refers to it by hash)."""
        remaining = deadline - time.perf_counter()
        try:
            raw = await asyncio.wait_for(self.connection.recv(), max(remaining, 0.0))
        except TimeoutError:
            raise SessionBroken(f"no script_finished within {self.timeout:g} s") from None
        except Exception as error:  # the connection closed or broke
            raise SessionBroken(f"connection lost: {type(error).__name__}") from None
        if not isinstance(raw, bytes):
            raise SessionBroken("the server sent a text frame")
        message: ForwardMsg = ForwardMsg.FromString(raw)
        if message.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(message.ref_hash)
            if cached is None:
                raise SessionBroken("the server referred to a message this client never had")
            return cached
        if message.metadata.cacheable:
            self.cache[message.hash] = message
        return message

    def _learn_pages(self, message: ForwardMsg) -> None:
        """Remember every page's hash, so later page changes are made as the menu does."""
        for page in message.navigation.app_pages:
            self.page_hashes[page.url_pathname] = page.page_script_hash
        if message.navigation.page_script_hash:
            self.page_hash = message.navigation.page_script_hash


def _ends_request(status: ForwardMsg.ScriptFinishedStatus.ValueType) -> bool:
    """Whether a `script_finished` status ends the request (not one run of a chain)."""
    return status != ForwardMsg.FINISHED_EARLY_FOR_RERUN


def _exception_text(exception: object) -> str:
    """An exception element or event as one line: its type and message."""
    kind = getattr(exception, "type", "") or "exception"
    text = " ".join(str(getattr(exception, "message", "")).split())
    return f"{kind}: {text[:200]}" if text else str(kind)


def buttons(run: Run, key_prefix: str) -> list[Widget]:
    """The enabled buttons (not form submitters) whose key starts with a prefix."""
    return [
        w
        for w in run.widgets
        if w.kind == "button" and not w.form_id and not w.disabled and _starts(w.key, key_prefix)
    ]


def _starts(key: str | None, prefix: str) -> bool:
    """Whether a widget key exists and starts with a prefix."""
    return key is not None and key.startswith(prefix)


def keys(widgets: Iterable[Widget]) -> Sequence[str | None]:
    """The user keys of some widgets, for messages."""
    return [w.key for w in widgets]
