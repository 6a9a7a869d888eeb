"""Walkthrough chapter 3."""

from webapp.chapter_page import render_chapter

render_chapter(3)
