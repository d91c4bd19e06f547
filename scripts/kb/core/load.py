"""Load the KB tables from ``docs/data/`` into typed records that remember their file and line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeGuard, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .errors import KBError, Problem, escape_text
from .files import check_entry
from .schema import TABLES, Model
from .yamlload import KeyPath, Located, YAMLProblem, load_file

M = TypeVar("M", bound=Model, covariant=True)  # the model of a record's table
T = TypeVar("T", bound=Model)


@dataclass(frozen=True)
class Record(Generic[M]):
    """A validated row, with the file and line of the row and of each of its fields.

    ``Record[Claim]`` is a row whose model is a ``Claim``; a ``Record[Model]`` may be a row of any
    table, and ``narrow`` types it as the row of a given one.
    """

    table: str
    index: int
    model: M
    path: str
    located: Located

    @property
    def id(self) -> str:
        # Every table's model declares an id (schema.TABLES); the Model base, which bounds M, does not.
        return self.model.id  # type: ignore[attr-defined, no-any-return]

    def narrow(self, kind: type[T]) -> Record[T]:
        """This record, typed as a row whose model is a ``kind``; TypeError if its model is not one."""
        if is_row(self, kind):
            return self
        raise TypeError(f"{self.where()} is a {type(self.model).__name__}, not a {kind.__name__}")

    @property
    def line(self) -> int:
        return self.located.line((self.index,))

    def line_of(self, *field_path: str | int) -> int:
        """The line of a field (e.g. ``line_of("sources", 0, "id")``)."""
        return self.located.line((self.index, *field_path))

    def where(self, *field_path: str | int) -> str:
        """``table[i].field`` for messages."""
        parts = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in field_path)
        return f"{self.table}[{self.index}]{parts}"


def is_row(rec: Record[Model], kind: type[T]) -> TypeGuard[Record[T]]:
    """Whether ``rec``'s model is a ``kind`` (``isinstance`` on the model, which types the record too)."""
    return isinstance(rec.model, kind)


@dataclass
class KB:
    """Every table, by name, as lists of records, plus an index by id."""

    root: Path
    tables: dict[str, list[Record[Model]]] = field(default_factory=dict)

    _index: dict[str, dict[str, Record[Model]]] = field(default_factory=dict, repr=False)

    def get(self, table: str, record_id: str) -> Record[Model] | None:
        return self.index(table).get(record_id)

    def rows(self, table: str, kind: type[T]) -> list[Record[T]]:
        """The records of ``table``, typed by its model ``kind`` (TypeError for a record of another model)."""
        return [rec.narrow(kind) for rec in self.tables.get(table, [])]

    def index(self, table: str) -> dict[str, Record[Model]]:
        """Records of ``table`` by id (the first of duplicates, which validation reports)."""
        if table not in self._index:
            records = self.tables.get(table, [])
            self._index[table] = {}
            for rec in records:
                self._index[table].setdefault(rec.id, rec)
        return self._index[table]


ALL_TABLES = "*"  # in ``ReadTables.names``: something read every table


class ReadTables(dict[str, list[Record[Model]]]):
    """A KB's tables that note which ones are read (``names``); going over them all notes ``ALL_TABLES``."""

    def __init__(self, tables: dict[str, list[Record[Model]]]) -> None:
        super().__init__(tables)
        self.names: set[str] = set()

    def __getitem__(self, key: str) -> list[Record[Model]]:
        self.names.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.names.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.names.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.names.add(ALL_TABLES)
        return super().__iter__()

    def keys(self) -> Any:
        self.names.add(ALL_TABLES)
        return super().keys()

    def values(self) -> Any:
        self.names.add(ALL_TABLES)
        return super().values()

    def items(self) -> Any:
        self.names.add(ALL_TABLES)
        return super().items()


@dataclass
class TableReads(KB):
    """``kb`` as a renderer sees it, noting the tables it reads (``read.names``): under serve a page's
    render is reused until one of those changes (kb/mkdocs/project.py). Its index is ``kb``'s."""

    read: ReadTables = field(default_factory=lambda: ReadTables({}))

    @classmethod
    def of(cls, kb: KB) -> TableReads:
        read = ReadTables(kb.tables)
        return cls(kb.root, read, kb._index, read)

    def index(self, table: str) -> dict[str, Record[Model]]:
        self.read.names.add(table)
        return super().index(table)


def load_kb(data_dir: Path, shown_root: Path | None = None) -> KB:
    """Load every table; raise KBError listing all problems found in all files."""
    kb, problems = read_kb(data_dir, shown_root)
    if problems:
        raise KBError(problems)
    return kb


