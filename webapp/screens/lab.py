"""Live lab: the model's bugs on a real etcd, a real store and real process pauses."""

from webapp.screens.lab_view import render_lab

render_lab()
