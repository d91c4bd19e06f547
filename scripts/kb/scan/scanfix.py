"""The scanner's mechanical fixes (``--diff``, ``--fix``): rewrite what a rule with a ``fix`` found.

Each rewrite is declared on its rule in the rules table (``fix:``, validated by ``schema.Fix``) and
applied with LibCST, which keeps comments and formatting. A node is rewritten only when it sits
exactly where the ``ast`` scan found it and has exactly the shape the fix expects; anything else is
left as written and stays a finding:

- ``rename``: a call's callee becomes ``to`` (``torch.cuda.synchronize()`` ->
  ``torch.accelerator.synchronize()``), arguments kept; the callee must be a plain dotted name.
  A ``guard`` rename is made only where the scan found the call in code that runs when
  ``is_available()`` is true (``Finding.manual`` is False, see kb.scan.scanguard):
  ``torch.accelerator.memory_allocated()`` raises on a machine with no accelerator, where
  ``torch.cuda.memory_allocated()`` returned 0, so an unguarded one is left to a person;
- ``replace``: a string literal whose value is ``literal`` becomes ``expression``, only where it is
  assigned, passed as an argument or a parameter default (or a branch of a conditional there),
  never as a dict key, a list item or a comparison operand;
- ``to-device``: ``x.cuda()`` (no argument but ``non_blocking``) becomes ``x.to(expression, ...)``;
- ``matmul-precision``: ``torch.backends.cuda.matmul.allow_tf32 = True`` (or ``False``) becomes
  ``torch.set_float32_matmul_precision("high")`` (or ``"highest"``), the same setting.

The rewrites name torch as the file's top level imports it (``import torch as th`` gives
``th.accelerator...``); a file that binds it at all gets ``import torch``. The result must parse, or
the file is left alone and reported. ``fix_text`` is pure: the command line decides what to write.

Each rewrite is spliced into the text as read: LibCST finds the node and writes the new node's
code, and every character outside the rewritten spans (form feeds, ``\r`` line ends, trailing
whitespace, the last line's end) stays as it was, whatever LibCST would print for the whole module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Union

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from .scannames import Finding
from .scanrules import RuleFix, ScanRule

Position = tuple[int, int]  # 1-based line, 1-based character column: as findings give them
Edit = tuple[int, int, str]  # start and end offset in the text, the code that replaces them
_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's line ends (str.splitlines also splits on \f)
_PRECISION = {"True": "high", "False": "highest"}
_TO_KEYWORDS = frozenset({"non_blocking", "memory_format"})


class FixError(Exception):
    """The file can't be fixed (it doesn't parse for LibCST, or the result wouldn't parse)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def fixes_for(findings: Sequence[Finding], rules: dict[str, ScanRule]) -> dict[Position, list[RuleFix]]:
    """The fixes to try, by the position of the finding they belong to (none for one left to a person)."""
    out: dict[Position, list[RuleFix]] = {}
    for f in findings:
        fix = rules[f.rule].fix if f.rule in rules and not f.manual else None
        if fix is not None:
            out.setdefault((f.line, f.column), []).append(fix)
    return out


def fix_text(text: str, targets: dict[Position, list[RuleFix]]) -> tuple[str, int]:
    """The fixed text and how many rewrites were made (0: ``text`` unchanged)."""
    if not targets:
        return text, 0
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise FixError(exc.raw_line, f"LibCST can't parse it ({exc.message}); not fixed") from None
    except RecursionError:
        raise FixError(1, "nested too deeply for LibCST; not fixed") from None
    bound = _torch_name(module)
    try:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        fixer = _Fixer(targets, wrapper, bound or "torch", text)
        wrapper.visit(fixer)
    except RecursionError:
        raise FixError(1, "nested too deeply for LibCST; not fixed") from None
    if fixer.misread:
        raise FixError(fixer.misread, "LibCST reads this line differently from the text (a form feed?); not fixed")
    if not fixer.count:
        return text, 0
    edits = fixer.edits if bound is not None else [*fixer.edits, _import_edit(module, text, fixer)]
    out = _splice(text, edits)
    try:
        ast.parse(out)
    except SyntaxError as exc:
        raise FixError(exc.lineno or 1, f"the fixed file would not parse ({exc.msg}); not fixed") from None
    except RecursionError:
        raise FixError(1, "the fixed file is nested too deeply to check; not fixed") from None
    return out, fixer.count


