#!/usr/bin/env bash
# The packaging stage of `packaging/dev.sh test`: builds the .deb and the .tar.gz with CPack,
# checks the .deb's metadata, contents and dependencies, unpacks it into a scratch root
# (dpkg -x) and runs the installed programs there; then the same for the .tar.gz.
#
# The packages come from the dev build (build/dev, RelWithDebInfo: -O2 like a release, symbols
# stripped by CPack), so CI does not compile everything a second time.
# Fails on the first problem (a message says which).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD
build=${VRAMSCOPE_PACKAGE_BUILD_DIR:-build/dev}
realdata=${VRAMSCOPE_REALDATA_DIR:-$root_dir/../shared/realdata}
bert=$realdata/AMD-AGI_TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz
started=$SECONDS

fail() {
  echo "package-test: FAIL: $*" >&2
  exit 1
}
step() { echo "package-test: $*"; }

[ -f "$build/CPackConfig.cmake" ] || fail "$build is not configured (cmake --preset dev)"
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
# What the build holds, from its configuration (a file left from an earlier configuration is
# not installed, so it does not count).
cache_on() { grep -q "^$1:BOOL=ON$" "$build/CMakeCache.txt"; }
have_agent=0
cache_on VRAMSCOPE_BUILD_CAPTURE && [ -f "$build/capture/libvramscope_capture.so" ] && have_agent=1
have_gui=0
cache_on VRAMSCOPE_BUILD_GUI && have_gui=1

out=$build/packages
rm -rf "$out"
mkdir -p "$out"
cpack_start=$SECONDS
cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 ||
  { cat "$out/cpack.log"; fail "cpack failed"; }
step "cpack took $((SECONDS - cpack_start)) s"
deb=$(ls "$out"/*.deb)
tgz=$(ls "$out"/*.tar.gz)
step "packages:"
ls -l "$deb" "$tgz" | awk '{printf "  %s  %8.1f KiB\n", $NF, $5 / 1024}'

# --- the .deb's metadata and contents ---
dpkg-deb --info "$deb"
depends=$(dpkg-deb --field "$deb" Depends)
[ -n "$depends" ] || fail "the .deb has no Depends"
case "$depends" in *cuda* | *cupti* | *nvidia*) fail "Depends names CUDA: $depends" ;; esac
want_version=$(sed -n 's/^project(vramscope VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ "$(dpkg-deb --field "$deb" Version)" = "$want_version" ] ||
  fail "the .deb's version is not the project's $want_version"
contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
echo "$contents" | sed 's/^/  /'
expected="./usr/bin/vramscope-cli ./usr/bin/vramscope-run ./usr/share/man/man1/vramscope-cli.1.gz
  ./usr/share/man/man1/vramscope-run.1.gz ./usr/share/mime/packages/vramscope.xml
  ./usr/share/doc/vramscope/copyright ./usr/share/doc/vramscope/changelog.gz"
[ $have_gui = 1 ] && expected="$expected ./usr/bin/vramscope ./usr/share/man/man1/vramscope.1.gz
  ./usr/share/applications/io.github.vramscope.desktop
  ./usr/share/metainfo/io.github.vramscope.metainfo.xml
  ./usr/share/icons/hicolor/scalable/apps/io.github.vramscope.svg
  ./usr/share/icons/hicolor/256x256/apps/io.github.vramscope.png
  ./usr/share/icons/hicolor/16x16/apps/io.github.vramscope.png"
[ $have_agent = 1 ] && expected="$expected ./usr/lib/vramscope/libvramscope_capture.so"
for f in $expected; do
  grep -qxF "$f" <<<"$contents" || fail "the .deb lacks $f"
done
step "the .deb holds every expected file"

# lintian where it is installed (it is not needed to build or test; packaging/debian holds the
# one override, with its reason)
if command -v lintian >/dev/null 2>&1; then
  lintian_out=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v 'root privileges' || true)
  echo "${lintian_out:-lintian: no findings}" | sed 's/^/  /'
  ! grep -q '^E:' <<<"$lintian_out" || fail "lintian found errors"
fi

# --- unpack into a scratch root ---
scratch=$(mktemp -d /tmp/vramscope-package-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
dpkg -x "$deb" "$scratch/root"
usr=$scratch/root/usr

# Every library the installed programs need is in Depends, except CUDA's (the agent runs inside
# the job's CUDA environment). dpkg-shlibdeps made the list; this checks it from the ELF files.
depend_names=$(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*//; s/ //g')
elf_count=0
while IFS= read -r elf; do
  elf_count=$((elf_count + 1))
  for soname in $(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}'); do
    case "$soname" in libcupti.so* | libcuda.so* | libnvidia*) continue ;; esac
    # (awk reads to the end: an early exit would kill ldconfig with SIGPIPE under pipefail)
    lib=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ && !found {print $NF; found = 1}')
    [ -n "$lib" ] || fail "$elf needs $soname, which is not installed here"
    pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null ||
      dpkg -S "/usr$lib" 2>/dev/null || true)
    pkg=${pkg%%:*}
    [ -n "$pkg" ] || fail "no Debian package owns $lib ($soname, needed by $elf)"
    grep -qxF "$pkg" <<<"$depend_names" ||
      fail "$(basename "$elf") needs $soname from $pkg, which Depends lacks: $depends"
  done
