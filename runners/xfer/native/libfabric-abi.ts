// libfabric's ABI as native/libfabric.ts needs it: constants, the structs it reads or fills, and
// the ops tables whose function pointers it calls (fi_write, fi_cq_read, fi_mr_reg... are static
// inlines in the headers, `ep->rma->write(...)`, not exported symbols). Layouts are those of
// fabric.h, fi_domain.h, fi_endpoint.h, fi_eq.h, fi_cm.h and fi_rma.h (libfabric 1.17, LP64); they
// have only grown at their ends since 1.5, and the ops tables carry their size, checked before a
// call. Type names are prefixed (koffi's type names are process-wide).
import { namedProto, namedStruct } from './named-type.ts';

export const FI_VERSION = (major: number, minor: number): number => (major << 16) | minor;

// Capabilities and mode bits (fabric.h).
export const FI_RMA = 1n << 2n;
export const FI_READ = 1n << 8n;
export const FI_WRITE = 1n << 9n;
export const FI_RECV = 1n << 10n;
export const FI_SEND = 1n << 11n;
export const FI_REMOTE_READ = 1n << 12n;
export const FI_REMOTE_WRITE = 1n << 13n;
export const FI_DELIVERY_COMPLETE = 1n << 28n;
export const FI_HMEM = 1n << 47n;
export const FI_CONTEXT2 = 1n << 52n;
export const FI_CONTEXT = 1n << 59n;
/** Bytes of provider scratch space an operation's context must offer under FI_CONTEXT2. */
export const FI_CONTEXT2_BYTES = 64;

// Memory registration modes (domain_attr->mr_mode).
export const FI_MR_LOCAL = 1 << 2;
export const FI_MR_VIRT_ADDR = 1 << 4;
export const FI_MR_ALLOCATED = 1 << 5;
export const FI_MR_PROV_KEY = 1 << 6;
export const FI_MR_ENDPOINT = 1 << 9;
export const FI_MR_HMEM = 1 << 10;

export const FI_EP_RDM = 3;
export const FI_AV_TABLE = 2;
export const FI_CQ_FORMAT_CONTEXT = 1;
export const FI_WAIT_NONE = 0;
export const FI_WAIT_FD = 3;
export const FI_HMEM_CUDA = 1;
// fi_control commands.
export const FI_GETWAIT = 5;
export const FI_ENABLE = 6;

// Error numbers (fi_errno.h: errno values, then libfabric's own from 256).
export const FI_EAGAIN = 11;
export const FI_ENOSYS = 38;
export const FI_ENODATA = 61;
export const FI_EADDRNOTAVAIL = 99;
export const FI_EAVAIL = 259;

const ptr = 'void *';
const u64 = 'uint64_t';
const size = 'size_t';

export const FiFid = namedStruct('xfer_fi_fid', { fclass: size, context: ptr, ops: ptr });

export const FiInfo = namedStruct('xfer_fi_info', {
  next: ptr, caps: u64, mode: u64, addr_format: 'uint32_t', src_addrlen: size, dest_addrlen: size, src_addr: ptr,
  dest_addr: ptr, handle: ptr, tx_attr: ptr, rx_attr: ptr, ep_attr: ptr, domain_attr: ptr, fabric_attr: ptr, nic: ptr,
});
export const FiTxAttr = namedStruct('xfer_fi_tx_attr', {
  caps: u64, mode: u64, op_flags: u64, msg_order: u64, comp_order: u64, inject_size: size, size, iov_limit: size,
  rma_iov_limit: size, tclass: 'uint32_t',
});
export const FiEpAttr = namedStruct('xfer_fi_ep_attr', {
  type: 'int', protocol: 'uint32_t', protocol_version: 'uint32_t', max_msg_size: size, msg_prefix_size: size,
  max_order_raw_size: size, max_order_war_size: size, max_order_waw_size: size, mem_tag_format: u64, tx_ctx_cnt: size,
  rx_ctx_cnt: size, auth_key_size: size, auth_key: ptr,
});
export const FiDomainAttr = namedStruct('xfer_fi_domain_attr', {
  domain: ptr, name: 'char *', threading: 'int', control_progress: 'int', data_progress: 'int', resource_mgmt: 'int',
  av_type: 'int', mr_mode: 'int', mr_key_size: size, cq_data_size: size, cq_cnt: size, ep_cnt: size,
});
export const FiFabricAttr = namedStruct('xfer_fi_fabric_attr', {
  fabric: ptr, name: 'char *', prov_name: 'char *', prov_version: 'uint32_t', api_version: 'uint32_t',
});

