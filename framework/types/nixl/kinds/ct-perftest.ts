// Kind `ct-perftest`: one traffic pattern, timed over iterations (kvbench's CT perftest).
//   ct_perftest:
//     iters: 10
//     warmup_iters: 2
//     verify_buffers: true
//     print_recv_buffers: false
//     traffic_pattern: { matrix_file: matrices/seed.txt, shards: 1, mem_type: cpu, xfer_op: READ }
// The job copies the matrix next to a seed-format config in the log folder and runs
// `disagg-bench ct-perftest` on every rank, the JSON report into ct_perftest.json.
import path from 'node:path';
import { stringify } from 'yaml';
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import { nixlConfig } from '../common.ts';
import { rankArgv, type FlagCommand } from '../job/rank-command.ts';
import { checkMatrixFile, checkMemType, CT_JSON, ctHeadline, ctMetrics, matrixSources, matrixText, patternSchema } from './traffic-patterns.ts';
import { backendNames } from '../../../../runners/xfer/backends/types.ts';
import { CT_IGNORED_PATTERN_KEYS, ctIgnoredKeyReason } from '../../../../runners/xfer/benches/traffic-pattern.ts';
import { sectionSchema, int } from './kind-values.ts';

interface CtSection {
  iters?: number;
  warmup_iters?: number;
  verify_buffers?: boolean;
  print_recv_buffers?: boolean;
  traffic_pattern: { matrix_file: string; shards?: number; mem_type?: string; xfer_op?: string };
}

const SECTION = 'ct_perftest';
const section = (config: Record<string, unknown>) => config[SECTION] as CtSection;

const CT_COMMAND: FlagCommand<CtSection> = {
  command: 'ct-perftest',
  positional: (logDir) => [path.join(logDir, 'ct_perftest.yaml')],
  flags: [
    ['--json-output-path', (_s, logDir) => path.join(logDir, CT_JSON)],
    ['--verify-buffers', 'verify_buffers', 'switch'],
    ['--print-recv-buffers', 'print_recv_buffers', 'switch'],
  ],
};

export const ctPerftestKind: NixlKind = {
  name: 'ct-perftest',
  rankLog: 'ct_perftest.log',
  section: SECTION,
  sectionSchema: sectionSchema({
    iters: int(1),
    warmup_iters: int(0),
    verify_buffers: { type: 'boolean' },
    print_recv_buffers: { type: 'boolean' },
    traffic_pattern: patternSchema(),
  }, ['traffic_pattern']),
  backends: backendNames,
  rules(config, configDir) {
    const { benchmark } = nixlConfig(config);
    const pattern = section(config).traffic_pattern;
    const at = [SECTION, 'traffic_pattern'];
    // kvbench's ct-perftest ignores these; in this project's own config they are refused, saying why
    const sequentialOnly = CT_IGNORED_PATTERN_KEYS.filter((key) => (pattern as Record<string, unknown>)[key] !== undefined).map((key) => ({
      path: [...at, key],
      message: `${ctIgnoredKeyReason(key)}; use the sequential-ct-perftest kind for it`,
    }));
    return [
      ...checkMatrixFile(configDir, pattern.matrix_file, benchmark.ranks, [...at, 'matrix_file']),
      ...checkMemType(benchmark.backend, pattern.mem_type, [...at, 'mem_type']),
      ...sequentialOnly,
    ];
  },
  metrics: ctMetrics,
  headline: (_config, metrics) => ctHeadline(metrics),
  rankCommand(ctx: NixlKindContext): RankCommand {
    const s = section(ctx.config);
    const seedConfig = {
      iters: s.iters ?? 1,
      warmup_iters: s.warmup_iters ?? 0,
      traffic_pattern: { ...s.traffic_pattern, matrix_file: 'ct_matrix.txt' },
    };
    return {
      argv: rankArgv(CT_COMMAND, s, ctx),
      logFile: 'ct_perftest.log',
      artefacts: {
        'ct_perftest.yaml': stringify(seedConfig),
        'ct_matrix.txt': matrixText(ctx.configDir, s.traffic_pattern.matrix_file, nixlConfig(ctx.config).benchmark.ranks, [SECTION, 'traffic_pattern', 'matrix_file']),
        'matrix_sources.txt': matrixSources(ctx.configDir, [['ct_matrix.txt', s.traffic_pattern.matrix_file]]),
      },
    };
  },
};
