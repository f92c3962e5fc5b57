"""Fails the docs build on Doxygen's warnings about the C++ public headers: a documentation error,
or a public name without a comment. Names already undocumented when the check came are listed in
docs/_tools/undocumented_cpp.txt; a name documented since must leave the list (so it only
shrinks), and a name not on it must be documented.

usage: check_doxygen.py WARNINGS_FILE [--update]   (--update rewrites the list from the warnings)"""

import re
import sys
from pathlib import Path

LIST = Path(__file__).with_name("undocumented_cpp.txt")
HEADER = ("# Public names of include/kscope/ that have no comment yet (docs/_tools/check_doxygen.py): document\n"
          "# one and remove its line; a name not listed here must be documented.\n")
COMPOUND = re.compile(r"warning: Compound (\S+) is not documented\.")
MEMBER = re.compile(r"warning: Member (.+) \((\w+)\) of (?:\w+ )+(\S+) is not documented\.")


def undocumented_name(warning):
    if m := COMPOUND.search(warning):
        return m[1]
    if m := MEMBER.search(warning):
        name = m[1] if m[1].startswith("operator()") else m[1].split("(")[0]  # overloads are one name
        return f"{m[3]}::{name} ({m[2]})"
    return None


def main():
    warnings = [line for line in Path(sys.argv[1]).read_text().splitlines() if "warning:" in line]
    names = {undocumented_name(w) for w in warnings} - {None}
    others = [w for w in warnings if undocumented_name(w) is None]
    if "--update" in sys.argv:
        LIST.write_text(HEADER + "".join(f"{name}\n" for name in sorted(names)))
        return 0
    known = {line for line in LIST.read_text().splitlines() if line and not line.startswith("#")}
    problems = [f"not documented: {w}" for w in warnings if undocumented_name(w) in names - known]
    problems += [f"documented now: remove '{name}' from {LIST}" for name in sorted(known - names)]
    problems += others
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"doxygen: {len(problems)} problems; {len(known & names)} public names still undocumented "
          f"({LIST.name})", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
