// `disagg-bench cache-engine` options: LMCache's CacheEngine test (tests/disagg/
// test_nixl_cache_engine.py: --role, --host, --port, --num-chunks 10, --num-rounds 1) and the shape
// of its paged KV cache and NIXL buffer, which the test fixes (32 layers, 8 x 128, 10,000 blocks of
// 16, 256-token chunks, bf16, a 1 GiB buffer) and which can be made smaller here.
import { readArgs, type OptionSpec } from '../../../common/args/read-args.ts';
import type { MemoryKind } from '../../memory.ts';
import { UsageError, choiceOption, intOption, sizeOption } from '../common/options.ts';
import { DTYPE_BYTES, kvpipeBackends } from '../kvpipe/kvpipe-options.ts';
import { parsePipeMeeting, pipeMeetingOptionSpec, type PipeMeeting } from '../kvpipe/pipe-roles.ts';
import { LMCACHE_SHAPE, PagedKv, STAMP_BYTES } from './paged-kv.ts';

export interface CacheEngineOptions extends PipeMeeting {
  backend: (typeof kvpipeBackends)[number];
  memory?: MemoryKind;
  kv: PagedKv;
  numChunks: number;
  numRounds: number;
  /** The NIXL buffer of each side (LMCache's nixl_buffer_size, 1 GiB). */
  bufferBytes: number;
  seed: number;
  /** Test hook: the receiver flips a byte of this chunk's first piece before verifying. */
  testCorruptChunk?: number;
}

export const cacheEngineOptionSpec: OptionSpec = {
  ...pipeMeetingOptionSpec,
  backend: { type: 'string', default: 'shm' },
  memory: { type: 'string' },
  'num-chunks': { type: 'string', default: '10' },
  'num-rounds': { type: 'string', default: '1' },
  'num-layers': { type: 'string', default: String(LMCACHE_SHAPE.layers) },
  'num-heads': { type: 'string', default: String(LMCACHE_SHAPE.heads) },
  'head-size': { type: 'string', default: String(LMCACHE_SHAPE.headSize) },
  'block-size': { type: 'string', default: String(LMCACHE_SHAPE.blockSize) },
  'num-blocks': { type: 'string', default: String(LMCACHE_SHAPE.numBlocks) },
  'chunk-size': { type: 'string', default: String(LMCACHE_SHAPE.chunkSize) },
  dtype: { type: 'string', default: 'bf16' },
  'buffer-size': { type: 'string', default: '1G' },
  seed: { type: 'string', default: '42' },
  'test-corrupt-chunk': { type: 'string' },
};

export function parseCacheEngineArgs(argv: string[]): CacheEngineOptions {
  const { values } = readArgs(argv, { options: cacheEngineOptionSpec });
  const v = values as Record<string, string | undefined>;
  const int = (name: string, min = 1) => intOption(name, v[name]!, min);
  const kv = new PagedKv({
    layers: int('num-layers'),
    heads: int('num-heads'),
    headSize: int('head-size'),
    blockSize: int('block-size'),
    numBlocks: int('num-blocks'),
    chunkSize: int('chunk-size'),
    dtypeBytes: DTYPE_BYTES[choiceOption('dtype', v.dtype!, Object.keys(DTYPE_BYTES))],
  });
  if (kv.pieceBytes < STAMP_BYTES) {
    throw new UsageError(`a token's K or V of one layer is ${kv.pieceBytes} bytes (heads x head size x dtype); at least ${STAMP_BYTES} are needed to stamp it`);
  }
  const numChunks = int('num-chunks');
  // LMCache's own check, in its words
  if (numChunks > kv.maxChunks) throw new UsageError(`Number of chunks must be <= ${kv.maxChunks} (num_blocks x block_size / chunk_size)`);
  const bufferBytes = sizeOption('buffer-size', v['buffer-size']!);
  if (kv.chunkBytes > bufferBytes) throw new UsageError(`a chunk of ${kv.chunkBytes} bytes does not fit the ${bufferBytes}-byte NIXL buffer; raise --buffer-size`);
  return {
    ...parsePipeMeeting(v, 29572),
    backend: choiceOption('backend', v.backend!, kvpipeBackends),
    memory: v.memory === undefined ? undefined : choiceOption('memory', v.memory, ['host', 'gpu'] as const),
    kv,
    numChunks,
    numRounds: int('num-rounds'),
    bufferBytes,
    seed: int('seed', 0),
    testCorruptChunk: v['test-corrupt-chunk'] === undefined ? undefined : int('test-corrupt-chunk', 0),
  };
}