def read_kb(data_dir: Path, shown_root: Path | None = None) -> tuple[KB, list[Problem]]:
    """Every table that loads, and every problem of every file; never raises for bad input.

    ``shown_root`` is the project folder: paths are shown relative to it, and a table file that
    is a symlink leading out of it is reported, never read.
    """
    shown_root = shown_root or data_dir.parent.parent
    real_root = Path(os.path.realpath(shown_root))
    kb = KB(data_dir)
    problems: list[Problem] = []
    for name in TABLES:
        main = data_dir / f"{name}.yml"
        if not (main.exists() or main.is_symlink()):
            problems.append(
                Problem(_shown(main, shown_root), 1, f"table '{name}' is missing (expected the file {name}.yml)")
            )
            continue
        kb.tables[name] = []
        # A table may be split by topic: claims.yml plus claims.<part>.yml, read in name order.
        for path in [main, *sorted(data_dir.glob(f"{name}.*.yml"))]:
            shown = _shown(path, shown_root)
            problem = check_entry(path, shown, real_root, want_dir=False)
            if problem:  # outside the project, a folder, a FIFO or device, too large: never opened
                problems.append(problem)
                continue
            records, found = load_table(name, path, shown)
            kb.tables[name] += records
            problems += found
    problems += _unread_tables(data_dir, shown_root)
    return kb, sorted(set(problems))


_YAML_NAME = re.compile(r"\.ya?ml(?:$|[^a-z0-9])", re.I)  # claims.yaml, Claims.YML, claims.yml.bak


def _unread_tables(data_dir: Path, shown_root: Path) -> list[Problem]:
    """A YAML file under docs/data/ that the loader would never read: in a subfolder, or named
    other than <table>.yml and <table>.<part>.yml (another case, .yaml, a backup suffix)."""
    problems = []
    for path in sorted(data_dir.rglob("*")):
        if not _YAML_NAME.search(path.name) or path.is_dir():
            continue
        table, _, rest = path.name.partition(".")
        expected = f"expected docs/data/<table>.yml or <table>.<part>.yml, table one of: {', '.join(TABLES)}"
        if path.parent != data_dir:
            rel = escape_text(path.relative_to(data_dir).as_posix())
            msg = f"table file '{rel}' is in a subfolder of docs/data/, which the loader never reads ({expected})"
        elif table in TABLES and (rest == "yml" or rest.endswith(".yml")):
            continue  # read above
        else:
            msg = f"unknown table file '{escape_text(path.name)}', which the loader never reads ({expected})"
        problems.append(Problem(_shown(path, shown_root), 1, msg))
    return problems


def load_table(name: str, path: Path, shown: str) -> tuple[list[Record[Model]], list[Problem]]:
    """Parse and validate one table file; never raises for bad input."""
    try:
        located = load_file(path, shown)
    except YAMLProblem as exc:
        return [], [exc.problem]
    if not isinstance(located.data, list):
        return [], [
            Problem(
                shown,
                located.line(()),
                f"top level is a {_kind(located.data)} (expected a list of records, each starting with '- ')",
            )
        ]
    model = TABLES[name]
    records: list[Record[Model]] = []
    problems: list[Problem] = []
    for i, row in enumerate(located.data):
        if not isinstance(row, dict):
            problems.append(
                Problem(shown, located.line((i,)), f"{name}[{i}] is a {_kind(row)} (expected a mapping of fields)")
            )
            continue
        try:
            rec = model.model_validate(row)
        except ValidationError as exc:
            for err in exc.errors():
                problems.append(_problem(name, i, err, located, shown, model))
            continue
        records.append(Record(name, i, rec, shown, located))
    return records, problems


def _problem(table: str, i: int, err: ErrorDetails, located: Located, shown: str, model: type[Model]) -> Problem:
    loc = tuple(err["loc"])
    where = f"{table}[{i}]" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    line = located.line((i, *loc))
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        msg = f"missing field '{loc[-1]}' (expected it to be set)"
        where = where.rsplit(".", 1)[0]
    elif kind == "extra_forbidden":
        allowed = ", ".join(_fields_at(model, loc[:-1]))
        msg = f"unknown key '{loc[-1]}' (expected one of: {allowed})"
        where = where.rsplit(".", 1)[0]
    elif kind == "literal_error":
        msg = f"{value!r} is not allowed (expected one of: {err['ctx']['expected'].replace(chr(39), '')})"
    elif kind == "value_error":
        msg = str(err["ctx"]["error"])
    else:
        msg = f"{err['msg'].lower().replace('input should be', 'expected')}, got {_kind(value)} {value!r}"
    return Problem(shown, line, escape_text(f"{where}: {msg}"))  # a value with line breaks must not split the message


def _fields_at(model: type[Model], loc: KeyPath) -> list[str]:
    """Field names of the (sub)model at ``loc``, for 'unknown key' messages."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part)
        if info is None:
            return []
        ann = info.annotation
        for arg in (*getattr(ann, "__args__", ()), ann):
            if isinstance(arg, type) and issubclass(arg, Model):
                current = arg
                break
            inner = getattr(arg, "__args__", ())
            sub = [a for a in inner if isinstance(a, type) and issubclass(a, Model)]
            if sub:
                current = sub[0]
                break
    return list(current.model_fields)


def _kind(value: Any) -> str:
    return {
        dict: "mapping",
        list: "list",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
        type(None): "empty value",
    }.get(type(value), type(value).__name__)


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` as written (a symlink is named, not its target)."""
    try:
        shown = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        shown = path.as_posix()
    return escape_text(shown)  # a line break in a file name must not forge a line of the report