def _line_starts(text: str) -> list[int]:
    """The offset where each line starts (line 1 at index 0), with Python's line ends."""
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def _splice(text: str, edits: list[Edit]) -> str:
    """``text`` with each span replaced; nothing else changes."""
    out: list[str] = []
    at = 0
    for start, end, code in sorted(edits):
        out += [text[at:start], code]
        at = end
    return "".join(out) + text[at:]


def _import_edit(module: cst.Module, text: str, fixer: _Fixer) -> Edit:
    """``import torch`` where LibCST's AddImportsVisitor would put it, as an insertion."""
    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, "torch")
    added = AddImportsVisitor(context).transform_module(module)
    pairs = enumerate(zip(added.body, module.body, strict=False))
    i = next((i for i, (a, b) in pairs if not a.deep_equals(b)), len(module.body))
    code = added.code_for_node(added.body[i])
    if i == len(module.body):
        newline = "" if not text or _NEWLINE.search(text[-1]) else module.default_newline
        return len(text), len(text), newline + code
    stmt = module.body[i]
    before = len(getattr(stmt, "leading_lines", ()))
    line = fixer.positions[stmt].start.line - before
    gap = len(getattr(added.body[i + 1], "leading_lines", ())) - before  # the blank line it adds after
    return fixer.starts[line - 1], fixer.starts[line - 1], code + module.default_newline * max(0, gap)


def _torch_name(module: cst.Module) -> str | None:
    """The name the module's top level binds torch to: ``torch`` for a plain ``import torch``, else
    the alias of ``import torch as th``; None when it imports neither."""
    names = []
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if isinstance(alias.name, cst.Name) and alias.name.value == "torch":
                            asname = alias.asname.name if alias.asname else None
                            names.append(asname.value if isinstance(asname, cst.Name) else "torch")
    return "torch" if "torch" in names else (names[0] if names else None)


class _Alias(cst.CSTTransformer):
    """``torch`` in a fix's code becomes the name the file binds it to."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.name) if updated.value == "torch" else updated


def _dotted(node: cst.BaseExpression) -> bool:
    """A plain dotted name (``a``, ``a.b.c``): nothing called, indexed or parenthesised."""
    while isinstance(node, cst.Attribute) and not node.lpar:
        node = node.value
    return isinstance(node, cst.Name) and not node.lpar


def _bare(node: cst.CSTNode) -> cst.CSTNode:
    """The node without its own parentheses, which lie outside its position's span."""
    return node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node


Parent = Union[cst.CSTNode, None]


