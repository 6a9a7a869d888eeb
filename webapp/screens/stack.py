"""Check my stack: real parts in, verdicts, the bug and the change to make out."""

from webapp.screens.stack_page import render_stack_page

render_stack_page()
