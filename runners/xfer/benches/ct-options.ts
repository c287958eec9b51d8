// The options both CT perftests take, read once; each command adds its own options to the same
// spec. kvbench's (NIXL benchmark/kvbench main.py, click, so read in the argument layer's click
// style: a value option takes the next word whatever it is): CONFIG,
// --verify-buffers/--no-verify-buffers and --print-recv-buffers/--no-print-recv-buffers (both off
// by default, the last of a pair wins), --json-output-path; this project's: --backend, --cuda-copy.
import { backendNames, type BackendName } from '../backends/types.ts';
import type { BackendOptions } from '../backends/registry.ts';
import { UsageError, choiceOption } from './common/options.ts';
import { cudaCopyPaths, type CudaCopyPath } from '../device-copy/copy-path.ts';
import { readArgs, type ArgSpec, type OptionSpec } from '../../common/args/read-args.ts';

export interface CtCommonOptions {
  configFile: string;
  verifyBuffers: boolean;
  /** Each rank prints its receive buffers after the run (kvbench prints them only while verifying). */
  printRecvBuffers: boolean;
  jsonOutputPath?: string;
  /** Default: cuda for GPU memory, shm for host memory. */
  backend?: BackendName;
  /** backend cuda: copy engines, the copy kernel, or per plan (default: XFER_CUDA_COPY, else auto). */
  cudaCopy?: CudaCopyPath;
}

/** click's `--x/--no-x` pairs: off unless given, the last one on the line wins. */
const FLAG_PAIRS = ['verify-buffers', 'print-recv-buffers'] as const;

/** The words of a CT perftest: the common options and the command's own (`own`). */
export function ctArgSpec(own: OptionSpec = {}): ArgSpec<OptionSpec, true> {
  const pairs: OptionSpec = Object.fromEntries(FLAG_PAIRS.flatMap((f) => [[f, { type: 'boolean' }], [`no-${f}`, { type: 'boolean' }]]));
  return {
    style: 'click',
    positionals: true,
    switches: FLAG_PAIRS,
    options: { ...pairs, 'json-output-path': { type: 'string' }, backend: { type: 'string' }, 'cuda-copy': { type: 'string' }, ...own },
  };
}

/** The common options, and the raw values of the command's own (`own`). */
export function parseCtArgs(argv: string[], usage: string, own: OptionSpec = {}): { common: CtCommonOptions; values: Record<string, string | boolean | undefined> } {
  const { values, positionals } = readArgs(argv, ctArgSpec(own));
  if (positionals.length !== 1) throw new UsageError(`expected one CONFIG file, got ${positionals.length}\n${usage}`);
  const raw = values as Record<string, string | boolean | undefined>;
  const backend = raw.backend as string | undefined;
  return {
    common: {
      configFile: positionals[0],
      verifyBuffers: raw['verify-buffers'] === true,
      printRecvBuffers: raw['print-recv-buffers'] === true,
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
  if (backend !== 'cuda') throw new UsageError(`--cuda-copy chooses how the cuda backend copies; this run's backend is ${backend}`);
  return { cuda: { copy: o.cudaCopy } };
}
