// libfabric (OFI) through koffi, over Debian's libfabric1 alone (no headers at run time). Exported
// symbols are called directly (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric, fi_strerror,
// fi_version); everything else goes through the objects' ops tables as the headers' inlines do
// (libfabric-abi.ts has the layouts). Every return code is checked: a failure throws a
// NativeCallError naming the call and libfabric's message. Only what the libfabric backend uses.
import koffi from 'koffi';
import { NativeCallError } from '../errors.ts';
import * as A from './libfabric-abi.ts';
import { lazyBinding, openLibrary } from './load.ts';

export type Fid = bigint;

/** What the backend needs to know of one fi_info of fi_getinfo's list. */
export interface FabricInfo {
  /** The fi_info itself; valid until the list is freed. */
  ptr: bigint;
  /** fabric_attr->prov_name, e.g. 'tcp;ofi_rxm', 'shm', 'efa'. */
  provider: string;
  fabric: string;
  domain: string;
  caps: bigint;
  mrMode: number;
  mrKeySize: number;
  txSize: number;
  maxMsgSize: bigint;
}

export interface InfoQuery {
  /** Restricts to one provider (fabric_attr->prov_name; 'tcp' also matches 'tcp;ofi_rxm'). */
  provider?: string;
  caps: bigint;
  mode: bigint;
  mrMode: number;
  /** Completion semantics every operation of the endpoint gets (tx_attr->op_flags). */
  txOpFlags: bigint;
}

export interface CqError {
  context: bigint;
  err: number;
  message: string;
}

/**
 * What a post's return code means: posted, post again later (after reading the CQ), or an error.
 * -FI_EAGAIN: the provider's queue is full. -FI_EADDRNOTAVAIL: tcp's first post to a peer connects,
 * and on a host busy with short connections the kernel had no local port free for it at that
 * instant (a loaded test run saw fi_read fail so once); the next post connects again.
 */
export function postOutcome(rc: number): 'posted' | 'again' | 'error' {
  if (rc === 0) return 'posted';
  return rc === -A.FI_EAGAIN || rc === -A.FI_EADDRNOTAVAIL ? 'again' : 'error';
}

/** fi_write/fi_read: true when posted, false when it must be posted again (postOutcome). */
export interface RmaOps {
  write(buf: bigint, len: number, desc: bigint | null, dest: bigint, addr: bigint, key: bigint, context: bigint): boolean;
  read(buf: bigint, len: number, desc: bigint | null, src: bigint, addr: bigint, key: bigint, context: bigint): boolean;
}

export interface CqOps {
  /** fi_cq_read into `entries` (8 bytes per context): how many, 0 when none, -1 when an error entry waits. */
  read(entries: Buffer): number;
  readErr(): CqError;
}

export interface Libfabric {
  /** "1.17" */
  version(): string;
  strerror(code: number): string;
  /** fi_getinfo: the list (free it with freeInfo) and its entries; empty when nothing matches. */
  getInfo(query: InfoQuery): { list: bigint | null; infos: FabricInfo[] };
  freeInfo(list: bigint | null): void;
  /** Sets the completion semantics the endpoint opened from `info` gives every operation. */
  setTxOpFlags(info: bigint, flags: bigint): void;
  openFabric(info: bigint): Fid;
  openDomain(fabric: Fid, info: bigint): Fid;
  /** A context-format CQ; with `waitFd` a CQ with an fd to poll on, or null when the provider has none. */
  openCq(domain: Fid, size: number, waitFd: boolean): Fid | null;
  /** The CQ's wait fd (FI_GETWAIT). */
  cqWaitFd(cq: Fid): number;
  openAv(domain: Fid, count: number): Fid;
  openEndpoint(domain: Fid, info: bigint): Fid;
  bind(fid: Fid, to: Fid, flags: bigint, what: string): void;
  enable(fid: Fid, what: string): void;
  /** fi_getname: this endpoint's address as peers insert it. */
  getName(ep: Fid): Buffer;
  avInsert(av: Fid, address: Buffer): bigint;
  /** fi_mr_reg, or fi_mr_regattr for device memory (iface FI_HMEM_CUDA and the device). */
  mrReg(domain: Fid, address: bigint, length: number, access: bigint, requestedKey: bigint, cudaDevice?: number): Fid;
  mrDesc(mr: Fid): bigint | null;
  mrKey(mr: Fid): bigint;
  /** The endpoint's fi_write/fi_read, resolved once (they are called per request). */
  rmaOps(ep: Fid): RmaOps;
  /** The CQ's fi_cq_read/fi_cq_readerr, resolved once. */
  cqOps(cq: Fid): CqOps;
  /** fi_trywait: true when it is safe to block on the wait fd. */
  tryWait(fabric: Fid, cq: Fid): boolean;
  close(fid: Fid, what: string): void;
}

