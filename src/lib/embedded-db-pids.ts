import fs from 'node:fs';
import path from 'node:path';

// The embedded PostgreSQL's process files, read to tell whether a cluster's server (and the process of ours that
// started it) is alive: postmaster.pid holds pid, data directory, start time, port, ... one per line.

/** The pid of the postmaster of `clusterDir` when one is alive, else null. */
export function serverPid(clusterDir: string): number | null {
  const pid = readPid(path.join(clusterDir, 'postmaster.pid'));
  if (pid === null || !isAlive(pid)) return null;
  // After a reboot (a restarted container) the recorded pid may belong to an unrelated process.
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres') ? pid : null;
  } catch {
    return pid; // no /proc (macOS): trust the pid
  }
}

/** The port the live server of `clusterDir` listens on (postmaster.pid's fourth line), else null. */
export function runningPort(clusterDir: string): number | null {
  try {
    const port = Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[3]);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    return null;
  }
}

/** The pid on the first line of `file`, else null (no file, or not a pid). */
export function readPid(file: string): number | null {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether process `pid` exists (also when another user owns it). */
export function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, owned by another user
  }
}
