// The file references of the repository's documents, and whether each names something that exists.
// tools/doc-references.test.ts runs it over ARCHITECTURE.md, docs/internals/*.md, docs/*.md and
// README.md. The rules, strict on purpose (a reference that fits none of them fails):
//
// What counts as a reference:
// - a Markdown link target `[text](target)`, without its `#anchor`; `http(s):`/`mailto:` targets
//   and pure anchors are not files. Resolved against the linking document's folder, exactly: it
//   must be a tracked file, or a folder holding tracked files.
// - in inline code (fenced blocks are examples, not read), each word — the span split at white
//   space and `,;()`, with a trailing `:line[:column]` dropped — that is made of path characters
//   (letters, digits, `._-@/*`) and either contains a `/` or ends in a file extension of
//   FILE_EXTENSIONS. So `config.ts`, `kafka/topics.ts`, `services/delivery/` are references;
//   `delivery.retry.N`, `pipeline.DeliveryTask` (topics, record names), `KAFKA_BROKERS`,
//   `acks=all` and `<prefix>fanout-p<N>` are not.
//
// Not repository paths, and so not looked up in git (each still has to be true):
// - a word starting with `/` is an HTTP route (`/v1/batch`, `/readyz`); one with `://` a URL;
// - a MIME type (`application/json`): a first segment of MIME_TYPES and no file extension; an
//   address block (`127.0.0.0/8`);
// - run-time output, any word under a folder of RUNTIME_FOLDERS (`.switchyard/secure/`, the local
//   stack's data; `test-artifacts/`, screenshots): made by a run, git-ignored (the test checks
//   .gitignore names each);
// - build output, any word with a `dist` segment (`dist/`, `dist/cjs/`): made by `npm run build`
//   or `npm pack`, never tracked; what comes before `dist/`, if anything, must exist (in the
//   repository or under node_modules/);
// - an npm package or a file in one (`@segment/analytics-next`, `undici/lib/core/errors.js`): a
//   word naming no tracked file that exists under node_modules/ as written; kafkajs's own modules may be
//   named by their path in its source tree (`consumer/filterAbortedMessages.js`: the kafkajs
//   corrections replace them), which must exist under node_modules/kafkajs/src/;
// - the few words in NOT_PATHS, each with why.
//
// How a repository reference resolves (tracked files only, from `git ls-files`):
// - a word with a file extension names a file: a tracked file whose path is the word, or ends with
//   `/` and the word — so a bare `task-runner.ts` in "Delivery (`services/delivery`)" is found as
//   services/delivery/src/task-runner.ts. At least one match is enough: documents name files
//   relative to the section's service, and which service is for the reader to see in the text;
// - a word ending in `/`, or with no extension, names a folder holding tracked files (matched the
//   same way, as a whole path or a trailing run of segments) or an extensionless file (`.ci/run`);
// - but a bare document name (`fanout.md`, no `/`) names a document beside the one that names it:
//   documents name others by their path, and a bare `client-library.md` elsewhere names something
//   the reader cannot find;
// - `*` matches within one segment (`*.test.ts`).
import { existsSync } from 'node:fs';
import { join, normalize, posix } from 'node:path';

export const FILE_EXTENSIONS = ['ts', 'mts', 'js', 'mjs', 'cjs', 'json', 'md', 'avsc', 'yaml', 'yml', 'html', 'css', 'png', 'sh', 'Containerfile', 'lock'] as const;
export const MIME_TYPES = ['application', 'text', 'image', 'multipart'] as const;
/** Git-ignored folders that runs create; a word under one names run-time output. */
export const RUNTIME_FOLDERS = ['.switchyard', 'test-artifacts', 'bench-results'] as const;

/** Words that look like paths and are not files of this repository or of a dependency, and why. */
export const NOT_PATHS: Readonly<Record<string, string>> = {
  'Switchyard/1.0': "delivery's User-Agent header (docs/delivery.md)",
  'tls/ca.pem': "in the secure stack's folder .switchyard/secure/, made at start (docs/local-stack.md)",
  'registry/config/application.properties': "the registry's settings in the secure stack's folder, written at start (docs/local-stack.md)",
  'kafka-acls.sh': "Kafka's own tool, in the Kafka distribution the stack fetches (docs/local-stack.md)",
  '05-full-page.png': 'a screenshot test/debugger.test.ts saves under test-artifacts/debugger/ (docs/testing.md)',
  'standalone.js': "a file of analytics.js's published bundle, @segment/analytics-next/dist/umd/ (docs/tracking-api.md)",
};

export interface Reference {
  readonly doc: string;
  readonly line: number;
  readonly kind: 'link' | 'code';
  readonly text: string;
}

const PATH_WORD = /^[\w.@*-][\w.@*/-]*$/;
const EXTENSION = new RegExp(`\\.(${FILE_EXTENSIONS.join('|')})$`);

