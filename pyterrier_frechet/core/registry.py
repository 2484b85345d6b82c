"""Names in the package's registries (interval methods, measures): one rule for what a third party may register, so
a name that cannot be written, or that differs from a registered one only in case, is refused where it is
registered — not found later, when a table prints it or a parser cannot tell two names apart. Pure Python."""
import re
from typing import Iterable

#: What a registered name looks like, a Python identifier in ASCII (what ir_measures' parser reads before ``(`` and
#: ``@``, what a command line takes unquoted).
NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def check_name(name, taken: Iterable[str], what: str) -> str:
    """``name`` if it can be registered as a ``what`` ('interval method', 'measure'): a non-empty ASCII identifier
    that is not one of ``taken`` and does not differ from one of them only in case (``Percentile`` beside
    ``percentile``); a ValueError saying which rule it breaks otherwise."""
    if not isinstance(name, str):
        raise ValueError(f'a {what} name must be a string, got {type(name).__name__} {name!r}')
    if not NAME.fullmatch(name):
        raise ValueError(f'{what} name {name!r}: not a name that can be written and parsed; use letters, digits and '
                         "'_', starting with a letter or '_' (e.g. 'middle_half')")
    clash = [t for t in taken if isinstance(t, str) and t.lower() == name.lower()]
    if clash:
        same = clash[0] == name
        raise ValueError(f'a {what} named {clash[0]!r} is already registered' +
                         ('' if same else f'; {name!r} differs from it only in case, which no reader can tell apart'))
    return name


def check_text(value, field: str, owner: str) -> str:
    """A non-empty one-line text field of a registered thing (a caption's words, an estimand)."""
    if not isinstance(value, str) or not value.strip() or any(c in value for c in '\r\n'):
        raise ValueError(f'{owner}: {field} must be a non-empty one-line text, got {value!r}')
    return value


__all__ = ['NAME', 'check_name', 'check_text']
