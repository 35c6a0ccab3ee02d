#!/usr/bin/env node
// Renders the Kubernetes manifests of k8s/ (the kustomize base and every overlay, plus the secret
// template that is applied by hand) and validates every object offline against the Kubernetes
// OpenAPI schemas, twice:
//   1. kubernetes-models (npm): each object's JSON schema (types, required fields, formats such as
//      quantities), the schemas of the Kubernetes API the package was generated from;
//   2. strict: TypeScript's excess-property check against the same package's declared interfaces, so
//      a misspelt or misplaced field (`livenessprobe`, `replicaz`) is an error, not silently ignored.
// No kustomize or kubectl binary is needed: the kustomizations are rendered by the small renderer
// below, which supports what k8s/ uses (resources, namespace, labels, images, patches: strategic
// merge files and JSON 6902 with a target; configMapGenerator with kustomize's hash-suffixed names and
// the rewriting of every pod reference to them) and refuses any other kustomization field. When kubectl
// is on the PATH, every target is also rendered with `kubectl kustomize` and must equal ours.
// Custom resources of operators the overlays use (Prometheus Operator, External Secrets, KEDA) have
// no schema in kubernetes-models: they are checked for their required fields only (CUSTOM_KINDS).
//
// Usage: node scripts/validate-k8s.mjs [--json <file> [--render-only]] [--print <base|dev|...>] [--k8s <dir>]
//   --json   also writes the rendered objects ({targets: {base: [...], dev: [...]}, templates: [...]})
//   --print  writes the rendered YAML of one target to stdout (like `kubectl kustomize`) and exits
//   --k8s    renders another copy of the k8s/ tree (default k8s/)
//   --render-only  with --json: writes the rendered objects and validates nothing
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const REPO = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const K8S = path.join(REPO, 'k8s');
const ARGS = process.argv.slice(2);
const option = (name) => (ARGS.includes(name) ? ARGS[ARGS.indexOf(name) + 1] : undefined);
/** The tree rendered: k8s/, or a copy (`--k8s <dir>`: the spec renders an edited copy to see a config change roll). */
const SOURCE = option('--k8s') ? path.resolve(option('--k8s')) : K8S;
/** Objects applied by hand (not part of any kustomization), validated as they are. */
const TEMPLATES = ['k8s/base/secrets.template.yaml'];
const SUPPORTED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'resources',
  'components',
  'images',
  'patches',
  'generatorOptions',
  'configMapGenerator',
]);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass', 'PriorityClass']);

/** Custom resources the overlays use: `apiVersion kind` -> the spec fields each must have. */
const CUSTOM_KINDS = {
  'monitoring.coreos.com/v1 PodMonitor': ['selector', 'podMetricsEndpoints'],
  'monitoring.coreos.com/v1 PrometheusRule': ['groups'],
  'external-secrets.io/v1beta1 ExternalSecret': ['secretStoreRef', 'target'],
  'keda.sh/v1alpha1 ScaledObject': ['scaleTargetRef', 'triggers'],
};

class ManifestError extends Error {}

function readYamlDocuments(file) {
  const docs = YAML.parseAllDocuments(readFileSync(file, 'utf8'));
  for (const doc of docs) if (doc.errors.length) throw new ManifestError(`${path.relative(REPO, file)}: ${doc.errors[0].message}`);
  return docs.map((doc) => doc.toJS()).filter((obj) => obj !== null);
}

const id = (obj) => `${obj.kind}/${obj.metadata?.name}`;

// ---- rendering ---------------------------------------------------------------------------------

/** A kustomization rendered as `kubectl kustomize` does: generated ConfigMaps get their hash suffix last. */
function render(dir) {
  return suffixGeneratedNames(renderTree(dir));
}