// fid_* objects: a struct fid, then pointers to the class's ops tables.
export const FidFabric = namedStruct('xfer_fid_fabric', { fid: FiFid, ops: ptr });
export const FidDomain = namedStruct('xfer_fid_domain', { fid: FiFid, ops: ptr, mr: ptr });
export const FidAv = namedStruct('xfer_fid_av', { fid: FiFid, ops: ptr });
export const FidCq = namedStruct('xfer_fid_cq', { fid: FiFid, ops: ptr });
export const FidMr = namedStruct('xfer_fid_mr', { fid: FiFid, mem_desc: ptr, key: u64 });
export const FidEp = namedStruct('xfer_fid_ep', { fid: FiFid, ops: ptr, cm: ptr, msg: ptr, rma: ptr });

// Function types of the ops tables' entries that are called.
const proto = (text: string) => namedProto(text);
export const P = {
  close: proto('int xfer_fi_close(void *fid)'),
  bind: proto('int xfer_fi_bind(void *fid, void *bfid, uint64_t flags)'),
  control: proto('int xfer_fi_control(void *fid, int command, void *arg)'),
  domain: proto('int xfer_fi_domain(void *fabric, void *info, _Out_ void **domain, void *context)'),
  trywait: proto('int xfer_fi_trywait(void *fabric, void **fids, int count)'),
  avOpen: proto('int xfer_fi_av_open(void *domain, void *attr, _Out_ void **av, void *context)'),
  cqOpen: proto('int xfer_fi_cq_open(void *domain, void *attr, _Out_ void **cq, void *context)'),
  endpoint: proto('int xfer_fi_endpoint(void *domain, void *info, _Out_ void **ep, void *context)'),
  mrReg: proto(
    'int xfer_fi_mr_reg(void *fid, uint64_t buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key, uint64_t flags, _Out_ void **mr, void *context)',
  ),
  mrRegattr: proto('int xfer_fi_mr_regattr(void *fid, const void *attr, uint64_t flags, _Out_ void **mr)'),
  avInsert: proto('int xfer_fi_av_insert(void *av, const void *addr, size_t count, _Out_ uint64_t *fi_addr, uint64_t flags, void *context)'),
  getname: proto('int xfer_fi_getname(void *fid, void *addr, _Inout_ size_t *addrlen)'),
  cqRead: proto('intptr_t xfer_fi_cq_read(void *cq, void *buf, size_t count)'),
  cqReaderr: proto('intptr_t xfer_fi_cq_readerr(void *cq, void *buf, uint64_t flags)'),
  cqStrerror: proto('const char *xfer_fi_cq_strerror(void *cq, int prov_errno, const void *err_data, void *buf, size_t len)'),
  rmaRead: proto(
    'intptr_t xfer_fi_read(void *ep, uint64_t buf, size_t len, void *desc, uint64_t src_addr, uint64_t addr, uint64_t key, uint64_t context)',
  ),
  rmaWrite: proto(
    'intptr_t xfer_fi_write(void *ep, uint64_t buf, size_t len, void *desc, uint64_t dest_addr, uint64_t addr, uint64_t key, uint64_t context)',
  ),
};

/** Byte offsets of the entries called, in their ops tables (each table starts with its size). */
export const OPS = {
  fid: { close: 8, bind: 16, control: 24 },
  fabric: { domain: 8, trywait: 40 },
  domain: { avOpen: 8, cqOpen: 16, endpoint: 24 },
  mr: { reg: 8, regattr: 24 },
  av: { insert: 8 },
  cq: { read: 8, readerr: 24, strerror: 56 },
  cm: { getname: 16 },
  rma: { read: 8, write: 32 },
} as const;

// Attribute structs passed in (zeroed, larger than today's layout, fields written at these offsets).
/** fi_cq_attr: size @0, flags @8, format @16, wait_obj @20. */
export const CQ_ATTR = { bytes: 128, size: 0, format: 16, waitObj: 20 };
/** fi_av_attr: type @0, rx_ctx_bits @4, count @8. */
export const AV_ATTR = { bytes: 128, type: 0, count: 8 };
/** fi_mr_attr: mr_iov @0, iov_count @8, access @16, offset @24, requested_key @32, iface @64, device @72. */
export const MR_ATTR = { bytes: 256, iov: 0, iovCount: 8, access: 16, requestedKey: 32, iface: 64, device: 72 };
/** fi_cq_err_entry: op_context @0, err @56, prov_errno @60, err_data @64; 88 bytes in 1.17. */
export const CQ_ERR = { bytes: 256, context: 0, err: 56, provErrno: 60, errData: 64 };
