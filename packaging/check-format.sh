#!/usr/bin/env bash
# Fails when clang-format would change any of our C++ sources (.clang-format is enforced), or when
# a comment or document cites a docs/*.md heading that does not exist (check_doc_references.py).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format missing (packaging/setup-debian.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.h' \) -print)
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: clang-format would change ${#bad[@]} file(s): ${bad[*]}" >&2
  echo "check-format: run: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
python3 packaging/tests/check_doc_references.py --source-dir .
