// Kind `sequential-ct-perftest`: a list of traffic patterns run in sequence with their simulated
// compute (kvbench's sequential CT perftest), isolated vs congested latency per pattern.
//   sequential_ct_perftest:
//     sleep_before_launch: true   # sleep sleep_before_launch_sec (kvbench never does; default false)
//     sleep_scale: 0.001          # scales every sleep_*_launch_sec
//     isolation_iters: 5
//     warmup_iters: 1
//     workload_iters: 2
//     verify_buffers: true
//     traffic_patterns:
//       - { matrix_file: matrices/a.txt, mem_type: cpu, sleep_before_launch_sec: 0.5 }
// The job copies the matrices into the log folder (matrices/) next to the seed-format config.
import path from 'node:path';
import { stringify } from 'yaml';
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import { nixlConfig } from '../common.ts';
import { rankArgv } from '../job/rank-command.ts';
import {
  checkMatrixFile, checkMemType, checkSequentialRunOptions, matrixSources, matrixText, patternSchema, sequentialCommand, sequentialHeadline, sequentialMetrics,
  sequentialRunProperties, type SequentialRunOptions,
} from './traffic-patterns.ts';
import { backendNames } from '../../../../runners/xfer/backends/types.ts';
import { sectionSchema } from './kind-values.ts';

interface SequentialSection extends SequentialRunOptions {
  traffic_patterns: Array<{ matrix_file: string; mem_type?: string; [key: string]: unknown }>;
}

const SECTION = 'sequential_ct_perftest';
const section = (config: Record<string, unknown>) => config[SECTION] as SequentialSection;

const SEQUENTIAL_RUN = sequentialCommand((logDir) => path.join(logDir, 'sequential_ct_perftest.yaml'));

export const sequentialCtPerftestKind: NixlKind = {
  name: 'sequential-ct-perftest',
  rankLog: 'sequential_ct_perftest.log',
  section: SECTION,
  sectionSchema: sectionSchema({ ...sequentialRunProperties, traffic_patterns: { type: 'array', minItems: 1, items: patternSchema() } }, ['traffic_patterns']),
  backends: backendNames,
  rules(config, configDir) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out = s.traffic_patterns.flatMap((p, i) => [
      ...checkMatrixFile(configDir, p.matrix_file, benchmark.ranks, [SECTION, 'traffic_patterns', i, 'matrix_file']),
      ...checkMemType(benchmark.backend, p.mem_type, [SECTION, 'traffic_patterns', i, 'mem_type']),
    ]);
    return [...out, ...checkSequentialRunOptions(s, SECTION)];
  },
  metrics: sequentialMetrics,
  headline: (_config, metrics) => sequentialHeadline(metrics),
  rankCommand(ctx: NixlKindContext): RankCommand {
    const s = section(ctx.config);
    const artefacts: Record<string, string> = {};
    const patterns = s.traffic_patterns.map((p, i) => {
      const copy = `matrices/matrix_${i}.txt`;
      artefacts[copy] = matrixText(ctx.configDir, p.matrix_file, nixlConfig(ctx.config).benchmark.ranks, [SECTION, 'traffic_patterns', i, 'matrix_file']);
      return { ...p, matrix_file: copy };
    });
    artefacts['sequential_ct_perftest.yaml'] = stringify({ traffic_patterns: patterns });
    artefacts['matrix_sources.txt'] = matrixSources(ctx.configDir, s.traffic_patterns.map((p, i) => [patterns[i].matrix_file, p.matrix_file]));
    return {
      argv: rankArgv(SEQUENTIAL_RUN, s, ctx),
      logFile: 'sequential_ct_perftest.log',
      artefacts,
    };
  },
};
