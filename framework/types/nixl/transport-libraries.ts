// A transfer backend's library on this machine: a config of the project's engine on UCX or
// libfabric is skipped, with the reason and the Debian/Ubuntu package that provides the library,
// when the library cannot be loaded here (a fresh machine with Node alone has neither). The probe
// is the engine's own (runners/xfer/backends/availability.ts), so "skipped" means exactly "the ranks
// could not have loaded it"; XFER_LIB_UCP / XFER_LIB_FABRIC point the engine at other installs.
// The real NIXL tools bring their own libraries and are not probed.
import { backendAvailability } from '../../../runners/xfer/backends/availability.ts';
import type { BackendName } from '../../../runners/xfer/backends/types.ts';

interface TransportLibrary {
  library: string;
  /** The Debian/Ubuntu package that installs it. */
  debianPackage: string;
}

const TRANSPORTS: Partial<Record<BackendName, TransportLibrary>> = {
  ucx: { library: 'UCX (libucp.so.0)', debianPackage: 'libucx0' },
  libfabric: { library: 'libfabric (libfabric.so.1)', debianPackage: 'libfabric1' },
};

const verdicts = new Map<string, string | undefined>();

/** Why a config on this backend cannot run here, or undefined (a backend without such a library, or it loads). */
export function missingTransportReason(backend: string): string | undefined {
  const transport = TRANSPORTS[backend as BackendName];
  if (!transport) return undefined;
  if (!verdicts.has(backend)) {
    const found = backendAvailability(backend as BackendName);
    verdicts.set(
      backend,
      found.available
        ? undefined
        : `backend ${backend} needs ${transport.library}, which cannot be loaded on this machine (${found.reason}); install the Debian/Ubuntu package ${transport.debianPackage} (apt-get install ${transport.debianPackage})`,
    );
  }
  return verdicts.get(backend);
}
