// Launchers apart from schedulers: each built-in launcher turns the same launcher-neutral step into
// its own command line; the registry refuses a clash and names the known ones; a serving job and
// a nixl job render their steps through the launcher they are given (a config's launch.launcher,
// else the run's scheduler's default), and a launcher that cannot start tasks is refused for ranks.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { launchWords, type LaunchStep } from '../../framework/scheduler/launch/launcher.ts';
import { launcherNamed, launcherNames } from '../../framework/scheduler/launch/launchers.ts';
import { registerLauncher, unregisterLauncher } from '../../framework/scheduler/launch/registry.ts';
import { defaultLauncher, registeredSchedulers } from '../../framework/scheduler/registry.ts';
import '../../framework/scheduler/schedulers.ts';
import { renderWords, ShellVar } from '../../runners/common/shell.ts';
import { RANK_VARIABLES } from '../../runners/common/rank-variables.ts';
import { planServingJob } from '../../framework/types/serving/job/job-plan.ts';
import { renderJobScript } from '../../framework/types/serving/job/job-script.ts';
import { servingConfig } from '../../framework/types/serving/serving-config.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { servingRules } from '../../framework/types/serving/rules.ts';
import { renderNixlJobScript } from '../../framework/types/nixl/job/job-script.ts';
import { nixlConfig } from '../../framework/types/nixl/common.ts';
import { baseConfig, type Json } from '../fixtures/serving/base-config.ts';

const worker: LaunchStep = {
  nodes: 2, tasks: 8, tasksPerNode: 4, nodeList: new ShellVar('GEN_0_NODES'), sharesResources: true, pmi: 'pmix', endsOnTaskFailure: true,
  container: { image: 'nvcr.io/x:1', name: 'c', mounts: '/a:/a' },
};
const line = (name: string, step: LaunchStep) => renderWords(launcherNamed(name).prefix(step));

describe('the built-in launchers', () => {
  it('srun, mpirun and local say the same step in their own words', () => {
    expect(launcherNames()).toEqual(expect.arrayContaining(['srun', 'local', 'mpirun']));
    expect(line('srun', worker)).toBe(
      "srun --overlap --nodelist \"${GEN_0_NODES}\" --nodes 2 --ntasks 8 --ntasks-per-node 4 '--mpi=pmix' '--kill-on-bad-exit=1' '--container-image=nvcr.io/x:1' '--container-name=c' '--container-mounts=/a:/a'",
    );
    expect(line('srun', { nodes: 1, tasks: 1, tasksPerNode: 1 })).toBe('srun --nodes 1 --ntasks 1 --ntasks-per-node 1');
    expect(line('mpirun', worker)).toBe('mpirun -np 8 --map-by ppr:4:node --host "${GEN_0_NODES}"');
    expect(line('local', worker)).toBe('');
  });

  it('a step\'s environment goes through env, after the launcher and before the command', () => {
    const words = launchWords(launcherNamed('mpirun'), { nodes: 1, tasks: 2, tasksPerNode: 2, env: ['A=1'], command: ['echo', 'hi there'] });
    expect(renderWords(words)).toBe("mpirun -np 2 --map-by ppr:2:node env 'A=1' echo 'hi there'");
    expect(renderWords(launchWords(launcherNamed('local'), { nodes: 1, tasks: 1, tasksPerNode: 1, command: ['true'] }))).toBe('true');
  });

  it('the registry refuses a second launcher under a name and names the known ones for an unknown one', () => {
    const other = { ...launcherNamed('srun'), description: 'another srun' };
    expect(() => registerLauncher(other)).toThrow(/a launcher named srun is registered already/);
    expect(() => registerLauncher({ ...other, name: 'Bad Name' })).toThrow(/expected lower-case letters/);
    expect(() => launcherNamed('pbsdsh', 'launch.launcher')).toThrow(`launch.launcher: no launcher is registered as "pbsdsh"; expected one of ${launcherNames().join(', ')}`);
  });

  it('every launcher that starts tasks says how they learn their rank, from the table the ranks read', () => {
    for (const name of launcherNames()) {
      const launcher = launcherNamed(name);
      if (launcher.startsTasks) expect(RANK_VARIABLES.map((v) => v.name), name).toContain(launcher.rankVariables);
    }
    expect(() => registerLauncher({ name: 'pbsdsh', description: 'x', startsTasks: true, containers: false, rankVariables: 'pbs', prefix: () => [] })).toThrow(/rankVariables "pbs" names no row/);
  });

  it('every built-in scheduler names a registered launcher; one not registered runs srun', () => {
    for (const s of registeredSchedulers()) expect(launcherNames(), s.name).toContain(s.launcher);
    expect(defaultLauncher('slurm')).toBe('srun');
    expect(defaultLauncher('replay')).toBe('srun');
  });
});

