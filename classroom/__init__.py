"""Exercises and classes: set files, their checks, grading, progress and the class store.

`schema` is the set format's field table; `sets` reads a set file and checks every
exercise; `data` holds what was read; `solvability` asks the model whether each exercise can
be answered; `grading` judges an answer by the model's verdicts; `progress` keeps a
student's answers; `class_store` keeps a class's answers for its teacher. No Streamlit
here: the `fencing exercises` command and the web app's pages both use it.

May import the model and the advice.
"""
