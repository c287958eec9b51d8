// The identity (contract/test-type.ts identity()) and embedded thresholds of a test id, read from
// its config under WORK_DIR: what an imported record without a run context needs to join the
// same series as the runs of that config, and the config itself (its headline). Undefined when no
// valid config has that id.
import { discoverConfigs } from '../config/discover.ts';
import { loadPlannedTest } from '../select/plan.ts';
import { testType } from '../types/registry.ts';
import { configuredThresholds } from '../metrics/regression-thresholds.ts';
import type { RecordRunContext } from '../results/json.ts';

export interface ConfigIdentity {
  identity?: Record<string, string | number>;
  thresholds?: RecordRunContext['thresholds'];
  /** The resolved config, for what a record of an older version does not carry (its headline). */
  config?: Record<string, unknown>;
}

export function configIdentities(workDir: string, globalThresholdPercent?: number): (testId: string) => ConfigIdentity | undefined {
  const files = new Map(discoverConfigs(workDir).files.map((f) => [f.id, f]));
  const cache = new Map<string, ConfigIdentity | undefined>();
  return (testId) => {
    if (cache.has(testId)) return cache.get(testId);
    const file = files.get(testId);
    let found: ConfigIdentity | undefined;
    if (file) {
      const planned = loadPlannedTest(file, { gpuType: undefined, source: 'none' }, process.env);
      const type = testType(file.testType);
      const config = planned.resolved?.config;
      if (type && config) {
        found = { identity: type.identity?.(config), thresholds: configuredThresholds(type.regression?.(config), globalThresholdPercent), config };
      }
    }
    cache.set(testId, found);
    return found;
  };
}