function renderTree(dir) {
  const file = path.join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new ManifestError(`${path.relative(REPO, dir)}: no kustomization.yaml`);
  const [kustomization] = readYamlDocuments(file);
  const where = path.relative(REPO, file);
  for (const field of Object.keys(kustomization)) {
    if (!SUPPORTED_FIELDS.has(field)) throw new ManifestError(`${where}: field "${field}" is not supported by this renderer`);
  }
  let objects = [];
  for (const entry of kustomization.resources ?? []) {
    const target = path.resolve(dir, entry);
    if (!existsSync(target)) throw new ManifestError(`${where}: resource ${entry} does not exist`);
    objects.push(...(statSync(target).isDirectory() ? renderTree(target) : readYamlDocuments(target)));
  }
  objects = generateConfigMaps(objects, kustomization, dir, where);
  // Components (kind: Component) add their resources and patch what the kustomization has so far.
  for (const entry of kustomization.components ?? []) {
    const componentDir = path.resolve(dir, entry);
    const [component] = readYamlDocuments(path.join(componentDir, 'kustomization.yaml'));
    const componentWhere = path.relative(REPO, path.join(componentDir, 'kustomization.yaml'));
    if (component.kind !== 'Component') throw new ManifestError(`${componentWhere}: kind must be Component`);
    for (const field of Object.keys(component)) {
      if (!['apiVersion', 'kind', 'resources', 'patches'].includes(field)) {
        throw new ManifestError(`${componentWhere}: field "${field}" is not supported by this renderer`);
      }
    }
    for (const file of component.resources ?? []) objects.push(...readYamlDocuments(path.resolve(componentDir, file)));
    for (const patch of component.patches ?? []) objects = applyPatch(objects, patch, componentDir, componentWhere);
  }
  for (const patch of kustomization.patches ?? []) objects = applyPatch(objects, patch, dir, where);
  for (const image of kustomization.images ?? []) setImages(objects, image);
  for (const label of kustomization.labels ?? []) addLabels(objects, label, where);
  if (kustomization.namespace) {
    for (const obj of objects) if (!CLUSTER_SCOPED.has(obj.kind)) (obj.metadata ??= {}).namespace = kustomization.namespace;
  }
  const seen = new Set();
  for (const obj of objects) {
    const key = `${obj.kind}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;
    if (seen.has(key)) throw new ManifestError(`${where}: ${id(obj)} is defined twice`);
    seen.add(key);
  }
  return objects;
}

// ---- configMapGenerator ------------------------------------------------------------------------

/** ConfigMaps made by a generator: they get the hash suffix once the top kustomization is rendered. */
const GENERATED = new WeakSet();
const GENERATOR_FIELDS = new Set(['name', 'behavior', 'envs', 'literals', 'options']);

/** `KEY=value` pairs of a kustomize env file: `#` comments and blank lines skipped, the value verbatim. */
function readEnvFile(file, where) {
  const pairs = [];
  for (const raw of readFileSync(file, 'utf8')
    .replace(/^\uFEFF/, '')
    .split('\n')) {
    const line = raw.replace(/\r$/, '').trimStart();
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at < 0)
      throw new ManifestError(
        `${where}: ${path.relative(REPO, file)}: "${line}" has no "=" (kustomize would read the value from its own environment)`,
      );
    pairs.push([line.slice(0, at), line.slice(at + 1)]);
  }
  return pairs;
}

/** `KEY=value` literals: kustomize drops one pair of matching quotes around the value. */
function parseLiteral(literal, where) {
  const at = literal.indexOf('=');
  if (at < 1) throw new ManifestError(`${where}: configMapGenerator literal "${literal}" is not KEY=value`);
  const value = literal.slice(at + 1);
  const quoted = value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0];
  return [literal.slice(0, at), quoted ? value.slice(1, -1) : value];
}

function generatorData(generator, dir, where) {
  const data = {};
  const pairs = [
    ...(generator.envs ?? []).flatMap((file) => readEnvFile(path.resolve(dir, file), where)),
    ...(generator.literals ?? []).map((literal) => parseLiteral(literal, where)),
  ];
  for (const [key, value] of pairs) {
    if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(key))
      throw new ManifestError(`${where}: ${generator.name}: "${key}" is not a valid ConfigMap key`);
    if (key in data) throw new ManifestError(`${where}: ${generator.name}: key ${key} is set twice`);
    data[key] = value;
  }
  return data;
}

