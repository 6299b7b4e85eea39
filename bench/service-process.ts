import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';

/** The metrics token of the service instances the scenarios start (production answers /metrics only with one). */
export const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef0123';

/** The process listening on the service's port (Linux: /proc), or null when it cannot be found. */
export function servicePid(baseUrl: string): number | null {
  const port = Number(new URL(baseUrl).port);
  // A service listening on '::' appears in tcp6 only.
  const listening = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) => {
    try {
      return readFileSync(f, 'utf8').split('\n').slice(1);
    } catch {
      return [];
    }
  });
  const inode = listening.map((l) => l.trim().split(/\s+/)).find((f) => f[3] === '0A' && parseInt(f[1]?.split(':').pop() ?? '', 16) === port)?.[9];
  if (!inode) return null;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const owns = fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
      } catch {
        return false;
      }
    });
    if (owns) return Number(pid);
  }
  return null;
}

/** Resident set (VmRSS) and its peak so far (VmHWM) of a process, in MB. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/** Starts a new peak (VmHWM) at the current resident set; false where the kernel or permissions do not allow it. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
