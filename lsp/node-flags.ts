/**
 * The V8 flags `tcod lsp` runs under, as bin/tcod and the VS Code extension (which start Node.js
 * themselves) pass them; a test checks that both pass these.
 *
 * `--min-semi-space-size=16`: the young generation starts at 16 MB per semi-space (V8's maximum
 * here) rather than 1 MB. A keystroke allocates a few hundred KB; from 1 MB, a new server scavenges
 * every few keystrokes in its first minute and the space grows only as objects survive, so more of
 * each scavenge's survivors are promoted (and marked later by major GCs). The cost is up to ~30 MB
 * of address space, of which a keystroke's garbage touches a part: RSS +5-10 MB measured
 * (bench/results/lsp-incremental.md, session 10).
 *
 * `--initial-old-space-size=64`: the old generation's first limit is 64 MB, so a new server does not
 * run a major GC at each step of its heap's growth to its working size (the warm-up's workspaces,
 * then the user's: ~60 MB); each one's concurrent marking was CPU in the first keystrokes. RSS +6 MB
 * after 100 keystrokes, +7 MB after 1,000 (a first limit of 128 MB: +45 MB after 1,000).
 *
 * `--heap-growing-percent=50`: after a major GC, the old generation may grow to 1.5 times what
 * survived it before the next, where V8's own factor (up to 4, from its GC and allocation speeds)
 * let a server holding a large file's analysis (~250 MB live with the code) grow to ~1 GB: each
 * keystroke there makes a new analysis of the file, ~100 MB promoted, garbage at the next one.
 * Measured on a 3 MB file, 20 keystrokes (bench/results/lsp-memory.md): peak RSS 942 → 467 MB,
 * 2.1 times `tcod check`'s under the same flags; the process's CPU time +19% (more major GCs).
 *
 * The first two cannot be set from inside the process: V8 sizes the heap when it starts.
 */
export const LSP_NODE_FLAGS: readonly string[] = ["--min-semi-space-size=16", "--initial-old-space-size=64", "--heap-growing-percent=50"];
