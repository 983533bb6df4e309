import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU time a process has used so far (user + system, all its threads), in µs, from Linux's
 * /proc/<pid>/stat; undefined elsewhere. CPU per request is steadier than requests per second on
 * a shared machine: it does not count the time other processes held the cores.
 */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
