#!/usr/bin/env bash
# The sanitizer stage of `packaging/dev.sh test`: the asan preset's libraries and unit tests
# under AddressSanitizer + UBSan, then every libFuzzer target for a bounded time.
# (filled in by the sanitizer work)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "sanitize: not built yet"
