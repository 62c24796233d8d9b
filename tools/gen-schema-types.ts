// Generates packages/platform/src/schemas/generated.ts from schemas/**/*.avsc, so message shapes are
// written once (in Avro) and TypeScript types and registrable schema texts are derived from them.
// Usage: npm run gen:types            (writes the file)
//        npm run gen:types -- --check (exits 1 when the file is stale; used by the tests)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const root = fileURLToPath(new URL('..', import.meta.url));
const schemaDir = join(root, 'schemas');
export const generatedPath = join(root, 'packages/platform/src/schemas/generated.ts');

const primitives: Record<string, string> = {
  null: 'null', boolean: 'boolean', int: 'number', long: 'number', float: 'number', double: 'number',
  bytes: 'Buffer', string: 'string',
};

function listSchemaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listSchemaFiles(join(dir, e.name)) : e.name.endsWith('.avsc') ? [join(dir, e.name)] : []))
    .sort();
}

function fullName(schema: JsonObject, parentNamespace: string | undefined): string {
  const name = String(schema.name);
  if (name.includes('.')) return name;
  const ns = typeof schema.namespace === 'string' ? schema.namespace : parentNamespace;
  return ns ? `${ns}.${name}` : name;
}

/** Every named type defined anywhere in a schema, by full name. */
function collectNamed(schema: Json, ns: string | undefined, into: Map<string, JsonObject>): void {
  if (Array.isArray(schema)) { for (const s of schema) collectNamed(s, ns, into); return; }
  if (schema === null || typeof schema !== 'object') return;
  const type = schema.type;
  if (type === 'record' || type === 'enum' || type === 'fixed') {
    const name = fullName(schema, ns);
    into.set(name, schema);
    const childNs = name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : undefined;
    if (type === 'record' && Array.isArray(schema.fields)) {
      for (const f of schema.fields) if (f && typeof f === 'object' && !Array.isArray(f)) collectNamed(f.type ?? null, childNs, into);
    }
    return;
  }
  if (type === 'array') collectNamed(schema.items ?? null, ns, into);
  else if (type === 'map') collectNamed(schema.values ?? null, ns, into);
  else if (typeof type === 'object') collectNamed(type, ns, into);
}

/** Replaces references to types defined in other files by their definitions, so each top-level schema stands alone in the registry. */
function inlineReferences(schema: Json, ns: string | undefined, defined: Set<string>, all: Map<string, JsonObject>): Json {
  if (typeof schema === 'string') {
    if (schema in primitives) return schema;
    const name = schema.includes('.') || !ns ? schema : `${ns}.${schema}`;
    if (defined.has(name)) return schema;
    const def = all.get(name) ?? all.get(schema);
    if (!def) throw new Error(`unknown Avro type ${schema}`);
    return inlineReferences(def, undefined, defined, all);
  }
  if (Array.isArray(schema)) return schema.map((s) => inlineReferences(s, ns, defined, all));
  if (schema === null || typeof schema !== 'object') return schema;
  const type = schema.type;
  if (type === 'record' || type === 'enum' || type === 'fixed') {
    const name = fullName(schema, ns);
    defined.add(name);
    const out: JsonObject = { ...schema, name: name.slice(name.lastIndexOf('.') + 1), namespace: name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : null };
    if (out.namespace === null) delete out.namespace;
    const childNs = typeof out.namespace === 'string' ? out.namespace : undefined;
    if (type === 'record' && Array.isArray(schema.fields)) {
      out.fields = schema.fields.map((f) => (f && typeof f === 'object' && !Array.isArray(f) ? { ...f, type: inlineReferences(f.type ?? null, childNs, defined, all) } : f));
    }
    return out;
  }
  if (type === 'array') return { ...schema, items: inlineReferences(schema.items ?? null, ns, defined, all) };
  if (type === 'map') return { ...schema, values: inlineReferences(schema.values ?? null, ns, defined, all) };
  if (typeof type === 'object') return { ...schema, type: inlineReferences(type, ns, defined, all) };
  return schema;
}

