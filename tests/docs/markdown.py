"""The parts of a Markdown document that the docs checks read, each with its line number: fenced and indented code
blocks, inline code spans, links and heading anchors, as GitHub renders them (CommonMark, close enough for these
documents). Standard library only: the checks run wherever the tests do."""

import re
from dataclasses import dataclass, field

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
REFERENCE = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s|$)", re.M)


@dataclass
class Block:
    lang: str  # the first word of the fence's info string: "cpp", "yaml", "" (none, or an indented block)
    line: int  # line number of the block's first line of content
    text: str


@dataclass
class Span:
    line: int
    text: str  # an inline code span's content; it may run over several lines of a paragraph


@dataclass
class Link:
    line: int
    target: str


@dataclass
class Doc:
    name: str  # the path shown in messages, relative to the repository root
    text: str
    blocks: list = field(default_factory=list)
    spans: list = field(default_factory=list)
    links: list = field(default_factory=list)
    anchors: set = field(default_factory=set)
    prose: str = ""  # the text with code blocks and code spans blanked (line numbers kept)


def parse(name, text):
    doc = Doc(name, text)
    lines = text.split("\n")
    prose = list(lines)
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening:  # a fenced block runs to a fence of the same character at least as long, or to the end
            fence = opening.group(1)
            end = i + 1
            while end < len(lines) and not re.match(r"^ {0,3}" + fence[0] + "{" + str(len(fence)) + r",}\s*$",
                                                    lines[end]):
                end += 1
            doc.blocks.append(Block(opening.group(2), i + 2, "\n".join(lines[i + 1:end])))
            prose[i:end + 1] = [""] * (len(lines[i:end + 1]))
            i = end + 1
            continue
        if starts_indented_block(lines, i):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            doc.blocks.append(Block("", i + 1, "\n".join(l[4:] for l in lines[i:end])))
            prose[i:end] = [""] * (end - i)
            i = end
            continue
        i += 1
    without_blocks = "\n".join(prose)
    doc.anchors = anchors(without_blocks)  # before the spans are blanked: headings may hold code
    doc.spans, doc.prose = code_spans(without_blocks)
    for m in LINK.finditer(doc.prose):
        doc.links.append(Link(line_of(doc.prose, m.start()), m.group(2)))
    for m in REFERENCE.finditer(doc.prose):
        doc.links.append(Link(line_of(doc.prose, m.start()), m.group(2)))
    return doc


def starts_indented_block(lines, i):
    """An indented code block: 4 spaces after a blank line, unless the paragraph before it is a list item or its
    continuation (then the indented text continues the list)."""
    if not lines[i].startswith("    ") or not lines[i].strip() or i == 0 or lines[i - 1].strip():
        return False
    before = i - 1
    while before >= 0 and not lines[before].strip():
        before -= 1
    return before < 0 or not (LIST_ITEM.match(lines[before]) or lines[before].startswith((" ", "\t")))


def code_spans(prose):
    """The inline code spans of the prose (a run of backticks closed by a run of the same length within the
    paragraph), and the prose with them blanked so that links and anchors are not looked for inside them."""
    spans = []
    out = []
    pos = 0
    for m in re.finditer(r"(?<!`)`+(?!`)", prose):
        if m.start() < pos:
            continue
        ticks = m.group(0)
        close = re.compile(r"(?<!`)" + ticks + r"(?!`)").search(prose, m.end())
        if not close or re.search(r"\n[ \t]*\n", prose[m.end():close.start()]):
            continue  # not closed in this paragraph: literal backticks
        content = prose[m.end():close.start()]
        spans.append(Span(line_of(prose, m.start()), content.strip() if content.strip() else content))
        out.append(prose[pos:m.start()])
        out.append(re.sub(r"[^\n]", " ", prose[m.start():close.end()]))
        pos = close.end()
    out.append(prose[pos:])
    return spans, "".join(out)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def slug(heading):
    """GitHub's anchor of a heading: the rendered text in lower case, without punctuation, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts by its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(prose):
    """The anchors of every heading; a repeated heading gets -1, -2, ... as on GitHub."""
    seen = {}
    result = set()
    for line in prose.split("\n"):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        anchor = base if base not in seen else f"{base}-{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        result.add(anchor)
    return result


def read(root, name):
    with open(f"{root}/{name}", encoding="utf-8") as f:
        return parse(name, f.read())
