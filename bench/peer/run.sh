#!/usr/bin/env bash
# The side-by-side benchmark; see run.py --help and docs/peer-bench.md.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/run.py" "$@"
