/**
 * Where the debug_ profiling methods may write: only under `[json-rpc] profiles-dir` (default
 * `<home>/profiles`). A file name is taken relative to that directory; one that resolves outside
 * it (`..`, an absolute path elsewhere, a symbolic link anywhere on the way) is refused with
 * ProfilePathError before anything is written. The file itself is opened with O_NOFOLLOW, so a
 * link planted after the check is not followed either.
 */
import fs from 'node:fs';
import path from 'node:path';

export class ProfilePathError extends Error {
  readonly code = 'PROFILE_PATH';
  constructor(message: string) {
    super(message);
    this.name = 'ProfilePathError';
  }
}

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

export class ProfilesDir {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /**
   * The absolute path of `file` under the directory (created on first use), its parent directories
   * made. Throws ProfilePathError when it would land outside.
   */
  resolve(file: unknown): string {
    const target = this.checkName(file);
    fs.mkdirSync(this.dir, { recursive: true });
    const realDir = fs.realpathSync(this.dir);
    // Every existing component between the directory and the file must be a plain directory (no link).
    const rel = path.relative(this.dir, target).split(path.sep);
    let cur = this.dir;
    for (let i = 0; i < rel.length; i++) {
      cur = path.join(cur, rel[i]!);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(cur);
      } catch {
        break; // the rest does not exist yet
      }
      if (st.isSymbolicLink()) throw new ProfilePathError(`file ${JSON.stringify(file)} goes through a symbolic link (${cur}); refused`);
      if (i < rel.length - 1 && !st.isDirectory()) throw new ProfilePathError(`${cur} is not a directory`);
      if (i === rel.length - 1 && !st.isFile()) throw new ProfilePathError(`${cur} exists and is not a regular file`);
    }
    const parent = path.dirname(target);
    fs.mkdirSync(parent, { recursive: true });
    if (!inside(realDir, fs.realpathSync(parent))) throw new ProfilePathError(`file ${JSON.stringify(file)} resolves outside the profiles directory`);
    return target;
  }

  /** The lexical checks alone (a name given, inside the directory, not the directory): the path. */
  checkName(file: unknown): string {
    if (typeof file !== 'string' || file.trim() === '') throw new ProfilePathError('a file name is required');
    if (file.includes('\0')) throw new ProfilePathError('file name contains a NUL byte');
    const target = path.resolve(this.dir, file);
    if (!inside(this.dir, target) || target === this.dir) {
      throw new ProfilePathError(`file ${JSON.stringify(file)} is outside the profiles directory (${this.dir})`);
    }
    return target;
  }

  /** Opens `file` (resolved as above) for writing, truncating it, without following a link. */
  open(file: unknown): { path: string; fd: number } {
    const p = this.resolve(file);
    const c = fs.constants;
    const fd = fs.openSync(p, c.O_WRONLY | c.O_CREAT | c.O_TRUNC | (c.O_NOFOLLOW ?? 0), 0o644);
    return { path: p, fd };
  }

  /** Writes a whole file under the directory. */
  write(file: unknown, data: string | Uint8Array): string {
    const { path: p, fd } = this.open(file);
    try {
      fs.writeFileSync(fd, data);
    } finally {
      fs.closeSync(fd);
    }
    return p;
  }
}

/**
 * One file per thread from one user-given name: `cpu.prof` → `cpu.main.cpuprofile`,
 * `cpu.worker-3.cpuprofile` (the extension is DevTools' `.cpuprofile`, which it needs to open it).
 */
export function threadFileName(file: string, thread: string, ext: string): string {
  const base = file.replace(/\.(cpuprofile|prof|pprof|out|json|heapsnapshot|trace)$/i, '');
  return `${base}.${thread}${ext}`;
}
