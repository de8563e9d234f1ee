"""`python -m circus` — the same as the `circus` command."""

import sys

from circus.cli import main

sys.exit(main())
