"""Words in reports: one helper so every count reads "1 finding", "2 findings", "1 policy", "3 policies"."""

from __future__ import annotations

_VOWELS = "aeiou"


def plural(word: str) -> str:
    """English plural of a count word (``policy`` → ``policies``, ``GPU`` → ``GPUs``, ``pass`` → ``passes``)."""
    if word.endswith("y") and len(word) > 1 and word[-2].lower() not in _VOWELS:
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def count(n: int, word: str, many: str | None = None) -> str:
    """``count(1, "finding")`` → ``1 finding``; ``count(2, "finding")`` → ``2 findings``; ``many`` for
    irregular plurals or when only the last word of a phrase changes is not enough."""
    if n == 1:
        return f"{n} {word}"
    if many is not None:
        return f"{n} {many}"
    head, sep, last = word.rpartition(" ")
    return f"{n} {head}{sep}{plural(last)}"


def noun(n: int, word: str) -> str:
    """The word alone, singular for 1 (``noun(2, "field")`` → ``fields``): for "unknown fields a, b"."""
    return word if n == 1 else plural(word)


def some(names: list[str], most: int = 5) -> str:
    """Up to ``most`` names and how many more: ``a, b, c, d, e and 3 more``."""
    more = len(names) - most
    return ", ".join(names[:most]) + (f" and {more} more" if more > 0 else "")


def value_kind(value: object) -> str:
    """What a YAML/JSON value is, in its document's words: ``a mapping``, ``a list``, ``a string``,
    ``a number``, ``a boolean``, ``null`` (for "labels is a list, not a mapping")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else "a value"
