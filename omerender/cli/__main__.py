import sys

from omerender.cli import main

sys.exit(main())
