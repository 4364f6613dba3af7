"""The docs site builds, and every code block in it runs.

Pages: every `docs/*.md` (the nav of mkdocs.yml must list them all, see `test_nav_lists_every_page`),
and the README.
The blocks of a page run in order, in one scratch directory where `examples` and `tests` link
to the repository's, so the docs' relative paths resolve and a file one block writes is there
for the next. What each block must do:

- ```` ```sh ````, `bash`, `shell`: run by `bash -e -o pipefail` with `commaware` on PATH (this
  Python's `python -m commaware.cli`) and `python` being this Python; exit code 0.
- ```` ```python ````: run by this Python; exit code 0.
- A block with a title, ```` ```json title="fit.json" ````: a file. Its text is written under that
  name for the blocks after it, one of which must use it unless a schema checks it (below);
  JSON and TOML are parsed, a `.sh` file passes `bash -n`, a `.py` file compiles.
- `<!-- schema: NAME -->` on the line before a block: the JSON or TOML document is valid
  against `docs/NAME.schema.json`; `<!-- schema: meta -->` says the block is itself a JSON
  Schema (valid against its metaschema).
- `<!-- not run: REASON -->` on the line before a block: a block that cannot run here as written
  (it builds the environment, or names a file of the reader's); REASON says why. Each
  `commaware ...` line in it is still parsed by the command it names (options, choices, argument
  count), like the help examples below.
- `<!-- output -->` on the line before a block: it is what the previous runnable block printed.
  JSON: the printed document holds every key shown with its value (keys left out are not
  checked; lists are shown whole). Text: each line shown is one of the printed lines, in
  order (printed lines may be left out; a `...` line marks where), compared word by word once
  table rules are dropped, numbers within RELATIVE_TOLERANCE (the printed digits may differ
  in the last place from one machine to another; nothing else may).
- `--8<-- "FILE"` lines (pymdownx.snippets) are replaced by docs/FILE first.

Any other block fails the test: no block is left unchecked. The expected outputs in the docs
were written from runs we read, not produced here.

Generated pages: the CLI reference (`cli.md`) holds the help texts, whose example lines name
the user's files, so each is parsed by the command it names (options, choices, argument
count) instead of run. The API page (`api.md`) shows module docstrings: their literal blocks
(after a `::` line) are Python, run like python blocks above, JSON (parsed), or an Open MPI
rankfile (each line `rank N=HOST slot=N`).

Blocks running `commaware measure penalties|tiling|cosched`, `mpirun` or `trace record` need
MPI, and blocks using the SimGrid peers (`simgrid_peer`, `smpi_replay`) need SimGrid: without
it a page runs up to the first such block and the rest is skipped (later blocks may use what
it makes); COMMAWARE_REQUIRE_MPI=1 and COMMAWARE_REQUIRE_SIMGRID=1 (CI) make them mandatory.
The blocks find `mpirun` and `mpicc` on PATH, as in an activated `.venv`: the folder of the
MPI the tests use is put at the end of PATH, and, run as root, Open MPI is told to allow it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest

from commaware.measure import mpi
from conftest import ROOT, mpi_reason

DOCS = ROOT / "docs"
RELATIVE_TOLERANCE = 1e-4
SHELL = {"sh", "bash", "shell"}
GENERATED = {"cli.md", "api.md"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})(?P<lang>[\w+-]*)\s*(?P<attrs>.*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*(output|schema:\s*[\w-]+|not run:\s*\S.*?)\s*-->\s*$")
#: The README's blocks run like a page's; its name stands for its path from the root.
README = "README.md"


@dataclass
class Block:
    page: str
    line: int
    lang: str
    text: str
    title: str = ""
    directives: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page if self.page == README else 'docs/' + self.page}:{self.line}"

    @property
    def runnable(self) -> bool:
        return not self.title and not self.directives and (self.lang in SHELL or self.lang == "python")


def expand_snippets(text: str) -> str:
    return re.sub(r'^(\s*)--8<--\s+"([^"]+)"\s*$', lambda m: (DOCS / m.group(2)).read_text().rstrip("\n"),
                  text, flags=re.M)


def page_blocks(page: str) -> list[Block]:
    """The fenced blocks of docs/PAGE in order, with the directive comment before each."""
    lines = (ROOT / README if page == README else DOCS / page).read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence))
        body = "\n".join(line[indent:] for line in lines[i + 1:end])
        title = re.search(r'title="([^"]+)"', m["attrs"])
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        directive = DIRECTIVE.match(before)
        blocks.append(Block(page, i + 1, m["lang"], expand_snippets(body) + "\n", title[1] if title else "",
                            [re.sub(r"\s+", " ", directive[1])] if directive else []))
        i = end + 1
    return blocks


def nav_pages() -> list[str]:
    import yaml

    def flatten(node) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [page for item in node for page in flatten(item)]
        return [page for value in node.values() for page in flatten(value)]

    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.SafeLoader)
    return flatten(config["nav"])


PAGES = sorted(path.name for path in DOCS.glob("*.md"))
RUN_PAGES = [page for page in PAGES if page not in GENERATED] + [README]


# ---------------------------------------------------------------- comparing outputs

NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?%?$")
TABLE_RULES = re.compile(r"[│┃┏┓┗┛┡┩┠┨┣┫┳┻╇╈╋━─┌┐└┘├┤┬┴┼═╔╗╚╝║╟╢╤╧╪]")


def words(line: str) -> list[str]:
    return TABLE_RULES.sub(" ", line).split()


def same_number(expected: str, actual: str) -> bool:
    a, b = float(expected.rstrip("%")), float(actual.rstrip("%"))
    return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300)


def same_words(expected: list[str], actual: list[str]) -> bool:
    return len(expected) == len(actual) and all(
        e == a or (NUMBER.match(e) and NUMBER.match(a) and same_number(e, a)) for e, a in zip(expected, actual))


def check_text_output(block: Block, printed: str) -> None:
    actual = [w for line in printed.splitlines() if (w := words(line))]
    at = 0
    for shown in block.text.splitlines():
        expected = words(shown)
        if not expected or expected == ["..."]:
            continue
        found = next((i for i in range(at, len(actual)) if same_words(expected, actual[i])), None)
        assert found is not None, (f"{block.where}: this line is not printed (or not in this order):\n"
                                   f"  {shown.strip()}\nprinted:\n{printed}")
        at = found + 1


def check_json_output(expected, actual, path: str = "$") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, printed {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}: no key {key!r} printed"
            check_json_output(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: printed {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            check_json_output(e, a, f"{path}[{i}]")
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert isinstance(actual, (int, float)) and math.isclose(expected, actual, rel_tol=RELATIVE_TOLERANCE), \
            f"{path}: shown {expected}, printed {actual}"
    else:
        assert expected == actual, f"{path}: shown {expected!r}, printed {actual!r}"


# ---------------------------------------------------------------- running a page

def scratch_dir(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working directory like the repository's root, and an environment with `commaware` and
    `python` on PATH."""
    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    for name in ("examples", "tests"):
        (work / name).symlink_to(ROOT / name)
    for name, command in (("commaware", "-m commaware.cli "), ("python", "")):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {command}"$@"\n')
        (bin_dir / name).chmod(0o755)
    python_path = os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))
    path = [str(bin_dir), os.environ["PATH"]]
    mpirun = mpi.find_mpirun()
    if mpirun is not None and shutil.which(mpirun[0]):  # as `. .venv/bin/activate` gives the wheel's
        path.append(str(Path(shutil.which(mpirun[0])).parent))
    env = {**os.environ, "PATH": os.pathsep.join(path), "PYTHONPATH": python_path, "COLUMNS": "120", "NO_COLOR": "1"}
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # Open MPI refuses root unless told (CI runs as root)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return work, env


