"""``python -m omerender_entry``: the ``omerender`` console script."""

import sys

from omerender_entry import main

sys.exit(main())
