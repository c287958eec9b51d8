// OUTPUT_PATH that a run cannot write into (output-path.ts checks it): a file of its own, so that
// the environment check can tell this error apart without loading the check and the results
// modules it reads (a listing never checks OUTPUT_PATH).
import { DisaggBenchError } from '../../runners/common/errors.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export class OutputPathError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  override name = 'OutputPathError';
  /** `outputPath`: OUTPUT_PATH's folder, the place of every problem. */
  constructor(message: string, outputPath: string) {
    super(message, { file: outputPath, place: 'OUTPUT_PATH' });
  }
}
