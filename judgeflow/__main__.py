"""`python -m judgeflow`: the command line (judgeflow.cli.main)."""

import sys

from .cli import main

sys.exit(main())
