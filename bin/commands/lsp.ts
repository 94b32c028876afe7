import { Option, type Command } from "commander";
import { DEFAULT_MAX_MESSAGE_BYTES, FrameGuard, MAX_MESSAGE_ENV, maxMessageBytesFrom } from "../../lsp/frame-guard.js";
import { UsageError } from "../../plan/errors.js";

/** The largest process id (pid_t is a signed 32-bit int). */
const MAX_PID = 2 ** 31 - 1;

export function register(program: Command): void {
  program.command("lsp")
    .description("Run the tcod language server over stdio (for editors; see editors/vscode).")
    .option("--stdio", "talk over stdin/stdout (the default and only transport)")
    // Language clients (vscode-languageclient among them) pass the editor's process id, so that the
    // server exits with the editor; vscode-languageserver reads it from the command line itself.
    .addOption(new Option("--clientProcessId <pid>", "the editor's process id").hideHelp())
    .action(async (o: { clientProcessId?: string }) => {
      // A process id is positive and fits a C int (pid_t): 0 or a huge number would watch no editor, and
      // the server would outlive it.
      const pid = o.clientProcessId !== undefined && /^\d+$/.test(o.clientProcessId) ? Number(o.clientProcessId) : NaN;
      if (o.clientProcessId !== undefined && !(pid >= 1 && pid <= MAX_PID)) {
        throw new UsageError(`--clientProcessId ${o.clientProcessId}: expected a process id, a whole number from 1 to ${MAX_PID}`, { hint: "Language clients pass it for you; start the server with `tcod lsp --stdio`." });
      }
      const maxMessage = maxMessageBytesFrom(process.env[MAX_MESSAGE_ENV]);
      if (typeof maxMessage !== "number") {
        throw new UsageError(maxMessage.problem, { hint: `Set it to the largest message, in MiB, the server may take from the editor (default ${DEFAULT_MAX_MESSAGE_BYTES / 1048576}), or unset it.` });
      }
      const [{ startServer }, lib] = await Promise.all([import("../../lsp/server.js"), import("vscode-languageserver/node")]);
      // A CommonJS package: bundled, its exports are the namespace's default.
      const { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter } = (lib as unknown as { default?: typeof lib }).default ?? lib;
      const fail = (why: string) => {
        process.stderr.write(`tcod lsp: ${why}; exiting so that the editor restarts the server\n`);
        process.exit(1);
      };
      // stdio whether or not --stdio was given (it is the default): the library alone would refuse to
      // start without a transport flag.
      // A Content-Length over the cap (99999999999, say) is refused at once, before the reader sees
      // it (lsp/frame-guard.ts): the reader would wait for that many bytes, then allocate them.
      const reader = new StreamMessageReader(process.stdin.pipe(new FrameGuard(maxMessage, fail)));
      // A frame the reader cannot take (a Content-Length that is not a number, a body that is not
      // JSON) leaves it out of step with the stream: every later message is misread and the server
      // would answer nothing, silently. Say so and exit, so that the editor restarts the server.
      // A Content-Length within the cap but larger than what follows makes the reader wait for the
      // rest; once nothing has come for a while (the reader's partial-message timeout, 10 s), the
      // same. (While the client keeps writing, its messages are taken as that body: undetectable.)
      reader.onError((e) => fail(`unreadable message from the client (${e.message.split("\n")[0]})`));
      reader.onPartialMessage((p) => fail(`the client sent part of a message and nothing more for ${p.waitingTime / 1000} s (a Content-Length longer than the message?)`));
      startServer(createConnection(ProposedFeatures.all, reader, new StreamMessageWriter(process.stdout)));
    });
}
