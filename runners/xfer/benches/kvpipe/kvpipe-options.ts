// `disagg-bench kvpipe` options: the LMCache disaggregated-prefill tests' names.
import { readArgs } from '../../../common/args/read-args.ts';
import type { BackendName } from '../../backends/types.ts';
import type { MemoryKind } from '../../memory.ts';
import { BenchOptionError, choiceOption, intOption, listOption, numberOption, sizeOption } from '../common/options.ts';
import { parsePipeMeeting, pipeMeetingOptionSpec, type PipeMeeting } from './pipe-roles.ts';

export const DTYPE_BYTES: Record<string, number> = { bf16: 2, bfloat16: 2, fp16: 2, float16: 2, fp32: 4, float32: 4, fp8: 1, uint8: 1 };
export const kvpipeBackends = ['shm', 'ucx', 'cuda', 'libfabric'] as const;
export const DEFAULT_BUFFER_BYTES = 4 * 1024 ** 3;

export interface KvpipeOptions extends PipeMeeting {
  backend: (typeof kvpipeBackends)[number];
  memory?: MemoryKind;
  /** The receiver's transfer buffer; undefined = 4 GiB, capped to what host memory allows. */
  bufferSize?: number;
  numObjs: number;
  objectBytes: number;
  /** The shape objectBytes came from, for the log ('[32, 2, 256, 1024] bf16'); undefined with --obj-size. */
  objectShape?: string;
  /** Objects per commit; undefined = as many as the buffer holds. */
  batchSize?: number;
  /** Pipe v2's --simulate-work: sender 50 ms, receiver 20 ms per 10 objects, inside the timed round. */
  simulateWork: boolean;
  /** Channel v2's --simulate-workload: the sender sleeps 50 ms after each batch, left out of the timed throughput. */
  simulateWorkload: boolean;
  /** Multiplies the simulated work (sender 50 ms, receiver 20 ms per 10 objects). */
  workScale: number;
  numRounds: number;
  testIgnoreCredits: boolean;
  testReceiverDelayMs: number;
  testCorruptObject?: number;
}

export function parseKvpipeArgs(argv: string[]): KvpipeOptions {
  const { values: v } = readArgs(argv, {
    options: {
      ...pipeMeetingOptionSpec,
      backend: { type: 'string', default: 'shm' },
      memory: { type: 'string' },
      'buffer-size': { type: 'string' },
      'num-objs': { type: 'string', default: '500' },
      'obj-shape': { type: 'string', default: '32,2,256,1024' },
      dtype: { type: 'string', default: 'bf16' },
      'obj-size': { type: 'string' },
      'batch-size': { type: 'string' },
      'simulate-work': { type: 'boolean', default: false },
      'simulate-workload': { type: 'boolean', default: false },
      'work-scale': { type: 'string', default: '1' },
      'num-rounds': { type: 'string', default: '1' },
      'test-ignore-credits': { type: 'boolean', default: false },
      'test-receiver-delay-ms': { type: 'string', default: '0' },
      'test-corrupt-object': { type: 'string' },
    },
  });
  const dtype = choiceOption('dtype', v.dtype, Object.keys(DTYPE_BYTES));
  const shape = listOption('obj-shape', v['obj-shape'], (n, raw) => intOption(n, raw));
  const objectBytes = v['obj-size'] !== undefined ? sizeOption('obj-size', v['obj-size']) : shape.reduce((a, b) => a * b, DTYPE_BYTES[dtype]);
  if (objectBytes < 1) throw new BenchOptionError('objects must be at least 1 byte');
  return {
    ...parsePipeMeeting(v, 29571),
    backend: choiceOption('backend', v.backend, kvpipeBackends) as BackendName as KvpipeOptions['backend'],
    memory: v.memory === undefined ? undefined : choiceOption('memory', v.memory, ['host', 'gpu'] as const),
    bufferSize: v['buffer-size'] === undefined ? undefined : sizeOption('buffer-size', v['buffer-size']),
    numObjs: intOption('num-objs', v['num-objs']),
    objectBytes,
    objectShape: v['obj-size'] !== undefined ? undefined : `[${shape.join(', ')}] ${dtype}`,
    batchSize: v['batch-size'] === undefined ? undefined : intOption('batch-size', v['batch-size']),
    simulateWork: v['simulate-work'],
    simulateWorkload: v['simulate-workload'],
    workScale: numberOption('work-scale', v['work-scale']),
    numRounds: intOption('num-rounds', v['num-rounds']),
    testIgnoreCredits: v['test-ignore-credits'],
    testReceiverDelayMs: numberOption('test-receiver-delay-ms', v['test-receiver-delay-ms']),
    testCorruptObject: v['test-corrupt-object'] === undefined ? undefined : intOption('test-corrupt-object', v['test-corrupt-object'], 0),
  };
}
