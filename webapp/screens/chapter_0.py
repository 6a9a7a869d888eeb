"""Walkthrough chapter 0: why a lease at all."""

from webapp.screens.chapter_lease import LEASE_CHAPTER, show_lesson_table
from webapp.screens.chapter_page import render_chapter

render_chapter(LEASE_CHAPTER)
show_lesson_table()
