"""`python -m intelliperf.cli`: the same as the `intelliperf` console script."""

import sys

from .entry import main

sys.exit(main())
