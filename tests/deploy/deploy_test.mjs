// Checks the container image recipe and the Kubernetes manifests without docker or a cluster
// (neither exists on the build machines; docs/deploy.md):
//   - Dockerfile: multi-stage, final stage FROM debian:bookworm-slim, a non-root numeric USER,
//     a HEALTHCHECK on /health at the EXPOSEd port, no ADD of URLs, every COPY source present in
//     the repository and not hidden by .dockerignore (or made by the stage it copies from), the
//     build stage installs what scripts/setup installs for building, and the runtime stage the
//     packages of every shared library the built binary links (when --brisk is given).
//   - deploy/kubernetes/*.yaml: each document validated against the JSON schema of its kind kept
//     in tests/deploy/schemas (Deployment, Service, InferencePool, InferenceObjective, HTTPRoute,
//     ScaledObject), then the references between them (labels, ports, names, probe paths, the
//     metric KEDA scales on) checked against each other and against brisk's sources.
//   - The schemas themselves reject broken manifests (a misspelt field, a wrong type, a missing
//     required field), or the checks above would prove nothing.
//
//   node tests/deploy/deploy_test.mjs [--brisk build/src/brisk]
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import Ajv from 'ajv';
import YAML from 'yaml';

import {
  aptPackages, dockerIgnored, parseCopy, parseDockerfile, parseFrom, readDockerignore,
} from './lib/dockerfile.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');

function parseArgs(argv = process.argv.slice(2)) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--brisk') o.brisk = argv[++i];
    else if (argv[i].startsWith('--test')) continue;  // node:test's own flags
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return o;
}
const args = parseArgs();

// ---- Dockerfile ---------------------------------------------------------------------------

const instructions = parseDockerfile(read('Dockerfile'));
const froms = instructions.filter((i) => i.keyword === 'FROM').map((i) => parseFrom(i.args));
const finalStage = froms.length - 1;
const inStage = (stage, keyword) =>
  instructions.filter((i) => i.stage === stage && i.keyword === keyword);
const stageIndex = (name) => froms.findIndex((f) => f.name === name);
const buildStage = stageIndex('build');

// Packages of scripts/setup that only the tests need: the image builds without tests.
// The aarch64 toolchain and qemu serve only scripts/test's ARM stage (scripts/test-aarch64).
const TEST_ONLY_PACKAGES = new Set(['libgtest-dev', 'libgmock-dev', 'chromium', 'ccache',
  'nodejs', 'npm', 'g++-aarch64-linux-gnu', 'binutils-aarch64-linux-gnu', 'qemu-user-static']);
// Present in debian:bookworm-slim itself (essential or required by apt).
const BASE_IMAGE_PACKAGES = new Set(['libc6', 'libgcc-s1', 'libstdc++6']);

test('Dockerfile: multi-stage, the final stage on debian:bookworm-slim', () => {
  assert.ok(froms.length >= 2, `${froms.length} FROM: not a multi-stage build`);
  assert.ok(buildStage >= 0 && buildStage < finalStage, 'no stage named "build" before the last');
  assert.equal(froms[finalStage].image, 'debian:bookworm-slim');
  assert.equal(froms[finalStage].name, undefined, 'the final stage should be the default target');
});

test('Dockerfile: the final stage runs as a numeric non-root user', () => {
  const users = inStage(finalStage, 'USER');
  assert.ok(users.length > 0, 'no USER in the final stage: the server would run as root');
  const [user, group] = users[users.length - 1].args.trim().split(':');
  // Kubernetes runAsNonRoot can only verify a numeric uid.
  assert.match(user, /^[0-9]+$/, `USER ${user} is not numeric`);
  assert.notEqual(Number(user), 0, 'USER 0 is root');
  if (group !== undefined) assert.notEqual(Number(group), 0, 'group 0 is root');
  const deployment = manifests().find((m) => m.doc.kind === 'Deployment').doc;
  assert.equal(deployment.spec.template.spec.securityContext.runAsUser, Number(user),
    'the Deployment runs as another uid than the image');
});

