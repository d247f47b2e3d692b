"""How an edit is made in a script's concrete syntax tree, keeping everything else as the user wrote it.

`Edits` collects node replacements and new statements and applies them in
one pass over the tree (libcst keeps every other byte: formatting, comments,
quotes, line breaks). `with_keyword` sets one argument of a call in the
call's own layout: a value replaced where the argument is given, else the
argument added after the last one, inline or one per line as the call is
written (`keyword_edit`: on a new line aligned with the first argument when
the line would grow past LINE_LENGTH). `times` multiplies an expression as a
user writes it (`LR * 2`, `(a + b) * 2`); `literal` reads a literal's value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import libcst as cst

from .source import Script

_Node = TypeVar("_Node", bound=cst.CSTNode)


@dataclass
class Edits:
    """Node replacements and statement insertions, applied in one pass (`apply`)."""

    script: Script
    replaced: dict[int, tuple[cst.CSTNode, cst.CSTNode]] = field(default_factory=dict)
    after: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    before: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    first_in: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    module_start: list[cst.BaseStatement] = field(default_factory=list)

    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        self.replaced[id(old)] = (old, new)

    def insert_after(self, stmt: cst.CSTNode, lines: list[str], blank: bool = True) -> None:
        self.after.setdefault(id(stmt), []).extend(_statements(lines, blank))

    def insert_before(self, stmt: cst.CSTNode, lines: list[str]) -> None:
        self.before.setdefault(id(stmt), []).extend(_statements(lines, False))

    def insert_first_in(self, function: cst.FunctionDef, lines: list[str]) -> None:
        self.first_in.setdefault(id(function), []).extend(_statements(lines, False))

    def insert_at_start(self, lines: list[str]) -> None:
        self.module_start.extend(_statements(lines, False))

    def empty(self) -> bool:
        return not (self.replaced or self.after or self.before or self.first_in or self.module_start)

    def apply(self) -> str:
        module = self.script.module.visit(_Apply(self))
        return module.code


class _Apply(cst.CSTTransformer):
    def __init__(self, edits: Edits):
        self.edits = edits

    def on_leave(self, original_node: _Node, updated_node: _Node
                 ) -> _Node | cst.RemovalSentinel | cst.FlattenSentinel[_Node]:
        hit = self.edits.replaced.get(id(original_node))
        if hit is not None and hit[0] is original_node:
            # libcst's types say a node leaves as its own kind; a replaced value may be another (a name -> 128)
            return cast(_Node, hit[1])
        return super().on_leave(original_node, updated_node)  # leave_FunctionDef, leave_Module

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if id(original_node) not in self.edits.first_in:
            return updated_node
        body = list(updated_node.body.body)
        at = 1 if body and _is_docstring(body[0]) else 0
        body[at:at] = self.edits.first_in[id(original_node)]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body: list[cst.BaseStatement] = []
        start = list(self.edits.module_start)
        for old, new in zip(original_node.body, updated_node.body):
            if start and not (_is_docstring(old) or _is_future(old)):
                body += start
                start = []
            body += self.edits.before.get(id(old), [])
            body.append(new)
            body += self.edits.after.get(id(old), [])
        body += start
        return updated_node.with_changes(body=body)


def _statements(lines: list[str], blank: bool) -> list[cst.BaseStatement]:
    out: list[cst.BaseStatement] = [cst.parse_statement(line + "\n") for line in lines]
    if blank and out:
        out[0] = out[0].with_changes(leading_lines=[cst.EmptyLine()])
    return out


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString,
                                                                                cst.ConcatenatedString))


def _is_future(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, cst.ImportFrom) and s.module is not None and getattr(s.module, "value", "") == "__future__"
        for s in stmt.body)


def literal(node: cst.CSTNode | None) -> Any:
    """The Python value of a literal node (True, 64, 1e-3, "adam", -1), else a marker that equals nothing."""
    if node is None:
        return NOT_LITERAL
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError, TypeError):
        return NOT_LITERAL


class _NotLiteral:
    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


NOT_LITERAL = _NotLiteral()


def expression(value: Any) -> cst.BaseExpression:
    return cst.parse_expression(repr(value) if not isinstance(value, str) else f'"{value}"')


LINE_LENGTH = 99  # an argument added to a call on one line that would reach past this goes on a line of its own


def keyword_edit(script: Script, call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`with_keyword` for a call of `script`: an argument added after arguments written on one line starts a new
    line, aligned with the call's first argument, when that line would grow past LINE_LENGTH."""
    wrap = None
    if call.args:
        added = len(f", {name}={script.module.code_for_node(value)}")
        if len(script.text.splitlines()[script.end_line(call) - 1]) + added > LINE_LENGTH:
            start = script.column(call)
            wrap = start + len(script.module.code_for_node(call.func)) + 1  # the column after "("
    return with_keyword(call, name, value, wrap)


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression, wrap: int | None = None) -> cst.Call:
    """`call` with `name=value`: the argument's value replaced when it is there, else added after the last
    argument in the call's own layout (a new line at the same indent when its arguments are one per line;
    `wrap`: on a new line at that column)."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            args[i] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    new = cst.Arg(value=value, keyword=cst.Name(name),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    trailing = last.comma if isinstance(last.comma, cst.Comma) else None
    if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        separator = args[-2].comma
    elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):  # f(\n    a,\n)
        separator = cst.Comma(whitespace_after=call.whitespace_before_args)
    else:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if trailing is not None and not isinstance(trailing.whitespace_after, cst.ParenthesizedWhitespace) \
            and not isinstance(separator.whitespace_after, cst.ParenthesizedWhitespace):
        trailing = None  # f(a, ) written inline: no trailing comma kept
    if wrap is not None and not isinstance(separator.whitespace_after, cst.ParenthesizedWhitespace):
        separator = cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
            first_line=cst.TrailingWhitespace(), empty_lines=[], indent=False,
            last_line=cst.SimpleWhitespace(" " * wrap)))
    args[-1] = last.with_changes(comma=separator)
    args.append(new.with_changes(comma=trailing) if trailing is not None else new)
    return call.with_changes(args=args)


def times(expr: cst.BaseExpression, factor: str) -> cst.BaseExpression:
    """A number written in the script times `factor`, as the new number (`3e-4` → `0.0004243`, never arithmetic
    on a literal); any other expression as `expr * factor`, parenthesized where the multiplication would bind
    first (`LR` → `LR * 1.414`: the script's own constant stays its one place)."""
    if isinstance(expr, (cst.Float, cst.Integer)):
        from ..learning_rate import rate_text

        return cst.parse_expression(rate_text(float(expr.evaluated_value) * float(factor)))
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.Comparison)):
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(left=expr, operator=cst.Multiply(), right=cst.parse_expression(factor))
