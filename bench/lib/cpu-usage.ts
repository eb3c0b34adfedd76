import fs from 'node:fs';

/**
 * Where the machine's CPU goes while a bench window runs, by the part of the test that spends it: the server under
 * test (the service or the baseline's), the database (every `postgres:` process of this machine: backends and the
 * server's own workers), this process (the load generator) and everything else. Read from /proc (Linux), so only
 * a database server on this machine is seen; elsewhere, or without /proc, the figures are absent.
 */
export interface CpuSpent {
  /** CPU seconds (user + system) per part over the window. */
  server: number;
  database: number;
  loadGenerator: number;
  other: number;
  /** Wall-clock seconds of the window. */
  wall: number;
}

/** A reading of every process's CPU time; two readings make a {@link CpuSpent}. */
export interface CpuReading {
  at: bigint;
  /** pid → [part, CPU seconds so far]. */
  processes: Map<number, [keyof Omit<CpuSpent, 'wall'>, number]>;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: what /proc/<pid>/stat counts in on every Linux architecture we run on

/**
 * Reads the CPU time of every process now; `serverPid` is the server under test. @returns null where there is no
 * /proc to read.
 */
export function readCpu(serverPid: number | undefined): CpuReading | null {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const processes: CpuReading['processes'] = new Map();
  for (const d of pids) {
    const pid = Number(d);
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // Fields after the command name, which may itself hold spaces and parentheses: utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
      processes.set(pid, [partOf(pid, serverPid, fs.readFileSync(`/proc/${d}/cmdline`, 'latin1')), seconds]);
    } catch {
      // The process ended between the listing and the read: what it spent since the last reading is not counted.
    }
  }
  return { at: process.hrtime.bigint(), processes };
}

function partOf(pid: number, serverPid: number | undefined, cmdline: string): keyof Omit<CpuSpent, 'wall'> {
  if (pid === serverPid) return 'server';
  if (pid === process.pid) return 'loadGenerator';
  return cmdline.startsWith('postgres:') || /(^|\/)postgres\0/.test(cmdline) ? 'database' : 'other';
}

/** What each part spent between two readings (a process started in between counts from zero). */
export function cpuBetween(before: CpuReading, after: CpuReading): CpuSpent {
  const spent: CpuSpent = { ...NO_CPU };
  for (const [pid, [part, seconds]] of after.processes) {
    spent[part] += Math.max(0, seconds - (before.processes.get(pid)?.[1] ?? 0));
  }
  spent.wall = Number(after.at - before.at) / 1e9;
  return spent;
}

/** The sum of several windows' spending. */
export function addCpu(a: CpuSpent, b: CpuSpent): CpuSpent {
  return {
    server: a.server + b.server,
    database: a.database + b.database,
    loadGenerator: a.loadGenerator + b.loadGenerator,
    other: a.other + b.other,
    wall: a.wall + b.wall,
  };
}

/** Nothing spent yet: the start of {@link addCpu}'s sum. */
export const NO_CPU: CpuSpent = { server: 0, database: 0, loadGenerator: 0, other: 0, wall: 0 };
