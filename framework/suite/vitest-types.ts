// What the suite adds to Vitest's types: the values the global setup provides to the test file
// (`inject`), and what each config test keeps in its meta for the reporter and the run's end. In a
// file of its own: a test file may export nothing (Vitest would run an importer's tests again).
import type { Metric } from '../metrics/metric.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    runId: string;
    /** The test-type projects this invocation runs, in order (after `--project`). */
    runProjects: string[];
  }
  interface TaskMeta {
    disagg?: {
      jobId?: string;
      state: string;
      metrics: Metric[];
      files: string[];
      /** Why the test did not run to its end (interrupted, held by another run). */
      notRun?: string;
    };
  }
}
