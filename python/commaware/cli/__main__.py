"""``python -m commaware.cli``: the `commaware` command."""

from . import main

main()
