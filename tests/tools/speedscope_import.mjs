// Runs speedscope's own importer (the npm package's browser bundle) headless in node on one file
// and prints what it read: {"unit", "total", "profiles", "name"}. The bundle is loaded into a
// context with stub browser globals; its importer module is reached through the promise the app
// keeps for it (found by pattern in the minified text, so any 1.x build that keeps that shape
// works). The app's own start-up may throw on the stubs after that point: harmless.
//
// usage: node speedscope_import.mjs SPEEDSCOPE_PACKAGE_DIR FILE.speedscope.json
// exit: 0 imported, 1 not imported, 77 the bundle's importer could not be reached (not checked).
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

const [pkg, file] = process.argv.slice(2);
const dir = path.join(pkg, 'dist', 'release');
const bundle = fs.readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
if (!bundle) {
  console.error('no speedscope-*.js in', dir);
  process.exit(77);
}
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
// The importer module: NAME({importFromFileSystemDirectoryEntry:...}) registers its exports on
// MOD; the app loads it as `var P=Promise.resolve().then(()=>(INIT(),MOD));`.
const mod = /\w+\((\w+),\{importFromFileSystemDirectoryEntry:/.exec(src);
const load = mod &&
  new RegExp(`var (\\w+)=Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\(\\w+\\(\\),${mod[1]}\\)\\);`).exec(src);
if (!load) {
  console.error('the importer module was not found in', bundle);
  process.exit(77);
}
src = src.replace(load[0], `${load[0]}globalThis.__importer=${load[1]};`);

// Any property of a stub is a stub, calling or constructing one gives a stub.
const stub = () => new Proxy(function () {}, {
  get: (_, key) => (key === Symbol.toPrimitive ? () => '' : key === 'then' ? undefined : stub()),
  apply: () => stub(),
  construct: () => stub(),
});
const context = {
  console: { log() {}, warn() {}, error() {}, info() {}, debug() {}, time() {}, timeEnd() {} },
  setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, TextDecoder, TextEncoder,
  Uint8Array, ArrayBuffer, DataView, Promise, URL, Blob: globalThis.Blob, performance, WebAssembly,
};
context.window = context;
context.self = context;
context.globalThis = context;
for (const name of ['document', 'navigator', 'location', 'localStorage', 'history', 'screen',
  'requestAnimationFrame', 'addEventListener', 'removeEventListener', 'matchMedia',
  'getComputedStyle', 'fetch', 'devicePixelRatio', 'HTMLElement', 'Element', 'Node']) {
  context[name] = stub();
}
vm.createContext(context);
try {
  vm.runInContext(src, context);
} catch {
  // the app's start-up on stub globals; the importer promise is set before it
}
if (!context.__importer) {
  console.error('the importer was not reached');
  process.exit(77);
}
const importer = await context.__importer;
const group = await importer.importProfileGroupFromText(path.basename(file),
  fs.readFileSync(file, 'utf8'));
if (!group || group.profiles.length === 0) {
  console.error('speedscope did not import', file);
  process.exit(1);
}
const p = group.profiles[0];
console.log(JSON.stringify({ unit: p.getWeightUnit(), total: p.getTotalWeight(),
  profiles: group.profiles.length, name: p.getName() }));