/** Runs a kustomization's configMapGenerator on the objects of its resources (create, merge or replace). */
function generateConfigMaps(objects, kustomization, dir, where) {
  const shared = kustomization.generatorOptions ?? {};
  for (const generator of kustomization.configMapGenerator ?? []) {
    for (const field of Object.keys(generator)) {
      if (!GENERATOR_FIELDS.has(field))
        throw new ManifestError(`${where}: configMapGenerator field "${field}" is not supported by this renderer`);
    }
    const options = { ...shared, ...generator.options };
    for (const field of Object.keys(options)) {
      if (!['labels', 'annotations', 'disableNameSuffixHash'].includes(field)) {
        throw new ManifestError(`${where}: generator option "${field}" is not supported by this renderer`);
      }
    }
    const labels = { ...shared.labels, ...generator.options?.labels };
    const annotations = { ...shared.annotations, ...generator.options?.annotations };
    const data = generatorData(generator, dir, where);
    const behavior = generator.behavior ?? 'create';
    const existing = objects.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === generator.name);
    if (behavior === 'create') {
      if (existing) throw new ManifestError(`${where}: ConfigMap/${generator.name} already exists (use behavior: merge or replace)`);
      const metadata = { name: generator.name };
      if (Object.keys(annotations).length) metadata.annotations = annotations;
      if (Object.keys(labels).length) metadata.labels = labels;
      const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data };
      if (!options.disableNameSuffixHash) GENERATED.add(configMap);
      objects.push(configMap);
      continue;
    }
    if (!['merge', 'replace'].includes(behavior)) throw new ManifestError(`${where}: generator behavior "${behavior}" is not supported`);
    if (!existing || !GENERATED.has(existing))
      throw new ManifestError(`${where}: ${behavior} of ConfigMap/${generator.name}, which no generator below made`);
    existing.data = behavior === 'merge' ? { ...existing.data, ...data } : data;
    if (Object.keys(labels).length) existing.metadata.labels = { ...existing.metadata.labels, ...labels };
    if (Object.keys(annotations).length) existing.metadata.annotations = { ...existing.metadata.annotations, ...annotations };
  }
  return objects;
}

/**
 * kustomize's name hash (api/hasher): sha256 of Go's json.Marshal of {data, kind, name} (keys sorted,
 * `<`, `>`, `&`, U+2028 and U+2029 escaped as Go does), its first 10 hex digits with 0 1 3 a e spelt
 * g h k m t (so the suffix never reads as a number or a word). The name in it is empty: kustomize 5
 * hashes a generated ConfigMap before it names it (measured: `literals: [a=b]` gives x-4h2mbtbbt6,
 * the hash of {"data":{"a":"b"},"kind":"ConfigMap","name":""}), so two generators with the same data
 * share a suffix.
 */
function configMapHash(configMap) {
  const sorted = (value) =>
    value && typeof value === 'object'
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sorted(value[key])]),
        )
      : value;
  const goJson = JSON.stringify(sorted({ kind: 'ConfigMap', name: '', data: configMap.data ?? {} })).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  const hex = createHash('sha256').update(goJson).digest('hex');
  return [...hex.slice(0, 10)].map((c) => ({ 0: 'g', 1: 'h', 3: 'k', a: 'm', e: 't' })[c] ?? c).join('');
}

/** Each pod reference to a ConfigMap by name: envFrom, env valueFrom, volumes (plain and projected). */
function configMapReferences(obj) {
  const refs = [];
  for (const template of obj.kind === 'Pod' ? [obj] : podTemplates(obj)) {
    const spec = template.spec ?? {};
    for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      for (const source of container.envFrom ?? []) if (source.configMapRef) refs.push(source.configMapRef);
      for (const variable of container.env ?? []) if (variable.valueFrom?.configMapKeyRef) refs.push(variable.valueFrom.configMapKeyRef);
    }
    for (const volume of spec.volumes ?? []) {
      if (volume.configMap) refs.push(volume.configMap);
      for (const source of volume.projected?.sources ?? []) if (source.configMap) refs.push(source.configMap);
    }
  }
  return refs;
}

