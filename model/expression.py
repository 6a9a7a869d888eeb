"""Symbolic expression text: the fourth backend of the rules, after ints, numpy and z3.

An `Expr` is the text of an integer or boolean expression in C-like syntax (Promela's,
whose conditional is `(c -> a : b)`), with the same expression in Python syntax. The
rules' own operators build it: `s.now + 1` on an `Expr` gives the text `(now + 1)`, and
the helpers of `model.terms` join conditions with `&&`, `||`, `!` and `select`. Engines
read the rules through it: the Promela exporter, which prints the text; the explorer,
which uses it to see which properties a rule can never violate (their condition folds to
the constant False); and the explorer's compiled loops for large levels, built from the
Python form (`model.check.kernels`).
"""

from __future__ import annotations

from typing import Any

Operand = Any
"""An `Expr` or a Python int or bool."""


def _text(value: Operand) -> str:
    """Expression text of an operand (booleans as 1/0, as Promela reads them)."""
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as an expression")


def _python(value: Operand) -> str:
    """Python text of an operand."""
    if isinstance(value, Expr):
        return value.python
    if isinstance(value, bool | int):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as an expression")


_PYTHON_OPERATORS = {"&&": "&", "||": "|"}
"""Promela's logical operators as Python writes them on booleans (no short circuit)."""


class Expr:
    """Text of one expression over named state variables, built by operator overloading.

    Its truth value is deliberately undefined: a Python `if` on a state value in the
    rules would be a bug (the rules use `select`), and here it raises at once.
    """

    __slots__ = ("names", "python", "text")

    def __init__(self, text: str, names: frozenset[str] = frozenset(), python: str = "") -> None:
        self.text = text
        self.names = names
        """Variables the expression reads."""
        self.python = python or text
        """The same expression in Python syntax (variables named as in `text`)."""

    @staticmethod
    def variable(name: str, python: str = "") -> Expr:
        """A state variable by its column name (and, optionally, its Python name)."""
        return Expr(name, frozenset({name}), python or name)

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        raise TypeError(f"the truth of {self.text!r} depends on the state: use terms.select")

    __hash__ = None  # type: ignore[assignment]

    def _join(self, operator: str, other: Operand, reverse: bool = False) -> Expr:
        """`(self op other)`, or `(other op self)` for a reflected operator."""
        left, right = (other, self) if reverse else (self, other)
        names = self.names | (other.names if isinstance(other, Expr) else frozenset())
        python = _PYTHON_OPERATORS.get(operator, operator)
        return Expr(
            f"({_text(left)} {operator} {_text(right)})",
            names,
            f"({_python(left)} {python} {_python(right)})",
        )

    def __add__(self, other: Operand) -> Expr:
        return self._join("+", other)

    def __radd__(self, other: Operand) -> Expr:
        return self._join("+", other, reverse=True)

    def __sub__(self, other: Operand) -> Expr:
        return self._join("-", other)

    def __rsub__(self, other: Operand) -> Expr:
        return self._join("-", other, reverse=True)

    def __mul__(self, other: Operand) -> Expr:
        return self._join("*", other)

    def __rmul__(self, other: Operand) -> Expr:
        return self._join("*", other, reverse=True)

    def __mod__(self, other: Operand) -> Expr:
        return self._join("%", other)

    def __eq__(self, other: object) -> Expr:  # type: ignore[override]
        return self._join("==", other)

    def __ne__(self, other: object) -> Expr:  # type: ignore[override]
        return self._join("!=", other)

    def __lt__(self, other: Operand) -> Expr:
        return self._join("<", other)

    def __le__(self, other: Operand) -> Expr:
        return self._join("<=", other)

    def __gt__(self, other: Operand) -> Expr:
        return self._join(">", other)

    def __ge__(self, other: Operand) -> Expr:
        return self._join(">=", other)

    def __and__(self, other: Operand) -> Expr:
        return self._join("&&", other)

    def __rand__(self, other: Operand) -> Expr:
        return self._join("&&", other, reverse=True)

    def __or__(self, other: Operand) -> Expr:
        return self._join("||", other)

    def __ror__(self, other: Operand) -> Expr:
        return self._join("||", other, reverse=True)

    def __invert__(self) -> Expr:
        text = f"!{self.text}" if self.text.startswith("(") else f"!({self.text})"
        return Expr(text, self.names, f"(not {self.python})")


def choice(cond: Operand, if_true: Operand, if_false: Operand) -> Expr:
    """Promela's conditional expression `(cond -> if_true : if_false)`."""
    names: frozenset[str] = frozenset()
    for part in (cond, if_true, if_false):
        if isinstance(part, Expr):
            names |= part.names
    return Expr(
        f"({_text(cond)} -> {_text(if_true)} : {_text(if_false)})",
        names,
        f"({_python(if_true)} if {_python(cond)} else {_python(if_false)})",
    )
