import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DownloadProgress, formatBytes, parseDownloaded, parseMavenSize } from './download-progress.js';

const url = (file: string) => `https://repo.maven.apache.org/maven2/org/example/x/1/${file}`;
const downloaded = (file: string, size: string) => `[INFO] Downloaded from central: ${url(file)} (${size} at 25 kB/s)`;

describe('download progress', () => {
  it('reads the sizes Maven prints, in decimal units', () => {
    assert.equal(parseMavenSize('612 B'), 612);
    assert.equal(parseMavenSize('11 kB'), 11_000);
    assert.equal(parseMavenSize('1.5 MB'), 1_500_000);
    assert.equal(parseMavenSize('fast'), undefined);
    assert.deepEqual(parseDownloaded(downloaded('a-1.jar', '2.3 MB')), { url: url('a-1.jar'), file: 'a-1.jar', bytes: 2_300_000 });
    assert.equal(parseDownloaded(`[INFO] Downloading from central: ${url('a-1.jar')}`), undefined);
    assert.equal(formatBytes(108_860_403), '108.9 MB');
  });

  it('not a terminal: a line per file of the step with its size and the step so far (pinned sizes), one summary for Maven\'s own files', () => {
    const lines: string[] = [];
    let now = 0;
    const p = new DownloadProgress({ log: (l) => lines.push(l), expected: new Map([['a-1.jar', 3_000_000], ['b-1.jar', 1_000_000]]), now: () => now });
    p.line(downloaded('maven-dependency-plugin-3.8.1.pom', '11 kB'));
    p.line(downloaded('a-1.jar', '3.0 MB'));
    p.line('[INFO] Downloading from central: whatever');
    p.line(downloaded('plexus-utils-3.5.1.jar', '269 kB'));
    p.line(downloaded('b-1.jar', '0 B'));
    now = 4200;
    p.finish();
    assert.deepEqual(lines, [
      '  [1/2] a-1.jar 3.0 MB, 3.0 MB of 4.0 MB (75%)',
      '  [2/2] b-1.jar 1.0 MB, 4.0 MB of 4.0 MB (100%)',
      "  downloaded 2 of 2 files, 4.0 MB, and 2 of Maven's own (plugins, POMs) 280 kB, in 4.2 s",
    ]);
  });

  it('a large file: a line at each quarter when not a terminal; on a terminal one line rewritten, cleared at the end', () => {
    const lines: string[] = [];
    const p = new DownloadProgress({ log: (l) => lines.push(l), expected: new Map([['big.tar.gz', 100_000_000]]) });
    for (const mb of [5, 20, 26, 30, 51, 99]) p.progress('big.tar.gz', mb * 1e6);
    assert.deepEqual(lines, ['  big.tar.gz 26.0 MB of 100.0 MB (26%)', '  big.tar.gz 51.0 MB of 100.0 MB (51%)', '  big.tar.gz 99.0 MB of 100.0 MB (99%)']);

    const written: string[] = [];
    const logged: string[] = [];
    const t = new DownloadProgress({ log: (l) => logged.push(l), tty: (text) => written.push(text), expected: new Map([['big.tar.gz', 100_000_000]]) });
    t.progress('big.tar.gz', 50e6);
    t.line(downloaded('big.tar.gz', '100 MB'));
    t.finish();
    assert.ok(written.every((w) => w.startsWith('\r\x1b[K')), 'every update rewrites the one line');
    assert.match(written[0]!, /big\.tar\.gz 50\.0 MB of 100\.0 MB \(50%\)/);
    assert.match(written[1]!, /\[1\/1\] big\.tar\.gz 100\.0 MB, 100\.0 MB of 100\.0 MB \(100%\)/);
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /^ {2}downloaded 1 of 1 files, 100\.0 MB, in/);
  });

  it('nothing downloaded (Maven\'s local repository had it all): says so', () => {
    const lines: string[] = [];
    new DownloadProgress({ log: (l) => lines.push(l), expected: new Map([['a-1.jar', 1]]) }).finish();
    assert.deepEqual(lines, ["  nothing to download (Maven's local repository had every file)"]);
  });
});