/** The generated ConfigMaps renamed `<name>-<hash>`, and every reference in their namespace renamed with them. */
function suffixGeneratedNames(objects) {
  for (const configMap of objects.filter((o) => GENERATED.has(o))) {
    const { name, namespace } = configMap.metadata;
    const hashed = `${name}-${configMapHash(configMap)}`;
    for (const obj of objects) {
      if (obj.metadata?.namespace !== namespace) continue;
      for (const ref of configMapReferences(obj)) if (ref.name === name) ref.name = hashed;
    }
    configMap.metadata.name = hashed;
  }
  return objects;
}

// ---- transformers ------------------------------------------------------------------------------

function podTemplates(obj) {
  if (obj.kind === 'Deployment' || obj.kind === 'StatefulSet' || obj.kind === 'DaemonSet' || obj.kind === 'Job') {
    return obj.spec?.template ? [obj.spec.template] : [];
  }
  if (obj.kind === 'CronJob') return obj.spec?.jobTemplate?.spec?.template ? [obj.spec.jobTemplate.spec.template] : [];
  return [];
}

function setImages(objects, { name, newName, newTag, digest }) {
  for (const template of objects.flatMap(podTemplates)) {
    for (const container of [...(template.spec?.containers ?? []), ...(template.spec?.initContainers ?? [])]) {
      const [image] = container.image.split(/[@:](?=[^/]*$)/);
      if (image !== name) continue;
      container.image = `${newName ?? name}${digest ? `@${digest}` : `:${newTag ?? 'latest'}`}`;
    }
  }
}

function addLabels(objects, { pairs, includeSelectors = false, includeTemplates = false }, where) {
  if (includeSelectors) throw new ManifestError(`${where}: labels.includeSelectors is not supported (selectors are immutable)`);
  for (const obj of objects) {
    obj.metadata ??= {};
    obj.metadata.labels = { ...obj.metadata.labels, ...pairs };
    if (includeTemplates) {
      for (const template of podTemplates(obj)) {
        template.metadata ??= {};
        template.metadata.labels = { ...template.metadata.labels, ...pairs };
      }
    }
  }
}

function applyPatch(objects, patch, dir, where) {
  if (patch.path && !patch.target) {
    // Strategic merge patches: each document names the object it patches.
    for (const doc of readYamlDocuments(path.resolve(dir, patch.path))) {
      const target = objects.find((o) => o.kind === doc.kind && o.metadata?.name === doc.metadata?.name);
      if (!target) throw new ManifestError(`${where}: patch ${patch.path} targets ${id(doc)}, which does not exist`);
      // `$patch: delete` at the top removes the object.
      if (doc.$patch === 'delete') objects = objects.filter((o) => o !== target);
      else Object.assign(target, strategicMerge(target, doc));
    }
    return objects;
  }
  if (!patch.target) throw new ManifestError(`${where}: a patch needs a path or a target`);
  const operations = YAML.parse(patch.patch ?? readFileSync(path.resolve(dir, patch.path), 'utf8'));
  const targets = objects.filter(
    (o) =>
      (!patch.target.kind || o.kind === patch.target.kind) &&
      (!patch.target.name || new RegExp(`^${patch.target.name}$`).test(o.metadata?.name)),
  );
  if (targets.length === 0) throw new ManifestError(`${where}: patch target ${JSON.stringify(patch.target)} matches nothing`);
  // A strategic merge patch (an object) applied to every target; `$patch: delete` removes them.
  if (!Array.isArray(operations)) {
    if (operations.$patch === 'delete') return objects.filter((o) => !targets.includes(o));
    for (const obj of targets) {
      const rest = Object.fromEntries(Object.entries(operations).filter(([key]) => !['apiVersion', 'kind', 'metadata'].includes(key)));
      Object.assign(obj, strategicMerge(obj, rest));
    }
    return objects;
  }
  for (const obj of targets) for (const op of operations) applyJsonPatch(obj, op, where);
  return objects;
}

