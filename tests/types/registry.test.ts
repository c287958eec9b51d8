// The test-type registry: every type outside a test-type project's worker; only the worker's own
// inside one (DISAGG_BENCH_TEST_TYPE), where asking for another registered type is an error that
// says so, never "unknown type". Each case imports the registry afresh under its environment.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testTypeNames } from '../../framework/contract/names.ts';

async function freshRegistry(ownType: string | undefined) {
  vi.resetModules();
  if (ownType === undefined) vi.stubEnv('DISAGG_BENCH_TEST_TYPE', undefined);
  else vi.stubEnv('DISAGG_BENCH_TEST_TYPE', ownType);
  return import('../../framework/types/registry.ts');
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('test-type registry', () => {
  it('loads every registered type outside a test-type worker, in names.ts order', async () => {
    const registry = await freshRegistry(undefined);
    expect(registry.allTestTypes().map((t) => t.name)).toEqual([...testTypeNames]);
    expect(registry.testType('nixl')?.name).toBe('nixl');
    expect(registry.testType('bogus')).toBeUndefined();
  });

  it("loads only the worker's own type in a test-type worker; another registered one is an error naming both", async () => {
    const registry = await freshRegistry('disagg');
    expect(registry.testType('disagg')?.name).toBe('disagg');
    expect(() => registry.testType('nixl')).toThrow("test type 'nixl' is not loaded in this process, which runs only 'disagg'");
    expect(() => registry.allTestTypes()).toThrow(/not loaded/);
    // A name that is no type at all is still simply unknown.
    expect(registry.testType('bogus')).toBeUndefined();
    expect(registry.isTestTypeName('nixl')).toBe(true);
    expect(registry.isTestTypeName('bogus')).toBe(false);
  });

  it('loads every type when the variable names no registered type', async () => {
    const registry = await freshRegistry('bogus');
    expect(registry.allTestTypes().map((t) => t.name)).toEqual([...testTypeNames]);
  });
});
