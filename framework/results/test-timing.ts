// When a test started and ended (its CSV rows and results.json record carry it), and how a
// duration reads in the progress board and the report.

export interface TestTiming {
  start: Date;
  end: Date;
  durationSec: number;
}

/** 3725.4 -> '1h 02m 05s'; 65 -> '1m 05s'; 4.2 -> '4.2s'. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds * 10) / 10}s`;
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m ${sec}s` : `${m}m ${sec}s`;
}
