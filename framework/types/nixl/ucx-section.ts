// A nixl config's `ucx:` section: how the engine's ucx backend meets each peer, for every engine
// kind (runners/xfer/backends/ucx-options.ts says what each choice does). It reaches the ranks as
// environment variables of the job, as the benches' --ucx-* flags do.
//   ucx:
//     error_handling: auto      # auto | peer | none (NIXL's ucx_error_handling_mode; NIXL's default is peer)
//     memory: ucx               # ucx (UCX allocates, as ucx_perftest) | registered (as NIXL)
//     post: memh                # memh (the memory handle with each put/get) | plain | nixl (and MULTI_SEND, as NIXL)
//     completion: each          # each (every request polled) | flush (only the endpoint's flush, as NIXL)
//     tls: tcp                  # UCX_TLS of the ranks
//     net_devices: lo           # UCX_NET_DEVICES of the ranks
import type { JsonSchema, RuleViolation } from '../../contract/test-type.ts';
import { UCX_CHOICE_ENV, ucxCompletions, ucxErrorHandlings, ucxMemories, ucxPosts } from '../../../runners/xfer/backends/ucx-options.ts';
import type { NixlKind } from './kind.ts';

export interface UcxSection {
  error_handling?: (typeof ucxErrorHandlings)[number];
  memory?: (typeof ucxMemories)[number];
  post?: (typeof ucxPosts)[number];
  completion?: (typeof ucxCompletions)[number];
  tls?: string;
  net_devices?: string;
}

export const ucxSectionSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    error_handling: { enum: [...ucxErrorHandlings] },
    memory: { enum: [...ucxMemories] },
    post: { enum: [...ucxPosts] },
    completion: { enum: [...ucxCompletions] },
    tls: { type: 'string', minLength: 1 },
    net_devices: { type: 'string', minLength: 1 },
  },
};

/** The section applies to the engine's ucx backend only: anywhere else it would be ignored. */
export function ucxSectionRules(config: { benchmark: { backend: string }; ucx?: unknown }, kind: NixlKind): RuleViolation[] {
  if (config.ucx === undefined) return [];
  if (kind.externalTool) {
    return [{ path: ['ucx'], message: `applies to the transfer engine's kinds; ${kind.externalTool} takes its UCX settings from its own options and the environment` }];
  }
  if (config.benchmark.backend !== 'ucx') {
    return [{ path: ['ucx'], message: `applies to backend ucx only; this config uses ${config.benchmark.backend}` }];
  }
  return [];
}

/** The ranks' environment for the section. */
export function ucxSectionEnv(section: UcxSection | undefined): Record<string, string> {
  if (!section) return {};
  const env: Record<string, string> = {};
  if (section.error_handling) env[UCX_CHOICE_ENV.errorHandling] = section.error_handling;
  if (section.memory) env[UCX_CHOICE_ENV.memory] = section.memory;
  if (section.post) env[UCX_CHOICE_ENV.post] = section.post;
  if (section.completion) env[UCX_CHOICE_ENV.completion] = section.completion;
  if (section.tls) env.UCX_TLS = section.tls;
  if (section.net_devices) env.UCX_NET_DEVICES = section.net_devices;
  return env;
}