class _Fixer(cst.CSTTransformer):
    def __init__(self, targets: dict[Position, list[RuleFix]], wrapper: MetadataWrapper, torch: str, text: str):
        super().__init__()
        self.targets = targets
        self.torch = torch
        self.module = wrapper.module
        self.text = text
        self.starts = _line_starts(text)
        self.misread = 0  # a line where the text in a node's span is not the node's code
        self.edits: list[Edit] = []
        self.positions = wrapper.resolve(PositionProvider)
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}  # of the nodes visited so far (cheaper than a metadata pass)
        self.stack: list[cst.CSTNode] = []
        self.count = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        self.stack.pop()
        return super().on_leave(original_node, updated_node)  # type: ignore[return-value]

    def _edit(self, original: cst.CSTNode, updated: cst.CSTNode) -> None:
        """Replace ``original``'s span in the text with ``updated``'s code (its parentheses are
        outside the span, so they are left as written); edits inside that span are part of it."""
        pos = self.positions[original]
        start = self.starts[pos.start.line - 1] + pos.start.column
        end = self.starts[pos.end.line - 1] + pos.end.column
        if self.text[start:end] != self.module.code_for_node(_bare(original)):
            self.misread = self.misread or pos.start.line
        self.edits = [e for e in self.edits if not (start <= e[0] and e[1] <= end)]
        self.edits.append((start, end, self.module.code_for_node(_bare(updated))))

    def _code(self, text: str) -> cst.BaseExpression:
        """A fix's expression, with torch named as the file names it."""
        expr = cst.parse_expression(text)
        return expr if self.torch == "torch" else expr.visit(_Alias(self.torch))  # type: ignore[return-value]

    def _wanted(self, node: cst.CSTNode, kind: str) -> RuleFix | None:
        pos = self.positions.get(node)
        if pos is None:
            return None
        for fix in self.targets.get(self._place(node, pos.start.line, pos.start.column), ()):
            if fix.kind == kind:
                return fix
        return None

    def _place(self, node: cst.CSTNode, line: int, column: int) -> Position:
        """Where the scan reports ``node``: its start, except for a method call whose receiver spans
        lines, which is reported at ``.name`` (kb.scan.scannames.FileScan.position)."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return line, column + 1
        name = self.positions[node.func.attr].start
        if name.line == line:
            return line, column + 1
        offset = self.starts[name.line - 1] + name.column
        dot = name.column > 0 and self.text[offset - 1] == "."
        return name.line, name.column + (0 if dot else 1)

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        try:
            value = original.evaluated_value
        except Exception:  # noqa: BLE001  # a literal LibCST can't evaluate is left alone
            return updated
        return self._replace(original, updated, value)

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
        """``f"cuda"``: an f-string with no placeholder and no brace is the plain string it spells."""
        parts = original.parts
        if (
            len(parts) != 1
            or not isinstance(parts[0], cst.FormattedStringText)
            or any(c in parts[0].value for c in "\\{}")
        ):
            return updated
        return self._replace(original, updated, parts[0].value)

    def _replace(self, original: cst.BaseExpression, updated: cst.BaseExpression, value: object) -> cst.BaseExpression:
        fix = self._wanted(original, "replace")
        if fix is None or fix.expression is None or original.lpar or not self._value_place(original):
            return updated
        if value != fix.literal:
            return updated
        self.count += 1
        new = self._code(fix.expression)
        self._edit(original, new)
        return new

    def _value_place(self, node: cst.CSTNode) -> bool:
        """Assigned, passed or defaulted (directly or as a branch of ``a if c else b``)."""
        parent = self.parents.get(node)
        while isinstance(parent, cst.IfExp) and node is not parent.test:
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, cst.Arg):
            return parent.star == ""
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            return parent.value is node
        return isinstance(parent, cst.Param) and parent.default is node

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        rename = self._wanted(original, "rename")
        if rename is not None and rename.to is not None and _dotted(original.func):
            self.count += 1
            func = self._code(rename.to)
            self._edit(original.func, func)
            return updated.with_changes(func=func)
        to_device = self._wanted(original, "to-device")
        if to_device is not None and to_device.expression is not None:
            func = updated.func
            plain = all(a.keyword is not None and a.keyword.value in _TO_KEYWORDS for a in updated.args)
            if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and plain:
                self.count += 1
                device = cst.Arg(self._code(to_device.expression))
                args = (
                    [device.with_changes(comma=cst.MaybeSentinel.DEFAULT), *updated.args] if updated.args else [device]
                )
                new = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
                self._edit(original, new)
                return new
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.BaseSmallStatement:
        if len(original.targets) != 1:
            return updated
        target = original.targets[0].target
        fix = self._wanted(target, "matmul-precision")
        value = original.value
        if fix is None or not isinstance(value, cst.Name) or value.value not in _PRECISION:
            return updated
        if not (isinstance(target, cst.Attribute) and target.attr.value == "allow_tf32"):
            return updated
        self.count += 1
        call = self._code(f'torch.set_float32_matmul_precision("{_PRECISION[value.value]}")')
        self._edit(original, cst.Expr(call))
        return cst.Expr(call, semicolon=updated.semicolon)