function tsType(schema: Json, ns: string | undefined): string {
  if (typeof schema === 'string') {
    if (schema in primitives) return primitives[schema]!;
    return shortName(schema);
  }
  if (Array.isArray(schema)) return schema.map((s) => tsType(s, ns)).join(' | ');
  if (schema === null || typeof schema !== 'object') throw new Error('bad schema');
  const type = schema.type;
  if (type === 'record' || type === 'enum' || type === 'fixed') return shortName(String(schema.name));
  if (type === 'array') return `Array<${tsType(schema.items ?? null, ns)}>`;
  if (type === 'map') return `Record<string, ${tsType(schema.values ?? null, ns)}>`;
  if (typeof type === 'string' || typeof type === 'object') return tsType(type, ns);
  throw new Error(`unsupported schema ${JSON.stringify(schema)}`);
}

function shortName(name: string): string { return name.slice(name.lastIndexOf('.') + 1); }

function declaration(name: string, schema: JsonObject): string {
  const doc = typeof schema.doc === 'string' ? `/** ${schema.doc} */\n` : '';
  if (schema.type === 'enum') return `${doc}export type ${shortName(name)} = ${(schema.symbols as string[]).map((s) => JSON.stringify(s)).join(' | ')};`;
  if (schema.type === 'fixed') return `${doc}export type ${shortName(name)} = Buffer;`;
  const ns = name.slice(0, name.lastIndexOf('.'));
  const fields = (schema.fields as JsonObject[]).map((f) => {
    const fdoc = typeof f.doc === 'string' ? `  /** ${f.doc} */\n` : '';
    return `${fdoc}  ${JSON.stringify(f.name)}: ${tsType(f.type ?? null, ns)};`;
  });
  return `${doc}export interface ${shortName(name)} {\n${fields.join('\n')}\n}`;
}

export function generate(): string {
  const files = listSchemaFiles(schemaDir);
  const topLevel: Array<{ file: string; name: string; schema: JsonObject }> = [];
  const all = new Map<string, JsonObject>();
  for (const file of files) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as JsonObject;
    topLevel.push({ file: relative(root, file), name: fullName(schema, undefined), schema });
    collectNamed(schema, undefined, all);
  }
  const names = [...all.keys()].sort();
  const seen = new Set<string>();
  const decls = names.filter((n) => !seen.has(shortName(n)) && seen.add(shortName(n))).map((n) => declaration(n, all.get(n)!));
  if (decls.length !== names.length) throw new Error('two Avro types share a short name; rename one');
  const standalone = topLevel.map(({ name, schema, file }) => `  /** ${file} */\n  ${JSON.stringify(name)}: ${JSON.stringify(inlineReferences(schema, undefined, new Set(), all))},`);
  return [
    '// Generated by tools/gen-schema-types.ts from schemas/**/*.avsc. Do not edit: change the .avsc and run `npm run gen:types`.',
    '/* eslint-disable */',
    '',
    ...decls.flatMap((d) => [d, '']),
    '/** Each top-level schema, standalone (references inlined), as registered in the schema registry. */',
    'export const avroSchemas = {',
    ...standalone,
    '} as const;',
    '',
    'export type AvroSchemaName = keyof typeof avroSchemas;',
    '',
    '/** The TypeScript shape of each top-level schema. */',
    'export interface AvroRecordTypes {',
    ...topLevel.map(({ name }) => `  ${JSON.stringify(name)}: ${shortName(name)};`),
    '}',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = generate();
  if (process.argv.includes('--check')) {
    let current = '';
    try { current = readFileSync(generatedPath, 'utf8'); } catch { /* missing counts as stale */ }
    if (current !== text) { console.error(`${relative(root, generatedPath)} is stale: run npm run gen:types`); process.exit(1); }
    console.log('generated types are current');
  } else {
    writeFileSync(generatedPath, text);
    console.log(`wrote ${relative(root, generatedPath)}`);
  }
}
