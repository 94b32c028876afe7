/**
 * The V8 flags `tcod lsp` runs under, as bin/tcod and the VS Code extension (which start Node.js
 * themselves) pass them; a test checks that both pass these.
 *
 * `--min-semi-space-size=16`: the young generation starts at 16 MB per semi-space (V8's maximum
 * here) rather than 1 MB. A keystroke allocates a few hundred KB; from 1 MB, a new server scavenges
 * every few keystrokes in its first minute and the space grows only as objects survive, so more of
 * each scavenge's survivors are promoted (and marked later by major GCs). The cost is up to ~30 MB
 * of address space, of which a keystroke's garbage touches a part: RSS +5-10 MB measured
 * (bench/results/lsp-incremental.md, session 10). Not settable from inside the process: V8 sizes
 * the heap when it starts.
 */
export const LSP_NODE_FLAGS: readonly string[] = ["--min-semi-space-size=16"];
