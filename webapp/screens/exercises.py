"""Classroom exercises: predict, break it, fix it; graded by the model."""

from webapp.screens.exercises_page import render_exercises

render_exercises()