def run_block(block: Block, work: Path, env: dict[str, str]) -> str:
    command = ["bash", "-e", "-o", "pipefail", "-c", block.text] if block.lang in SHELL \
        else [sys.executable, "-c", block.text]
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (f"{block.where}: exit {proc.returncode}\n{block.text}\n"
                                  f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    return proc.stdout


def parse_document(block: Block, name: str):
    suffix = Path(name).suffix
    if suffix == ".toml" or block.lang == "toml":
        return tomllib.loads(block.text)
    if suffix == ".json" or block.lang == "json":
        return json.loads(block.text)
    return None


def write_file(block: Block, path: Path) -> None:
    """Write a file block for the blocks after it, checking what its kind allows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.text)
    parse_document(block, path.name)
    if path.suffix == ".sh":
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{block.where}: {proc.stderr}"
    if path.suffix == ".py":
        compile(block.text, block.where, "exec")


def check_schema(block: Block, schema_name: str) -> None:
    document = parse_document(block, block.title)
    assert document is not None, f"{block.where}: a schema is named but the block is not JSON or TOML"
    if schema_name == "meta":
        jsonschema.validators.validator_for(document).check_schema(document)
        return
    schema = json.loads((DOCS / f"{schema_name}.schema.json").read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=str)
    assert not errors, f"{block.where}: not a valid {schema_name}: {errors[0].message} at {list(errors[0].path)}"


def run_page(page: str, tmp_path: Path) -> None:
    work, env = scratch_dir(tmp_path)
    printed: str | None = None
    blocks = page_blocks(page)
    for n, block in enumerate(blocks):
        if "output" in block.directives:
            assert printed is not None, f"{block.where}: an output block with no runnable block before it"
            if block.lang == "json":
                check_json_output(json.loads(block.text), json.loads(printed))
            else:
                check_text_output(block, printed)
            printed = None  # one output block per run
            continue
        reasons = [d.split(":", 1)[1].strip() for d in block.directives if d.startswith("not run:")]
        if reasons:
            assert block.lang in SHELL, f"{block.where}: only shell blocks are marked not run"
            for line in block.text.splitlines():
                if line.strip().startswith("commaware "):
                    parse_example(line.strip(), block.where)
            continue
        schemas = [d.split(":", 1)[1].strip() for d in block.directives if d.startswith("schema:")]
        if block.title:
            write_file(block, work / block.title)
            used = any(later.runnable and block.title in later.text for later in blocks[n + 1:])
            assert used or schemas or Path(block.title).suffix in (".sh", ".py"), \
                f"{block.where}: no schema checks {block.title} and no block after it uses it"
        for schema in schemas:
            check_schema(block, schema)
        if block.runnable:
            for pattern, what, reason, required in NEEDS:
                if pattern.search(block.text) and reason and os.environ.get(required) != "1":
                    pytest.skip(f"{block.where} and the blocks after it: {what} not available: {reason}")
            printed = run_block(block, work, env)
        elif not block.title and not schemas:
            pytest.fail(f"{block.where}: a ```{block.lang} block that no rule checks (see the top of this file)")


def simgrid_reason() -> str:
    """Why the SimGrid peers cannot run here ('' when they can)."""
    import shutil

    missing = [tool for tool in ("g++", "smpirun", "smpicxx") if shutil.which(tool) is None]
    if not Path("/usr/include/simgrid/s4u.hpp").is_file():
        missing.append("SimGrid's headers")
    return f"missing {', '.join(missing)} (Debian: libsimgrid-dev simgrid g++)" if missing else ""


#: (what a block uses, the tool, why it is missing here or '', the variable making it mandatory)
NEEDS = [
    (re.compile(r"commaware measure (penalties|tiling|cosched)|\bmpirun\b|commaware trace record"), "MPI",
     mpi_reason(), "COMMAWARE_REQUIRE_MPI"),
    (re.compile(r"\bmpicc\b"), "mpicc", mpi_reason(need_mpicc=True), "COMMAWARE_REQUIRE_MPI"),
    (re.compile(r"\b(simgrid_peer|smpi_replay|smpirun)\b"), "SimGrid", simgrid_reason(), "COMMAWARE_REQUIRE_SIMGRID"),
]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_blocks_run(page, tmp_path):
    run_page(page, tmp_path)


# ---------------------------------------------------------------- generated pages

def help_examples() -> list[tuple[str, str]]:
    """(command path, example command line) for each `commaware ...` line of a help text."""
    import click

    sys.path.insert(0, str(DOCS / "hooks"))
    from cli_reference import PROG, walk  # the CLI reference page's own walk over the commands

    from commaware.cli import main

    return [(ctx.command_path, line.strip()) for command, ctx in walk(main, click.Context(main, info_name=PROG))
            for line in (command.help or "").splitlines() if line.strip().startswith(f"{PROG} ")]


def test_help_examples_parse():
    """Every example line of the CLI reference names a command and is accepted by its parser."""
    examples = help_examples()
    assert len(examples) > 20
    for where, line in examples:
        parse_example(line, f"help of `{where}`")


def parse_example(line: str, where: str) -> None:
    """`commaware ...` (one line, as a help text or a not-run block shows it) names a command
    and is accepted by its parser; fails the test saying `where` otherwise."""
    import click

    from commaware.cli import main

    synopsis = re.sub(r"\[([^\]]*)\]", r"\1", line)  # `[--json]`: an optional part, given here
    args = shlex.split(synopsis.split(" > ")[0].split(" | ")[0], comments=True)[1:]
    ctx = click.Context(main, info_name="commaware")
    command: click.Command = main
    while isinstance(command, click.Group):
        if not (args and args[0] in command.list_commands(ctx)):
            args.insert(0, getattr(command, "default_command", ""))  # `commaware multicast FILE`
        sub = command.get_command(ctx, args[0])
        assert sub is not None, f"{where}: `{line}` names no command"
        command, ctx = sub, click.Context(sub, info_name=args.pop(0), parent=ctx)
    try:
        command.make_context(command.name or "", list(args), parent=ctx, resilient_parsing=False)
    except click.exceptions.Exit:
        pass
    except click.UsageError as exc:
        pytest.fail(f"{where}: `{line}` is refused: {exc}")


def docstring_blocks() -> list[tuple[str, str]]:
    """(module, block) for each literal block of the docstrings the API page shows."""
    import importlib
    import inspect
    import textwrap

    modules = re.findall(r"^::: ([\w.]+)", (DOCS / "api.md").read_text(), flags=re.M)
    found = []
    for name in modules:
        module = importlib.import_module(name)
        objects = [module, *(obj for _, obj in inspect.getmembers(module)
                             if getattr(obj, "__module__", None) == name)]
        for obj in objects:
            doc = inspect.getdoc(obj) or ""
            for m in re.finditer(r"::\n\n((?:(?: {4}.*)?\n)+)", doc + "\n"):
                found.append((name, textwrap.dedent(m[1]).strip("\n") + "\n"))
    return found


def test_api_docstring_blocks(tmp_path):
    blocks = docstring_blocks()
    assert blocks
    work, env = scratch_dir(tmp_path)
    for module, text in blocks:
        block = Block(f"api.md ({module} docstring)", 0, "python", text)
        if text.lstrip().startswith("{"):
            json.loads(text)
        elif all(re.fullmatch(r"rank \d+=\S+ slot=\d+(\s+#.*)?", line.strip()) for line in text.splitlines()):
            pass
        else:
            run_block(block, work, env)


def test_output_checks_catch_differences():
    shown = Block("x.md", 1, "text", "│ a │ 1.5 │\n...\nend 2e-05 s\n")
    check_text_output(shown, "┃ a ┃ 1.50001 ┃\nother line\nend 2.0e-05 s\n")
    for printed in ("│ a │ 1.6 │\nend 2e-05 s\n", "end 2e-05 s\n│ a │ 1.5 │\n", "│ a │ 1.5 │\nend 2e-05 ms\n"):
        with pytest.raises(AssertionError):
            check_text_output(shown, printed)
    check_json_output({"a": [1, {"b": "x"}]}, {"a": [1.00001, {"b": "x", "c": 2}], "d": 3})
    for printed in ({"a": [1, {"b": "y"}]}, {"a": [1.1, {"b": "x"}]}, {"a": [1]}, {"b": 1}):
        with pytest.raises(AssertionError):
            check_json_output({"a": [1, {"b": "x"}]}, printed)


# ---------------------------------------------------------------- the site

def test_nav_lists_every_page():
    assert sorted(nav_pages()) == PAGES, "docs/*.md and the nav of mkdocs.yml differ"


def test_every_page_has_blocks_run():
    """The collector sees the blocks (a broken fence pattern would make every page pass)."""
    counts = {page: len(page_blocks(page)) for page in RUN_PAGES}
    assert sum(counts.values()) > 40, counts


def test_site_builds(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text()
    assert "commaware simulate" in cli and "--placement" in cli
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert 'id="commaware.api.simulate"' in api and 'id="commaware._core.simulate"' in api


def test_not_run_blocks_are_parsed():
    """A block marked not run still has its `commaware` lines parsed: a wrong option fails it."""
    readme = page_blocks(README)
    marked = [b for b in readme if any(d.startswith("not run:") for d in b.directives)]
    assert marked and all(d.split(":", 1)[1].strip() for b in marked for d in b.directives), "a reason is given"
    parse_example("commaware reproduce all --quick --out report", "x.md:1")
    for line in ("commaware reproduce all --quik", "commaware no-such-command", "commaware simulate a.json b.json --placement x"):
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            parse_example(line, "x.md:1")
