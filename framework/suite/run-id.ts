// A run's id: one for every project of one invocation, kept in DISAGG_RUN_ID so Vitest's workers
// and everything a run writes (ledger, records, the history) share it. `disagg-bench run` names its
// run before Vitest starts (its folder is named after it); the global setup otherwise.
export function newRunId(): string {
  return `run-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
}
