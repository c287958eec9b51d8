// Kind `ep`: the NIXL EP perf tests on the engine.
//   ep:
//     modes: [dispatch, combine, e2e]   # data plane; leave out for the control plane alone
//     control_plane: true               # init, connect, disconnect, reconnect, destroy
//     control_plane_test: connect       # only this operation: the test's line, its mean across ranks
//     tokens: 512                       # the seed's defaults: 512, 4096, 8, 2, 10, 100
//     hidden: 4096
//     experts_per_rank: [8, 32]         # one run / table per value (default: data plane 8, control plane 8 and 32, the tests' own)
//     topk: 2
//     warmup: 10
//     iters: 100
//     seed: 1
//     layout: packed                    # packed | per-message
//     memory: host                      # host | gpu (default: what the backend moves)
//     initiated_by: gpu                 # gpu: one kernel per phase, as NIXL EP (cuda's default);
//                                       # host: the host-posted emulation (every other backend)
// Metrics: BW_GBPS_{AVG,MIN,MAX} (GB/s) and LAT_US_{AVG,MIN,MAX} per {mode, experts_per_rank},
// RANKS_PASSED; CP_{AVG,MIN,MAX}_MS per {operation, experts_per_rank} and CP_TOTAL_MS (the cycle's
// table: rank 0 over the rounds), or, with control_plane_test, CP_{AVG,MIN,MAX}_MS per {operation,
// experts_per_rank, across: ranks} (each rank's mean, across ranks, as the test reports it).
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { nixlConfig } from '../common.ts';
import { distinct, firstPresent, named } from '../../../metrics/headline-picks.ts';
import { minOf } from '../../../../runners/common/stats.ts';
import { CONTROL_PLANE_DEFAULT_EXPERTS, controlPlaneTests, epInitiators, epModes } from '../../../../runners/xfer/benches/ep/ep-options.ts';
import { epLayouts } from '../../../../runners/xfer/benches/ep/ep-routing.ts';
import { checkBackendMemory, memorySchema, sectionSchema, int } from './kind-values.ts';
import { rankArgv, type FlagCommand } from '../job/rank-command.ts';
import { backendNames } from '../../../../runners/xfer/backends/types.ts';

interface EpSection {
  modes?: string[];
  control_plane?: boolean;
  control_plane_test?: string;
  tokens?: number;
  hidden?: number;
  experts_per_rank?: number | number[];
  topk?: number;
  warmup?: number;
  iters?: number;
  seed?: number;
  layout?: string;
  memory?: 'host' | 'gpu';
  initiated_by?: string;
}

const SECTION = 'ep';
const LOG = 'ep.log';
const section = (config: Record<string, unknown>) => (config[SECTION] ?? {}) as EpSection;
const givenExperts = (s: EpSection) => (s.experts_per_rank === undefined ? undefined : [s.experts_per_rank].flat());
/** The data-plane test's default is 8 experts per rank; the control-plane test's, 8 and 32. */
const dataExperts = (s: EpSection) => givenExperts(s) ?? [8];
const controlExperts = (s: EpSection) => givenExperts(s) ?? [...CONTROL_PLANE_DEFAULT_EXPERTS];
const controlPlane = (s: EpSection) => s.control_plane === true || s.control_plane_test !== undefined;
/** The modes that run: the listed ones, or e2e by default when the control plane does not run. */
const modesOf = (s: EpSection) => s.modes ?? (controlPlane(s) ? [] : ['e2e']);

const EP_COMMAND: FlagCommand<EpSection> = {
  command: 'ep',
  flags: [
    ['--experts-per-rank', 'experts_per_rank', 'list'],
    ['--mode', 'modes', 'list'],
    ['--test', 'control_plane_test'],
    ['--tokens', 'tokens'],
    ['--hidden', 'hidden'],
    ['--topk', 'topk'],
    ['--warmup', 'warmup'],
    ['--iters', 'iters'],
    ['--seed', 'seed'],
    ['--layout', 'layout'],
    ['--memory', 'memory'],
    ['--initiated-by', 'initiated_by'],
    ['--control-plane', controlPlane, 'switch'],
  ],
};

/**
 * The EP tests' headline (the engine's and NIXL EP's own): the e2e mode's average latency and
 * bandwidth (each mode's when e2e did not run), per experts per rank; the control plane's cycle
 * total, or a single operation's mean across ranks.
 */
export function epHeadline(metrics: readonly Metric[]): Metric[] {
  const where: Metric['labels'] = named(metrics, 'LAT_US_AVG', { mode: 'e2e' }).length > 0 ? { mode: 'e2e' } : {};
  return distinct(
    named(metrics, 'LAT_US_AVG', where),
    named(metrics, 'BW_GBPS_AVG', where),
    firstPresent(metrics, ['CP_TOTAL_MS']),
    named(metrics, 'CP_AVG_MS', { across: 'ranks' }),
  );
}

