// The signal of "the run is ending", in a file of its own: the main process's side
// (suite/end-workers.ts, part of the synchronous signal path) needs only this name, not the
// worker's side (interrupt.ts) and the schedulers behind it.

/**
 * What Vitest's main process sends its workers when it ends an interrupted run: a worker with a
 * session cancels, records and exits; one still loading configs dies of it (the default action).
 * Node leaves SIGUSR2 to applications.
 */
export const RUN_ENDING_SIGNAL: NodeJS.Signals = 'SIGUSR2';
