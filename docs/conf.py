"""Sphinx configuration of kscope's documentation site; `bash scripts/docs.sh` builds it.

The pages are the Markdown files of docs/ (MyST); the Python reference is autodoc over the built
package (scripts/docs.sh puts its directory on sys.path through KSCOPE_PYTHON_PATH); the C++
reference is Breathe over the Doxygen XML of include/kscope/ (KSCOPE_DOXYGEN_XML)."""

import os
import re
import sys

if os.environ.get("KSCOPE_PYTHON_PATH"):
    sys.path.insert(0, os.environ["KSCOPE_PYTHON_PATH"])
import kscope  # noqa: E402  (the built package: the reference documents what users import)

project = "kscope"
author = "the kscope authors"
copyright = "the kscope authors"
version = release = kscope.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "breathe"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_tools", "Thumbs.db", ".DS_Store"]

myst_heading_anchors = 3  # README-style links to a section: page.md#the-section-title
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = f"kscope {release}"

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

breathe_projects = {"kscope": os.environ.get("KSCOPE_DOXYGEN_XML", "_build/doxygen/xml")}
breathe_default_project = "kscope"
breathe_default_members = ("members",)

# kscope's docstrings are written for help(): a parameter is a line "name: what it is" (or
# "a, b (kscope): ..."), its continuation lines indented; an example is an indented block after a
# blank line. Sphinx gets the parameters as a definition list (the names as code) and the
# examples as literal blocks. A line of prose that merely starts with a word and a colon is left alone, as its next
# line is neither indented nor another parameter.
IDENTIFIER = re.compile(r"\*{0,2}[A-Za-z_][\w.]*(?:\(\))?")
NAME = rf"{IDENTIFIER.pattern}(?: \([^)]*\))?"
PARAMETER = re.compile(rf"^({NAME}(?:(?:, | / | \+ ){NAME})*): (\S.*)$")


def _term(names):
    """The parameters' names as code, their parenthesized notes as text."""
    return re.sub(rf"({IDENTIFIER.pattern})((?: \([^)]*\))?)", lambda m: f"``{m[1]}``{m[2]}", names)


def _is_parameter(lines, i):
    if not PARAMETER.match(lines[i]):
        return False
    following = lines[i + 1] if i + 1 < len(lines) else ""
    return not following.strip() or following.startswith(" ") or bool(PARAMETER.match(following))


def _help_text_as_rest(app, what, name, obj, options, lines):
    out = []
    in_fields = False
    for i, line in enumerate(lines):
        if _is_parameter(lines, i):
            if not in_fields and out and out[-1].strip():
                out.append("")
            names, text = PARAMETER.match(line).groups()
            out += [_term(names), f"    {text}"]
            in_fields = True
            continue
        if line.startswith(" ") and out and not out[-1].strip() and len(out) > 1 and out[-2].strip() \
                and not out[-2].startswith(" ") and not out[-2].rstrip().endswith("::"):
            out[-1:] = ["", "::", ""]  # an example after a paragraph: a literal block
        if in_fields and line.strip() and not line.startswith(" "):
            out.append("")
            in_fields = False
        elif not line.strip():
            in_fields = False
        out.append(line)
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", _help_text_as_rest)
