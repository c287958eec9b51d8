// The options both CT perftests take (CONFIG, --verify-buffers, --json-output-path, --backend,
// --cuda-copy),
// parsed once; each command adds its own options to the same parseArgs call.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { backendNames, type BackendName } from '../backends/types.ts';
import type { BackendOptions } from '../backends/registry.ts';
import { BenchOptionError, choiceOption } from './common/options.ts';
import { cudaCopyPaths, type CudaCopyPath } from '../device-copy/copy-path.ts';

export interface CtCommonOptions {
  configFile: string;
  verifyBuffers: boolean;
  jsonOutputPath?: string;
  /** Default: cuda for GPU memory, shm for host memory. */
  backend?: BackendName;
  /** backend cuda: copy engines, the copy kernel, or per plan (default: XFER_CUDA_COPY, else auto). */
  cudaCopy?: CudaCopyPath;
}

type OwnOptions = NonNullable<ParseArgsConfig['options']>;

/** The common options, and the raw values of the command's own (`own`). */
export function parseCtArgs(argv: string[], usage: string, own: OwnOptions = {}): { common: CtCommonOptions; values: Record<string, string | boolean | undefined> } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'verify-buffers': { type: 'boolean', default: false },
      'json-output-path': { type: 'string' },
      backend: { type: 'string' },
      'cuda-copy': { type: 'string' },
      ...own,
    },
  });
  if (positionals.length !== 1) throw new BenchOptionError(`expected one CONFIG file, got ${positionals.length}\n${usage}`);
  const raw = values as Record<string, string | boolean | undefined>;
  const backend = raw.backend as string | undefined;
  return {
    common: {
      configFile: positionals[0],
      verifyBuffers: raw['verify-buffers'] === true,
      jsonOutputPath: raw['json-output-path'] as string | undefined,
      backend: backend === undefined ? undefined : choiceOption('backend', backend, backendNames),
      cudaCopy: raw['cuda-copy'] === undefined ? undefined : choiceOption('cuda-copy', raw['cuda-copy'] as string, cudaCopyPaths),
    },
    values: raw,
  };
}

/** The engine options the common flags ask for; --cuda-copy with another backend is refused. */
export function ctBackendOptions(o: CtCommonOptions, backend: BackendName): BackendOptions {
  if (o.cudaCopy === undefined) return {};
  if (backend !== 'cuda') throw new BenchOptionError(`--cuda-copy chooses how the cuda backend copies; this run's backend is ${backend}`);
  return { cuda: { copy: o.cudaCopy } };
}
