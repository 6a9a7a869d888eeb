"""Walkthrough chapter 0: why a lease at all."""

from webapp.chapter_lease import LEASE_CHAPTER, show_lesson_table
from webapp.chapter_page import render_chapter

render_chapter(LEASE_CHAPTER)
show_lesson_table()
