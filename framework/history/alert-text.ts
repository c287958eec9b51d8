// An alert in one line, as `history alerts`, `history regressions`, the digest and the report say it.
import type { Alert } from './alert-store.ts';
import { signedPercent } from './regression.ts';

/** One alert in a line. */
export function describeAlert(a: Alert): string {
  const labels = Object.entries(a.labels).map(([k, v]) => `${k}=${v}`).join(',');
  const range = `${a.lastGoodCommit ? `${a.lastGoodCommit.slice(0, 12)}..` : ''}${a.firstCommit ? a.firstCommit.slice(0, 12) : `run ${a.firstRunId}`}`;
  const state = a.status === 'acked' ? `acknowledged${a.ackBy ? ` by ${a.ackBy}` : ''}: ${a.ackReason}` : a.status === 'closed' ? `closed: back at its level in run ${a.closedRunId}` : `open${a.lastValue !== undefined ? `, last ${a.lastValue.toPrecision(6)}` : ''}`;
  return `${a.id}  ${a.testId} ${a.metric}${labels ? `[${labels}]` : ''}: ${signedPercent(a.change)} against ${a.levelBefore.toPrecision(6)} ${a.unit} (noise ${(a.scaleBefore * 100).toFixed(1)}%, confirmed by ${a.confirmedBy}${a.pValue !== undefined ? `, p ${a.pValue.toPrecision(2)}` : ''}), commits ${range}; ${state}`;
}

