#!/usr/bin/env bash
# One entry point for the README's Quick start and for CI.
#   packaging/dev.sh app [FILES...]  install what is missing, build, open the app (bundled sample
#                                    when no file is given)
#   packaging/dev.sh test            install what is missing, build, run every test
#   packaging/dev.sh build           install what is missing, build
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-test}
shift || true

./packaging/setup-debian.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs"

case "$what" in
  app)
    exec ./build/dev/app/gui/vramscope "$@"
    ;;
  test)
    # speedscope's own importer reads our speedscope exports in one check (skipped without it).
    if command -v npm >/dev/null 2>&1 && [ ! -d build/npm/node_modules/speedscope ]; then
      npm install --prefix build/npm --no-audit --no-fund --loglevel=error speedscope@1.25.0 \
        >/dev/null || echo "note: npm could not install speedscope; its importer check is skipped"
    fi
    ./packaging/check-format.sh
    stage_start=$SECONDS
    ctest --preset dev -j "$jobs" --timeout 600
    echo "dev.sh: unit, golden and GUI tests took $((SECONDS - stage_start)) s"
    stage_start=$SECONDS
    ./packaging/sanitize.sh
    echo "dev.sh: sanitizer build, tests and fuzzing took $((SECONDS - stage_start)) s"
    stage_start=$SECONDS
    ./packaging/package-test.sh
    echo "dev.sh: packages and the install test took $((SECONDS - stage_start)) s"
    echo "dev.sh: everything took $SECONDS s"
    ;;
  build)
    ;;
  *)
    echo "usage: packaging/dev.sh app|test|build" >&2
    exit 2
    ;;
esac