done < <(find "$usr" -type f \( -perm -u+x -o -name '*.so' \) -exec sh -c \
  '[ "$(head -c4 "$1" | tail -c3)" = ELF ] && echo "$1"' _ {} \;)
[ $elf_count -ge 2 ] || fail "found only $elf_count ELF files in the .deb"
step "Depends covers every NEEDED library of the $elf_count ELF files: $depends"

log=$scratch/install-test.log
# run NAME COMMAND...: runs COMMAND, keeps its whole output in $scratch/NAME.out and its first
# lines in the log; fails on a non-zero exit.
run() {
  local name=$1 rc=0
  shift
  "$@" >"$scratch/$name.out" 2>&1 || rc=$?
  {
    echo "\$ $*"
    head -n 14 "$scratch/$name.out"
    local lines
    lines=$(wc -l <"$scratch/$name.out")
    [ "$lines" -le 14 ] || echo "  ... ($lines lines in all)"
  } | sed "s#$scratch/root#<root>#g; s#$scratch#<scratch>#g" >>"$log"
  [ $rc = 0 ] || { cat "$log" "$scratch/$name.out"; fail "exit $rc from: $*"; }
}
expect() {  # expect NAME TEXT WHY: the output of run NAME holds TEXT
  grep -qF -- "$2" "$scratch/$1.out" || { cat "$scratch/$1.out"; fail "$3"; }
}
run version "$usr/bin/vramscope-cli" --version
expect version "vramscope-cli $want_version" "the installed vramscope-cli is not version $want_version"
run sample "$usr/bin/vramscope-cli" report
# The bundled sample (resources/README.md): rank 1 leaks, peak allocated 23 GiB, 18 GiB elsewhere.
expect sample "   1       1  Synthetic GPU  80.0 GiB  23.0 GiB" "the sample's rank 1 peak is not 23 GiB"
expect sample "   0       0  Synthetic GPU  80.0 GiB  18.0 GiB" "the sample's rank 0 peak is not 18 GiB"
if [ -f "$bert" ]; then
  run bert "$usr/bin/vramscope-cli" report "$bert"
  # realdata/README.md: peak Total Allocated 96.6 MiB (the producer's own counter)
  expect bert "96.6 MiB" "the installed report of the bert trace lacks its 96.6 MiB peak"
elif [ -n "${VRAMSCOPE_REQUIRE_REALDATA:-}" ]; then
  fail "$bert is missing"
else
  echo "(real trace $bert missing: its report is skipped)" >>"$log"
fi
if [ $have_gui = 1 ]; then
  QT_QPA_PLATFORM=offscreen run gui-help "$usr/bin/vramscope" --help
  expect gui-help "--screenshot <PATH>" "the installed vramscope --help lists no --screenshot"
  run screenshot "$usr/bin/vramscope" --screenshot "$scratch/sample.png" --size 800x500
  [ -s "$scratch/sample.png" ] || fail "the installed vramscope wrote no screenshot"
  run desktop desktop-file-validate "$usr/share/applications/io.github.vramscope.desktop"
  run appstream appstreamcli validate --no-net "$usr/share/metainfo/io.github.vramscope.metainfo.xml"
fi
MANWIDTH=80 run man man -P cat -l "$usr/share/man/man1/vramscope-run.1.gz"
probe=(sh -c 'printf "CUDA_INJECTION64_PATH=%s\n" "$CUDA_INJECTION64_PATH"')
if [ $have_agent = 1 ]; then
  run agent env -u VRAMSCOPE_AGENT "$usr/bin/vramscope-run" -o "$scratch/traces" -- "${probe[@]}"
  expect agent "CUDA_INJECTION64_PATH=$usr/lib/vramscope/libvramscope_capture.so" \
    "the installed vramscope-run did not inject the installed agent"
fi

# --- the .tar.gz: the same layout under its top folder ---
mkdir "$scratch/tgz"
tar -xzf "$tgz" -C "$scratch/tgz"
top=$(ls -d "$scratch"/tgz/*/)
"${top}bin/vramscope-cli" report >/dev/null 2>&1 || fail "vramscope-cli of the .tar.gz failed"
if [ $have_agent = 1 ]; then
  injected=$(env -u VRAMSCOPE_AGENT "${top}bin/vramscope-run" -o "$scratch/traces" -- \
    "${probe[@]}" 2>/dev/null) || fail "vramscope-run of the .tar.gz failed"
  [ "$injected" = "CUDA_INJECTION64_PATH=${top}lib/vramscope/libvramscope_capture.so" ] ||
    fail "vramscope-run of the .tar.gz did not find its agent: $injected"
fi
echo "  (the .tar.gz: vramscope-cli report and the agent lookup ran from $(basename "$top"))" >>"$log"

step "install test output:"
sed '/^$/d; s/^/  /' "$log"
step "packages built and tested in $((SECONDS - started)) s"
