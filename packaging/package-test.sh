#!/usr/bin/env bash
# The packaging stage of `packaging/dev.sh test`: builds the .deb and .tar.gz, unpacks the .deb
# into a scratch root and runs the installed programs there.
# (filled in by the packaging work)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "package-test: not built yet"