test('Dockerfile: HEALTHCHECK hits /health on the EXPOSEd port', () => {
  const hc = inStage(finalStage, 'HEALTHCHECK');
  assert.equal(hc.length, 1, 'one HEALTHCHECK in the final stage');
  const exposed = inStage(finalStage, 'EXPOSE').flatMap((e) => e.args.split(/\s+/))
    .map((p) => p.split('/')[0]);
  assert.deepEqual(exposed, ['8080']);
  const m = hc[0].args.match(/CMD\s+(.*)$/);
  assert.ok(m, 'HEALTHCHECK without CMD');
  assert.match(m[1], /http:\/\/(127\.0\.0\.1|localhost):8080\/health\b/);
  // The command's tool must be installed in the final stage.
  const tool = m[1].trim().split(/\s+/)[0];
  const installed = inStage(finalStage, 'RUN').flatMap((r) => aptPackages(r.args));
  assert.ok(installed.includes(tool), `HEALTHCHECK uses ${tool}, not installed in the final stage`);
  // The default command serves on every interface at that port.
  const cmd = JSON.parse(inStage(finalStage, 'CMD').at(-1).args);
  assert.deepEqual(cmd.slice(0, 1), ['serve']);
  assert.equal(cmd[cmd.indexOf('--host') + 1], '0.0.0.0');
  assert.equal(cmd[cmd.indexOf('--port') + 1], '8080');
  assert.deepEqual(JSON.parse(inStage(finalStage, 'ENTRYPOINT').at(-1).args), ['brisk']);
});

test('Dockerfile: no ADD of URLs', () => {
  for (const i of instructions.filter((x) => x.keyword === 'ADD')) {
    for (const src of parseCopy(i.args).sources)
      assert.doesNotMatch(src, /^[a-z][a-z0-9+.-]*:\/\//i, `line ${i.line}: ADD ${src}`);
  }
});

test('Dockerfile: every COPY source exists in the context or the stage it copies from', () => {
  const ignore = readDockerignore(read('.dockerignore'));
  for (const i of instructions.filter((x) => x.keyword === 'COPY' || x.keyword === 'ADD')) {
    const { flags, sources } = parseCopy(i.args);
    if (flags.from !== undefined) {
      const from = stageIndex(flags.from);
      assert.ok(from >= 0 && from < i.stage, `line ${i.line}: --from=${flags.from} is no earlier stage`);
      for (const src of sources) assert.ok(builtBy(from, src), `line ${i.line}: stage ${flags.from} makes no ${src}`);
      continue;
    }
    for (const src of sources) {
      assert.ok(fs.existsSync(path.join(root, src)), `line ${i.line}: ${src} is not in the repository`);
      assert.ok(!dockerIgnored(ignore, src), `line ${i.line}: ${src} is excluded by .dockerignore`);
    }
  }
});

// Whether stage `stage` produces `file`: its WORKDIR plus the CMake build folder (-B) plus the
// binary's place in that folder (src/brisk, as src/CMakeLists.txt adds it).
function builtBy(stage, file) {
  const workdir = inStage(stage, 'WORKDIR').at(-1)?.args.trim() ?? '/';
  for (const run of inStage(stage, 'RUN')) {
    const b = run.args.match(/cmake\s[^&;]*-B\s*(\S+)/);
    const target = run.args.match(/cmake\s+--build\s+\S+\s+--target\s+(\S+)/);
    if (b && target && path.posix.join(workdir, b[1], 'src', target[1]) === file) return true;
  }
  return false;
}

test('Dockerfile: the build stage installs what scripts/setup installs for building', () => {
  const setup = read('scripts/setup').match(/PACKAGES=\(([^)]*)\)/);
  assert.ok(setup, 'no PACKAGES=(...) in scripts/setup');
  const needed = setup[1].split(/\s+/).filter((p) => p && !TEST_ONLY_PACKAGES.has(p));
  const installed = new Set(inStage(buildStage, 'RUN').flatMap((r) => aptPackages(r.args)));
  assert.deepEqual(needed.filter((p) => !installed.has(p)), [], 'missing in the build stage');
  const configure = inStage(buildStage, 'RUN').map((r) => r.args).join(' ');
  assert.match(configure, /-DBRISK_BUILD_TESTS=OFF/, 'tests need gtest and node: build without');
});

