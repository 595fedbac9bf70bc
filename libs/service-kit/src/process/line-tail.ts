/**
 * Splits a child's byte stream into lines and keeps the most recent ones, so a failed start can
 * quote what the service said last without re-reading its log file.
 */
export class LineTail {
  private readonly lines: string[] = [];
  private partial = '';

  /**
   * @param capacity lines kept (oldest dropped first); default 200.
   * @param maxLineLength characters kept per line (a runaway line must not grow memory); default 4096.
   */
  constructor(
    private readonly capacity = 200,
    private readonly maxLineLength = 4096,
  ) {}

  /** Feeds a chunk; calls `onLine` for each line it completes. */
  push(chunk: string, onLine?: (line: string) => void): void {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop() ?? '';
    // A chunk without a newline can still be huge (a binary dump); cap the pending part too.
    if (this.partial.length > this.maxLineLength) this.partial = this.partial.slice(0, this.maxLineLength);
    for (const raw of parts) this.add(raw, onLine);
  }

  /** Flushes a trailing line that had no newline (the stream ended). */
  end(onLine?: (line: string) => void): void {
    if (this.partial.length > 0) this.add(this.partial, onLine);
    this.partial = '';
  }

  /** The last `n` complete lines, oldest first. */
  last(n = 40): string[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }

  private add(raw: string, onLine?: (line: string) => void): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length === 0) return;
    const kept = line.length > this.maxLineLength ? `${line.slice(0, this.maxLineLength)}…` : line;
    this.lines.push(kept);
    if (this.lines.length > this.capacity) this.lines.shift();
    onLine?.(kept);
  }
}

/** Formats a service's last lines as an indented block for an error message or a test failure. */
export function formatTail(service: string, lines: readonly string[], logFile?: string): string {
  const header = `--- last ${lines.length} line(s) of ${service}${logFile ? ` (${logFile})` : ''} ---`;
  const body = lines.length > 0 ? lines.map((l) => `  ${l}`).join('\n') : '  (no output)';
  return `${header}\n${body}`;
}
