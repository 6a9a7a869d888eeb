"""Walkthrough chapter 1."""

from webapp.screens.chapter_page import render_chapter

render_chapter(1)