/** Every link target and path-like inline-code word of a Markdown document, with its line. */
export function extractReferences(doc: string, markdown: string): Reference[] {
  const refs: Reference[] = [];
  let fenced = false;
  markdown.split('\n').forEach((lineText, i) => {
    if (/^\s*(```|~~~)/.test(lineText)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = i + 1;
    // Inline code first, so a link inside backticks is not read as a link and vice versa.
    const codeless = lineText.replace(/(`+)(.+?)\1/g, (_m, _ticks: string, code: string) => {
      for (const word of code.split(/[\s,;()]+/)) {
        const w = word.replace(/:\d+(:\d+)?$/, '');
        if (isPathWord(w)) refs.push({ doc, line, kind: 'code', text: w });
      }
      return ' ';
    });
    for (const m of codeless.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!.replace(/#.*$/, '');
      if (target === '' || /^[a-z][a-z+.-]*:/i.test(target)) continue;
      refs.push({ doc, line, kind: 'link', text: target });
    }
  });
  return refs;
}

/** Whether an inline-code word is treated as a path at all (see the header). */
export function isPathWord(word: string): boolean {
  if (!PATH_WORD.test(word) || word.includes('://')) return false;
  if (/^[./*-]+$/.test(word)) return false; // `.`, `..`, `*`, `--`
  if (/^\.[\w.]+$/.test(word) && !word.slice(1).includes('.') && !word.includes('/')) return false; // `.avsc`, an extension alone
  if (/^\.d\.ts$/.test(word)) return false;
  return word.includes('/') || EXTENSION.test(word);
}

/** The tracked files, and a lookup of paths and trailing runs of segments. */
export class TrackedFiles {
  private readonly files: ReadonlySet<string>;
  private readonly dirs: ReadonlySet<string>;

  constructor(files: readonly string[]) {
    this.files = new Set(files);
    const dirs = new Set<string>();
    for (const f of files) for (let d = posix.dirname(f); d !== '.'; d = posix.dirname(d)) dirs.add(d);
    this.dirs = dirs;
  }

  hasFile(path: string): boolean {
    return this.files.has(path);
  }

  hasDir(path: string): boolean {
    return this.dirs.has(path);
  }

  /** Tracked files (or folders, with `dir`) whose path is `suffix` or ends with `/` + `suffix`. */
  matching(suffix: string, dir: boolean): string[] {
    const pattern = globToRegExp(suffix);
    return [...(dir ? this.dirs : this.files)].filter((p) => pattern.test(p));
  }
}

function globToRegExp(suffix: string): RegExp {
  const body = suffix.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*');
  return new RegExp(`(^|/)${body}$`);
}

/** Why a reference is not checked against git, or undefined if it is. */
export function notARepoPath(word: string): string | undefined {
  if (word.startsWith('/')) return 'an HTTP route';
  if (Object.hasOwn(NOT_PATHS, word)) return NOT_PATHS[word];
  const first = word.split('/')[0]!;
  if ((MIME_TYPES as readonly string[]).includes(first) && !EXTENSION.test(word)) return 'a MIME type';
  if (/^\d+(\.\d+){3}\/\d+$/.test(word)) return 'an address block';
  if ((RUNTIME_FOLDERS as readonly string[]).includes(first)) return 'run-time output';
  return undefined;
}

/** What is wrong with a reference, or undefined if it names something that exists. */
export function problemOf(ref: Reference, tracked: TrackedFiles, repoRoot: string): string | undefined {
  if (ref.kind === 'link') {
    const target = posix.normalize(posix.join(posix.dirname(ref.doc), decodeURI(ref.text))).replace(/\/$/, '');
    if (target.startsWith('..')) return 'links outside the repository';
    return tracked.hasFile(target) || tracked.hasDir(target) ? undefined : 'links to no tracked file or folder';
  }
  const word = ref.text;
  if (notARepoPath(word) !== undefined) return undefined;
  const segments = word.split('/');
  const distAt = segments.indexOf('dist');
  if (distAt >= 0) {
    // Build output; what it is built from must exist.
    const source = segments.slice(0, distAt).join('/');
    return distAt === 0 || resolvesInRepo(source + '/', tracked) || inDependency(source, repoRoot) ? undefined : 'build output of a folder that does not exist';
  }
  if (/^[^/]+\.md$/.test(word)) return tracked.hasFile(posix.join(posix.dirname(ref.doc), word)) ? undefined : 'a bare document name that is not beside this document (name it by its path)';
  if (resolvesInRepo(word, tracked)) return undefined;
  if (inDependency(word, repoRoot)) return undefined;
  return 'names no tracked file or folder (nor a file of an installed package)';
}

function resolvesInRepo(word: string, tracked: TrackedFiles): boolean {
  const trimmed = word.replace(/^\.\//, '').replace(/\/$/, '');
  if (trimmed === '') return false;
  const asFolder = word.endsWith('/') || !EXTENSION.test(word);
  if (!word.endsWith('/') && tracked.matching(trimmed, false).length > 0) return true;
  return asFolder && tracked.matching(trimmed, true).length > 0;
}

function inDependency(word: string, repoRoot: string): boolean {
  if (word.includes('*')) return false;
  const modules = join(repoRoot, 'node_modules');
  const candidates = [join(modules, normalize(word)), join(repoRoot, 'node_modules/kafkajs/src', normalize(word))];
  return candidates.some((c) => c.startsWith(modules + '/') && existsSync(c));
}
