"""``python -m gpuplace``: see gpuplace.cli."""

import sys

from .cli import main

sys.exit(main())
