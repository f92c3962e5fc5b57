"""Doxygen input filter: kscope's public headers document with plain `//` comments, which Doxygen
reads as code comments. This hands them to Doxygen as documentation without changing the headers:
a comment block before a declaration becomes `///`, a comment after a declaration on its line
becomes `///<`; the header's opening comment (before its first declaration) stays a comment. Lines
are neither added nor removed, so Doxygen's warnings name the header's own line numbers."""

import re
import sys

PLACEHOLDER = re.compile(r"<(\w+)>")  # <prefix>summary.csv: a placeholder, not an HTML tag
TRAILING = re.compile(r'^(?P<code>(?:[^/"]|"[^"]*"|/(?!/))*?(?:[;,{}]|\w))\s*//\s?(?P<text>.*)$')


def escaped(comment):
    return PLACEHOLDER.sub(r"\\<\1\\>", comment)


def filtered(lines):
    out = []
    in_preamble = True  # before the first line that is neither a comment, a directive nor blank
    for line in lines:
        stripped = line.strip()
        if in_preamble:
            if stripped.startswith("//") or stripped.startswith("#") or not stripped:
                out.append(line)
                continue
            in_preamble = False
        if stripped.startswith("///") or stripped.startswith("//!"):
            out.append(line)
        elif stripped.startswith("//"):
            out.append(escaped(line.replace("//", "///", 1)))
        elif "//" in line and not stripped.startswith("#") and (m := TRAILING.match(line.rstrip("\n"))):
            out.append(f"{m['code']}  ///< {escaped(m['text'])}\n")
        else:
            out.append(line)
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as header:
        sys.stdout.writelines(filtered(header.readlines()))
