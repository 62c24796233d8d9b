// Fetches Kafka and the Apicurio schema registry from Maven Central with Maven itself (strict
// checksum policy), verifies every file against the SHA-256 sums pinned in artifacts.lock.json,
// and keeps them in the cache directory so a second run downloads nothing. Maven's log goes to a
// file in the cache (named when Maven fails); the terminal gets a line per file (download-progress.ts).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { DownloadProgress } from './download-progress.js';
import { cacheDir, repoRoot, versions } from './paths.js';

/** SHA-256 of every file, and its size in bytes (the progress lines' totals). */
type Lock = { kafka: Record<string, string>; apicurio: Record<string, string>; sizes: Record<string, number> };
const lockPath = join(repoRoot, 'tools/stack/artifacts.lock.json');

export interface Artifacts {
  /** Directory holding every jar the broker needs on its class path. */
  kafkaLibs: string;
  /** The Apicurio Registry runner jar (Quarkus legacy-jar layout, lib/ beside it). */
  registryJar: string;
}

export interface FetchOptions {
  log: (line: string) => void;
  /** Rewrite artifacts.lock.json from what Maven fetched instead of verifying against it. */
  updateLock?: boolean;
}

export async function ensureArtifacts({ log, updateLock = false }: FetchOptions): Promise<Artifacts> {
  const root = cacheDir();
  const kafkaLibs = join(root, `kafka_${versions.scala}-${versions.kafka}`, 'libs');
  const registryHome = join(root, `apicurio-registry-app-${versions.apicurio}`);
  const registryJar = join(registryHome, `apicurio-registry-app-${versions.apicurio}-runner.jar`);
  const lock: Lock = existsSync(lockPath) && !updateLock ? { sizes: {}, ...JSON.parse(readFileSync(lockPath, 'utf8')) as Partial<Lock> } as Lock : { kafka: {}, apicurio: {}, sizes: {} };
  const expected = (files: Record<string, string>) => new Map(Object.keys(files).map((f) => [f, lock.sizes[f]] as const));
  mkdirSync(join(root, 'maven'), { recursive: true });

  if (updateLock || !existsSync(join(kafkaLibs, '.complete'))) {
    const mavenLog = join(root, 'maven', 'kafka.log');
    log(`fetching Apache Kafka ${versions.kafka} (KRaft broker) with Maven into ${kafkaLibs} (Maven's log: ${mavenLog})`);
    // Per process: two first starts at once (two checkouts, one cache) must not share a staging directory.
    const staging = `${kafkaLibs}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    const pom = join(root, 'maven', 'kafka-pom.xml');
    writeFileSync(pom, kafkaPom());
    await maven(['-f', pom, `org.apache.maven.plugins:maven-dependency-plugin:${versions.dependencyPlugin}:copy-dependencies`, `-DoutputDirectory=${staging}`, '-DincludeScope=runtime'], { log, logFile: mavenLog, expected: expected(lock.kafka) });
    lock.kafka = await verify(staging, lock.kafka, updateLock, 'Kafka');
    recordSizes(lock, staging, Object.keys(lock.kafka));
    rmSync(kafkaLibs, { recursive: true, force: true });
    renameSync(staging, kafkaLibs);
    writeFileSync(join(kafkaLibs, '.complete'), new Date().toISOString());
  }

  if (updateLock || !existsSync(join(registryHome, '.complete'))) {
    const mavenLog = join(root, 'maven', 'registry.log');
    log(`fetching Apicurio Registry ${versions.apicurio} with Maven into ${registryHome} (Maven's log: ${mavenLog})`);
    // eslint-disable-next-line no-control-regex
    const localRepo = (await output('mvn', ['-B', '-q', 'help:evaluate', '-Dexpression=settings.localRepository', '-DforceStdout'])).replace(/\x1b\[[0-9;]*m/g, '').trim();
    const downloads = join(localRepo, 'io/apicurio/apicurio-registry-app', versions.apicurio);
    const archive = `apicurio-registry-app-${versions.apicurio}-all.tar.gz`;
    // dependency:copy would resolve the artifact's parent POM, which Apicurio does not publish;
    // dependency:get with transitive=false fetches the archive alone into the local repository.
    await maven([`org.apache.maven.plugins:maven-dependency-plugin:${versions.dependencyPluginGet}:get`, `-Dartifact=io.apicurio:apicurio-registry-app:${versions.apicurio}:tar.gz:all`, '-Dtransitive=false'], { log, logFile: mavenLog, expected: expected(lock.apicurio), watch: { dir: downloads, file: archive } });
    lock.apicurio = await verify(downloads, lock.apicurio, updateLock, 'Apicurio Registry', (f) => f === archive);
    recordSizes(lock, downloads, [archive]);
    const staging = `${registryHome}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    log('unpacking the registry');
    await run('tar', ['-xzf', join(downloads, archive), '-C', staging], log);
    rmSync(registryHome, { recursive: true, force: true });
    renameSync(staging, registryHome);
    writeFileSync(join(registryHome, '.complete'), new Date().toISOString());
  }

  if (updateLock) {
    lock.sizes = Object.fromEntries(Object.entries(lock.sizes).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
    log(`wrote ${lockPath}`);
  }
  return { kafkaLibs, registryJar };
}

function kafkaPom(): string {
  const dep = (g: string, a: string, v: string) => `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by tools/stack/artifacts.ts: the class path of a Kafka broker. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.switchyard.local</groupId>
  <artifactId>kafka-broker-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${dep('org.apache.kafka', `kafka_${versions.scala}`, versions.kafka)}
${dep('ch.qos.reload4j', 'reload4j', versions.reload4j)}
${dep('org.slf4j', 'slf4j-reload4j', versions.slf4j)}
  </dependencies>
</project>
`;
}

/** Checks every file of dir against the pinned SHA-256 sums (or records them when updating the lock). */
async function verify(dir: string, pinned: Record<string, string>, record: boolean, what: string, include: (file: string) => boolean = (f) => !f.startsWith('.')): Promise<Record<string, string>> {
  const files = readdirSync(dir).filter(include).sort();
  const sums: Record<string, string> = {};
  for (const f of files) sums[f] = await sha256(join(dir, f));
  if (record) return sums;
  const problems = [
    ...files.filter((f) => pinned[f] === undefined).map((f) => `${f}: not in artifacts.lock.json`),
    ...Object.keys(pinned).filter((f) => sums[f] === undefined).map((f) => `${f}: missing from the download`),
    ...files.filter((f) => pinned[f] !== undefined && pinned[f] !== sums[f]).map((f) => `${f}: SHA-256 ${sums[f]} differs from the pinned ${pinned[f]}`),
  ];
  if (problems.length > 0) throw new Error(`${what} artifacts do not match tools/stack/artifacts.lock.json:\n  ${problems.join('\n  ')}`);
  return pinned;
}

function sha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file).on('data', (d) => hash.update(d)).on('error', reject).on('end', () => resolve(hash.digest('hex')));
  });
}

/** Keeps the sizes of the verified files, for the next first start's progress lines. */
function recordSizes(lock: Lock, dir: string, files: string[]): void {
  for (const f of files) lock.sizes[f] = statSync(join(dir, f)).size;
}

interface MavenRun {
  log: (line: string) => void;
  /** Every line Maven writes goes here (replaced each run). */
  logFile: string;
  /** The files this step fetches (artifacts.lock.json), with their sizes where pinned. */
  expected: ReadonlyMap<string, number | undefined>;
  /** A large file whose partial download (Maven's `<file>.part`, or a `<file>.*.tmp`) is shown as it grows. */
  watch?: { dir: string; file: string };
}

/**
 * Runs Maven in batch mode with the strict checksum policy, its output into logFile and a line per
 * download on the terminal (DownloadProgress). Fails naming the log, with its last errors.
 */
function maven(args: string[], { log, logFile, expected, watch }: MavenRun): Promise<void> {
  const file = createWriteStream(logFile);
  const progress = new DownloadProgress({ log, expected, ...(process.stdout.isTTY ? { tty: (text: string) => { process.stdout.write(text); } } : {}) });
  const timer = watch ? setInterval(() => { const bytes = partialSize(watch.dir, watch.file); if (bytes !== undefined) progress.progress(watch.file, bytes); }, 500) : undefined;
  const errors: string[] = [];
  const onLine = (line: string) => {
    file.write(`${line}\n`);
    progress.line(line);
    if (/^\[ERROR\]/.test(line) && errors.length < 8) errors.push(line);
  };
  return new Promise<void>((resolve, reject) => {
    const child = spawn('mvn', ['-B', '-C', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    lines(child.stdout, onLine);
    lines(child.stderr, onLine);
    child.on('error', (err) => reject(new Error(`cannot run mvn: ${err.message}`)));
    child.on('exit', (code, signal) => {
      clearInterval(timer);
      progress.finish();
      file.end();
      if (code === 0) resolve();
      else reject(new Error(`mvn exited with ${code ?? signal}; its log: ${logFile}${errors.length ? `\n${errors.join('\n')}` : ''}`));
    });
  });
}

/** The size of the partial download of file in dir, if one is under way. */
function partialSize(dir: string, file: string): number | undefined {
  try {
    const part = readdirSync(dir).find((f) => f === `${file}.part` || (f.startsWith(`${file}.`) && f.endsWith('.tmp')));
    return part ? statSync(join(dir, part)).size : undefined;
  } catch {
    return undefined;
  }
}

/** Calls onLine with each line of a stream, without colour codes. */
function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    // eslint-disable-next-line no-control-regex
    for (const line of parts) { const clean = line.replace(/\x1b\[[0-9;]*m/g, '').trimEnd(); if (clean) onLine(clean); }
  });
  stream.on('end', () => { if (rest.trim()) onLine(rest.trimEnd()); });
}

/** A command's standard output; its standard error only in the error when it fails (Maven writes colour resets there). */
function output(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let errors = '';
    child.stdout.on('data', (d) => { text += d; });
    child.stderr.on('data', (d) => { errors += d; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${text}${errors}`))));
  });
}

function run(cmd: string, args: string[], log: (line: string) => void, show: (line: string) => boolean = () => true): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        // eslint-disable-next-line no-control-regex
        const clean = line.replace(/\x1b\[[0-9;]*m/g, '').trimEnd();
        if (!clean) continue;
        tail.push(clean);
        if (tail.length > 40) tail.shift();
        if (show(clean)) log(`  ${clean.replace(/^\[INFO\] /, '')}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => reject(new Error(`cannot run ${cmd}: ${err.message}`)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail.join('\n')}`))));
  });
}
