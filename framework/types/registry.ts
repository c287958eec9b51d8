// The registered test types. Adding a type = one module + one line in `loaders` (+ its name in
// framework/contract/names.ts).
//
// A process loads every type when this module is first imported, except a test-type project's
// worker (DISAGG_BENCH_TEST_TYPE, set by vitest.config.ts), which loads only its own: a `disagg`
// listing does not pay for the transfer engine's ~90 modules, nor a `nixl` run for the serving
// job's (bench/startup.ts). Asking such a worker for another registered type is a programming
// error and says so, never "unknown type"; whether a name is a type at all is isTestTypeName's answer.
import type { TestType } from '../contract/test-type.ts';
import { testTypeNames, type TestTypeName } from '../contract/names.ts';
import { allTestTypeNames, extensionTestType } from '../contract/extension-types.ts';
import { InternalError } from '../../runners/common/errors.ts';

const loaders: Record<TestTypeName, () => Promise<TestType>> = {
  disagg: async () => (await import('./disagg.ts')).disaggType,
  wideep: async () => (await import('./wideep.ts')).wideepType,
  nixl: async () => (await import('./nixl.ts')).nixlType,
};

const loaded = new Map<string, TestType>();

const isBuiltIn = (name: string): name is TestTypeName => (testTypeNames as readonly string[]).includes(name);

/** A built-in test type's name, or one an extension registered (framework/config/extensions.ts). */
export function isTestTypeName(name: string): boolean {
  return isBuiltIn(name) || extensionTestType(name) !== undefined;
}

/** The built-in types this process loads at start: its project's own in a built-in type's worker, else all. */
function typesAtStart(env: NodeJS.ProcessEnv): readonly TestTypeName[] {
  const own = env.DISAGG_BENCH_TEST_TYPE;
  return own !== undefined && isBuiltIn(own) ? [own] : testTypeNames;
}

async function load(names: readonly TestTypeName[]): Promise<void> {
  const types = await Promise.all(names.map((name) => loaders[name]()));
  types.forEach((type, i) => {
    if (type.name !== names[i]) throw new InternalError(`test type module for '${names[i]}' registers itself as '${type.name}'`);
    loaded.set(type.name, type);
  });
}

await load(typesAtStart(process.env));

/** The type of that name; undefined when no type has that name. */
export function testType(name: string): TestType | undefined {
  const type = loaded.get(name) ?? extensionTestType(name);
  if (type || !isBuiltIn(name)) return type;
  throw new InternalError(`test type '${name}' is not loaded in this process, which runs only '${process.env.DISAGG_BENCH_TEST_TYPE}' (registry.ts)`);
}

/** Every registered type, built-in ones in names.ts's order, then extensions' (all are loaded outside a test-type worker). */
export function allTestTypes(): TestType[] {
  return allTestTypeNames().map((name) => testType(name) as TestType);
}
