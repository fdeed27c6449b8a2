#!/usr/bin/env python3
"""Checks that README.md and docs/*.md say only what is true of the repository (CTest runs it, label docs):

  links    every relative link [text](path#anchor) resolves: to a file or folder of the repository and, with an
           anchor, to a heading of that document (GitHub's anchors);
  cli      every `strata SUBCOMMAND` in code (inline or a block) names a subcommand of the program, and every option
           written after it is one that `strata SUBCOMMAND --help` lists (so a renamed or removed flag fails here);
           so is an option written alone (`--manifest FILE`) after such a command in the same paragraph or item;
  blocks   every C++ block is marked ```cpp, the mark the tests extract (not ```c++ or ```cxx);
  paths    every scripts/NAME named anywhere exists, and is executable when it is a file; every inline code span
           that is a path in one of the repository's folders (`src/strata/operators/engine/planner.hpp`) exists.

The configuration keys that the documents name are checked by test_config ("README.md and docs/*.md name only keys
of the schema"), which has the schema; the C++ blocks by doc_examples.py. Each problem is printed as
FILE:LINE: what, and the exit code is 1 if there is any.

  check_docs.py --root SOURCE_DIR --strata build/bin/strata [DOC...]   (default: README.md and docs/*.md)
"""

import argparse
import glob
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import markdown  # noqa: E402

# `strata` as a command word, possibly with a path (build/bin/strata), not strata::ops, strata_core or strata-bench.
STRATA = re.compile(r"(?<![\w.:/-])(?:[\w.-]+/)*strata(?![\w.:/-])[ \t]+(\S+)")
# Tokens that end a command: pipes, lists, redirections, comments.
COMMAND_END = re.compile(r"^(?:\||\|\||&&?|;|\d?>>?\S*|<|#.*)$|;$")
# A span that is another command: its first word a path, or a word followed by arguments (`cmake --build ...`).
OTHER_COMMAND = re.compile(r"^(?:\S*/|[a-z][\w.+-]*\s+\S)")
SCRIPT = re.compile(r"(?<![\w./-])scripts/([\w.+-]+)")
# A code span that is a path in a source folder; not out/ or build/, which a clean clone does not have.
SOURCE_PATH = re.compile(r"(?:\.ci|cmake|configs|data|docs|examples|scripts|src|tests)/[\w./-]*")


def default_docs(root):
    return ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))


# ---- links --------------------------------------------------------------------------------------------------------

def check_links(root, doc):
    problems = []
    for link in doc.links:
        target = link.target
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
            continue  # an absolute URL (http:, mailto:): not the repository's to keep
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(doc.name), path)) if path else doc.name
        where = f"{doc.name}:{link.line}: link {target}"
        if not path:  # #anchor: a heading of this document
            if anchor not in doc.anchors:
                problems.append(f"{where}: {doc.name} has no heading with the anchor #{anchor}")
        elif resolved.startswith(".."):
            problems.append(f"{where}: points outside the repository")
        elif not os.path.exists(os.path.join(root, resolved)):
            problems.append(f"{where}: {resolved} does not exist")
        elif anchor and resolved.endswith(".md"):
            if anchor not in markdown.read(root, resolved).anchors:
                problems.append(f"{where}: {resolved} has no heading with the anchor #{anchor}")
    return problems


# ---- the strata command line --------------------------------------------------------------------------------------

class Cli:
    """The subcommands of `strata` and the options of each, as its --help texts (CLI11) list them."""

    def __init__(self, top_help, sub_helps):
        self.options = help_options(top_help)
        self.subcommands = {name: help_options(text) for name, text in sub_helps.items()}

    @classmethod
    def of_program(cls, program):
        def help_of(*args):
            return subprocess.run([program, *args, "--help"], capture_output=True, text=True, timeout=60,
                                  check=True).stdout
        top = help_of()
        return cls(top, {name: help_of(name) for name in help_section(top, "subcommands")})


def help_section(text, title):
    """The first words of the indented lines under a heading such as 'Options:' or 'SUBCOMMANDS:'."""
    words, inside = [], False
    for line in text.split("\n"):
        if re.match(r"^\S", line):
            inside = line.strip().lower() == title + ":"
        elif inside and line.strip():
            words.append(line.split()[0])
    return words


def help_options(text):
    """Every option of a help text, under 'Options:' or any option group a program may add: the indented entries
    that start with a dash ('-h,--help', '--set TEXT ...')."""
    entries = [line.split()[0] for line in text.split("\n") if re.match(r"^\s+-", line)]
    return {name for entry in entries for name in entry.split(",")}


def commands(doc):
    """(line, text) of every piece of code that may hold a command: the inline code spans, and the logical lines of
    the code blocks that are not C++ (a line ending with a backslash continues on the next: the backslash becomes a
    space, the line break stays, so that the text still counts its lines)."""
    for span in doc.spans:
        yield span.line, span.text
    for block in doc.blocks:
        if block.lang in ("cpp", "c++", "cuda"):
            continue
        start, text = block.line, ""
        for i, line in enumerate(block.text.split("\n")):
            if not text:
                start = block.line + i
            if line.rstrip().endswith("\\"):
                text += line.rstrip()[:-1] + " \n"
                continue
            yield start, text + line
            text = ""
        if text:
            yield start, text


