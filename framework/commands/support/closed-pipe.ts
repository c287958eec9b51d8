// Output that survives a closed pipe: `disagg-bench list | head -1` ends quietly when head stops
// reading, instead of Node's uncaught EPIPE with a stack trace. The process ends at once with the
// exit code it had so far (0 unless the command already failed): the reader asked for no more,
// which is not the command's failure, and nothing after it could be seen anyway.
import type { Writable } from 'node:stream';

/** Ends the process quietly when `stream`'s reader goes away (EPIPE); other write errors stay errors. */
export function endQuietlyOnClosedPipe(stream: Writable & { fd?: number }, exit: (code: number) => void = (code) => process.exit(code)): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    else throw error;
  });
}
