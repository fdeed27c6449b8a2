#!/usr/bin/env python3
"""Proof that each docs check can fail: one CTest test per case (tests/docs/CMakeLists.txt) breaks the real
documents, or an example, in one way on purpose and requires the check to report it at the right line, and the
unbroken text not to (so a check that reports nothing, or everything, fails here).

  test_check_docs.py CASE --root SOURCE_DIR --strata STRATA --compiler CXX --program EXAMPLE --source EXAMPLE.cpp
"""

import argparse
import os
import re
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_docs  # noqa: E402
import doc_examples  # noqa: E402
import markdown  # noqa: E402


class Failed(Exception):
    pass


def docs(root):
    return [markdown.read(root, name) for name in check_docs.default_docs(root)]


def first(items, what):
    for item in items:
        return item
    raise Failed(f"nothing to break: the documents have no {what}")


def replace_at_line(doc, line, old, new):
    """The document's text with the first `old` at or after the start of `line` replaced by `new`."""
    start = sum(len(l) + 1 for l in doc.text.split("\n")[:line - 1])
    at = doc.text.index(old, start)
    return doc.text[:at] + new + doc.text[at + len(old):]


def expect_reported(check, doc, broken_text, line, message):
    """`check(doc)` on the broken text reports `message` at doc:line, and on the real text does not."""
    wanted = f"{doc.name}:{line}: "
    found = [p for p in check(markdown.parse(doc.name, broken_text)) if p.startswith(wanted) and message in p]
    before = [p for p in check(doc) if p.startswith(wanted) and message in p]
    print(f"broke {doc.name}:{line}; the check reported:\n  " + "\n  ".join(found or ["(nothing)"]))
    if not found:
        raise Failed(f"the check did not report '{message}' at {wanted}")
    if before:
        raise Failed(f"the check reports it on the unbroken document too: {before}")


def broken_link(a):
    doc, link = first(((d, l) for d in docs(a.root) for l in d.links
                       if l.target.partition("#")[0] and "://" not in l.target), "relative link")
    path = link.target.partition("#")[0]
    broken = replace_at_line(doc, link.line, f"]({link.target}", f"]({path}.missing")
    expect_reported(lambda d: check_docs.check_links(a.root, d), doc, broken, link.line, "does not exist")


def broken_anchor(a):
    doc, link = first(((d, l) for d in docs(a.root) for l in d.links if "#" in l.target), "link with an anchor")
    broken = replace_at_line(doc, link.line, f"]({link.target})", f"]({link.target}-renamed)")
    expect_reported(lambda d: check_docs.check_links(a.root, d), doc, broken, link.line, "no heading with the anchor")


def unmarked_cpp(a):
    doc, block = first(((d, b) for d in docs(a.root) for b in d.blocks if b.lang == "cpp"), "C++ block")
    broken = replace_at_line(doc, block.line - 1, "```cpp", "```c++")
    expect_reported(check_docs.check_blocks, doc, broken, block.line - 1, "marked ```c++")


def strata_commands(a):
    """(doc, line, subcommand, option or None) of every strata command in code in the documents."""
    for doc in docs(a.root):
        for line, text in check_docs.commands(doc):
            for m in check_docs.STRATA.finditer(text):
                options = re.findall(r"(?<!\S)\[?(--[a-z][\w-]*)", text[m.end():].split("|")[0])
                yield doc, line + text.count("\n", 0, m.start(1)), m.group(1), options[0] if options else None


def unknown_subcommand(a):
    cli = check_docs.Cli.of_program(a.strata)
    doc, line, sub, _ = first(((d, l, s, o) for d, l, s, o in strata_commands(a) if s in cli.subcommands),
                              "strata subcommand in code")
    broken = replace_at_line(doc, line, f"strata {sub}", f"strata {sub}x")
    expect_reported(lambda d: check_docs.check_cli(d, cli), doc, broken, line, f"no subcommand '{sub}x'")


def unknown_option(a):
    cli = check_docs.Cli.of_program(a.strata)
    doc, line, sub, option = first(((d, l, s, o) for d, l, s, o in strata_commands(a) if o), "strata option")
    text = "\n".join(doc.text.split("\n")[line - 1:])  # the option is on this line or a continuation of it
    line += text[:text.index(option)].count("\n")
    broken = replace_at_line(doc, line, option, option + "-renamed")
    expect_reported(lambda d: check_docs.check_cli(d, cli), doc, broken, line, f"has no option {option}-renamed")


def option_alone(a):
    """An option written alone after a strata command, renamed."""
    cli = check_docs.Cli.of_program(a.strata)
    none = check_docs.Cli("", {})
    none.subcommands = {sub: set() for sub in cli.subcommands}  # every option alone is reported: where they are
    doc, line, option = first(((d, int(p.split(":")[1]), p.split(" has no option ")[1].split()[0]) for d in docs(a.root)
                               for p in check_docs.check_options_alone(d, none)), "option alone after a command")
    broken = replace_at_line(doc, line, f"`{option}", f"`{option}-renamed")
    expect_reported(lambda d: check_docs.check_cli(d, cli), doc, broken, line, f"has no option {option}-renamed")


def removed_option(a):
    """The code drops an option the documents use: every use is reported, in every document."""
    cli = check_docs.Cli.of_program(a.strata)
    uses = [(d, l, s, o) for d, l, s, o in strata_commands(a) if o and o in cli.subcommands.get(s, ())]
    _, _, sub, option = first(uses, "strata option")
    cli.subcommands[sub].discard(option)
    reported = [p for d in docs(a.root) for p in check_docs.check_cli(d, cli) if f"has no option {option} " in p]
    print(f"strata {sub} without {option}; the check reported:\n  " + "\n  ".join(reported or ["(nothing)"]))
    if len(reported) < len([u for u in uses if u[2] == sub and u[3] == option]):
        raise Failed(f"some uses of {option} were not reported")


