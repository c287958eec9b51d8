// The few etcd v3 key-value calls a rendezvous needs, over etcd's JSON gateway (POST /v3/kv/...,
// keys and values base64): read a key, put, compare-and-swap a counter, delete a prefix. No client
// library: fetch only. Errors name the endpoint and the call.
import { XferError } from './errors.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? '' : Buffer.from(s, 'base64').toString());

/** The end of a prefix's key range (etcd's range_end: the prefix with its last byte incremented). */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix);
  bytes[bytes.length - 1]++;
  return bytes.toString('base64');
}

export interface EtcdValue {
  value: string;
  modRevision: string;
}

export class EtcdKv {
  readonly endpoint: string;

  /** `endpoints`: nixlbench's --etcd_endpoints (a comma list: the first is used). */
  constructor(endpoints: string) {
    const first = endpoints.split(',')[0].trim();
    this.endpoint = (/^https?:\/\//.test(first) ? first : `http://${first}`).replace(/\/+$/, '');
  }

  async get(key: string): Promise<EtcdValue | undefined> {
    const r = (await this.call('range', { key: b64(key) })) as { kvs?: { value?: string; mod_revision: string }[] };
    const kv = r.kvs?.[0];
    return kv ? { value: unb64(kv.value), modRevision: kv.mod_revision } : undefined;
  }

  async put(key: string, value: string): Promise<void> {
    await this.call('put', { key: b64(key), value: b64(value) });
  }

  /** Puts every pair if `key` still has `modRevision` ('0': does not exist yet); whether it did. */
  async putIfUnchanged(key: string, modRevision: string, puts: Record<string, string>): Promise<boolean> {
    const compare =
      modRevision === '0'
        ? { key: b64(key), target: 'CREATE', create_revision: '0', result: 'EQUAL' }
        : { key: b64(key), target: 'MOD', mod_revision: modRevision, result: 'EQUAL' };
    const success = Object.entries(puts).map(([k, v]) => ({ request_put: { key: b64(k), value: b64(v) } }));
    const r = (await this.call('txn', { compare: [compare], success })) as { succeeded?: boolean };
    return r.succeeded === true;
  }

  async deletePrefix(prefix: string): Promise<void> {
    await this.call('deleterange', { key: b64(prefix), range_end: prefixEnd(prefix) });
  }

  private async call(what: string, body: unknown): Promise<unknown> {
    const url = `${this.endpoint}/v3/kv/${what}`;
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new XferError(`etcd ${this.endpoint}: ${what} failed: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
    }
    const text = await response.text();
    if (!response.ok) throw new XferError(`etcd ${this.endpoint}: ${what} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text);
  }
}
