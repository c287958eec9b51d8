// Test types registered from outside the checkout (framework/config/extensions.ts): each a TestType
// object, as a built-in type module exports one. Kept beside the built-in names (names.ts) so that
// every layer that lists test types, vitest.config.ts included, reads both from the contract.
import { testTypeNames } from './names.ts';
import type { TestType } from './test-type.ts';
import { InputError } from '../../runners/common/errors.ts';

// One map per module instance, as every registry: each instance is filled by the extensions its
// process loads through it (framework/config/extensions.ts), the reporter's too.
const registered = new Map<string, TestType>();

const NAME = /^[a-z][a-z0-9-]*$/;

/** Registers a test type; a built-in name, a registered one or a malformed one is refused. */
export function registerTestType(type: TestType): void {
  if (!NAME.test(type.name)) throw new InputError(`test type name ${JSON.stringify(type.name)}: expected lower-case letters, digits and dashes`);
  if ((testTypeNames as readonly string[]).includes(type.name)) throw new InputError(`test type ${type.name} is a built-in one`);
  const known = registered.get(type.name);
  if (known && known !== type) throw new InputError(`a test type named ${type.name} is registered already (${known.description})`);
  registered.set(type.name, type);
}

export function extensionTestType(name: string): TestType | undefined {
  return registered.get(name);
}

/** The built-in test types' names, then those registered from outside. */
export function allTestTypeNames(): string[] {
  return [...testTypeNames, ...registered.keys()];
}
