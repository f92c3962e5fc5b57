"""``python -m kscope ...``: the kscope command (``kscope doctor``, ``metrics``, ``compare``, ``merge``),
for where the console script is not on PATH."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