/** Maps merge; lists of objects with a `name` merge by name (containers, env, ports, volumes); other values replace. */
function strategicMerge(base, patch) {
  if (Array.isArray(base) && Array.isArray(patch) && patch.every((item) => item && typeof item === 'object' && 'name' in item)) {
    const merged = base.map((item) => {
      const update = patch.find((p) => p.name === item?.name);
      return update ? strategicMerge(item, update) : item;
    });
    for (const item of patch) if (!base.some((b) => b?.name === item.name)) merged.push(item);
    return merged;
  }
  if (base && patch && typeof base === 'object' && typeof patch === 'object' && !Array.isArray(base) && !Array.isArray(patch)) {
    const merged = { ...base };
    for (const [key, value] of Object.entries(patch)) merged[key] = key in base ? strategicMerge(base[key], value) : value;
    return merged;
  }
  return patch;
}

function applyJsonPatch(obj, { op, path: pointer, value }, where) {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = keys.pop();
  let node = obj;
  for (const key of keys) {
    if (node?.[key] === undefined) throw new ManifestError(`${where}: ${op} ${pointer} on ${id(obj)}: ${key} does not exist`);
    node = node[key];
  }
  if (op === 'add' && Array.isArray(node) && last === '-') node.push(value);
  else if (op === 'add' || op === 'replace') {
    if (op === 'replace' && !(last in node)) throw new ManifestError(`${where}: replace ${pointer} on ${id(obj)}: nothing to replace`);
    node[last] = value;
  } else if (op === 'remove') {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else throw new ManifestError(`${where}: JSON patch op "${op}" is not supported`);
}

// ---- validation --------------------------------------------------------------------------------

/** `apps/v1` + `Deployment` -> the kubernetes-models module and its interface name. */
function modelOf(obj) {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return null;
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  return { module: `kubernetes-models/${group ? `${group}/` : ''}${version}/${obj.kind}`, type: `I${obj.kind}` };
}

const customKind = (obj) => CUSTOM_KINDS[`${obj.apiVersion} ${obj.kind}`];

async function validateSchemas(objects, label) {
  const problems = [];
  for (const obj of objects) {
    const required = customKind(obj);
    if (required) {
      if (typeof obj.metadata?.name !== 'string') problems.push(`${label} ${id(obj)}: no metadata.name`);
      for (const field of required) if (obj.spec?.[field] === undefined) problems.push(`${label} ${id(obj)}: no spec.${field}`);
      continue;
    }
    const model = modelOf(obj);
    if (!model) {
      problems.push(`${label} ${id(obj)}: no apiVersion/kind`);
      continue;
    }
    let Model;
    try {
      Model = (await import(model.module))[obj.kind];
    } catch {
      problems.push(`${label} ${id(obj)}: ${obj.apiVersion} ${obj.kind} is not a Kubernetes API type`);
      continue;
    }
    try {
      new Model(obj).validate();
    } catch (err) {
      problems.push(`${label} ${id(obj)}: ${err.message}`);
    }
  }
  return problems;
}

/** TypeScript's excess-property check of every object against its kubernetes-models interface. */
async function validateStrict(entries) {
  // Loaded only to validate: rendering alone (--print, --render-only) stays quick.
  const { default: ts } = await import('typescript');
  const file = path.join(K8S, '__strict_check__.ts');
  const imports = new Map();
  const lines = [];
  const owners = [];
  entries.forEach(({ obj, label }, i) => {
    const model = modelOf(obj);
    if (!model || customKind(obj)) return;
    if (!imports.has(model.module)) imports.set(model.module, { alias: `T${imports.size}`, type: model.type });
    owners.push({ line: lines.length + 1, what: `${label} ${id(obj)}` });
    lines.push(`export const o${i}: ${imports.get(model.module).alias} = ${JSON.stringify(obj)};`);
  });
  const head = [...imports].map(([module, { alias, type }]) => `import type { ${type} as ${alias} } from '${module}';`);
  const source = [...head, ...lines].join('\n');
  const options = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    path.resolve(name) === file ? ts.createSourceFile(name, source, languageVersion, true) : original(name, languageVersion, ...rest);
  host.fileExists = (
    (exists) => (name) =>
      path.resolve(name) === file || exists(name)
  )(host.fileExists.bind(host));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    if (!d.file || path.resolve(d.file.fileName) !== file) return `strict check: ${message}`;
    const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 - head.length;
    const owner = owners.find((o) => o.line === line);
    return `${owner?.what ?? `line ${line}`}: ${message}`;
  });
}

