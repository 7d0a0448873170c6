"""`python -m ssdlab._worker SPEC REPORT`: runs one spec of a sweep in a process of its own
(the Python package's counterpart of `ssdlab sweep-worker`)."""

import sys

from ssdlab import _native


def main() -> int:
    spec, report = sys.argv[1:3]
    try:
        _native.worker(spec, report)
    except _native.SsdlabError as e:
        print(f"ssdlab: {e}", file=sys.stderr)
        return 1
    except BaseException as e:  # a Rust panic: its hook has printed the message already
        if type(e).__name__ == "PanicException":
            return 101
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
