"""A class on one server, simulated on loopback: `python -m attnlib.bench hub --students N` runs hub/bench.py.

The load test creates accounts and starts the course checkout's own JupyterHub (hub/classroom.py, hub/launch.py),
so its command line lives in hub/ and imports the library, never the other way round: this module only runs it,
with the same options, output (the last line is the report as JSON) and exit status. See hub/bench.py.
"""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "hub" / "bench.py"


def main(argv: list[str] | None = None) -> int:
    """Run hub/bench.py with these options in this Python; return its exit status.

    Args:
        argv: the options after `hub` (default: sys.argv[1:]).

    Returns:
        hub/bench.py's status: 0 if every student finished, 1 if some failed, 2 if the test cannot run, 130 if
        interrupted.
    """
    if not SCRIPT.exists():
        raise SystemExit("the hub load test runs from a course checkout (hub/bench.py next to attnlib/); none found")
    proc = subprocess.Popen([sys.executable, str(SCRIPT), *(sys.argv[1:] if argv is None else argv)])
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())  # hub/bench.py cleans up on SIGTERM as on Ctrl-C
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached hub/bench.py too: let it remove the accounts and the hub
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
