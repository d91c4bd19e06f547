"""git's ignore patterns (``.gitignore`` lines and ``--exclude``), matched in time linear in the path.

The syntax is git's: ``#`` comments, trailing spaces dropped unless escaped, ``!`` negation, a
trailing ``/`` for folders only, a ``/`` at the start or in the middle anchoring the pattern to its
folder (otherwise it matches a name at any depth), ``*`` and ``?`` within a name, ``[...]`` classes
(``!``/``^`` negation, ranges, ``[:alpha:]``-style names), ``**`` as a whole path part for any number
of folders (one or more when trailing), and ``\\`` escaping. The last matching pattern decides.

No regular expression touches a path: a name pattern is a list of fixed-width chunks split at its
stars, and each chunk is placed at its earliest fit (which is always the best choice), so a match
costs at most name length x pattern length, whatever the pattern. ``**`` is handled the same way over path parts.
Literal patterns, the bulk of a long generated ``.gitignore``, are looked up in dictionaries.

Like git, matching is by bytes of UTF-8: ``?`` matches one byte, so ``??`` matches ``é``.

git matches nothing with a pattern it can't read (an unterminated ``[``, an unknown ``[:name:]``,
a trailing lone ``\\``); here such a line is a :class:`PatternError` for the caller to report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

_POSIX: dict[str, Callable[[str], bool]] = {
    "alnum": lambda c: c.isascii() and c.isalnum(),
    "alpha": lambda c: c.isascii() and c.isalpha(),
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: c < " " or c == "\x7f",
    "digit": lambda c: "0" <= c <= "9",
    "graph": lambda c: "!" <= c <= "~",
    "lower": lambda c: "a" <= c <= "z",
    "print": lambda c: " " <= c <= "~",
    "punct": lambda c: "!" <= c <= "~" and not c.isalnum(),
    "space": lambda c: c in " \t\n\r\f\v",
    "upper": lambda c: "A" <= c <= "Z",
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}
_SPECIAL = re.compile(r"[\\*?\[/]")  # a pattern without these is a literal name ...
_CLASS_OR_ESCAPE = re.compile(r"[\\?\[]")
_PLAIN = re.compile(r"[^\\*?\[/!#\r ][^\\*?\[/\r]*(?<! )")  # ... and so is a line like this, as it is


class PatternError(ValueError):
    """A pattern git would match nothing with; the message says why and what was expected."""


class CharClass(NamedTuple):
    """``[...]`` (or ``?``: an empty negated class): one character of a name."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    named: tuple[Callable[[str], bool], ...]
    negated: bool

    def matches(self, c: str) -> bool:
        hit = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges) or any(f(c) for f in self.named)
        return hit != self.negated


ANY_CHAR = CharClass(frozenset(), (), (), True)


class Op(Enum):
    """The two tokens that aren't characters: a star and a path separator."""

    STAR = "*"
    SLASH = "/"


STAR, SLASH = Op.STAR, Op.SLASH
Token = str | CharClass | Op
Chunk = str | tuple[str | CharClass, ...]  # a literal, or characters and classes


@dataclass(frozen=True, slots=True)
class Name:
    """A pattern for one path part: chunks of fixed width, with a star between each two."""

    chunks: tuple[Chunk, ...]  # one chunk without a star; with stars, the first and last may be empty

    def matches(self, name: str) -> bool:
        chunks = self.chunks
        first = chunks[0]
        if len(chunks) == 1:
            return len(name) == len(first) and _fits(first, name, 0)
        last = chunks[-1]
        end = len(name) - len(last)
        if end < len(first) or not _fits(first, name, 0) or not _fits(last, name, end):
            return False
        at = len(first)
        for chunk in chunks[1:-1]:  # each at its earliest fit: leaves the most room for the rest
            at = _find(chunk, name, at, end)
            if at < 0:
                return False
            at += len(chunk)
        return True


ANY_NAME = Name(("", ""))
Part = Name | None  # None: a whole-part ``**``