def missing_script(a):
    doc, line = first(((d, s.line) for d in docs(a.root) for s in d.spans if s.text.startswith("scripts/")),
                      "scripts/NAME in code")
    broken = replace_at_line(doc, line, "scripts/", "scripts/renamed-")
    expect_reported(lambda d: check_docs.check_paths(a.root, d), doc, broken, line, "does not exist")
    with tempfile.TemporaryDirectory() as root:  # a script that loses its executable bit
        tool = os.path.join(root, "scripts", "tool")
        os.mkdir(os.path.dirname(tool))
        with open(tool, "w") as f:
            f.write("#!/bin/sh\n")
        doc = markdown.parse("README.md", "Run\n`scripts/tool`.\n")
        os.chmod(tool, stat.S_IRWXU)
        if check_docs.check_paths(root, doc):
            raise Failed(f"an executable script is reported: {check_docs.check_paths(root, doc)}")
        os.chmod(tool, stat.S_IRUSR | stat.S_IWUSR)
        problems = check_docs.check_paths(root, doc)
        print("scripts/tool made not executable; the check reported:\n  " + "\n  ".join(problems or ["(nothing)"]))
        if problems != ["README.md:2: scripts/tool is not executable"]:
            raise Failed("a script that is not executable was not reported as README.md:2")


def missing_path(a):
    doc, span = first(((d, s) for d in docs(a.root) for s in d.spans
                       if check_docs.SOURCE_PATH.fullmatch(s.text) and "/" in s.text.rstrip("/")
                       and not s.text.startswith("scripts/")), "source path")  # scripts/: missing_script
    folder, _, rest = span.text.partition("/")
    broken = replace_at_line(doc, span.line, f"`{span.text}`", f"`{folder}/renamed-{rest}`")
    expect_reported(lambda d: check_docs.check_paths(a.root, d), doc, broken, span.line, "does not exist")


def example_block(a):
    """The document and C++ block the first program was extracted from (its #line)."""
    m = re.match(r'#line (\d+) "(.*)"', open(a.source, encoding="utf-8").readline())
    name = os.path.relpath(m.group(2), a.root)
    doc = markdown.read(a.root, name)
    return doc, first((b for b in doc.blocks if b.line == int(m.group(1))), f"C++ block at {name}:{m.group(1)}")


def compile_example(a, doc, block):
    sources, _ = doc_examples.sources(a.root, doc)
    name = first((n for n, s in sources.items() if s.startswith(doc_examples.line_directive(a.root, doc, block))),
                 "extracted program")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".cpp")
        with open(path, "w") as f:
            f.write(sources[name])
        include = "-I" + os.path.join(a.root, "src")
        return subprocess.run([a.compiler, "-std=c++20", "-fsyntax-only", include, path], capture_output=True, text=True)


def broken_example(a):
    """A call of a function the library does not have, put into the document's first program: it must not compile,
    and the error must name the document and the line."""
    doc, block = example_block(a)
    control = compile_example(a, doc, block)
    if control.returncode != 0:
        raise Failed(f"the unbroken example does not compile, so this test proves nothing:\n{control.stderr}")
    main = first((i for i, l in enumerate(block.text.split("\n")) if "int main(" in l), "int main(")
    line = block.line + main + 1
    broken_text = replace_at_line(doc, line, "\n", "\n    strata::ops::noSuchFunction();\n")
    broken = markdown.parse(doc.name, broken_text)
    result = compile_example(a, broken, first((b for b in broken.blocks if b.line == block.line), "block"))
    print(f"broke {doc.name}:{line + 1}; the compiler said:\n{result.stderr[:2000]}")
    if result.returncode == 0 or f"{doc.name}:{line + 1}:" not in result.stderr:
        raise Failed(f"the broken example compiled, or its error does not name {doc.name}:{line + 1}")


def wrong_output(a):
    """The first program, checked against output it does not print (a line changed, a line too many, none)."""
    where, line, claimed = doc_examples.claimed_output(open(a.source, encoding="utf-8").read())
    if doc_examples.check_output(a.program, claimed or None, f"{where}:{line}"):
        raise Failed("the program fails against its own document, so this test proves nothing")
    wrongs = [claimed + ["one line too many"]]
    if claimed:
        wrongs += [claimed[:-1], [claimed[0] + " and something else"] + claimed[1:]]
    for wrong in wrongs:
        problems = doc_examples.check_output(a.program, wrong, f"{where}:{line}")
        print("claimed", wrong, "; reported:\n  " + "\n  ".join(problems or ["(nothing)"]))
        if not problems or "the document says" not in problems[0]:
            raise Failed(f"output claimed wrongly was not reported: {wrong}")


def main():
    cases = {f.__name__: f for f in (broken_link, broken_anchor, unknown_subcommand, unknown_option, option_alone,
                                     removed_option, missing_script, missing_path, unmarked_cpp, broken_example,
                                     wrong_output)}
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", choices=sorted(cases))
    for option in ("--root", "--strata", "--compiler", "--program", "--source"):
        parser.add_argument(option)
    args = parser.parse_args()
    try:
        cases[args.case](args)
    except Failed as e:
        print(f"FAILED: {e}")
        return 1
    print(f"{args.case}: reported as it must be")
    return 0


if __name__ == "__main__":
    sys.exit(main())
