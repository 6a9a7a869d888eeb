"""Walkthrough chapter 2."""

from webapp.screens.chapter_page import render_chapter

render_chapter(2)
