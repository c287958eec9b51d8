// Every option of every `disagg-bench` command either changes what runs, or is refused with its
// reason, or is announced (no accepted flag is ignored silently). The options are
// discovered from the commands themselves (each parseArgs call is recorded), so a new option with
// no entry here fails this test until it says what it does. For the benchmark commands, "changes
// what runs" means: the parsed options with the flag differ from those without it (`pre` gives
// the flags it needs beside it); "announced" means it adds a line the run prints (notes, ignored).
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it, vi } from 'vitest';

const recorded: Record<string, unknown>[] = [];
vi.mock('node:util', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:util')>();
  return {
    ...real,
    parseArgs: (config: Parameters<typeof real.parseArgs>[0]) => {
      recorded.push(config?.options ?? {});
      return real.parseArgs(config);
    },
  };
});

const { parseSweepArgs } = await import('../../runners/xfer/benches/sweep/sweep-options.ts');
const { parseEpArgs } = await import('../../runners/xfer/benches/ep/ep-options.ts');
const { epNodeWorld } = await import('../../runners/xfer/benches/ep/ep-nodes.ts');
const { parseKvpipeArgs } = await import('../../runners/xfer/benches/kvpipe/kvpipe-options.ts');
const { parseCtPerftestArgs } = await import('../../runners/xfer/benches/ct-perftest.ts');
const { parseSequentialArgs } = await import('../../runners/xfer/benches/sequential-ct-perftest.ts');
const { parseMatgenArgs } = await import('../../runners/xfer/benches/matgen-cli.ts');
const { parseGpuCheckArgs } = await import('../../runners/xfer/gpu-check.ts');
const { parseCacheEngineArgs } = await import('../../runners/xfer/benches/cache-engine/cache-engine-options.ts');
const { takeRanksOption } = await import('../../runners/xfer/benches/common/rank-launch.ts');
const { takeUcxFlags } = await import('../../runners/xfer/benches/common/ucx-flags.ts');
const serveBench = await import('../../runners/trtllm/serve-bench/options.ts');
const { parseServerArgs } = await import('../../runners/llamacpp/server.ts');
const { parseRouterArgs } = await import('../../runners/llamacpp/router.ts');
const nixlTool = await import('../../runners/nixl/cli.ts');
const { unfinishedJobs } = await import('../../framework/jobs/ledger.ts');
const { commands } = await import('../../framework/cli.ts');
const { subcommands: historySubcommands } = await import('../../framework/commands/history.ts');

/** How one option shows its effect: `add` with `pre` vs `pre` alone, or a refusal matching `refused`. */
interface Probe {
  add: string[];
  pre?: string[];
  /** Replaces the command's base arguments for this option. */
  base?: string[];
  refused?: RegExp;
}

interface Walk {
  command: string;
  /** Runs the command's parser so its parseArgs options are recorded (an unknown flag stops it there). */
  discover: () => unknown;
  /** Options not given to parseArgs (taken before it, or parsed by hand). */
  extra?: string[];
  /** The parsed options: what the run does. */
  parse: (argv: string[]) => unknown;
  base?: string[];
  probes: Record<string, Probe>;
}

const flag = (name: string, ...value: string[]): Probe => ({ add: [`--${name}`, ...value] });
const refused = (name: string, value: string[], why: RegExp): Probe => ({ add: [`--${name}`, ...value], refused: why });

function discovered(walk: Walk): string[] {
  recorded.length = 0;
  try {
    walk.discover();
  } catch {
    // the probe flag is unknown: parseArgs threw after being called, which is all we need
  }
  return [...new Set([...recorded.flatMap((o) => Object.keys(o)), ...(walk.extra ?? [])])].sort();
}

