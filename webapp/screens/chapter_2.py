"""Walkthrough chapter 2."""

from webapp.chapter_page import render_chapter

render_chapter(2)
