// What records written before the gate list was kept (no run.gate) or before the run context
// existed (no run) are judged with: their configs under WORK_DIR for their identity, and
// DISAGG_GATE_METRICS with each record's headline for their gate. `history regressions` and the
// judging of imported runs ask the same.
import type { TestRecord } from '../results/json.ts';
import type { Settings } from '../settings.ts';
import type { ConfigIdentity } from './config-identity.ts';
import { gatedMetrics, gateKey } from './gate-metrics.ts';

/** The fallbacks a record set needs (none for records of this version: loading the test types costs a second). */
export async function olderRecordsGate(settings: Settings, records: readonly TestRecord[]): Promise<{ fallbackGate?: (record: TestRecord) => string[]; identityOf?: (testId: string) => ConfigIdentity | undefined }> {
  if (!records.some((r) => !r.run?.gate)) return {};
  const configOf = await configLookup(settings.workDir, settings.history.thresholdPercent);
  return { fallbackGate: await fallbackGate(settings.history.gate.metrics, configOf), ...(records.some((r) => !r.run) ? { identityOf: configOf } : {}) };
}

/** Each test id's config under WORK_DIR, read the first time one is asked for. */
async function configLookup(workDir: string, thresholdPercent: number | undefined): Promise<(testId: string) => ConfigIdentity | undefined> {
  const { configIdentities } = await import('./config-identity.ts');
  let lookup: ((testId: string) => ConfigIdentity | undefined) | undefined;
  return (testId) => (lookup ??= configIdentities(workDir, thresholdPercent))(testId);
}

/**
 * For records written before the gate was kept: DISAGG_GATE_METRICS, with each record's headline:
 * the one it carries, else its type's from its config under WORK_DIR, else its type's without one.
 */
async function fallbackGate(setting: string[], configOf: (testId: string) => ConfigIdentity | undefined): Promise<(record: TestRecord) => string[]> {
  const needsTypes = setting.includes('headline');
  const registry = needsTypes ? await import('../types/registry.ts') : undefined;
  const { headlineMetrics } = await import('../metrics/headline.ts');
  return (record) => {
    const type = registry?.testType(record.type);
    // The figures the record names as its headline (with their directions from its metrics), else its type's.
    const named = record.headline && new Set(record.headline.map(gateKey));
    const headline = named ? record.metrics.filter((m) => named.has(gateKey(m))) : type ? headlineMetrics(type, configOf(record.testId)?.config ?? {}, record.category, record.metrics) : [];
    return gatedMetrics(record.metrics, headline, setting);
  };
}
