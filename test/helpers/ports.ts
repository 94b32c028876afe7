/** Loopback ports for tests that start servers or workers: one free now, and whether one is free again. */
import { createServer } from "node:net";

/** A port on 127.0.0.1 that nothing listens on at the moment of the call. */
export const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const a = s.address();
    s.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no port"))));
  });
});

/** Whether `port` on 127.0.0.1 can be listened on (e.g. a worker that held it has stopped). */
export const portFree = (port: number) => new Promise<boolean>((resolve) => {
  const s = createServer().once("error", () => resolve(false)).listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
});
