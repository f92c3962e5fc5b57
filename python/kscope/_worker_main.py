"""The program a worker process of kscope.evaluate_many runs: ``python -m kscope._worker_main KIND
FD LOG`` (kscope._workers.main)."""

import sys

from kscope._workers import main

sys.exit(main(sys.argv[1:]))
