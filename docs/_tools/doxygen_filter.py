"""Doxygen input filter: kscope's public headers document with plain `//` comments, which Doxygen
reads as code comments. This hands them to Doxygen as documentation without changing the headers:
a comment block before a declaration becomes `///`, a comment after a declaration on its line
becomes `///<`; the header's opening comment (before its first declaration) stays a comment. A
line declaring several members (`double q1 = 0, q3 = 0;`) becomes a member group, so that its
comment documents each of them (DISTRIBUTE_GROUP_DOC). Lines are neither added nor removed, so
Doxygen's warnings name the header's own line numbers."""

import re
import sys

PLACEHOLDER = re.compile(r"<(\w+)>")  # <prefix>summary.csv: a placeholder, not an HTML tag
TRAILING = re.compile(r'^(?P<code>(?:[^/"]|"[^"]*"|/(?!/))*?(?:[;,{}]|\w))\s*//\s?(?P<text>.*)$')


def escaped(comment):
    return PLACEHOLDER.sub(r"\\<\1\\>", comment)


def declares_several(code):
    """A declaration of several members: a comma outside any brackets, in a statement ending in ';'."""
    if not code.rstrip().endswith(";") or code.lstrip().startswith(("return", "using", "friend")):
        return False
    depth = 0
    for char in code:
        depth += char in "([{<"
        depth -= char in ")]}>"
        if char == "," and depth == 0:
            return True
    return False


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
            text = escaped(m["text"]).replace("*/", "* /")
            out.append(f"/** @{{ */ {m['code']} /**< {text} */ /** @}} */\n" if declares_several(m["code"])
                       else f"{m['code']}  ///< {escaped(m['text'])}\n")
        elif declares_several(line) and out and out[-1].lstrip().startswith("///"):
            out.append(f"/** @{{ */ {line.rstrip()} /** @}} */\n")  # the comment above documents each
        else:
            out.append(line)
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as header:
        sys.stdout.writelines(filtered(header.readlines()))
