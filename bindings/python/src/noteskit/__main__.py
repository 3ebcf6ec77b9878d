"""``python -m noteskit``: the command line of :mod:`noteskit.cli`."""
import sys

from .cli import main

sys.exit(main())
