import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../framework/config/resolve.ts';
import { filledValue, isPlaceholder } from '../../runners/common/placeholder.ts';
import type { EnvOverride } from '../../framework/contract/test-type.ts';

const overrides: EnvOverride[] = [
  { path: ['slurm', 'partition'], env: 'SLURM_PARTITION' },
  { path: ['slurm', 'account'], env: 'SLURM_ACCOUNT' },
  {
    path: ['environment', 'model_path'],
    env: 'MODEL_DIR',
    compose: (dir, c) => `${dir}/${(c.metadata as any).model_dir_name}`,
  },
];

describe('environment overrides', () => {
  it('fills placeholders and missing values, keeps explicit ones', () => {
    const config = { metadata: { model_dir_name: 'DeepSeek-R1' }, slurm: { partition: '<partition>', account: 'team-a' } };
    const r = resolveConfig(config, overrides, { SLURM_PARTITION: 'batch', SLURM_ACCOUNT: 'other', MODEL_DIR: '/models' });
    expect(r.config.slurm).toEqual({ partition: 'batch', account: 'team-a' });
    expect((r.config.environment as any).model_path).toBe('/models/DeepSeek-R1');
    expect(r.applied.map((a) => [a.path, a.because])).toEqual([
      ['slurm.partition', 'placeholder'],
      ['environment.model_path', 'unset'],
    ]);
    // The input is untouched.
    expect(config.slurm.partition).toBe('<partition>');
  });

  it('lets a forced variable win over an explicit value', () => {
    const config = { metadata: { model_dir_name: 'm' }, slurm: { partition: 'p', account: 'a' } };
    const one = resolveConfig(config, overrides, { SLURM_ACCOUNT: 'forced', DISAGG_FORCE_ENV: 'SLURM_ACCOUNT', SLURM_PARTITION: 'x' });
    expect(one.config.slurm).toEqual({ partition: 'p', account: 'forced' });
    const all = resolveConfig(config, overrides, { SLURM_ACCOUNT: 'forced', DISAGG_FORCE_ENV: 'all', SLURM_PARTITION: 'x' });
    expect(all.config.slurm).toEqual({ partition: 'x', account: 'forced' });
  });

  it('lists placeholders left unfilled', () => {
    const r = resolveConfig({ slurm: { partition: '<partition>' }, environment: { container_image: '<container_image>' } }, overrides, {});
    expect(r.placeholders).toEqual([
      { path: 'slurm.partition', value: '<partition>' },
      { path: 'environment.container_image', value: '<container_image>' },
    ]);
    expect(isPlaceholder('<x>')).toBe(true);
    expect(isPlaceholder('a<x>')).toBe(false);
    expect([filledValue(' <x> '), filledValue('  '), filledValue(undefined), filledValue(3), filledValue(' a<x> ')]).toEqual([undefined, undefined, undefined, undefined, 'a<x>']);
  });
});
