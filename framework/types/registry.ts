// The registered test types. Adding a type = one module + one line here (+ its name in framework/contract/names.ts).
import type { TestType } from '../contract/test-type.ts';
import { testTypeNames } from '../contract/names.ts';
import { disaggType } from './disagg.ts';
import { wideepType } from './wideep.ts';
import { nixlType } from './nixl.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';

const types: TestType[] = [disaggType, wideepType, nixlType];

const byName = new Map(types.map((t) => [t.name, t]));
for (const name of testTypeNames) {
  if (!byName.has(name)) throw new DisaggBenchError(`test type '${name}' is listed in names.ts but not registered`);
}

export function testType(name: string): TestType | undefined {
  return byName.get(name);
}

export function allTestTypes(): TestType[] {
  return types;
}
