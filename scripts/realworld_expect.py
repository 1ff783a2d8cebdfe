"""Compare (or, with --update, rewrite) the real-world corpus's expected outcomes: tests/realworld/expected/.

    python scripts/realworld_expect.py            # print every changed outcome as a diff; exit 1 if any
    python scripts/realworld_expect.py --update   # after reviewing the diff, record the new outcomes
    python scripts/realworld_expect.py NAME...    # only these inputs (file stem or name)

The outcomes themselves are computed by tests/realworld/outcomes.py, which the corpus test uses too.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from realworld.outcomes import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
