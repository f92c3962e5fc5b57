"""``python -m kscope COMMAND``: the `kscope` command (the CMake build's program runs
``python -m kscope evaluate`` for its Python command)."""

import sys

from ._cli import main

sys.exit(main())
