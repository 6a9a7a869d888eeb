"""Walkthrough chapter 3."""

from webapp.screens.chapter_page import render_chapter

render_chapter(3)