export const libfabric = lazyBinding((): Libfabric => {
  const lib = openLibrary('libfabric', ['libfabric.so.1', 'libfabric.so']);
  const f = {
    version: lib.func('uint32_t fi_version(void)'),
    getinfo: lib.func('int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags, const void *hints, _Out_ void **info)'),
    freeinfo: lib.func('void fi_freeinfo(void *info)'),
    dupinfo: lib.func('void *fi_dupinfo(const void *info)'),
    fabric: lib.func('int fi_fabric(void *attr, _Out_ void **fabric, void *context)'),
    strerror: lib.func('const char *fi_strerror(int errnum)'),
  };
  const rawVersion = f.version() as number;
  // The newest API this module knows: a newer library serves it unchanged, an older one its own.
  const apiVersion = Math.min(rawVersion, A.FI_VERSION(1, 18));
  const strerror = (code: number) => f.strerror(Math.abs(code)) as string;
  const fail = (call: string, rc: number): never => {
    throw new NativeCallError('libfabric', call, rc, strerror(rc));
  };
  const check = (rc: number | bigint, call: string): void => {
    if (Number(rc) !== 0) fail(call, Number(rc));
  };
  const u64 = (v: number | bigint) => BigInt(v);
  const pointerAt = (p: bigint, offset: number) => koffi.decode(p, offset, 'void *') as bigint | null;

  // Decoded function pointers, by address: the tables of one provider are shared by its objects.
  const functions = new Map<bigint, (...args: unknown[]) => unknown>();
  /** The function at `entry` of the ops table that `fid + tableOffset` points to. */
  const op = (fid: Fid, tableOffset: number, entry: number, type: ReturnType<typeof koffi.proto>, what: string) => {
    const table = pointerAt(fid, tableOffset);
    if (!table) fail(`${what} (no ops table)`, -A.FI_ENOSYS);
    const tableSize = Number(koffi.decode(table!, 0, 'size_t'));
    const fn = tableSize > entry ? pointerAt(table!, entry) : null;
    if (!fn) fail(`${what} (not provided by this provider)`, -A.FI_ENOSYS);
    let decoded = functions.get(fn!);
    if (!decoded) functions.set(fn!, (decoded = koffi.decode(fn!, type) as (...args: unknown[]) => unknown));
    return decoded;
  };
  const FID_OPS = koffi.offsetof(A.FiFid, 'ops');
  const OPS2 = koffi.offsetof(A.FidDomain, 'ops'); // first class-specific table of every fid_* object
  const fidOp = (fid: Fid, entry: number, type: ReturnType<typeof koffi.proto>, what: string) => op(fid, FID_OPS, entry, type, what);
  /** Runs a call that creates an object through its last-but-one out parameter. */
  const created = (call: (out: [bigint | null]) => number, what: string): Fid => {
    const out: [bigint | null] = [null];
    check(call(out), what);
    if (!out[0]) fail(`${what} (returned no object)`, -A.FI_ENOSYS);
    return out[0]!;
  };

  const summarize = (p: bigint): FabricInfo => {
    const info = koffi.decode(p, A.FiInfo) as Record<string, bigint | number | null>;
    const tx = koffi.decode(info.tx_attr, A.FiTxAttr) as Record<string, number | bigint>;
    const ep = koffi.decode(info.ep_attr, A.FiEpAttr) as Record<string, number | bigint>;
    const domain = koffi.decode(info.domain_attr, A.FiDomainAttr) as Record<string, number | string | bigint>;
    const fabric = koffi.decode(info.fabric_attr, A.FiFabricAttr) as Record<string, string | number>;
    return {
      ptr: p,
      provider: String(fabric.prov_name ?? ''),
      fabric: String(fabric.name ?? ''),
      domain: String(domain.name ?? ''),
      caps: u64(info.caps as number),
      mrMode: Number(domain.mr_mode),
      mrKeySize: Number(domain.mr_key_size),
      txSize: Number(tx.size),
      maxMsgSize: u64(ep.max_msg_size),
    };
  };
  const matches = (provider: string | undefined, info: FabricInfo) =>
    provider === undefined || info.provider === provider || info.provider.split(';')[0] === provider;

  return {
    version: () => `${rawVersion >>> 16}.${rawVersion & 0xffff}`,
    strerror,
    getInfo(q) {
      const hints = f.dupinfo(null) as bigint | null;
      if (!hints) fail('fi_allocinfo', -12);
      try {
        const h = koffi.decode(hints, A.FiInfo) as Record<string, bigint>;
        koffi.encode(hints, koffi.offsetof(A.FiInfo, 'caps'), 'uint64_t', q.caps);
        koffi.encode(hints, koffi.offsetof(A.FiInfo, 'mode'), 'uint64_t', q.mode);
        koffi.encode(h.ep_attr, koffi.offsetof(A.FiEpAttr, 'type'), 'int', A.FI_EP_RDM);
        koffi.encode(h.domain_attr, koffi.offsetof(A.FiDomainAttr, 'mr_mode'), 'int', q.mrMode);
        koffi.encode(h.domain_attr, koffi.offsetof(A.FiDomainAttr, 'av_type'), 'int', A.FI_AV_TABLE);
        koffi.encode(h.tx_attr, koffi.offsetof(A.FiTxAttr, 'op_flags'), 'uint64_t', q.txOpFlags);
        const list: [bigint | null] = [null];
        const rc = f.getinfo(apiVersion, null, null, 0n, hints, list) as number;
        if (rc === -A.FI_ENODATA) return { list: null, infos: [] };
        check(rc, 'fi_getinfo');
        const infos: FabricInfo[] = [];
        for (let p = list[0]; p; p = pointerAt(p, 0)) infos.push(summarize(p));
        return { list: list[0], infos: infos.filter((i) => matches(q.provider, i)) };
      } finally {
        f.freeinfo(hints);
      }
    },
    freeInfo: (list) => void (list && f.freeinfo(list)),
    setTxOpFlags: (info, flags) => koffi.encode(koffi.decode(info, A.FiInfo).tx_attr, koffi.offsetof(A.FiTxAttr, 'op_flags'), 'uint64_t', flags),
    openFabric: (info) => created((out) => f.fabric(koffi.decode(info, A.FiInfo).fabric_attr, out, null) as number, 'fi_fabric'),
    openDomain: (fabric, info) =>
      created((out) => op(fabric, OPS2, A.OPS.fabric.domain, A.P.domain, 'fi_domain')(fabric, info, out, null) as number, 'fi_domain'),
    openCq(domain, size, waitFd) {
      const attr = Buffer.alloc(A.CQ_ATTR.bytes);
      attr.writeBigUInt64LE(BigInt(size), A.CQ_ATTR.size);
      attr.writeInt32LE(A.FI_CQ_FORMAT_CONTEXT, A.CQ_ATTR.format);
      attr.writeInt32LE(waitFd ? A.FI_WAIT_FD : A.FI_WAIT_NONE, A.CQ_ATTR.waitObj);
      const out: [bigint | null] = [null];
      const rc = op(domain, OPS2, A.OPS.domain.cqOpen, A.P.cqOpen, 'fi_cq_open')(domain, attr, out, null) as number;
      if (rc !== 0 && waitFd) return null; // no fd-based waiting here: the caller polls instead
      check(rc, 'fi_cq_open');
      return out[0]!;
    },
    cqWaitFd(cq) {
      const fd = Buffer.alloc(8);
      check(fidOp(cq, A.OPS.fid.control, A.P.control, 'fi_control(FI_GETWAIT)')(cq, A.FI_GETWAIT, fd) as number, 'fi_control(FI_GETWAIT)');
      return fd.readInt32LE(0);
    },
    openAv(domain, count) {
      const attr = Buffer.alloc(A.AV_ATTR.bytes);
      attr.writeInt32LE(A.FI_AV_TABLE, A.AV_ATTR.type);
      attr.writeBigUInt64LE(BigInt(count), A.AV_ATTR.count);
      return created((out) => op(domain, OPS2, A.OPS.domain.avOpen, A.P.avOpen, 'fi_av_open')(domain, attr, out, null) as number, 'fi_av_open');
    },
    openEndpoint: (domain, info) =>
      created((out) => op(domain, OPS2, A.OPS.domain.endpoint, A.P.endpoint, 'fi_endpoint')(domain, info, out, null) as number, 'fi_endpoint'),
    bind: (fid, to, flags, what) => check(fidOp(fid, A.OPS.fid.bind, A.P.bind, what)(fid, to, flags) as number, what),
    enable: (fid, what) => check(fidOp(fid, A.OPS.fid.control, A.P.control, what)(fid, A.FI_ENABLE, null) as number, what),
    getName(ep) {
      const cm = koffi.offsetof(A.FidEp, 'cm');
      const getname = op(ep, cm, A.OPS.cm.getname, A.P.getname, 'fi_getname');
      const len = [256];
      let buf = Buffer.alloc(len[0]);
      let rc = getname(ep, buf, len) as number;
      if (rc === -265 /* FI_ETOOSMALL */ && len[0] > buf.length) rc = getname(ep, (buf = Buffer.alloc(len[0])), len) as number;
      check(rc, 'fi_getname');
      return Buffer.from(buf.subarray(0, len[0]));
    },
    avInsert(av, address) {
      const out = [0n];
      const n = op(av, OPS2, A.OPS.av.insert, A.P.avInsert, 'fi_av_insert')(av, address, 1, out, 0n, null) as number;
      if (n !== 1) fail(`fi_av_insert (${n} of 1 address inserted)`, n < 0 ? n : -A.FI_EAVAIL);
      return u64(out[0]);
    },
    mrReg(domain, address, length, access, requestedKey, cudaDevice) {
      const mrTable = koffi.offsetof(A.FidDomain, 'mr');
      if (cudaDevice === undefined) {
        const reg = op(domain, mrTable, A.OPS.mr.reg, A.P.mrReg, 'fi_mr_reg');
        return created((out) => reg(domain, address, length, access, 0n, requestedKey, 0n, out, null) as number, `fi_mr_reg(${length} bytes)`);
      }
      const iov = Buffer.alloc(16);
      iov.writeBigUInt64LE(address, 0);
      iov.writeBigUInt64LE(BigInt(length), 8);
      const attr = Buffer.alloc(A.MR_ATTR.bytes);
      attr.writeBigUInt64LE(koffi.address(iov) as bigint, A.MR_ATTR.iov);
      attr.writeBigUInt64LE(1n, A.MR_ATTR.iovCount);
      attr.writeBigUInt64LE(access, A.MR_ATTR.access);
      attr.writeBigUInt64LE(requestedKey, A.MR_ATTR.requestedKey);
      attr.writeInt32LE(A.FI_HMEM_CUDA, A.MR_ATTR.iface);
      attr.writeInt32LE(cudaDevice, A.MR_ATTR.device);
      const regattr = op(domain, mrTable, A.OPS.mr.regattr, A.P.mrRegattr, 'fi_mr_regattr');
      return created((out) => regattr(domain, attr, 0n, out) as number, `fi_mr_regattr(${length} bytes of CUDA device ${cudaDevice})`);
    },
    mrDesc: (mr) => pointerAt(mr, koffi.offsetof(A.FidMr, 'mem_desc')),
    mrKey: (mr) => u64(koffi.decode(mr, koffi.offsetof(A.FidMr, 'key'), 'uint64_t') as number),
    rmaOps(ep) {
      const rma = koffi.offsetof(A.FidEp, 'rma');
      const write = op(ep, rma, A.OPS.rma.write, A.P.rmaWrite, 'fi_write');
      const read = op(ep, rma, A.OPS.rma.read, A.P.rmaRead, 'fi_read');
      const posted = (rc: number, call: string, len: number) => {
        const outcome = postOutcome(rc);
        return outcome === 'posted' || (outcome === 'again' ? false : fail(`${call}(${len} bytes)`, rc));
      };
      return {
        write: (buf, len, desc, dest, addr, key, context) => posted(Number(write(ep, buf, len, desc, dest, addr, key, context)), 'fi_write', len),
        read: (buf, len, desc, src, addr, key, context) => posted(Number(read(ep, buf, len, desc, src, addr, key, context)), 'fi_read', len),
      };
    },
    cqOps(cq) {
      const read = op(cq, OPS2, A.OPS.cq.read, A.P.cqRead, 'fi_cq_read');
      const readerr = op(cq, OPS2, A.OPS.cq.readerr, A.P.cqReaderr, 'fi_cq_readerr');
      return {
        read(entries) {
          const n = Number(read(cq, entries, entries.length / 8));
          if (n === -A.FI_EAGAIN) return 0;
          if (n === -A.FI_EAVAIL) return -1;
          return n < 0 ? fail('fi_cq_read', n) : n;
        },
        readErr() {
          const entry = Buffer.alloc(A.CQ_ERR.bytes);
          const n = Number(readerr(cq, entry, 0n));
          if (n !== 1) fail('fi_cq_readerr', n < 0 ? n : -A.FI_EAVAIL);
          const err = entry.readInt32LE(A.CQ_ERR.err);
          const provErrno = entry.readInt32LE(A.CQ_ERR.provErrno);
          const errData = entry.readBigUInt64LE(A.CQ_ERR.errData);
          const base = strerror(err);
          let detail = '';
          try {
            const text = Buffer.alloc(256);
            detail = (op(cq, OPS2, A.OPS.cq.strerror, A.P.cqStrerror, 'fi_cq_strerror')(cq, provErrno, errData || null, text, text.length) as string | null) ?? '';
          } catch {
            // no provider message: libfabric's alone
          }
          return { context: entry.readBigUInt64LE(A.CQ_ERR.context), err, message: detail && detail !== base ? `${base} (${detail})` : base };
        },
      };
    },
    tryWait(fabric, cq) {
      const fids = Buffer.alloc(8);
      fids.writeBigUInt64LE(cq, 0);
      const rc = op(fabric, OPS2, A.OPS.fabric.trywait, A.P.trywait, 'fi_trywait')(fabric, fids, 1) as number;
      if (rc === -A.FI_EAGAIN) return false;
      check(rc, 'fi_trywait');
      return true;
    },
    close: (fid, what) => check(fidOp(fid, A.OPS.fid.close, A.P.close, `fi_close(${what})`)(fid) as number, `fi_close(${what})`),
  };
});
