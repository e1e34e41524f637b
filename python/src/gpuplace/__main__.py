"""``python -m gpuplace``: see gpuplace.cli (``bench``: gpuplace.bench)."""

import sys

if sys.argv[1:2] == ["bench"]:
    from .bench import main as bench_main

    sys.exit(bench_main(sys.argv[2:]))

from .cli import main

sys.exit(main())