function servingScript(patch: Json, launcher?: string): string {
  const plan = planServingJob({ testId: 't', config: servingConfig(baseConfig(patch)), logDir: '/l', packageRoot: '/pkg', launcher });
  return renderJobScript(plan.script);
}

describe('a serving job through its launcher', () => {
  it('the run\'s launcher starts every step; a config\'s launch.launcher wins over it', () => {
    const mpirun = servingScript({ environment: { container_image: 'nvcr.io/x:1' } }, 'mpirun');
    expect(mpirun).toMatch(/^start_server GEN_0 \/l\/3_output_GEN_0\.log mpirun -np 4 --map-by ppr:4:node --host "\$\{GEN_0_NODES\}" env 'CUDA_VISIBLE_DEVICES=0,1,2,3' trtllm-llmapi-launch /m);
    expect(mpirun).toMatch(/^start_server ROUTER \/l\/4_output_server\.log mpirun -np 1 --map-by ppr:1:node --host "\$\{ROUTER_NODE\}" trtllm-serve disaggregated /m);
    // mpirun starts no container: no container step, no pyxis options.
    expect(mpirun).not.toMatch(/container/);
    expect(mpirun).not.toMatch(/\bsrun\b/);
    const direct = servingScript({ launch: { launcher: 'direct' } }, 'mpirun');
    expect(direct).toMatch(/^start_server GEN_0 \/l\/3_output_GEN_0\.log env 'CUDA_VISIBLE_DEVICES=0,1,2,3' trtllm-llmapi-launch /m);
    expect(servingScript({ launch: { launcher: 'srun' } }, 'mpirun')).toMatch(/^start_server GEN_0 \/l\/3_output_GEN_0\.log srun --overlap /m);
  });

  it('the config may name any registered launcher, one registered from outside too; another name is refused', () => {
    const issues = (launcher: string) => servingRules(baseConfig({ launch: { launcher } })).map((v) => `${v.path.join('.')}: ${v.message}`);
    expect(issues('mpirun')).toEqual([]);
    expect(issues('direct')).toEqual([]);
    expect(issues('pbsdsh')).toEqual([`launch.launcher: no launcher is registered as "pbsdsh"; expected direct or one of ${launcherNames().join(', ')}`]);
    registerLauncher({ name: 'pbsdsh', description: 'a test launcher', startsTasks: true, containers: false, prefix: () => ['pbsdsh'] });
    try {
      expect(issues('pbsdsh')).toEqual([]);
    } finally {
      unregisterLauncher('pbsdsh');
    }
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(disaggType.schema);
    expect(validate(baseConfig({ launch: { launcher: 'Not A Name' } }))).toBe(false);
  });
});

describe('a nixl job through its launcher', () => {
  const config = nixlConfig({
    benchmark: { kind: 'nixlbench', ranks: 2, nodes: 1, backend: 'ucx' },
    nixlbench: { path: '/opt/nixl/bin/nixlbench', options: {} },
  });
  const rank = { argv: ['nixl-tool', 'run', '/l/spec.json'], logFile: 'nixlbench.log' };
  const render = (launcher: string) => renderNixlJobScript({ testId: 't', config, logDir: '/l', packageRoot: '/pkg', rank, launcher });

  it('its ranks start with the launcher it is given', () => {
    expect(render('mpirun')).toMatch(/^mpirun -np 2 --map-by ppr:2:node "\$NODE_BIN" \/pkg\/bin\/disagg-bench\.js nixl-tool run \/l\/spec\.json >"\$RANK_LOG" 2>&1 \|\| status=\$\?$/m);
    expect(render('srun')).toMatch(/^srun --nodes 1 --ntasks 2 --ntasks-per-node 2 '--kill-on-bad-exit=1' "\$NODE_BIN" /m);
  });

  it('a launcher that runs a command once is refused for two ranks, naming the setting', () => {
    expect(() => render('local')).toThrow(/the launcher local runs a command once, and the ranks are 2: use a launcher that starts tasks \(srun, mpirun\).*benchmark\.ranks/);
  });
});

describe('a launcher registered from outside', () => {
  it('is used by name once registered, and gone once unregistered', () => {
    registerLauncher({ name: 'pdsh-test', description: 'a test launcher', startsTasks: true, containers: false, prefix: (s) => ['pdsh', '-w', s.nodeList ?? 'all', '-n', s.tasks] });
    try {
      expect(servingScript({}, 'pdsh-test')).toMatch(/^start_server GEN_0 \S+ pdsh -w "\$\{GEN_0_NODES\}" -n 4 env /m);
    } finally {
      unregisterLauncher('pdsh-test');
    }
    expect(() => launcherNamed('pdsh-test')).toThrow(/no launcher is registered as "pdsh-test"/);
  });
});
