"""The regex library (apiserver pkg/cel/library/regex.go) with RE2, Go regexp's syntax and messages."""

from __future__ import annotations

import functools
import re
from typing import Any

from kubedra.cel.library.registry import (
    CELFunctionError,
    T,
    define,
)

# RE2 (google-re2), like Go's regexp: linear time, no backreferences, lookaround or possessive repetition.
# RE2's C++ parser messages -> Go regexp/syntax's ErrorCode texts (what upstream's error carries).
_RE2_TO_GO = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing ]": "missing closing ]",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
    "trailing \\": "trailing backslash at end of expression",
    "pattern too large - compile failed": "expression too large",
}
_GO_ONLY_REJECTS = re.compile(r"(?<!\\)(?:\\\\)*\\C")  # Go regexp has no \C (any byte)


def _regex_error(message: str) -> str:
    code, _, arg = message.partition(": ")
    go = _RE2_TO_GO.get(code)
    if go is None:
        return f"error parsing regexp: {message}"
    return f"error parsing regexp: {go}: `{arg}`"


@functools.cache
def _re2() -> tuple[Any, Any]:
    """The re2 module and its options, imported when the first pattern is compiled: most runs compile none, and
    importing it is about 2 ms."""
    import re2  # noqa: PLC0415  (third-party, loaded on first use)

    options = re2.Options()
    options.log_errors = False  # RE2 would log every rejected pattern to stderr
    return re2, options


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """Compile with RE2 as Go's ``regexp.Compile`` would; CELFunctionError with upstream's text otherwise."""
    if _GO_ONLY_REJECTS.search(pattern):
        raise CELFunctionError("Illegal regex: error parsing regexp: invalid escape sequence: `\\C`")
    re2, options = _re2()
    try:
        return re2.compile(pattern, options=options)
    except re2.error as e:
        text = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        if text in ("invalid perl operator: (?<!", "invalid perl operator: (?<="):
            # Go reads "(?<" as a named capture "(?<name>": the text up to the next ">" (or the end)
            rest = pattern[pattern.index(text.removeprefix("invalid perl operator: ")) :]
            end = rest.find(">")
            capture = rest if end < 0 else rest[: end + 1]
            raise CELFunctionError(
                f"Illegal regex: error parsing regexp: invalid named capture: `{capture}`"
            ) from None
        raise CELFunctionError(f"Illegal regex: {_regex_error(text)}") from None


def _find(s: str, pattern: str) -> str:
    m = compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    """Go's ``FindAllString(s, n)``: an empty match right after the previous match is skipped."""
    if n == 0:
        return []
    regex = compile_regex(pattern)
    out: list[str] = []
    pos, prev_end = 0, -1
    while pos <= len(s) and (n < 0 or len(out) < n):
        m = regex.search(s, pos)
        if m is None:
            break
        start, end = m.span()
        accept = True
        if end == pos:  # an empty match
            accept = start != prev_end
            pos += 1
        else:
            pos = end
        prev_end = end
        if accept:
            out.append(m.group(0))
    return out


define("regex", "find", "string_find_string", T.STRING, [T.STRING, T.STRING], _find, member=True)
define(
    "regex",
    "findAll",
    "string_find_all_string",
    T.List(T.STRING),
    [T.STRING, T.STRING],
    _find_all,
    member=True,
)
define(
    "regex",
    "findAll",
    "string_find_all_string_int",
    T.List(T.STRING),
    [T.STRING, T.STRING, T.INT],
    _find_all,
    member=True,
)
