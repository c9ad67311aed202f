"""`python -m mpg.cli`: the `mpg` command, for a process that has no console script on its PATH
(tests, workers)."""

import sys

from mpg.cli import main

sys.exit(main())
