"""`python -m dotprompt.cli ...`, the same as the `dotprompt` console script."""

import sys

from . import main

sys.exit(main())
