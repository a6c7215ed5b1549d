/**
 * The rules of the house (docs/ARCHITECTURE.md, "Rooms"): lower rooms never import higher ones.
 * This test reads every import and re-export in src/ (static, type-only and dynamic) and fails
 * when a ground-floor room imports a room the rules put above it.
 *
 * The ground floor, bottom up: names (imports nothing), crypto (no types), types, abci (the
 * ABCI-shaped contract, as cometbft/cometbft:abci/types), store. Each may import itself and the
 * rooms listed for it, nothing else of src/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const here = path.dirname(fileURLToPath(import.meta.url));
const srcDir = path.resolve(here, '../../../src');

/** Room → the other rooms of src/ it may import. A room not named here is not checked. */
export const ALLOWED: Record<string, readonly string[]> = {
  names: [],
  crypto: ['names'],
  types: ['crypto', 'names'],
  abci: ['types', 'crypto', 'names'],
  store: ['abci', 'types', 'crypto', 'names'],
};

function* tsFiles(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** The specifiers a module imports: `import … from 'x'`, `import 'x'`, `export … from 'x'`, `import('x')`. */
export function importSpecifiers(source: string): string[] {
  // Drop comments first so an example in a doc comment does not count.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: string[] = [];
  const re = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) out.push((m[1] ?? m[2])!);
  return out;
}

/** The room of a file under src/: its first directory, or the file's own name for src/node.ts etc. */
function roomOf(file: string): string {
  const rel = path.relative(srcDir, file).split(path.sep);
  return rel.length === 1 ? rel[0]!.replace(/\.ts$/, '') : rel[0]!;
}

export interface Violation {
  file: string;
  specifier: string;
  from: string;
  to: string;
}

export function violations(): Violation[] {
  const out: Violation[] = [];
  for (const file of tsFiles(srcDir)) {
    const from = roomOf(file);
    const allowed = ALLOWED[from];
    if (allowed === undefined) continue;
    for (const spec of importSpecifiers(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue; // packages and node: builtins
      const target = path.resolve(path.dirname(file), spec);
      if (!target.startsWith(srcDir + path.sep)) continue;
      const to = roomOf(target.replace(/\.js$/, '.ts'));
      if (to !== from && !allowed.includes(to)) out.push({ file: path.relative(srcDir, file), specifier: spec, from, to });
    }
  }
  return out;
}

t.test('the parser finds every kind of import and skips comments', async (t) => {
  const src = [
    "import { a } from '../app/abci.js';",
    "import type { B } from '../events/query.js';",
    'import {\n  c,\n  d,\n} from "../state/state.js";',
    "export { e } from '../consensus/util.js';",
    "export * from './local.js';",
    "import './side-effect.js';",
    "const m = await import('../node.js');",
    "// import { x } from '../commented.js';",
    "/* import { y } from '../block-commented.js'; */",
  ].join('\n');
  t.same(importSpecifiers(src), [
    '../app/abci.js',
    '../events/query.js',
    '../state/state.js',
    '../consensus/util.js',
    './local.js',
    './side-effect.js',
    '../node.js',
  ]);
});

t.test('no ground-floor room imports a room above it', async (t) => {
  const found = violations();
  t.same(
    found.map((v) => `${v.file} (${v.from}) imports ${v.specifier} (${v.to})`),
    [],
    'store, types, crypto, names and abci import only the rooms below them',
  );
});

t.test('every ground-floor room exists (a rename must update the rules)', async (t) => {
  for (const room of Object.keys(ALLOWED)) t.ok(fs.existsSync(path.join(srcDir, room)), `src/${room}/ exists`);
});

t.test('the store has no import loop between its files (storage builds the repositories, they do not import it)', async (t) => {
  const dir = path.join(srcDir, 'store');
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(dir)) {
    const deps = importSpecifiers(fs.readFileSync(file, 'utf8'))
      .filter((s) => s.startsWith('./'))
      .map((s) => path.join(dir, s.replace(/\.js$/, '.ts')));
    graph.set(file, deps);
  }
  const loops: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (f: string, trail: string[]): void => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      loops.push([...trail.slice(trail.indexOf(f)), f].map((p) => path.basename(p)).join(' → '));
      return;
    }
    state.set(f, 'open');
    for (const d of graph.get(f) ?? []) visit(d, [...trail, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  t.same(loops, []);
});
