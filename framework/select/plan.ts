// The plan of one run: which configs exist, which parse and validate, which are selected and which
// are skipped (and why). Nothing is submitted here: `vitest list` and the CLI use it as is.
import { discoverConfigs, type ConfigFile } from '../config/discover.ts';
import { testIdProblem } from '../config/ids.ts';
import { flushParseCache, keepVerdict, openParseCache, readYamlFileCached, type Verdict } from '../config/parse-cache.ts';
import type { ParsedYaml } from '../config/load.ts';
import { validateParsed } from '../config/validate.ts';
import { resolveConfig, type ResolvedConfig } from '../config/resolve.ts';
import type { ConfigIssue } from '../config/issue.ts';
import { isTestTypeName, testType } from '../types/registry.ts';
import { testTypeNames } from '../contract/names.ts';
import type { TestType } from '../contract/test-type.ts';
import type { Settings } from '../settings.ts';
import { gpuResourceConfig } from '../config/gpu-resources.ts';
import { gpuForType, gpuSkipReason, gpuTypeFromEnv, gpuTypeFromName, knownGpuTypes, type GpuDetection } from './gpu.ts';
import { readTestList, selectByTestList, type TestList, type UnknownListedId } from './testlist.ts';

export interface PlannedTest extends ConfigFile {
  /** The parsed config as written; undefined when it does not parse. */
  config?: Record<string, unknown>;
  /** The config with environment overrides applied (valid configs only). */
  resolved?: ResolvedConfig;
  /** Parse and validation issues: the test fails with all of them. */
  issues: ConfigIssue[];
  /** Set when the test must not run here (GPU type...). */
  skipReason?: string;
  /** The GPU types it names (read even from an invalid config); undefined = needs no GPU. */
  supportedGpus?: string[];
}

export interface Plan {
  tests: PlannedTest[];
  /** Every config file found, of every test type, before any selection (one walk of test_configs/ per plan). */
  discovered: ConfigFile[];
  /** Ids of a test list that match no config of any type (with their line). */
  unknownListedIds: UnknownListedId[];
  testList?: TestList;
  /** One-line notices to show once (misplaced files, unknown type folders). */
  notices: string[];
}

export interface PlanOptions {
  settings: Settings;
  gpu: GpuDetection;
  /** Only this type's tests (a Vitest project); all types when undefined. */
  testType?: string;
  env?: NodeJS.ProcessEnv;
}

export function loadPlannedTest(file: ConfigFile, gpu: GpuDetection, env: NodeJS.ProcessEnv, options: { failUnfit?: boolean } = {}): PlannedTest {
  const type = testType(file.testType);
  const parsed = readYamlFileCached(file.absFile, file.displayFile);
  const test: PlannedTest = { ...file, issues: [...parsed.issues] };
  const tooLong = testIdProblem(file.id);
  if (tooLong) test.issues.push({ file: file.displayFile, message: tooLong });
  if (!type) {
    test.issues.push({ file: file.displayFile, message: `unknown test type '${file.testType}' (known: ${testTypeNames.join(', ')})` });
    return test;
  }
  if (parsed.issues.length > 0) return test;
  const verdict = parsed.verdict ?? validate(type, parsed, file);
  test.issues.push(...verdict.issues);
  // As upstream: a config for another GPU type is skipped, valid or not (its errors stay in
  // test.issues for `disagg-bench validate`, and fail it on a GPU it supports).
  test.supportedGpus = verdict.supportedGpus;
  test.skipReason = gpuSkipReason(test.supportedGpus, gpuForType(gpu, type.assumedGpuType));
  if (test.issues.length > 0) return test;
  if (type.unavailableHere) test.skipReason ??= type.unavailableHere(parsed.data as Record<string, unknown>);
  // A config the jobs' nodes cannot hold is skipped with why, as one for another GPU; DISAGG_FAIL_UNFIT=1 runs it to fail.
  if (gpu.node && !options.failUnfit && type.cannotHold) test.skipReason ??= type.cannotHold(parsed.data as Record<string, unknown>, gpu.node);
  // The config and its overrides are read when first asked for: a listing asks for neither (the
  // cached data stays unread, and no copy of each config is made).
  let resolved: ResolvedConfig | undefined;
  Object.defineProperties(test, {
    config: { get: () => parsed.data, enumerable: true, configurable: true },
    resolved: {
      get: () => (resolved ??= resolveConfig(parsed.data as Record<string, unknown>, type.envOverrides, env)),
      set: (value: ResolvedConfig) => {
        resolved = value;
      },
      enumerable: true,
      configurable: true,
    },
  });
  return test;
}

