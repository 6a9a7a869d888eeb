"""Classroom: create a class, share the students' link, follow their answers live."""

from webapp.screens.class_page import render_class_page

render_class_page()
