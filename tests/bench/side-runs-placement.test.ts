// Where bench/nixl/side-by-side.ts puts the two ranks' VRAM in direct mode (the GPU machine): a GPU
// each when there are two, both on the one GPU otherwise, said in one line.
import { describe, expect, it } from 'vitest';
import { placeTwoRanks } from '../../bench/nixl/side-runs.ts';

describe('the two ranks of a VRAM side-by-side', () => {
  it('take a GPU each when two or more are visible', () => {
    expect(placeTwoRanks({ CUDA_VISIBLE_DEVICES: '2,3' })).toMatchObject({ devices: ['2', '3'], shared: false });
    expect(placeTwoRanks({}, () => ['0', '1', '2', '3'])).toMatchObject({ devices: ['0', '1'], shared: false });
  });

  it('share the one GPU there is, saying so and that the engine may share it', () => {
    const one = placeTwoRanks({}, () => ['0']);
    expect(one).toMatchObject({ devices: ['0', '0'], shared: true });
    expect(one.note).toMatch(/^one GPU visible: both ranks of each side on device 0 \(XFER_RANKS_MAY_SHARE_GPU=1 for the engine\)/);
    expect(placeTwoRanks({ CUDA_VISIBLE_DEVICES: '5' }).devices).toEqual(['5', '5']);
  });
});
