#!/usr/bin/env bash
# Fetches the public HIP code listed in sources.txt (written by others) into a
# git-ignored folder, at the pinned commits. The fetched code is measured by
# build.sh and measure.py and never committed.
#
#   tests/realcode/fetch.sh [--mirror DIR] [--dest DIR]
#
# --dest DIR    where the sets go (default: third_party/realcode/src at the
#               repository root, ignored by git); each set in DEST/SET.
# --mirror DIR  read the repositories from local git directories instead of
#               the network: DIR/OWNER+NAME/repo, DIR/OWNER+NAME or
#               DIR/OWNER+NAME.git (bare or not), which must hold the pinned
#               commit. Without it each repository is fetched from GitHub
#               (git fetch --depth 1 of the pinned commit).
# A set whose repository or commit cannot be had is one line on stderr and
# a non-zero exit at the end; the others are still fetched.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$root/third_party/realcode/src"
mirror=""
while (($#)); do
  case "$1" in
    --dest) dest="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: fetch.sh: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
done
dest="$(realpath -m "$dest")"
case "$dest/" in
  "$root"/third_party/*) ;;
  "$root"/*) echo "error: fetch.sh: $dest is inside the repository but not under third_party/ (git would see it)" >&2; exit 1 ;;
esac
mkdir -p "$dest"

# git without automatic housekeeping (a mirror is only read).
g() { git -c gc.auto=0 -c maintenance.auto=false "$@"; }

# The git directory of OWNER/NAME under the mirror folder, if any.
mirror_git() {
  local d
  for d in "$mirror/${1/\//+}/repo" "$mirror/${1/\//+}" "$mirror/${1/\//+}.git"; do
    if g --git-dir="$d/.git" rev-parse -q --verify HEAD >/dev/null 2>&1; then echo "$d/.git"; return; fi
    if g --git-dir="$d" rev-parse -q --verify HEAD >/dev/null 2>&1; then echo "$d"; return; fi
  done
}

failed=0
while read -r set repo commit _includes paths; do
  [[ -z "$set" || "$set" == \#* || "$set" == + ]] && continue
  # shellcheck disable=SC2206 # the paths are words
  paths=($paths)
  out="$dest/$set"
  if [[ -f "$out/.commit" && "$(cat "$out/.commit")" == "$commit" ]]; then
    echo "$set: $repo at ${commit:0:12} already fetched"
    continue
  fi
  rm -rf "$out.part"
  mkdir -p "$out.part"
  if [[ -n "$mirror" ]]; then
    git_dir="$(mirror_git "$repo")"
    if [[ -z "$git_dir" ]]; then
      echo "error: $set: no git directory for $repo under $mirror" >&2; failed=1; rm -rf "$out.part" "$out.part.err"; continue
    fi
    if ! g --git-dir="$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
      echo "error: $set: $git_dir lacks commit $commit (it has $(g --git-dir="$git_dir" rev-parse HEAD))" >&2
      failed=1; rm -rf "$out.part" "$out.part.err"; continue
    fi
  else
    git_dir="$out.part/.git-fetch"
    g init -q --bare "$git_dir"
    if ! g --git-dir="$git_dir" fetch -q --depth 1 "https://github.com/$repo" "$commit"; then
      echo "error: $set: cannot fetch $commit of $repo" >&2; failed=1; rm -rf "$out.part" "$out.part.err"; continue
    fi
  fi
  # Sources and headers only: data files are not needed (and may be absent
  # from a partial mirror).
  # A path written h:PATH gives its headers only.
  mapfile -t files < <(
    for p in "${paths[@]}"; do
      case "$p" in
        h:*) g --git-dir="$git_dir" ls-tree -r --name-only "$commit" -- "${p#h:}" | grep -E '\.(cuh|h|hh|hpp|hxx|inc|def)$' ;;
        *) g --git-dir="$git_dir" ls-tree -r --name-only "$commit" -- "$p" | grep -E '\.(cu|cuh|hip|cpp|cc|cxx|c|h|hh|hpp|hxx|inc|def)$' ;;
      esac
    done)
  # (git archive names blobs a partial mirror lacks outside these files on
  # stderr even when it succeeds: shown only on failure.)
  if ((${#files[@]} == 0)) ||
    ! g --git-dir="$git_dir" archive --format=tar "$commit" -- "${files[@]}" 2>"$out.part.err" |
    tar -x -C "$out.part"; then
    cat "$out.part.err" >&2
    echo "error: $set: cannot extract ${paths[*]} from $repo at $commit" >&2; failed=1; rm -rf "$out.part" "$out.part.err"; continue
  fi
  rm -rf "$out.part/.git-fetch" "$out.part.err" "$out"
  echo "$commit" > "$out.part/.commit"
  mv "$out.part" "$out"
  echo "$set: $repo at ${commit:0:12}: $(find "$out" -type f | wc -l) files"
done < "$here/sources.txt"
exit "$failed"
