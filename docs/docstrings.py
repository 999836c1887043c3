"""The site's pages made from the code: c8env's docstrings (written with reStructuredText's roles and
literals, Markdown tables and headings) as Markdown, and the environment page.

Used by ``docs/hooks.py`` (MkDocs hooks and a Griffe extension, so mkdocstrings' API pages get the same
Markdown) and by the tests (``tests/test_site.py``, ``tests/test_docs.py``). Standard library only, apart
from importing c8env for the environment page.

- ``:class:`X``` (and ``:func:``, ``:mod:``, ``:meth:``, ``:data:``, ``:attr:``, ``:exc:``, ``:obj:``)
  becomes an optional cross-reference: a link to ``X`` in the API reference where it is rendered there,
  plain code elsewhere (``~X`` shows the last name only);
- ````x```` becomes ```x```;
- ``>>>`` examples become ``pycon`` blocks (their output kept); the tests run them as doctests;
- ``text::`` followed by an indented block becomes a fenced block (``python`` when it parses as Python:
  the tests run it);
- reStructuredText simple tables (``====  ====`` borders) become Markdown tables.

:func:`environment_markdown` is the environment page: the docstring of
:class:`c8env.envs.crazy_eights.raw_env`, the one source of the env's specification table, observation
layout, action mask, rewards, episodes and version history (its example as a runnable ``python`` block).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable

ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|data|attr|exc|obj|const):`(~?)([^`<>]+?)`")
LITERAL = re.compile(r"``(?!`)(.+?)(?<!`)``")
BORDER = re.compile(r"^(\s*)(=+)((?:\s+=+)*)\s*$")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: Source of the environment page (a class whose docstring is written as the page).
ENV_CLASS = "c8env.envs.crazy_eights.raw_env"


def cross_reference(identifier: str, short: bool = False) -> str:
    """An optional autorefs cross-reference: a link where ``identifier`` is rendered, else plain code."""
    title = identifier.rsplit(".", 1)[-1] if short else identifier
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


def convert_roles(text: str, resolve: Callable[[str], str] | None = None) -> str:
    """reStructuredText roles as cross-references (``resolve`` qualifies a name relative to its module)."""
    def role(match: re.Match) -> str:
        short, name = match.group(1) == "~", match.group(2).strip()
        identifier = resolve(name) if resolve else name
        return cross_reference(identifier, short)
    return ROLE.sub(role, text)


def convert_literals(text: str) -> str:
    """````x```` as ```x``` (outside fenced blocks)."""
    return LITERAL.sub(lambda m: "`" + m.group(1) + "`" if "`" not in m.group(1) else "`` " + m.group(1) + " ``", text)


def _is_python(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _simple_table(lines: list[str], start: int) -> tuple[list[str], int] | None:
    """The reStructuredText simple table starting at ``lines[start]`` as Markdown, and the index after it."""
    border = BORDER.match(lines[start])
    if not border or not border.group(3):
        return None
    indent = len(border.group(1))
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[start])]
    borders = [start]
    i = start + 1
    while i < len(lines) and lines[i].strip():
        if BORDER.match(lines[i]):
            borders.append(i)
        i += 1
    if len(borders) < 2:
        return None
    end = borders[-1] + 1

    def cells(line: str) -> list[str]:
        out = []
        for k, (a, _) in enumerate(spans):
            b = spans[k + 1][0] if k + 1 < len(spans) else len(line)
            out.append(line[a:b].strip().replace("|", "\\|"))
        return out

    body = [cells(line) for line in lines[start + 1:borders[-1]] if not BORDER.match(line)]
    if len(borders) == 3:  # border, header, border, rows, border
        header, rows = body[0], body[1:]
    else:  # border, rows, border: no header
        header, rows = [""] * len(spans), body
    pad = " " * indent
    table = [pad + "| " + " | ".join(header) + " |", pad + "|" + "---|" * len(spans)]
    table += [pad + "| " + " | ".join(row) + " |" for row in rows]
    return ["", *table, ""], end


def convert_blocks(text: str, example: str = "pycon") -> str:
    """``>>>`` examples, ``::`` literal blocks and simple tables as Markdown (``example="python"``: examples as
    runnable Python, prompts and output dropped)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(lines[i][len(indent):])
                i += 1
            if example == "python":
                block = [b[4:] for b in block if b.startswith((">>> ", "... ", ">>>", "..."))]
            if out and out[-1].strip():
                out.append("")
            out += [indent + "```" + example, *[indent + b if b else b for b in block], indent + "```", ""]
            continue
        table = _simple_table(lines, i) if BORDER.match(line) else None
        if table:
            out += table[0]
            i = table[1]
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            inner = lines[j][:len(lines[j]) - len(lines[j].lstrip())] if j < len(lines) else ""
            if j < len(lines) and len(inner) > len(indent):
                block = []
                while j < len(lines) and (not lines[j].strip() or lines[j].startswith(inner)):
                    block.append(lines[j][len(inner):])
                    j += 1
                while block and not block[-1].strip():
                    block.pop()
                code = "\n".join(block)
                text_line = line[:-1] if stripped != "::" else ""
                out += [text_line, "", indent + "```" + ("python" if _is_python(code) else "text"),
                        *[indent + b if b else b for b in block], indent + "```", ""]
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


def rst_to_markdown(text: str, resolve: Callable[[str], str] | None = None, example: str = "pycon") -> str:
    """A c8env docstring (dedented) as Markdown; fenced blocks are left alone."""
    text = convert_blocks(text, example)
    parts = re.split(r"(^```\w*\n.*?^```)", text, flags=re.S | re.M)
    for k in range(0, len(parts), 2):
        parts[k] = convert_literals(convert_roles(parts[k], resolve))
    return "".join(parts)


def _object(path: str) -> object:
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def link_docs_pages(text: str) -> str:
    """Code spans naming a page of the site (```docs/rules.md```) as links to it (from a page at the top)."""
    return re.sub(r"`docs/([\w-]+\.md)`", r"[docs/\1](\1)", text)


def environment_markdown() -> str:
    """The environment page, from :data:`ENV_CLASS`'s docstring (the one source of the env's specification)."""
    cls = _object(ENV_CLASS)
    doc = inspect.cleandoc(cls.__doc__)
    summary, _, body = doc.partition("\n\n")
    name = cls.metadata["name"]
    body = link_docs_pages(rst_to_markdown(body, example="python"))
    return (f"# The environment: `{name}`\n\n"
            f"<!-- Generated by docs/hooks.py from the docstring of {ENV_CLASS}: edit the docstring. -->\n\n"
            f"{link_docs_pages(rst_to_markdown(summary))}\n\n"
            f"{body}\n\n"
            f"This page is the docstring of {cross_reference(ENV_CLASS)} (`help(c8env.raw_env)` prints it); the "
            f"[API reference](api/envs.md) has the env's methods.\n")


def code_blocks(markdown: str, language: str = "python") -> list[str]:
    """The fenced blocks of ``language`` in ``markdown``."""
    return [m.group(2) for m in FENCE.finditer(markdown) if m.group(1) == language]