@dataclass(frozen=True, slots=True)
class Pattern:
    """One pattern line, compiled."""

    text: str  # as written, for messages
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the whole path under its folder, else against the last part
    parts: tuple[Part, ...]
    literal: str | None  # the name (or anchored path) when the pattern has no wildcard

    def matches(self, parts: list[str], is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if not self.anchored:
            name = self.parts[0]
            assert name is not None
            return name.matches(parts[-1])
        return _match_parts(self.parts, parts)


def parse(line: str, *, comments: bool = True) -> Pattern | None:
    """One line of a ``.gitignore`` (or an ``--exclude`` value, ``comments=False``): its pattern,
    or None for a blank line or comment. PatternError for a pattern git would never match."""
    if line.endswith("\r"):
        line = line[:-1]
    if comments and line.startswith("#"):
        return None
    text = _trim_trailing_spaces(line)
    if not text:
        return None
    negated = text.startswith("!")
    body = bytewise(text[1:] if negated else text)
    if not _SPECIAL.search(body):
        if not body:
            raise PatternError("'!' alone negates nothing (expected a pattern after it)")
        return Pattern(text, negated, False, False, (Name((body,)),), body)
    groups: list[str] | list[list[Token]]
    if _CLASS_OR_ESCAPE.search(body):
        tokens = _tokens(body)
        dir_only = tokens[-1] is SLASH
        if dir_only:
            tokens.pop()
        split: list[list[Token]] = [[]]
        for token in tokens:
            if token is SLASH:
                split.append([])
            else:
                split[-1].append(token)
        groups = split
    else:  # only '*' and '/' are special: split the text itself, which is much quicker
        dir_only = body.endswith("/")
        groups = (body[:-1] if dir_only else body).split("/")
    anchored = len(groups) > 1
    if anchored and not groups[0]:
        groups.pop(0)  # a leading '/' anchors, and is no part
    if len(groups) == 1 and not groups[0]:
        raise PatternError("the pattern is only '/' (expected a name or path)")
    parts = tuple(_part(g, anchored) for g in groups)
    literal = None
    if all(p is not None and len(p.chunks) == 1 and isinstance(p.chunks[0], str) for p in parts):
        literal = "/".join(str(p.chunks[0]) for p in parts if p is not None)
    return Pattern(text, negated, dir_only, anchored, parts, literal)


def _part(group: str | list[Token], anchored: bool) -> Part:
    """One path part of a pattern: None for a whole-part ``**`` (only where a slash makes it one)."""
    if anchored and group in ("**", [STAR, STAR]):
        return None
    if not isinstance(group, str):
        return _name(group)
    chunks = group.split("*")
    if len(chunks) > 2:  # '**' inside a name is one star: drop the empty chunks between stars
        chunks = [chunks[0], *(c for c in chunks[1:-1] if c), chunks[-1]]
    return Name(tuple(chunks))


class PatternSet:
    """The patterns of one ``.gitignore`` (or all ``--exclude`` values), in order."""

    def __init__(self) -> None:
        self._count = 0
        self._negated: set[int] = set()  # indices of '!' patterns
        # literal name or anchored path -> index of its last pattern (for anything, for folders only)
        self._names: dict[str, int] = {}
        self._dir_names: dict[str, int] = {}
        self._paths: dict[str, int] = {}
        self._dir_paths: dict[str, int] = {}
        self._globs: dict[int, Pattern] = {}
        self._by_first: dict[str, list[int]] = {}  # anchored globs under a literal first part
        self._others: list[int] = []

    def __bool__(self) -> bool:
        return self._count > 0

    def add_lines(self, lines: Iterable[str]) -> list[tuple[int, str]]:
        """Add each line's pattern; (line number, why) for each one git would match nothing with."""
        problems: list[tuple[int, str]] = []
        names, plain = self._names, _PLAIN.fullmatch
        for number, line in enumerate(lines, 1):
            if plain(line):  # a plain name, as most lines of a long file are: no Pattern needed
                names[line if line.isascii() else bytewise(line)] = self._count
                self._count += 1
                continue
            try:
                self.add_line(line)
            except PatternError as exc:
                problems.append((number, str(exc)))
        return problems

    def add_line(self, line: str, *, comments: bool = True) -> bool:
        """Add one line's pattern (see :func:`parse`); False for a blank line or comment."""
        pattern = parse(line, comments=comments)
        if pattern is None:
            return False
        self.add(pattern)
        return True

    def add(self, p: Pattern) -> None:
        i = self._count
        self._count += 1
        if p.negated:
            self._negated.add(i)
        if p.literal is not None:
            if p.anchored:
                (self._dir_paths if p.dir_only else self._paths)[p.literal] = i
            else:
                (self._dir_names if p.dir_only else self._names)[p.literal] = i
            return
        self._globs[i] = p
        head = p.parts[0]
        if p.anchored and head is not None and len(head.chunks) == 1 and isinstance(head.chunks[0], str):
            self._by_first.setdefault(head.chunks[0], []).append(i)
        else:
            self._others.append(i)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: ``rel`` (a path under this set's folder, ``/``-separated) is ignored; False: a ``!``
        pattern keeps it; None: no pattern matches."""
        parts = (rel if rel.isascii() else bytewise(rel)).split("/")
        path = "/".join(parts)
        best = max(self._names.get(parts[-1], -1), self._paths.get(path, -1))
        if is_dir:
            best = max(best, self._dir_names.get(parts[-1], -1), self._dir_paths.get(path, -1))
        for candidates in (self._by_first.get(parts[0], ()), self._others):
            for i in reversed(candidates):
                if i <= best:
                    break
                if self._globs[i].matches(parts, is_dir):
                    best = i
                    break
        return None if best < 0 else best not in self._negated


def bytewise(text: str) -> str:
    """``text`` as git sees it, one character per byte of its UTF-8 (an undecodable byte of a file
    name, which os gives as a lone surrogate, is that byte again): ``?`` and ``[...]`` match a byte."""
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("latin-1")
    except UnicodeEncodeError:  # a surrogate no decoder made: keep its code units
        return text.encode("utf-8", "surrogatepass").decode("latin-1")


def _trim_trailing_spaces(line: str) -> str:
    """git's rule: trailing spaces go unless the last one is escaped with a backslash."""
    stripped = line.rstrip(" ")
    if stripped == line:
        return line
    backslashes = len(stripped) - len(stripped.rstrip("\\"))
    return stripped + " " if backslashes % 2 else stripped


def _tokens(body: str) -> list[Token]:
    """Characters, classes (``?`` is ANY_CHAR), STAR and SLASH; an escaped character is itself."""
    out: list[Token] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\":
            if i + 1 >= n:
                raise PatternError("ends with a lone '\\' (expected a character after it, or '\\\\')")
            i += 1
            out.append(SLASH if body[i] == "/" else body[i])
        elif c == "[":
            cls, i = _char_class(body, i)
            out.append(cls)
            continue
        else:
            out.append(STAR if c == "*" else ANY_CHAR if c == "?" else SLASH if c == "/" else c)
        i += 1
    return out


def _char_class(body: str, i: int) -> tuple[CharClass, int]:
    """The class opened by ``body[i] == '['`` (git's reading) and the index after its ``]``."""
    n = len(body)
    i += 1
    negated = i < n and body[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    named: list[Callable[[str], bool]] = []
    prev, first = "", True
    while True:
        if i >= n:
            raise PatternError("a '[' is never closed (expected ']', or '\\[' for a literal '[')")
        c = body[i]
        if c == "]" and not first:
            return CharClass(frozenset(chars), tuple(ranges), tuple(named), negated), i + 1
        first = False
        if c == "\\" and i + 1 < n:
            i += 1
            prev = body[i]
            chars.add(prev)
        elif c == "-" and prev and i + 1 < n and body[i + 1] != "]":
            i += 1
            hi = body[i]
            if hi == "\\" and i + 1 < n:
                i += 1
                hi = body[i]
            ranges.append((prev, hi))
            prev = ""
        elif c == "[" and body.startswith(":", i + 1):
            close = body.find("]", i + 2)
            if close < 0:
                raise PatternError("a '[' is never closed (expected ']', or '\\[' for a literal '[')")
            if close < i + 3 or body[close - 1] != ":":
                chars.add("[")  # no ':]' before the ']': a plain '['
                prev = "["
            else:
                name = body[i + 2 : close - 1]
                if name not in _POSIX:
                    raise PatternError(f"[:{name}:] is not a character class (expected one of {', '.join(_POSIX)})")
                named.append(_POSIX[name])
                prev = ""
                i = close
        else:
            prev = c
            chars.add(c)
        i += 1


def _name(tokens: list[Token]) -> Name:
    """One path part's tokens as chunks split at the stars (``**`` inside a name is one star)."""
    chunks: list[Chunk] = []
    current: list[str | CharClass] = []
    after_star = False
    for t in tokens:
        if t is STAR:
            if not (after_star and not current):
                chunks.append(_chunk(current))
            current = []
            after_star = True
        else:
            assert not isinstance(t, Op), "a slash splits parts before this"
            current.append(t)
            after_star = False
    chunks.append(_chunk(current))
    return Name(tuple(chunks))


def _chunk(atoms: list[str | CharClass]) -> Chunk:
    if all(isinstance(a, str) for a in atoms):
        return "".join(a for a in atoms if isinstance(a, str))
    return tuple(atoms)


def _fits(chunk: Chunk, name: str, at: int) -> bool:
    if isinstance(chunk, str):
        return name.startswith(chunk, at)
    return all(a == name[at + k] if isinstance(a, str) else a.matches(name[at + k]) for k, a in enumerate(chunk))


def _find(chunk: Chunk, name: str, start: int, end: int) -> int:
    """The first index >= start where ``chunk`` fits wholly before ``end``; -1 if none."""
    if isinstance(chunk, str):
        return name.find(chunk, start, end)
    for at in range(start, end - len(chunk) + 1):
        if _fits(chunk, name, at):
            return at
    return -1


def _match_parts(pattern: tuple[Part, ...], parts: list[str]) -> bool:
    """An anchored pattern against a whole path: ``**`` is a star over path parts, so the same
    earliest-fit placement as in :meth:`Name.matches` works, with whole parts for characters."""
    if pattern and pattern[-1] is None:
        pattern = (*pattern[:-1], ANY_NAME, None)  # a trailing '/**' needs one part or more under it
    groups: list[list[Name]] = [[]]
    for p in pattern:
        if p is None:
            groups.append([])
        else:
            groups[-1].append(p)
    first = groups[0]
    if len(groups) == 1:
        return len(parts) == len(first) and _group_fits(first, parts, 0)
    last = groups[-1]
    end = len(parts) - len(last)
    if end < len(first) or not _group_fits(first, parts, 0) or not _group_fits(last, parts, end):
        return False
    at = len(first)
    for group in groups[1:-1]:
        while at + len(group) <= end and not _group_fits(group, parts, at):
            at += 1
        if at + len(group) > end:
            return False
        at += len(group)
    return True


def _group_fits(group: list[Name], parts: list[str], at: int) -> bool:
    return all(name.matches(parts[at + k]) for k, name in enumerate(group))
