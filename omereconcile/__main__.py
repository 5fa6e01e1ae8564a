"""``python -m omereconcile``: the same as the ``omereconcile`` command."""

import sys

from omereconcile.cli import main

sys.exit(main())
