// The names of the registered test types, kept free of imports so vitest.config.ts can read them
// without loading every type module. registry.ts checks that the two lists agree.
export const testTypeNames = ['disagg', 'wideep', 'nixl'] as const;
export type TestTypeName = (typeof testTypeNames)[number];
