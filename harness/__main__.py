"""``python -m harness`` is the same as the ``t3d-audit`` console script."""

import sys

from harness.cli import main

sys.exit(main())
