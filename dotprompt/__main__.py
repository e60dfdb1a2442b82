"""`python -m dotprompt ...`, the same as the `dotprompt` console script (editors start `python -m dotprompt lsp`)."""

import sys

from .cli import main

sys.exit(main())