test('Dockerfile: the runtime stage installs the package of every library brisk links', (t) => {
  if (!args.brisk || !fs.existsSync(args.brisk)) return t.skip('no --brisk binary given');
  let needed;
  try {
    const dyn = execFileSync('readelf', ['-d', args.brisk], { encoding: 'utf8' });
    needed = [...dyn.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  } catch (e) {
    return t.skip(`readelf failed: ${e.message}`);
  }
  assert.ok(needed.length > 0, 'readelf found no NEEDED libraries');
  const installed = new Set(inStage(finalStage, 'RUN').flatMap((r) => aptPackages(r.args)));
  const missing = [];
  for (const lib of needed) {
    const pkg = debianPackageOf(args.brisk, lib);
    if (pkg && !installed.has(pkg) && !BASE_IMAGE_PACKAGES.has(pkg)) missing.push(`${lib} (${pkg})`);
  }
  assert.deepEqual(missing, [], 'libraries the final stage would lack');
});

// The Debian package that ships `lib` as the binary loads it here: ldd's resolved path, then
// dpkg -S (the path as installed, then with /usr in front for a merged-/usr system).
function debianPackageOf(binary, lib) {
  const ldd = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const m = ldd.match(new RegExp(`^\\s*${lib.replace(/[.+]/g, '\\$&')} => (\\S+)`, 'm'));
  assert.ok(m, `ldd does not resolve ${lib}`);
  for (const p of [m[1], `/usr${m[1]}`]) {
    try {
      return execFileSync('dpkg', ['-S', p], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split(':')[0].trim();
    } catch {
      // not this spelling of the path
    }
  }
  assert.fail(`no Debian package ships ${m[1]}`);
}

test('.dockerignore keeps build trees, node packages and git history out of the context', () => {
  const ignore = readDockerignore(read('.dockerignore'));
  for (const p of ['.git', 'build', 'build-asan', 'tests/node_modules', 'tests'])
    assert.ok(dockerIgnored(ignore, p), `${p} is sent to the daemon`);
  assert.ok(!dockerIgnored(ignore, 'assets/qwen2.5-vocab.gguf'), 'the vocabulary is needed');
});

// ---- Kubernetes manifests -----------------------------------------------------------------

const schemaDir = path.join(here, 'schemas');
const SCHEMA_OF = {
  'apps/v1 Deployment': 'deployment.apps.v1.json',
  'v1 Service': 'service.v1.json',
  'inference.networking.k8s.io/v1 InferencePool': 'inferencepool.inference.networking.k8s.io.v1.json',
  'inference.networking.x-k8s.io/v1alpha2 InferenceObjective':
    'inferenceobjective.inference.networking.x-k8s.io.v1alpha2.json',
  'gateway.networking.k8s.io/v1 HTTPRoute': 'httproute.gateway.networking.k8s.io.v1.json',
  'keda.sh/v1alpha1 ScaledObject': 'scaledobject.keda.sh.v1alpha1.json',
};

function makeAjv() {
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  for (const f of fs.readdirSync(schemaDir).filter((x) => x.endsWith('.json')))
    ajv.addSchema(JSON.parse(fs.readFileSync(path.join(schemaDir, f), 'utf8')));
  return ajv;
}
const ajv = makeAjv();

// Every YAML document of deploy/kubernetes: [{ file, doc }].
function manifests() {
  const dir = path.join(root, 'deploy/kubernetes');
  const out = [];
  for (const f of fs.readdirSync(dir).filter((x) => /\.ya?ml$/.test(x)).sort()) {
    for (const d of YAML.parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8'))) {
      assert.deepEqual(d.errors, [], `${f}: YAML errors`);
      if (d.contents !== null) out.push({ file: f, doc: d.toJS() });
    }
  }
  return out;
}

// The schema errors of one document ([] when valid); unknown kinds are an error.
function schemaErrors(doc) {
  const key = `${doc?.apiVersion} ${doc?.kind}`;
  const id = SCHEMA_OF[key];
  if (!id) return [`no schema for ${key}`];
  const validate = ajv.getSchema(id);
  return validate(doc) ? [] : validate.errors.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

const one = (kind) => {
  const found = manifests().filter((m) => m.doc.kind === kind);
  assert.equal(found.length, 1, `expected one ${kind}, found ${found.length}`);
  return found[0].doc;
};

test('manifests: every document matches the schema of its kind', () => {
  const all = manifests();
  assert.deepEqual(all.map((m) => m.doc.kind).sort(),
    ['Deployment', 'HTTPRoute', 'InferenceObjective', 'InferencePool', 'ScaledObject', 'Service']);
  for (const { file, doc } of all) assert.deepEqual(schemaErrors(doc), [], file);
});

test('schemas reject broken manifests', () => {
  const breakers = [
    ['Deployment', (d) => { d.spec.template.spec.containers[0].readinesProbe = {}; }],  // typo
    ['Deployment', (d) => { d.spec.template.spec.containers[0].resources.limits.cpu = 'four'; }],
    ['Deployment', (d) => { delete d.spec.selector; }],
    ['Deployment', (d) => { d.spec.template.spec.containers[0].readinessProbe.httpGet.port = -1; }],
    ['Deployment', (d) => { d.spec.template.spec.volumes[0].hostPath = { path: '/x' }; }],  // 2 sources
    ['Service', (d) => { d.spec.ports[0].port = '8080'; }],
    ['InferencePool', (d) => { d.spec.targetPortNumber = 8080; }],  // the pre-v1 field
    ['InferencePool', (d) => { d.spec.targetPorts.push({ number: 8081 }); }],  // one port at most
    ['InferencePool', (d) => { d.spec.endpointPickerRef.failureMode = 'Open'; }],
    ['InferencePool', (d) => { d.apiVersion = 'inference.networking.x-k8s.io/v1alpha2'; }],
    ['InferenceObjective', (d) => { d.spec.criticality = 'Critical'; }],  // InferenceModel's field
    ['InferenceObjective', (d) => { delete d.spec.poolRef.name; }],
    ['HTTPRoute', (d) => { d.spec.rules[0].timeouts.request = '5 minutes'; }],
    ['HTTPRoute', (d) => { d.spec.rules[0].backendRefs[0].nmae = 'x'; }],
    ['ScaledObject', (d) => { d.spec.triggers[0].metadata.threshold = 4; }],  // must be a string
    ['ScaledObject', (d) => { delete d.spec.triggers[0].metadata.query; }],
    ['ScaledObject', (d) => { d.spec.scaleTargetRef = {}; }],
  ];
  for (const [kind, breakIt] of breakers) {
    const doc = structuredClone(one(kind));
    breakIt(doc);
    assert.notDeepEqual(schemaErrors(doc), [], `${kind}: accepted ${breakIt.toString()}`);
  }
});

const brisk = () => one('Deployment').spec.template.spec.containers.find((c) => c.name === 'brisk');
const argAfter = (argv, flag) => argv[argv.indexOf(flag) + 1];
const podLabels = () => one('Deployment').spec.template.metadata.labels;
const isSubset = (sub, sup) => Object.entries(sub).every(([k, v]) => sup[k] === v);

test('Deployment: probes, ports, resources and the model volume', () => {
  const d = one('Deployment');
  const c = brisk();
  const port = c.ports.find((p) => p.name === 'http');
  assert.equal(String(port.containerPort), argAfter(c.args, '--port'), '--port and containerPort differ');
  assert.equal(argAfter(c.args, '--host'), '0.0.0.0');
  assert.equal(c.livenessProbe.httpGet.path, '/health');
  assert.equal(c.readinessProbe.httpGet.path, '/ready');
  assert.equal(c.startupProbe.httpGet.path, '/health', 'loading must not trip liveness');
  for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe])
    assert.ok(p.httpGet.port === 'http' || p.httpGet.port === port.containerPort);
  assert.ok(isSubset(d.spec.selector.matchLabels, podLabels()), 'selector does not match the pods');
  for (const kind of ['requests', 'limits'])
    for (const r of ['cpu', 'memory']) assert.ok(c.resources[kind]?.[r], `no ${kind}.${r}`);
  assert.equal(d.spec.template.spec.securityContext.runAsNonRoot, true);
  const model = argAfter(c.args, '-m');
  const mount = c.volumeMounts.find((m) => model.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `${model} is on no mounted volume`);
  assert.ok(d.spec.template.spec.volumes.some((v) => v.name === mount.name));
  // The init container pulls exactly the file the server loads.
  const pull = d.spec.template.spec.initContainers.find((x) => x.args[0] === 'pull');
  const [name, type] = pull.args[1].split(':');
  assert.equal(path.posix.join(argAfter(pull.args, '-o'), `${name}-${type ?? 'q4_k_m'}.gguf`), model);
});

test('the probe paths are routes brisk serves', () => {
  const routes = read('src/server/api_server.cc');
  for (const p of ['/health', '/ready', '/metrics'])
    assert.ok(routes.includes(`"${p}"`), `${p} is not a route of src/server/api_server.cc`);
});

test('Service, InferencePool, InferenceObjective and HTTPRoute refer to each other', () => {
  const port = brisk().ports.find((p) => p.name === 'http');
  const svc = one('Service');
  assert.ok(isSubset(svc.spec.selector, podLabels()), 'Service selects no brisk pod');
  assert.ok(svc.spec.ports.some((p) => p.targetPort === port.name || p.targetPort === port.containerPort));
  const pool = one('InferencePool');
  assert.ok(isSubset(pool.spec.selector.matchLabels, podLabels()), 'the pool selects no brisk pod');
  assert.equal(pool.spec.targetPorts[0].number, port.containerPort);
  const objective = one('InferenceObjective');
  assert.equal(objective.spec.poolRef.name, pool.metadata.name);
  assert.equal(objective.spec.poolRef.group ?? 'inference.networking.k8s.io', 'inference.networking.k8s.io');
  const refs = one('HTTPRoute').spec.rules.flatMap((r) => r.backendRefs ?? []);
  assert.ok(refs.some((r) => r.group === 'inference.networking.k8s.io' && r.kind === 'InferencePool' &&
    r.name === pool.metadata.name), 'the HTTPRoute does not send to the InferencePool');
});

test('ScaledObject scales the Deployment on a metric brisk exports, for its model', () => {
  const so = one('ScaledObject');
  assert.equal(so.spec.scaleTargetRef.name, one('Deployment').metadata.name);
  const prom = so.spec.triggers.find((t) => t.type === 'prometheus');
  assert.ok(prom, 'no prometheus trigger');
  assert.match(prom.metadata.query, /\bvllm:num_requests_waiting\b/);
  const metrics = read('src/server/metrics.cc');
  for (const [, name] of prom.metadata.query.matchAll(/([a-z_]+:[a-z_]+)/g))
    assert.ok(metrics.includes(`"${name}"`), `${name} is not a metric of src/server/metrics.cc`);
  const label = prom.metadata.query.match(/model_name="([^"]+)"/);
  if (label) assert.equal(label[1], argAfter(brisk().args, '--served-model-name'));
  assert.ok(so.spec.minReplicaCount >= 1, 'scaling to zero would leave nothing to queue on');
});