const probeFlag = ['--zz-walk-probe'];
/** How the two sides of the LMCache-style tests meet (kvpipe, cache-engine). */
const meetingProbes: Record<string, Probe> = {
  role: flag('role', 'sender'),
  'master-addr': { pre: ['--role', 'sender'], add: ['--master-addr', '10.0.0.1'] },
  'master-port': { pre: ['--role', 'sender'], add: ['--master-port', '29000'] },
  host: { pre: ['--role', 'sender'], add: ['--host', '10.0.0.2'] },
  port: { pre: ['--role', 'sender'], add: ['--port', '5556'] },
};
const cfg = ['cfg.yaml'];
/** The ucx backend's flags, which every bench command takes out before its own parser. */
const ucxExtra = ['ucx-error-handling', 'ucx_error_handling', 'ucx-memory', 'ucx_memory', 'ucx-post', 'ucx_post', 'ucx-completion', 'ucx_completion'];
const ucxProbes: Record<string, Probe> = {
  'ucx-error-handling': flag('ucx-error-handling', 'peer'),
  ucx_error_handling: flag('ucx_error_handling', 'none'),
  'ucx-memory': flag('ucx-memory', 'registered'),
  ucx_memory: flag('ucx_memory', 'registered'),
  'ucx-post': flag('ucx-post', 'nixl'),
  ucx_post: flag('ucx_post', 'memh'),
  'ucx-completion': flag('ucx-completion', 'flush'),
  ucx_completion: flag('ucx_completion', 'flush'),
};
/** A command's parse after its ucx flags went into an environment of their own (what the ranks inherit). */
const withUcx = (parse: (argv: string[]) => unknown) => (argv: string[]) => {
  const env: NodeJS.ProcessEnv = {};
  const rest = takeUcxFlags(argv, env);
  return { parsed: parse(rest), env };
};

