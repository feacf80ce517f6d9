#!/usr/bin/env bash
# rewrite-spec-refs.sh: the one-time mechanical rewrite of the references to
# the specification written before it moved into the repository
# (docs/spec.md). Run it from anywhere in the repository, once, on a clean
# tree; review the diff; then set legacyRefsRewritten = true in
# tools/speccheck/refs_test.go, so that the reference test also refuses the
# old forms from then on.
#
#   "SPEC §n"            -> "spec §n"
#   "SPEC.md §n"         -> "docs/spec.md §n"
#   "../shared/SPEC.md"  -> "docs/spec.md"
#
# It edits the tracked *.go, *.md and *.py files and the JSON golden files
# of testdata folders (report's figure captions quote the Go comments' form,
# so the goldens must change with them). Prose that names the old file without a section ("of
# SPEC", "SPEC's") is left for a person to reword.
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

git ls-files -z -- '*.go' '*.md' '*.py' '**/testdata/*.json' |
  xargs -0 --no-run-if-empty sed -i \
    -e 's#\.\./shared/SPEC\.md#docs/spec.md#g' \
    -e 's#SPEC\.md §#docs/spec.md §#g' \
    -e 's#SPEC §#spec §#g'

echo "rewrote the references; left to reword by hand:" >&2
git grep -n -I -w -e 'shared/SPEC' -e '\.\./shared' -e 'SPEC' -e 'SPEC\.md' -- '*.go' '*.md' '*.py' >&2 || true