/** Schema, rules and the GPU types named; kept in the config cache when it depends on the content alone. */
function validate(type: TestType, parsed: ParsedYaml, file: ConfigFile): Verdict {
  const { issues, readLocation } = validateParsed(type, parsed, file.displayFile, file.absFile, file.category);
  const verdict = { issues, supportedGpus: supportedGpusOf(type, parsed.data) };
  if (!readLocation) keepVerdict(file.absFile, verdict);
  return verdict;
}

/** The GPU types a parsed config names, read defensively: the config may be invalid. */
function supportedGpusOf(type: TestType, data: unknown): string[] | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  try {
    const gpus = type.supportedGpus(data as Record<string, unknown>);
    return Array.isArray(gpus) && gpus.every((g) => typeof g === 'string') ? gpus : undefined;
  } catch {
    return undefined;
  }
}

export function planRun(options: PlanOptions): Plan {
  const env = options.env ?? process.env;
  const { settings } = options;
  const discovery = discoverConfigs(settings.workDir);
  const notices = [
    ...discovery.misplaced.map((f) => `${f}: ignored, configs live at test_configs/<test_type>/<category>/<name>.yaml`),
    ...discovery.notices,
  ];
  for (const type of new Set(discovery.files.map((f) => f.testType))) {
    if (!isTestTypeName(type)) notices.push(`test_configs/${type}/: unknown test type '${type}', its configs fail`);
  }
  let files = discovery.files;
  let unknownListedIds: Plan['unknownListedIds'] = [];
  let testList: TestList | undefined;
  if (settings.testList) {
    testList = readTestList(settings.testList, settings.workDir);
    const selection = selectByTestList(files, testList);
    files = selection.selected;
    unknownListedIds = selection.unknown;
  }
  if (options.testType) files = files.filter((f) => f.testType === options.testType);
  openParseCache(`${settings.workDir}\u0000${options.testType ?? '*'}`);
  // The environment as it is now: a test's overrides are resolved when first read, maybe later.
  const envNow = { ...env };
  const tests = files.map((f) => loadPlannedTest(f, options.gpu, envNow, { failUnfit: settings.failUnfit }));
  flushParseCache();
  return { tests, discovered: discovery.files, unknownListedIds, testList, notices };
}

/**
 * GPU_TYPE naming a GPU type that is neither known (select/gpu.ts) nor listed by any config's
 * metadata.supported_gpus: a typo (`GPU_TYPE=bogus`, `gb200`: upstream matches exactly) that would
 * skip every config needing a GPU. Upstream stops such a run too (scan_configs: "No configuration
 * files found ... GPU type"); here it is one line before anything runs, naming the type meant when
 * there is one. Also a `GB200_` name upstream has no resources for (GB200_NVL72): upstream runs the
 * GB200 configs with it, without GB200's --gres and --segment, and its CSV writer then fails.
 * The configs are read only when the type is unknown.
 */
export function gpuTypeProblem(settings: Settings, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env.GPU_TYPE;
  if (!raw) return undefined;
  const given = `GPU_TYPE=${JSON.stringify(raw)}`;
  const { gpuType: type, resourceType } = gpuTypeFromEnv(raw);
  if (resourceType !== undefined && !Object.hasOwn(gpuResourceConfig, resourceType)) {
    const variants = Object.keys(gpuResourceConfig).filter((k) => k.startsWith('GB200_'));
    return `${given}: upstream filters it as GB200 but has no resources for it (no --gres=gpu:4, no --segment, and its CSV writer fails on it); set GPU_TYPE=GB200${variants.map((v) => ` or ${v}`).join('')}`;
  }
  if (knownGpuTypes.includes(type)) return undefined;
  const plan = planRun({ settings, gpu: { gpuType: type, source: 'GPU_TYPE' }, env });
  if (plan.tests.some((t) => (t.supportedGpus ?? []).includes(type))) return undefined;
  const meant = knownGpuTypes.find((k) => k === type.trim().toUpperCase()) ?? knownGpuTypes.find((k) => k === gpuTypeFromName(type));
  const hint = meant ? `; GPU types match exactly, as upstream (${JSON.stringify(type)} does not run [${meant}] configs): set GPU_TYPE=${meant}` : '';
  return `${given}: ${type} is no known GPU type (${knownGpuTypes.join(', ')}) and no config lists it in metadata.supported_gpus; every config that needs a GPU would be skipped${hint}`;
}
