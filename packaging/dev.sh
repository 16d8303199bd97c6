#!/usr/bin/env bash
# One entry point for the README's Quick start and for CI.
#   packaging/dev.sh app [FILES...]     install what is missing, build, open the app (bundled
#                                       sample when no file is given)
#   packaging/dev.sh test               install what is missing, build, run every test of the dev
#                                       build (unit, golden, GUI offscreen, real data, corruption
#                                       sweep, fuzz regression corpus), the format check and the
#                                       package install test
#   packaging/dev.sh sanitize [SECONDS] the sanitizer stage of CI (packaging/sanitize.sh): the asan
#                                       build, its tests, and each fuzzer for SECONDS (default 10)
#   packaging/dev.sh fuzz [SECONDS]     long fuzzing: build the fuzzers, run each for SECONDS
#                                       (default 600); tests/fuzz/README.md
#   packaging/dev.sh build              install what is missing, build
# Each stage prints its time; a build that starts from an empty build folder also prints the 10
# targets that took longest (packaging/tools/build_times.py), so a slow new header shows.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-test}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
started=$SECONDS
stages=()

# stage NAME COMMAND...: runs COMMAND and records how long it took.
stage() {
  local name=$1 t=$SECONDS
  shift
  "$@"
  stages+=("$(printf '%-44s %5d s' "$name" $((SECONDS - t)))")
  echo "dev.sh: $name took $((SECONDS - t)) s"
}

summary() {
  echo "dev.sh: stage times"
  printf '  %s\n' "${stages[@]}"
  echo "dev.sh: everything took $((SECONDS - started)) s"
}

# build_dev: configure and build the dev preset; times of the slowest targets after a cold build.
build_dev() {
  local cold=0
  [ -f build/dev/.ninja_log ] || cold=1
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$jobs"
  if [ $cold = 1 ]; then
    python3 packaging/tools/build_times.py build/dev --top 10 || true
  fi
}

case "$what" in
  app)
    stage "setup (Debian packages)" ./packaging/setup-debian.sh
    stage "dev build" build_dev
    exec ./build/dev/app/gui/vramscope "$@"
    ;;
  test)
    stage "setup (Debian packages)" ./packaging/setup-debian.sh
    stage "format check" ./packaging/check-format.sh
    stage "dev build" build_dev
    # speedscope's own importer reads our speedscope exports in one check (skipped without it).
    if command -v npm >/dev/null 2>&1 && [ ! -d build/npm/node_modules/speedscope ]; then
      stage "npm install speedscope" sh -c 'npm install --prefix build/npm --no-audit --no-fund \
        --loglevel=error speedscope@1.25.0 >/dev/null ||
        echo "note: npm could not install speedscope; its importer check is skipped"'
    fi
    stage "dev tests (ctest)" ctest --preset dev -j "$jobs" --timeout 600
    stage "packages and the install test" ./packaging/package-test.sh
    summary
    ;;
  sanitize)
    stage "setup (Debian packages)" ./packaging/setup-debian.sh
    stage "sanitizer stage" ./packaging/sanitize.sh "${1:-10}"
    summary
    ;;
  fuzz)
    seconds=${1:-600}
    stage "setup (Debian packages)" ./packaging/setup-debian.sh
    stage "asan fuzzers build" sh -c 'cmake --preset asan >/dev/null &&
      cmake --build --preset asan -j "$1" --target fuzzers' _ "$jobs"
    stage "fuzzing ($seconds s per target)" tests/fuzz/run.sh all "$seconds"
    summary
    ;;
  build)
    stage "setup (Debian packages)" ./packaging/setup-debian.sh
    stage "dev build" build_dev
    ;;
  *)
    echo "usage: packaging/dev.sh app [FILES...] | test | sanitize [SECONDS] | fuzz [SECONDS] | build" >&2
    exit 2
    ;;
esac
