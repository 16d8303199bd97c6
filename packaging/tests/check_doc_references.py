#!/usr/bin/env python3
"""Fails when a comment or a document points to documentation that is not in the repository.

Rules, over every file git tracks (text files only):
  1. A reference `PATH.md "Heading"` (also `PATH.md, "A" and "B"`, across comment line breaks and
     C string seams) must name a Markdown file of the repository and headings it has. PATH is
     taken from the repository root, else from the referring file's folder.
  2. A file outside docs/ names the design notes as docs/DESIGN.md, never as a bare DESIGN.md.
  3. STYLE.md, CAPTURE.md and shared/DESIGN.md lived outside the repository; any mention of
     them is an error (what the code relies on from them is in docs/DESIGN.md).

Usage: check_doc_references.py [--source-dir DIR] | --self-test
Prints one line per finding ("file:line: ...") and exits 1 when there is any, 0 otherwise.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# A Markdown file name, then what may stand between it and the first quoted heading.
REFERENCE = re.compile(r"(?<![\w./-])((?:\.\./)*[\w./-]*?[\w-]+\.md)\b")
# Comment leaders at the start of a continued line, removed when lines are joined.
LEADER = re.compile(r"\n[ \t]*(?:///<|///|//!|//|#|\*|-)?[ \t]*")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$")
OUTSIDE = re.compile(r"(?<!\w)(?:STYLE|CAPTURE)\.md\b")
DESIGN = re.compile(r"(?<!\w)DESIGN\.md\b")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in (".git", "build")]
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
        return found


def headings(path):
    """The headings of a Markdown file, whitespace collapsed, outside fenced code blocks."""
    result = set()
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line.rstrip("\n"))
            if m:
                result.add(" ".join(m.group(1).split()))
    return result


def quoted_sections(text):
    """The headings quoted right after a file name: `"A"`, `, "A" and "B"`, `\\"A\\"` in C."""
    text = LEADER.sub(" ", text)
    sections = []
    pos = 0
    # What may stand before the first quote: a Markdown link's end, a comma, a colon.
    m = re.match(r"[\])]*(?:\([^)\s]*\))?[ \t]*[,:]?[ \t]*", text)
    if not re.search(r"[ \t,:]", m.group(0)):
        return []  # `"README.md")`: a quote that closes a string, not one that opens a heading
    pos = m.end()
    while True:
        escaped = text.startswith('\\"', pos)
        if not escaped and not text.startswith('"', pos):
            break
        start = pos + (2 if escaped else 1)
        end = text.find('\\"' if escaped else '"', start)
        if end < 0:
            break
        name = text[start:end]
        if escaped:
            name = re.sub(r'"\s*"', "", name)  # a C string literal split over two lines
        sections.append(" ".join(name.split()))
        pos = end + (2 if escaped else 1)
        m = re.match(r"[ \t]*(?:,|and|or)?[ \t]*", text[pos:])
        if not m or not m.group(0).strip():
            break
        pos += m.end()
    return sections


def check(root, counted=None):
    findings = []
    cache = {}
    self_path = os.path.relpath(os.path.abspath(__file__), os.path.abspath(root))
    for rel in sorted(tracked_files(root)):
        if rel == self_path:
            continue
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        line_of = lambda at: text.count("\n", 0, at) + 1
        in_docs = rel.startswith("docs/")
        for m in OUTSIDE.finditer(text):
            findings.append(f"{rel}:{line_of(m.start())}: {m.group(0)} is not in the repository; "
                            "cite docs/DESIGN.md and one of its headings")
        for m in DESIGN.finditer(text):
            before = text[max(0, m.start() - 7):m.start()]
            if before.endswith("shared/"):
                findings.append(f"{rel}:{line_of(m.start())}: shared/DESIGN.md is not in the "
                                "repository; cite docs/DESIGN.md and one of its headings")
            elif not in_docs and not before.endswith("docs/"):
                findings.append(f"{rel}:{line_of(m.start())}: name it docs/DESIGN.md")
        for m in REFERENCE.finditer(text):
            sections = quoted_sections(text[m.end():m.end() + 400])
            if not sections:
                continue
            name = m.group(1)
            target = None
            for base in (root, os.path.dirname(path)):
                candidate = os.path.normpath(os.path.join(base, name))
                if os.path.isfile(candidate):
                    target = candidate
                    break
            if target is None:
                findings.append(f"{rel}:{line_of(m.start())}: {name} is not in the repository")
                continue
            if target not in cache:
                cache[target] = headings(target)
            for section in sections:
                if counted is not None:
                    counted.append(section)
                if section not in cache[target]:
                    findings.append(f'{rel}:{line_of(m.start())}: {name} has no heading "{section}"')
    return findings


def self_test():
    """The checker on a small tree with one good and four bad references."""
    files = {
        "docs/DESIGN.md": "# Title\n## Two levels\n```\n## Not a heading\n```\n",
        "a.h": '// ok (docs/DESIGN.md "Two levels").\n'
               '// ok too (docs/DESIGN.md\n// "Two\n// levels").\n',
        "b.h": '// bad: docs/DESIGN.md "Three levels"\n',
        "c.cpp": 'const char* s = "see \\"docs/DESIGN.md\\" and DESIGN.md";\n',
        "d.md": 'After ../shared/CAPTURE.md, and docs/DESIGN.md "Not a heading".\n',
        "e.sh": 'test -f "$dir/README.md" && echo ../shared/DESIGN.md\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        got = sorted(f.split(":")[0] + ":" + f.split(":")[1] for f in check(root))
    want = ["b.h:1", "c.cpp:1", "d.md:1", "d.md:1", "e.sh:1"]
    if got != want:
        print(f"check_doc_references self-test: found {got}, expected {want}")
        return 1
    print("check_doc_references self-test: 5 bad references found, the good ones passed")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    counted = []
    findings = check(args.source_dir, counted)
    for f in findings:
        print(f)
    if findings:
        print(f"check_doc_references: {len(findings)} reference(s) to documentation that does "
              "not exist")
        return 1
    print(f"check_doc_references: {len(counted)} cited headings, each in the file it names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