def no_option(doc, line, sub, option, cli):
    return (f"{doc.name}:{line}: strata {sub} has no option {option} "
            f"(strata {sub} --help lists: {' '.join(sorted(cli.subcommands[sub]))})")


def check_cli(doc, cli):
    problems = []
    for first, text in commands(doc):
        for m in STRATA.finditer(text):
            sub = m.group(1).rstrip(".,:;)")
            line = first + text.count("\n", 0, m.start(1))
            where = f"{doc.name}:{line}: `{text[m.start():m.end()].strip()}`"
            if sub.startswith("-"):
                option = sub.split("=")[0]
                if option not in cli.options:
                    problems.append(f"{where}: strata has no option {option} (strata --help)")
                continue
            if not re.fullmatch(r"[a-z][a-z0-9-]*", sub):
                continue  # a placeholder (SUBCOMMAND, <sub>): nothing to check
            if sub not in cli.subcommands:
                problems.append(f"{where}: strata has no subcommand '{sub}' (it has: {', '.join(cli.subcommands)})")
                continue
            for token in re.finditer(r"\S+", text[m.end():]):
                if COMMAND_END.match(token.group(0)):
                    break
                option = re.match(r"^[\[(\"']*(--?[A-Za-z][\w-]*)", token.group(0))
                if option and option.group(1) not in cli.subcommands[sub]:
                    problems.append(no_option(doc, first + text.count("\n", 0, m.end() + token.start()), sub,
                                              option.group(1), cli))
    return problems + check_options_alone(doc, cli)


def check_options_alone(doc, cli):
    """An option written alone (`--manifest FILE`) in the paragraph, list item or table row of a `strata SUB`
    command, after it, is one of SUB's, unless a span of another command (`scripts/bench ...`, `cmake --build ...`)
    came in between."""
    unit_of, unit, sub = units(doc), None, None
    problems = []
    for span in doc.spans:
        if unit_of[span.line] != unit:
            unit, sub = unit_of[span.line], None
        named = [m.group(1) for m in STRATA.finditer(span.text) if m.group(1) in cli.subcommands]
        alone = re.fullmatch(r"\[?(--[A-Za-z][\w-]*)\]?(?:[ =].*)?", span.text, re.S)
        if named:
            sub = named[-1]
        elif alone and sub and alone.group(1) not in cli.subcommands[sub]:
            problems.append(no_option(doc, span.line, sub, alone.group(1), cli))
        elif OTHER_COMMAND.match(span.text):
            sub = None
    return problems


def units(doc):
    """The unit of every line of the prose: a new one at a blank line (blocks are blank in doc.prose), a list item,
    a table row or a heading."""
    unit, unit_of = 0, {}
    for number, line in enumerate(doc.prose.split("\n"), 1):
        starts = line.lstrip().startswith(("|", "#"))
        if not line.strip() or starts or markdown.LIST_ITEM.match(line):
            unit += 1
        unit_of[number] = unit
        unit += 1 if starts else 0
    return unit_of


# ---- C++ blocks ---------------------------------------------------------------------------------------------------

def check_blocks(doc):
    """doc_examples.py and cmake/ExtractDocExamples.cmake compile the blocks marked cpp: one marked otherwise would
    escape them."""
    return [f"{doc.name}:{b.line - 1}: a C++ block marked ```{b.lang}: mark it ```cpp so that the tests compile it"
            for b in doc.blocks if b.lang.lower() in ("c++", "cxx", "cc", "hpp", "h")]


# ---- paths --------------------------------------------------------------------------------------------------------

def check_paths(root, doc):
    problems = []
    for span in doc.spans:
        if (SOURCE_PATH.fullmatch(span.text) and not span.text.startswith("scripts/")  # those: below
                and not os.path.exists(os.path.join(root, span.text))):
            problems.append(f"{doc.name}:{span.line}: {span.text} does not exist")
    texts = [(1, doc.prose)] + [(s.line, s.text) for s in doc.spans] + [(b.line, b.text) for b in doc.blocks]
    for first, text in texts:
        for m in SCRIPT.finditer(text):
            line = first + text.count("\n", 0, m.start())
            script = "scripts/" + m.group(1).rstrip(".")  # the end of a sentence is not part of the name
            path = os.path.join(root, script)
            if not os.path.exists(path):
                problems.append(f"{doc.name}:{line}: {script} does not exist")
            elif os.path.isfile(path) and not os.access(path, os.X_OK):
                problems.append(f"{doc.name}:{line}: {script} is not executable")
    return problems


def check(root, names, cli):
    problems = []
    for name in names:
        doc = markdown.read(root, name)
        problems += check_links(root, doc) + check_blocks(doc) + check_paths(root, doc)
        if cli:
            problems += check_cli(doc, cli)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the repository's root")
    parser.add_argument("--strata", help="the built strata program (without it, the command line is not checked)")
    parser.add_argument("docs", nargs="*", help="documents relative to the root")
    args = parser.parse_args()
    names = args.docs or default_docs(args.root)
    problems = check(args.root, names, Cli.of_program(args.strata) if args.strata else None)
    for problem in problems:
        print(problem)
    print(f"check_docs: {len(names)} documents, {len(problems)} problems"
          + ("" if args.strata else " (command line not checked: no --strata)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
