#!/bin/sh
# ctest's realdata_available: says whether the shared real inputs are at $1. Exit 0 when they are;
# when not, exit 77 (ctest: skipped) for a developer's run, or 1 (failed) when
# VRAMSCOPE_REQUIRE_REALDATA is set, as CI does (.ci/run): there every real-data test must run.
if [ -f "$1/README.md" ]; then
    echo "real inputs: $1"
    exit 0
fi
echo "real inputs missing: $1 (every real-data test skips)"
if [ -n "${VRAMSCOPE_REQUIRE_REALDATA:-}" ] && [ "${VRAMSCOPE_REQUIRE_REALDATA}" != 0 ]; then
    echo "VRAMSCOPE_REQUIRE_REALDATA is set: failing"
    exit 1
fi
exit 77