export const epKind: NixlKind = {
  name: 'ep',
  rankLog: LOG,
  section: SECTION,
  sectionSchema: sectionSchema({
    modes: { type: 'array', items: { enum: [...epModes] }, uniqueItems: true },
    control_plane: { type: 'boolean' },
    control_plane_test: { enum: controlPlaneTests.filter((t) => t !== 'cycle') }, // the test's --test choices: reconnect runs in the cycle only
    tokens: int(1),
    hidden: int(128),
    experts_per_rank: { oneOf: [int(1), { type: 'array', items: int(1), minItems: 1 }] },
    topk: int(1),
    warmup: int(0),
    iters: int(2),
    seed: int(0),
    layout: { enum: [...epLayouts] },
    memory: memorySchema,
    initiated_by: { enum: [...epInitiators] },
  }),
  backends: backendNames,
  rules(config) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out: RuleViolation[] = [];
    if ((s.hidden ?? 4096) % 128) out.push({ path: [SECTION, 'hidden'], message: `hidden ${s.hidden} must be a multiple of 128 (one fp32 scale per 128 values)` });
    const fewest = minOf(dataExperts(s)) * benchmark.ranks;
    if (modesOf(s).length > 0 && (s.topk ?? 2) > fewest) out.push({ path: [SECTION, 'topk'], message: `topk ${s.topk} exceeds the ${fewest} experts of ${benchmark.ranks} ranks` });
    if (modesOf(s).length === 0 && !controlPlane(s)) out.push({ path: [SECTION, 'modes'], message: 'nothing to run: list modes or set control_plane' });
    checkBackendMemory(benchmark.backend, s.memory, [SECTION, 'memory'], out);
    if (s.initiated_by === 'gpu' && benchmark.backend !== 'cuda') {
      out.push({ path: [SECTION, 'initiated_by'], message: `gpu-initiated dispatch/combine needs backend cuda (kernels write into peers' GPU memory through CUDA IPC), not ${benchmark.backend}` });
    }
    return out;
  },
  metrics(config): MetricSpec[] {
    const s = section(config);
    const names = [
      ...(modesOf(s).length > 0 ? ['BW_GBPS_AVG', 'BW_GBPS_MIN', 'BW_GBPS_MAX', 'LAT_US_AVG', 'LAT_US_MIN', 'LAT_US_MAX', 'RANKS_PASSED'] : []),
      // --test <op> prints one line (no table, no TOTAL)
      ...(controlPlane(s) ? ['CP_AVG_MS', 'CP_MIN_MS', 'CP_MAX_MS', ...(s.control_plane_test && s.control_plane_test !== 'cycle' ? [] : ['CP_TOTAL_MS'])] : []),
    ];
    return [{ logFile: LOG, extractor: 'nixl-ep', names }];
  },
  rankCommand(ctx: NixlKindContext): RankCommand {
    return { argv: rankArgv(EP_COMMAND, section(ctx.config), ctx), logFile: LOG };
  },
  headline: (_config, metrics) => epHeadline(metrics),
  verdict(config, metrics: Metric[]) {
    const s = section(config);
    const ranks = nixlConfig(config).benchmark.ranks;
    const failures: string[] = [];
    for (const experts of dataExperts(s)) {
      for (const mode of modesOf(s)) {
        const passed = metrics.find((m) => m.name === 'RANKS_PASSED' && m.labels.mode === mode && m.labels.experts_per_rank === experts);
        if (!passed) failures.push(`no ${mode} result for ${experts} experts/rank in ${LOG}`);
        else if (passed.value !== ranks) failures.push(`${mode}, ${experts} experts/rank: ${passed.value}/${ranks} ranks verified their data`);
      }
    }
    if (!controlPlane(s)) return failures;
    const test = s.control_plane_test !== undefined && s.control_plane_test !== 'cycle' ? s.control_plane_test : undefined;
    for (const experts of controlExperts(s)) {
      const found = test
        ? metrics.some((m) => m.name === 'CP_AVG_MS' && m.labels.operation === test && m.labels.across === 'ranks' && m.labels.experts_per_rank === experts)
        : metrics.some((m) => m.name === 'CP_TOTAL_MS' && m.labels.experts_per_rank === experts);
      if (!found) failures.push(`no control-plane ${test ? `${test.toUpperCase()} line` : 'table'} for ${experts} experts/rank in ${LOG}`);
    }
    return failures;
  },
};
