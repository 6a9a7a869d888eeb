"""Be the scheduler: click every step of a run yourself; the model checks each one."""

from webapp.screens.playground_page import render_playground

render_playground()
