"""``python -m kscope COMMAND``: the `kscope` command (``doctor``, ``metrics``, ``compare``, ``merge``,
``lines``, ``evaluate``), for where the console script is not on PATH; the CMake build's program runs
``python -m kscope evaluate`` for its Python command."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
