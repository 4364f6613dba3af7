"""MkDocs hook: write the CLI reference from the click commands themselves.

The page that holds the line `<!-- cli-reference -->` gets, in its place, one section per
command of `commaware.cli.main` (depth first, as `--help` lists them): its help text, its
usage line and its options, each option's help with click's own `[default: ...]` notes.
Paragraphs that click keeps unwrapped (those after a `\\b` line: example command lines)
become text blocks; the rest is prose.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import click

MARKER = "<!-- cli-reference -->"
PROG = "commaware"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    from commaware.cli import main

    return markdown.replace(MARKER, "\n".join(command_sections(main, click.Context(main, info_name=PROG))))


def walk(command: click.Command, ctx: click.Context) -> Iterator[tuple[click.Command, click.Context]]:
    """The command and its subcommands, depth first, hidden ones left out."""
    yield command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, click.Context(sub, info_name=name, parent=ctx))


def command_sections(root: click.Command, root_ctx: click.Context) -> Iterator[str]:
    for command, ctx in walk(root, root_ctx):
        level = "#" * min(ctx.command_path.count(" ") + 2, 4)
        yield f"{level} `{ctx.command_path}`"
        yield ""
        yield from help_markdown(command.help or command.short_help or "")
        yield "Usage:"
        yield ""
        yield "```text"
        yield f"{ctx.command_path} {' '.join(command.collect_usage_pieces(ctx))}"
        yield "```"
        yield ""
        options = [record for param in command.get_params(ctx)
                   if isinstance(param, click.Option) and (record := param.get_help_record(ctx))]
        yield "Options:" if options else ""
        yield ""
        for names, text in options:
            yield f"- `{names}`: {prose(text)}" if text else f"- `{names}`"
        if isinstance(command, click.Group):
            yield ""
            yield "Commands:"
            yield ""
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield f"- `{ctx.command_path} {name}`: {prose(sub.get_short_help_str(limit=200))}"
        yield ""


def help_markdown(text: str) -> Iterator[str]:
    """Click help text as Markdown: `\\b` paragraphs verbatim in a text block, others as prose."""
    import inspect

    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b":
            yield "```text"
            yield from (line.rstrip() for line in inspect.cleandoc("\n".join(lines[1:])).splitlines())
            yield "```"
        else:
            yield prose(" ".join(line.strip() for line in lines))
        yield ""


def prose(text: str) -> str:
    """Help text safe as Markdown: no HTML, no link or emphasis syntax outside `code`."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else
                   re.sub(r"([\[\]*\\])", r"\\\1", html.escape(part, quote=False)) for part in parts)