const walks: Walk[] = [
  {
    command: 'llama-server',
    discover: () => parseServerArgs(probeFlag),
    parse: parseServerArgs,
    base: ['--role', 'agg', '--model', 'dummy:tiny'],
    probes: {
      role: { pre: ['--cluster', 'c.yaml'], add: ['--role', 'ctx'] },
      model: flag('model', 'm.gguf'),
      host: flag('host', '0.0.0.0'),
      port: flag('port', '9000'),
      config: flag('config', 'w.yaml'),
      cluster: flag('cluster', 'c.yaml'),
      index: flag('index', '2'),
    },
  },
  {
    command: 'llama-router',
    discover: () => parseRouterArgs(probeFlag),
    parse: parseRouterArgs,
    base: ['--config', 'c.yaml'],
    probes: { config: flag('config', 'd.yaml'), host: flag('host', '0.0.0.0'), port: flag('port', '9000') },
  },
  {
    command: 'sweep',
    discover: () => parseSweepArgs(probeFlag),
    extra: ['ranks', ...ucxExtra],
    parse: withUcx((argv) => ({ ...parseSweepArgs(takeRanksOption(argv).rest), ranks: takeRanksOption(argv).ranks })),
    probes: {
      ranks: flag('ranks', '4'),
      ...ucxProbes,
      pipeline_depth: flag('pipeline_depth', '4'),
      backend: flag('backend', 'ucx'),
      initiator_seg_type: flag('initiator_seg_type', 'VRAM'),
      target_seg_type: flag('target_seg_type', 'VRAM'),
      scheme: flag('scheme', 'tp'),
      op_type: flag('op_type', 'READ'),
      check_consistency: flag('check_consistency'),
      total_buffer_size: flag('total_buffer_size', '1G'),
      start_block_size: flag('start_block_size', '8K'),
      max_block_size: flag('max_block_size', '1M'),
      start_batch_size: { pre: ['--max_batch_size', '4'], add: ['--start_batch_size', '2'] },
      max_batch_size: flag('max_batch_size', '4'),
      num_iter: flag('num_iter', '20'),
      warmup_iter: flag('warmup_iter', '5'),
      large_blk_iter_ftr: flag('large_blk_iter_ftr', '4'),
      num_threads: flag('num_threads', '2'),
      num_initiator_dev: flag('num_initiator_dev', '2'),
      num_target_dev: flag('num_target_dev', '2'),
      expect: flag('expect', '64M:1'),
      tolerance: flag('tolerance', '0.2'),
      link_bw: flag('link_bw', '25'),
      test_corrupt_rank: flag('test_corrupt_rank', '1'),
      mode: flag('mode', 'MG'),
      enable_pt: flag('enable_pt'),
      recreate_xfer: flag('recreate_xfer'),
      reregister_mem: flag('reregister_mem'),
      enable_vmm: flag('enable_vmm'),
      use_hugepages: flag('use_hugepages'),
      progress_threads: refused('progress_threads', ['2'], /--progress_threads 2: NIXL's UCX threadpool/),
      worker_type: refused('worker_type', ['nvshmem'], /--worker_type nvshmem: only nixl/),
      device_list: flag('device_list', 'mlx5_0'),
      runtime_type: flag('runtime_type', 'ASIO'),
      etcd_endpoints: flag('etcd_endpoints', 'http://etcd:2379'),
      benchmark_group: flag('benchmark_group', 'g'),
      asio_address: flag('asio_address', '10.0.0.1'),
      asio_port: flag('asio_port', '23456'),
      config_file: refused('config_file', ['x.toml'], /TOML config files are not read here/),
    },
  },
  {
    command: 'ep',
    discover: () => parseEpArgs(probeFlag),
    extra: ['ranks', 'num-processes', 'world-size', 'rank', 'master-addr', 'master-port', ...ucxExtra],
    parse: withUcx((argv) => {
      const nodes = epNodeWorld(argv, {});
      const { ranks, rest } = takeRanksOption(nodes.rest);
      return { ...parseEpArgs(rest), ranks, node: nodes.node };
    }),
    probes: {
      ranks: flag('ranks', '4'),
      ...ucxProbes,
      'num-processes': flag('num-processes', '4'),
      'world-size': { pre: ['--num-processes', '2'], add: ['--world-size', '2'] },
      rank: { pre: ['--num-processes', '2', '--world-size', '2', '--master-addr', 'n0'], add: ['--rank', '1'] },
      'master-addr': { pre: ['--num-processes', '2'], add: ['--master-addr', 'n0'] },
      'master-port': { pre: ['--num-processes', '2'], add: ['--master-port', '29999'] },
      mode: flag('mode', 'dispatch'),
      'control-plane': flag('control-plane'),
      test: flag('test', 'connect'),
      tokens: flag('tokens', '128'),
      'num-tokens': flag('num-tokens', '128'),
      hidden: flag('hidden', '7168'),
      'experts-per-rank': flag('experts-per-rank', '36'),
      topk: flag('topk', '8'),
      warmup: flag('warmup', '3'),
      iters: flag('iters', '50'),
      rounds: { pre: ['--control-plane'], add: ['--rounds', '3'] },
      timeout: flag('timeout', '30'),
      seed: flag('seed', '7'),
      layout: flag('layout', 'per-message'),
      backend: flag('backend', 'ucx'),
      'nvlink-backend': flag('nvlink-backend', 'none'),
      memory: flag('memory', 'gpu'),
      'initiated-by': { pre: ['--backend', 'cuda'], add: ['--initiated-by', 'host'] },
      'use-tcp-store': flag('use-tcp-store'),
      'skip-nic-discovery': flag('skip-nic-discovery'),
      'use-etcd': refused('use-etcd', [], /--use-etcd: the engine's ranks exchange their metadata through its own TCP store/),
      'discover-nics': refused('discover-nics', [], /--discover-nics: GPU-NIC topology discovery/),
      'test-corrupt-rank': flag('test-corrupt-rank', '1'),
      'test-silent-rank': flag('test-silent-rank', '1'),
    },
  },
  {
    command: 'kvpipe',
    discover: () => parseKvpipeArgs(probeFlag),
    extra: ['ranks', ...ucxExtra],
    parse: withUcx((argv) => ({ ...parseKvpipeArgs(takeRanksOption(argv).rest), ranks: takeRanksOption(argv).ranks })),
    probes: {
      ranks: flag('ranks', '2'),
      ...ucxProbes,
      ...meetingProbes,
      backend: flag('backend', 'ucx'),
      memory: flag('memory', 'gpu'),
      'buffer-size': flag('buffer-size', '64M'),
      'num-objs': flag('num-objs', '16'),
      'obj-shape': flag('obj-shape', '2,2,256,1024'),
      dtype: flag('dtype', 'fp32'),
      'obj-size': flag('obj-size', '8M'),
      'batch-size': flag('batch-size', '4'),
      'simulate-work': flag('simulate-work'),
      'simulate-workload': flag('simulate-workload'),
      'work-scale': flag('work-scale', '0.1'),
      'num-rounds': flag('num-rounds', '2'),
      'test-ignore-credits': flag('test-ignore-credits'),
      'test-receiver-delay-ms': flag('test-receiver-delay-ms', '100'),
      'test-corrupt-object': flag('test-corrupt-object', '1'),
    },
  },
  {
    command: 'ct-perftest',
    discover: () => parseCtPerftestArgs([...cfg, ...probeFlag]),
    extra: ['ranks', ...ucxExtra],
    parse: withUcx((argv) => ({ ...parseCtPerftestArgs(takeRanksOption(argv).rest), ranks: takeRanksOption(argv).ranks })),
    base: cfg,
    probes: {
      ranks: flag('ranks', '4'),
      ...ucxProbes,
      'verify-buffers': flag('verify-buffers'),
      'json-output-path': flag('json-output-path', 'out.json'),
      backend: flag('backend', 'ucx'),
      'cuda-copy': flag('cuda-copy', 'kernel'),
      'print-recv-buffers': flag('print-recv-buffers'),
      'no-print-recv-buffers': { pre: ['--print-recv-buffers'], add: ['--no-print-recv-buffers'] },
      'no-verify-buffers': { pre: ['--verify-buffers'], add: ['--no-verify-buffers'] },
    },
  },
  {
    command: 'sequential-ct-perftest',
    discover: () => parseSequentialArgs([...cfg, ...probeFlag]),
    extra: ['ranks', ...ucxExtra],
    parse: withUcx((argv) => ({ ...parseSequentialArgs(takeRanksOption(argv).rest), ranks: takeRanksOption(argv).ranks })),
    base: cfg,
    probes: {
      ranks: flag('ranks', '4'),
      ...ucxProbes,
      'verify-buffers': flag('verify-buffers'),
      'json-output-path': flag('json-output-path', 'out.json'),
      backend: flag('backend', 'ucx'),
      'cuda-copy': flag('cuda-copy', 'kernel'),
      'sleep-scale': flag('sleep-scale', '0.5'),
      'isolation-iters': flag('isolation-iters', '5'),
      'warmup-iters': flag('warmup-iters', '5'),
      'workload-iters': flag('workload-iters', '5'),
      'share-buffers': flag('share-buffers'),
      'sleep-before-launch': flag('sleep-before-launch'),
      'print-recv-buffers': flag('print-recv-buffers'),
      'no-print-recv-buffers': { pre: ['--print-recv-buffers'], add: ['--no-print-recv-buffers'] },
      'no-verify-buffers': { pre: ['--verify-buffers'], add: ['--no-verify-buffers'] },
    },
  },
  {
    command: 'matgen',
    discover: () => parseMatgenArgs(probeFlag),
    parse: parseMatgenArgs,
    base: ['--results-dir', '/tmp/m', '--num-prefill-nodes', '1', '--num-decode-nodes', '1', '--model', 'llama-405b'],
    probes: {
      ...Object.fromEntries(
        [
          ['num-user-requests', '7'], ['batch-size', '2'], ['num-prefill-nodes', '2'], ['num-decode-nodes', '2'], ['prefill-tp', '2'],
          ['prefill-pp', '2'], ['prefill-cp', '2'], ['decode-tp', '2'], ['decode-pp', '2'], ['decode-cp', '2'], ['model', 'qwen3-30B'],
          ['isl-mean', '500'], ['isl-scale', '50'], ['min-isl', '100'], ['max-isl', '90000'], ['max-batch-mem', '1000'], ['ppn', '4'],
          ['rail-optimized'], ['compute-model', 'per-sequence'], ['seed', '9'], ['results-dir', '/tmp/other'], ['mem-type', 'cpu'], ['xfer-op', 'READ'], ['shards', '2'],
          ['pair-workers', 'round-robin'], ['cell-format', 'upstream'],
        ].map(([name, ...value]) => [name, flag(name, ...value)]),
      ),
      'no-rail-optimized': { pre: ['--rail-optimized'], add: ['--no-rail-optimized'] },
      // without --model the shape is given whole; each value then changes it
      ...Object.fromEntries(
        ['hidden-size', 'num-layers', 'num-heads', 'num-kv-heads', 'dtype-size'].map((name) => [
          name,
          { base: ['--results-dir', '/tmp/m', '--num-prefill-nodes', '1', '--num-decode-nodes', '1', '--hidden-size', '1024', '--num-layers', '4', '--num-heads', '8', '--num-kv-heads', '2', '--dtype-size', '2'], add: [`--${name}`, '16'] },
        ]),
      ),
    },
  },
  {
    command: 'cache-engine',
    discover: () => parseCacheEngineArgs(probeFlag),
    extra: ['ranks', ...ucxExtra],
    parse: withUcx((argv) => ({ ...parseCacheEngineArgs(takeRanksOption(argv).rest), ranks: takeRanksOption(argv).ranks })),
    probes: {
      ranks: flag('ranks', '2'),
      ...ucxProbes,
      ...meetingProbes,
      backend: flag('backend', 'ucx'),
      memory: flag('memory', 'gpu'),
      'num-chunks': flag('num-chunks', '500'),
      'num-rounds': flag('num-rounds', '5'),
      'num-layers': flag('num-layers', '16'),
      'num-heads': flag('num-heads', '4'),
      'head-size': flag('head-size', '64'),
      'block-size': flag('block-size', '32'),
      'num-blocks': flag('num-blocks', '20000'),
      'chunk-size': flag('chunk-size', '128'),
      dtype: flag('dtype', 'fp32'),
      'buffer-size': flag('buffer-size', '2G'),
      seed: flag('seed', '7'),
      'test-corrupt-chunk': flag('test-corrupt-chunk', '1'),
    },
  },
  {
    command: 'gpu-check',
    discover: () => parseGpuCheckArgs(probeFlag),
    parse: parseGpuCheckArgs,
    probes: { 'gpus-per-node': flag('gpus-per-node', '2'), 'ranks-per-node': flag('ranks-per-node', '2'), 'ranks-may-share-gpu': flag('ranks-may-share-gpu') },
  },
  {
    command: 'serve-bench',
    discover: () => serveBench.parseServeBenchArgs(['--model', 'm', ...probeFlag]),
    parse: serveBench.parseServeBenchArgs,
    base: ['--model', 'm'],
    probes: {
      backend: flag('backend', 'openai-chat'),
      model: flag('model', 'other'),
      host: flag('host', '10.0.0.1'),
      port: flag('port', '9000'),
      'base-url': flag('base-url', 'http://h:1'),
      endpoint: flag('endpoint', '/v1/chat/completions'),
      'dataset-name': refused('dataset-name', ['sharegpt'], /--dataset-name: only "random"/),
      'random-input-len': flag('random-input-len', '10'),
      'random-output-len': flag('random-output-len', '10'),
      'random-range-ratio': flag('random-range-ratio', '0.5'),
      'num-prompts': flag('num-prompts', '10'),
      'max-concurrency': flag('max-concurrency', '4'),
      'request-rate': refused('request-rate', ['10'], /--request-rate: only "inf"/),
      seed: flag('seed', '1'),
      'percentile-metrics': flag('percentile-metrics', 'ttft'),
      'metric-percentiles': flag('metric-percentiles', '50,99'),
      'result-dir': { pre: ['--save-result'], add: ['--result-dir', '/tmp/r'] },
      'result-filename': { pre: ['--save-result'], add: ['--result-filename', 'r.json'] },
      'request-timeout': flag('request-timeout', '60'),
      'ignore-eos': flag('ignore-eos'),
      'save-detailed': flag('save-detailed'),
      'save-result': flag('save-result', 'out.json'),
      'nv-sa': flag('nv-sa'),
      'random-ids': flag('random-ids'),
      'random-vocab-size': { pre: ['--random-ids'], add: ['--random-vocab-size', '1000'] },
      // benchmark_serving's flags that mean nothing here: announced on stderr (ignored list)
      'no-test-input': flag('no-test-input'),
      'disable-tqdm': flag('disable-tqdm'),
      'trust-remote-code': flag('trust-remote-code'),
      tokenizer: flag('tokenizer', '/models/x'),
      'tokenizer-mode': flag('tokenizer-mode', 'slow'),
      'served-model-name': flag('served-model-name', 'x'),
      burstiness: flag('burstiness', '1.0'),
      'use-chat-template': flag('use-chat-template'),
    },
  },
];

describe('every option of every command changes what runs, or is refused or announced', () => {
  it.each(walks.map((w) => [w.command, w] as const))('%s', (_name, walk) => {
    const options = discovered(walk);
    expect(options, 'options without an entry here (say what each does)').toEqual(Object.keys(walk.probes).sort());
    for (const [option, probe] of Object.entries(walk.probes)) {
      const parse = (argv: string[]) => walk.parse([...(probe.base ?? walk.base ?? []), ...argv]);
      const argv = [...(probe.pre ?? []), ...probe.add];
      if (probe.refused) {
        expect(() => parse(argv), `--${option}`).toThrow(probe.refused);
        continue;
      }
      const without = parse(probe.pre ?? []);
      const withIt = parse(argv);
      expect(isDeepStrictEqual(without, withIt), `--${option} (${argv.join(' ')}) changes nothing that runs and says nothing`).toBe(false);
    }
  });
});

describe("every command's --help names every option it reads", () => {
  /** Runs a command's own reading of its words, so every option it reads is recorded. */
  const discover = async (name: string): Promise<string[]> => {
    const walk = walks.find((w) => w.command === name);
    if (walk) return discovered(walk);
    recorded.length = 0;
    const run = (await commands[name].load()).run;
    // nixl-tool's first word is its step; the others read options from the first word
    await run(name === 'nixl-tool' ? ['run', ...probeFlag] : probeFlag).then(
      () => expect.fail(`${name} ${probeFlag[0]} ran`),
      (err: Error) => expect(err.message).toContain(`"${probeFlag[0]}"`),
    );
    return [...new Set(recorded.flatMap((o) => Object.keys(o)))].sort();
  };

  // history's first word is its command, each with its own usage: walked one by one below.
  it.each(Object.keys(commands).filter((name) => name !== 'history'))('%s', async (name) => {
    const { usage } = await commands[name].load();
    const options = await discover(name);
    if (name !== 'validate') expect(options.length, 'the walk found no option').toBeGreaterThan(0);
    expect(options.filter((o) => !new RegExp(`--${o}(?![\\w-])`).test(usage)), `options of ${name} its usage does not name`).toEqual([]);
  });

  it.each(Object.keys(historySubcommands))('history %s', async (sub) => {
    const { usage, run } = historySubcommands[sub].module;
    recorded.length = 0;
    await run([...probeFlag]).then(
      () => expect.fail(`history ${sub} ${probeFlag[0]} ran`),
      (err: Error) => expect(err.message).toContain(`"${probeFlag[0]}"`),
    );
    const options = [...new Set(recorded.flatMap((o) => Object.keys(o)))].filter((o) => o !== 'help').sort();
    expect(options.filter((o) => !new RegExp(`--${o}(?![\\w-])`).test(usage)), `options of history ${sub} its usage does not name`).toEqual([]);
  });
});

describe('the other commands', () => {
  it('every command of the CLI is walked here', () => {
    // validate takes files only; list, report, cleanup, nixl-tool and history are checked below;
    // run's options are each walked by tests/run/settings-sources.test.ts
    expect(Object.keys(commands).sort()).toEqual([...walks.map((w) => w.command), 'validate', 'list', 'report', 'cleanup', 'nixl-tool', 'history', 'run'].sort());
  });

  it('nixl-tool: each step takes its own options; another step\'s option is refused, not ignored', async () => {
    recorded.length = 0;
    await expect(nixlTool.run(['etcd-stop', '--dir', '/nonexistent-walk', '--prefix', 'p'])).rejects.toThrow('nixl-tool etcd-stop takes --dir; --prefix is not used there');
    expect(Object.keys(recorded[0]).sort()).toEqual(['dir', 'endpoints', 'host', 'prefix']);
    await expect(nixlTool.run(['etcd-wipe', '--endpoints', 'http://127.0.0.1:1', '--prefix', 'p', '--host', 'h'])).rejects.toThrow(/etcd-wipe takes --endpoints, --prefix; --host is not used there/);
    await expect(nixlTool.run(['run', 'spec.json', '--dir', 'd'])).rejects.toThrow(/nixl-tool run takes no option; --dir is not used there/);
  });

  it('cleanup --run narrows the jobs to one run', () => {
    const entry = (run: string, job: string) => ({ time: 't', run, scheduler: 'slurm', test: `t-${job}`, job, state: 'RUNNING' as const, terminal: false });
    const ledger = [entry('A', '1'), entry('B', '2')];
    expect(unfinishedJobs(ledger).map((e) => e.job)).toEqual(['1', '2']);
    expect(unfinishedJobs(ledger, 'B').map((e) => e.job)).toEqual(['2']);
  });

  it("history: every option of every history command is exercised by tests/history/cli.test.ts or alerts.test.ts", () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const tests = ['cli', 'alerts'].map((name) => fs.readFileSync(path.join(root, `tests/history/${name}.test.ts`), 'utf8')).join('\n');
    const dir = path.join(root, 'framework/commands/history');
    const options = fs.readdirSync(dir).filter((f) => f !== 'common.ts').flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/'?([a-z][a-z0-9-]*)'?: \{ type: '(?:string|boolean)'/g)].map((m) => `--${m[1]}`));
    expect(options.length).toBeGreaterThan(15);
    for (const option of options) expect(tests, option).toContain(`'${option}'`);
  });

  it("list --type and report's options are exercised by their own tests", () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const report = fs.readFileSync(path.join(root, 'tests/results/report-command.test.ts'), 'utf8');
    for (const option of ['--output', '--baseline', '--threshold', '--fail-on-regression']) expect(report, option).toContain(option);
    expect(fs.readFileSync(path.join(root, 'framework/commands/list.ts'), 'utf8')).toContain('testType: values.type');
  });
});
