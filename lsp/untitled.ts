/**
 * An editor's unsaved buffers (`untitled:` documents) as the language server checks them: in memory,
 * under a made-up path in a folder of their own, so that the compiler, the workspace and the features
 * treat them as any open file. Such a buffer has no folder to find imports from: its relative and
 * package imports are reported (TC1112, `CompileHost.unsaved`), its `std/…` imports resolved.
 */
import { parse, sep } from "node:path";

/**
 * The made-up folder: `untitled:` under the root of the file system. (A colon is not allowed in a
 * Windows file name; nothing there is read from the disk in any case: the buffer is the text.)
 */
export const UNTITLED_DIR = `${parse(process.cwd()).root}untitled:`;

export const isUntitledUri = (uri: string): boolean => uri.startsWith("untitled:");
export const isUntitledPath = (path: string): boolean => path.startsWith(UNTITLED_DIR + sep);

/** The path an `untitled:` URI is checked under (one name per URI: the rest of the URI, encoded). */
export const untitledPath = (uri: string): string => `${UNTITLED_DIR}${sep}${encodeURIComponent(uri.slice("untitled:".length))}`;
/** The URI of a path from `untitledPath`. */
export const untitledUri = (path: string): string => `untitled:${decodeURIComponent(path.slice(UNTITLED_DIR.length + 1))}`;