async function renderAll() {
  const targets = { base: render(path.join(SOURCE, 'base')) };
  const overlays = path.join(SOURCE, 'overlays');
  for (const name of existsSync(overlays) ? readdirSync(overlays).sort() : []) targets[name] = render(path.join(overlays, name));
  const templates = TEMPLATES.flatMap((file) => readYamlDocuments(path.join(REPO, file)));
  return { targets, templates };
}

/** Objects in a comparable form: keys sorted, by kind and name. */
function canonical(objects) {
  const sort = (v) =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort(v[k])]),
          )
        : v;
  return new Map(objects.map((o) => [`${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`, JSON.stringify(sort(o))]));
}

/** `kubectl kustomize` of each target when kubectl exists: differences from our renderer, or null without kubectl. */
function compareWithKubectl(targets) {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const problems = [];
  for (const [label, objects] of Object.entries(targets)) {
    const dir = label === 'base' ? path.join(SOURCE, 'base') : path.join(SOURCE, 'overlays', label);
    const theirs = canonical(
      YAML.parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }))
        .map((d) => d.toJS())
        .filter(Boolean),
    );
    const ours = canonical(objects);
    for (const [key, text] of theirs)
      if (ours.get(key) !== text) problems.push(`${label} ${key}: kubectl kustomize renders it differently`);
    for (const key of ours.keys()) if (!theirs.has(key)) problems.push(`${label} ${key}: not rendered by kubectl kustomize`);
  }
  return problems;
}

async function main() {
  const rendered = await renderAll();
  const printTarget = option('--print');
  if (printTarget) {
    const objects = rendered.targets[printTarget];
    if (!objects) throw new ManifestError(`no target "${printTarget}" (${Object.keys(rendered.targets).join(', ')})`);
    process.stdout.write(objects.map((o) => YAML.stringify(o)).join('---\n'));
    return;
  }
  const jsonFile = option('--json');
  if (jsonFile && ARGS.includes('--render-only')) {
    writeFileSync(jsonFile, JSON.stringify(rendered, null, 2));
    return;
  }
  const entries = [
    ...Object.entries(rendered.targets).flatMap(([label, objects]) => objects.map((obj) => ({ obj, label }))),
    ...rendered.templates.map((obj) => ({ obj, label: 'template' })),
  ];
  const problems = [];
  for (const [label, objects] of Object.entries(rendered.targets)) problems.push(...(await validateSchemas(objects, label)));
  problems.push(...(await validateSchemas(rendered.templates, 'template')));
  problems.push(...(await validateStrict(entries)));
  const kubectl = compareWithKubectl(rendered.targets);
  if (kubectl) problems.push(...kubectl);
  const version = JSON.parse(readFileSync(path.join(REPO, 'node_modules/kubernetes-models/package.json'), 'utf8')).version;
  for (const [label, objects] of [...Object.entries(rendered.targets), ['template', rendered.templates]]) {
    const kinds = {};
    for (const obj of objects) kinds[obj.kind] = (kinds[obj.kind] ?? 0) + 1;
    const summary = Object.entries(kinds)
      .map(([kind, n]) => `${n} ${kind}`)
      .join(', ');
    console.log(`${label.padEnd(9)} ${String(objects.length).padStart(3)} objects: ${summary}`);
  }
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify(rendered, null, 2));
  if (problems.length) {
    console.error(`\n${problems.length} problem(s):`);
    for (const problem of problems) console.error(`  - ${problem}`);
    process.exit(1);
  }
  console.log(`all ${entries.length} objects valid (kubernetes-models ${version} schemas; strict: no unknown fields)`);
  console.log(kubectl ? 'kubectl kustomize renders every target the same' : 'kubectl not found: not compared with kubectl kustomize');
}

main().catch((err) => {
  console.error(err instanceof ManifestError ? `validate-k8s: ${err.message}` : err);
  process.exit(1);
});
