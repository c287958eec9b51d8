// One rank's libfabric resources: the provider (fi_getinfo for RMA on reliable datagram
// endpoints), then its fabric, domain, completion queue, address vector and endpoint, opened in
// order and closed in reverse, also when opening fails halfway.
import { XferError } from '../errors.ts';
import * as A from '../native/libfabric-abi.ts';
import type { CqOps, FabricInfo, Fid, Libfabric, RmaOps } from '../native/libfabric.ts';

/** Memory registration modes the backend can honour (the provider keeps those it needs). */
const MR_MODES = A.FI_MR_LOCAL | A.FI_MR_VIRT_ADDR | A.FI_MR_ALLOCATED | A.FI_MR_PROV_KEY | A.FI_MR_ENDPOINT;
const CAPS = A.FI_RMA | A.FI_READ | A.FI_WRITE | A.FI_REMOTE_READ | A.FI_REMOTE_WRITE;
const CQ_SIZE = 4096;

export interface ProviderChoice {
  /** Provider name ('tcp' matches 'tcp;ofi_rxm'); undefined: FI_PROVIDER's, else libfabric's first. */
  provider?: string;
  /** Domain (NIC or interface); undefined: the provider's first. */
  domain?: string;
}

export interface FabricEndpoint {
  info: FabricInfo;
  fabric: Fid;
  domain: Fid;
  cq: Fid;
  /** The CQ's wait fd, when it has one (tcp here; shm has none). */
  waitFd?: number;
  av: Fid;
  ep: Fid;
  rma: RmaOps;
  cqOps: CqOps;
  /** Closes what is open, in reverse (those `which` accepts: the caller may have closed some), and frees the info. */
  close(which?: (fid: Fid) => boolean): void;
}

/**
 * Opens the endpoint of the first matching provider. `gpu`: ask FI_HMEM (with FI_MR_HMEM) first,
 * as NIXL does, then without. `peers`: the address vector's size hint. `deliveryComplete`:
 * whether operations ask FI_DELIVERY_COMPLETE, by the provider's name.
 */
export function openFabricEndpoint(
  lf: Libfabric,
  choice: ProviderChoice,
  options: { gpu: boolean; peers: number; deliveryComplete: (provider: string) => boolean },
): FabricEndpoint {
  const { gpu, deliveryComplete } = options;
  const { info, list } = findInfo(lf, choice, gpu);
  const opened: [Fid, string][] = [];
  const open = (fid: Fid, what: string) => (opened.push([fid, what]), fid);
  const close = (which: (fid: Fid) => boolean = () => true) => {
    for (const [fid, what] of opened.reverse()) if (which(fid)) lf.close(fid, what);
    opened.length = 0;
    lf.freeInfo(list);
  };
  try {
    if (!deliveryComplete(info.provider)) lf.setTxOpFlags(info.ptr, 0n);
    const fabric = open(lf.openFabric(info.ptr), 'fabric');
    const domain = open(lf.openDomain(fabric, info.ptr), 'domain');
    const withFd = lf.openCq(domain, CQ_SIZE, true);
    const cq = open(withFd ?? lf.openCq(domain, CQ_SIZE, false)!, 'completion queue');
    const av = open(lf.openAv(domain, Math.max(options.peers, 1)), 'address vector');
    const ep = open(lf.openEndpoint(domain, info.ptr), 'endpoint');
    lf.bind(ep, av, 0n, 'fi_ep_bind(av)');
    lf.bind(ep, cq, A.FI_SEND | A.FI_RECV, 'fi_ep_bind(cq)');
    lf.enable(ep, 'fi_enable(ep)');
    let waitFd: number | undefined;
    try {
      if (withFd) waitFd = lf.cqWaitFd(cq);
    } catch {
      // a CQ opened with FI_WAIT_FD whose fd cannot be had (udp here): read it on a timer
    }
    return { info, fabric, domain, cq, waitFd, av, ep, rma: lf.rmaOps(ep), cqOps: lf.cqOps(cq), close };
  } catch (err) {
    close();
    throw err;
  }
}

/** fi_getinfo for RMA on RDM endpoints: with FI_HMEM first where a GPU is there, then without. */
function findInfo(lf: Libfabric, choice: ProviderChoice, gpu: boolean): { info: FabricInfo; list: bigint | null } {
  for (const hmem of gpu ? [true, false] : [false]) {
    const { list, infos } = lf.getInfo({
      provider: choice.provider,
      caps: CAPS | (hmem ? A.FI_HMEM : 0n),
      mode: A.FI_CONTEXT | A.FI_CONTEXT2,
      mrMode: MR_MODES | (hmem ? A.FI_MR_HMEM : 0),
      txOpFlags: A.FI_DELIVERY_COMPLETE,
    });
    const info = infos.find((i) => choice.domain === undefined || i.domain === choice.domain);
    if (info?.provider.split(';')[0] === 'net') {
      lf.freeInfo(list);
      throw new XferError(
        `libfabric ${lf.version()}: the experimental 'net' provider reports a WRITE complete before its data has landed (the engine's verification fails with it); use tcp`,
      );
    }
    if (info) return { info, list };
    lf.freeInfo(list);
  }
  const which = [choice.provider && `provider '${choice.provider}'`, choice.domain && `domain '${choice.domain}'`].filter(Boolean).join(', ');
  const filter = process.env.FI_PROVIDER ? ` with FI_PROVIDER=${process.env.FI_PROVIDER}` : '';
  throw new XferError(
    `libfabric ${lf.version()}: no provider offers RMA on reliable datagram endpoints${which ? ` for ${which}` : ''}${filter} (see \`fi_info -t FI_EP_RDM -c FI_RMA\`)`,
  );
}
