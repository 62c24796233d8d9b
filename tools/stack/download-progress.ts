// What a first start shows while Maven fetches Kafka and the registry: one line per file the stack
// needs, with its size and the step's progress (files and bytes of the sizes pinned in
// artifacts.lock.json), and one line for the rest Maven downloads for itself (plugins, POMs). On a
// terminal it is one line rewritten in place; elsewhere (CI logs) a line per file, and for a large
// file a line at each quarter. Maven's own log goes to a file (artifacts.ts).

/** Maven's size of a transfer ("612 B", "11 kB", "1.5 MB": decimal units) in bytes. */
export function parseMavenSize(text: string): number | undefined {
  const m = /^([\d.]+)\s*(B|kB|KB|MB|GB)$/.exec(text.trim());
  if (!m) return undefined;
  const scale = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 }[m[2] as 'B' | 'kB' | 'KB' | 'MB' | 'GB'];
  return Math.round(Number(m[1]) * scale);
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

/** A finished transfer in Maven's batch output: `[INFO] Downloaded from central: <url> (11 kB at 25 kB/s)`. */
export function parseDownloaded(line: string): { url: string; file: string; bytes: number | undefined } | undefined {
  const m = /Downloaded from [^:]+: (\S+) \(([^)]*?) at [^)]*\)/.exec(line);
  if (!m) return undefined;
  const url = m[1]!;
  return { url, file: url.slice(url.lastIndexOf('/') + 1), bytes: parseMavenSize(m[2]!) };
}

export interface ProgressOptions {
  /** Writes a whole line (not a terminal: each becomes a line of the log). */
  log: (line: string) => void;
  /** Writes raw text to the terminal (its own line, rewritten with \r); set only on a TTY. */
  tty?: (text: string) => void;
  /** The files of this step, with their sizes where artifacts.lock.json pins them. */
  expected: ReadonlyMap<string, number | undefined>;
  now?: () => number;
}

export class DownloadProgress {
  private readonly started: number;
  private files = 0;
  private bytes = 0;
  private otherFiles = 0;
  private otherBytes = 0;
  /** The large file in flight and the last quarter reported of it. */
  private partial: { file: string; quarter: number } | undefined;
  private readonly total: number | undefined;

  constructor(private readonly opts: ProgressOptions) {
    this.started = (opts.now ?? Date.now)();
    const sizes = [...opts.expected.values()];
    this.total = sizes.every((s) => s !== undefined) ? sizes.reduce<number>((a, s) => a + (s ?? 0), 0) : undefined;
  }

  /** One line of Maven's output. */
  line(text: string): void {
    const done = parseDownloaded(text);
    if (!done) return;
    if (!this.opts.expected.has(done.file)) {
      this.otherFiles++;
      this.otherBytes += done.bytes ?? 0;
      this.status(`Maven's own files: ${this.otherFiles}, ${formatBytes(this.otherBytes)}`);
      return;
    }
    this.files++;
    const size = this.opts.expected.get(done.file) ?? done.bytes ?? 0;
    this.bytes += size;
    if (this.partial?.file === done.file) this.partial = undefined;
    const line = `[${String(this.files).padStart(String(this.opts.expected.size).length)}/${this.opts.expected.size}] ${done.file} ${formatBytes(size)}${this.soFar()}`;
    if (this.opts.tty) this.status(line);
    else this.opts.log(`  ${line}`);
  }

  /** How far a large file in flight is (its partial download on disk). */
  progress(file: string, bytes: number): void {
    const size = this.opts.expected.get(file);
    const of = size ? ` of ${formatBytes(size)} (${Math.floor((100 * bytes) / size)}%)` : '';
    if (this.opts.tty) { this.status(`${file} ${formatBytes(bytes)}${of}`); return; }
    if (!size) return;
    const quarter = Math.floor((4 * bytes) / size);
    if (this.partial?.file === file && quarter <= this.partial.quarter) return;
    this.partial = { file, quarter };
    if (quarter > 0 && quarter < 4) this.opts.log(`  ${file} ${formatBytes(bytes)}${of}`);
  }

  /** The summary line, once Maven is done. */
  finish(): void {
    if (this.opts.tty) this.opts.tty('\r\x1b[K');
    const seconds = (((this.opts.now ?? Date.now)() - this.started) / 1000).toFixed(1);
    const own = this.otherFiles ? `, and ${this.otherFiles} of Maven's own (plugins, POMs) ${formatBytes(this.otherBytes)}` : '';
    this.opts.log(this.files || this.otherFiles
      ? `  downloaded ${this.files} of ${this.opts.expected.size} files, ${formatBytes(this.bytes)}${own}, in ${seconds} s`
      : `  nothing to download (Maven's local repository had every file)`);
  }

  private soFar(): string {
    if (!this.total) return '';
    return `, ${formatBytes(this.bytes)} of ${formatBytes(this.total)} (${Math.floor((100 * this.bytes) / this.total)}%)`;
  }

  private status(text: string): void {
    if (this.opts.tty) this.opts.tty(`\r\x1b[K  ${text}`.slice(0, (process.stdout.columns || 120) + 6));
  }
}
