#!/usr/bin/env node
":" /*
# The tcod command, in one file that is both a POSIX sh script and an ES module (this JavaScript
# comment holds the sh part; sh never reads past its `exec`). As sh: `tcod check` starts from the V8
# start-up snapshot dist/check.blob (the compiler loaded, the stdlib parsed: bin/snapshot-main.ts),
# in under half the time of a check without it, when the blob was built by the Node.js on the PATH
# (dist/check.blob.node names it) and that Node.js has not changed since; anything else, or
# TCOD_NO_SNAPSHOT=1, runs bin/tcod.mjs. As JavaScript (node FILE, and npm's shims on Windows): it
# is bin/tcod.mjs. bin/tcod starts with #!/bin/sh; bin/tcod.js, the npm bin, starts with
# #!/usr/bin/env node and is given #!/bin/sh where the package is installed on Linux or macOS, when
# its first check builds the blob (bin/snapshot-cache.ts). (The blob is not packed: an installed
# package has none, and npm's tarballs reset file times, which the check below reads.)
self=$0
# npm links the bin (node_modules/.bin/tcod -> ../tcod/bin/tcod.js): follow the links to the package.
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in
    /*) self=$link ;;
    *) self=${self%/*}/$link ;;
  esac
done
bin=${self%/*}
[ "$bin" = "$self" ] && bin=.
# `tcod --version`: the version npm wrote in package.json (the CLI prints the same), without Node.js.
if [ "$#" = 1 ] && { [ "$1" = --version ] || [ "$1" = -V ]; }; then
  version=$(sed -n '/^  "version": "[^"]*",$/{s/^  "version": "\([^"]*\)",$/\1/p;q;}' "$bin/../package.json" 2>/dev/null)
  [ -n "$version" ] && { printf '%s\n' "$version"; exit 0; }
fi
blob=$bin/../dist/check.blob
# The blob is made and run with the V8 flags on the third line of dist/check.blob.node (a blob runs
# only under the flags it was built with: bin/snapshot-cache.ts `snapshotFlags` says which and why);
# a blob built without them is not taken. The hash seed is the build's, digits only.
if [ "$1" = check ] && [ -z "$TCOD_NO_SNAPSHOT" ] && [ -f "$blob" ] \
  && { read -r built && read -r version && read -r flags; } < "$blob.node" 2>/dev/null \
  && seed=${flags#--initial-old-space-size=1024 --hash-seed=} && seed=${seed% --no-rehash-snapshot} \
  && [ "$flags" = "--initial-old-space-size=1024 --hash-seed=$seed --no-rehash-snapshot" ] \
  && case $seed in [1-9]*) case $seed in *[!0-9]*) false ;; esac ;; *) false ;; esac \
  && [ ! "$built" -nt "$blob" ]; then
  # The node on the PATH, as `command -v node` finds it, without starting a subshell: it must be
  # the one that built the blob.
  set -f; IFS=:
  for dir in $PATH; do
    [ -f "${dir:-.}/node" ] && [ -x "${dir:-.}/node" ] && { [ "${dir:-.}/node" -ef "$built" ] && exec "$built" --initial-old-space-size=1024 "--hash-seed=$seed" --no-rehash-snapshot --snapshot-blob "$blob" "$@"; break; }
  done
  set +f; unset IFS
fi
# `tcod lsp`, a process that lives as long as the editor: its young generation starts at 16 MB
# rather than at 1 MB, and its old generation's first limit is 64 MB, so it does not scavenge every
# few keystrokes and run a major GC at each step of its heap's growth in an editor's first minute,
# and after a major GC its heap grows to 1.5 times what is live before the next, not up to 4 times
# (lsp/node-flags.ts, the list, says why; editors that start Node.js themselves pass it too).
[ "$1" = lsp ] && exec node --min-semi-space-size=16 --initial-old-space-size=64 --heap-growing-percent=50 "$bin/tcod.mjs" "$@"
exec node "$bin/tcod.mjs" "$@"
*/
import "./tcod.mjs";
