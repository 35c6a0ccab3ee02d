// Removes from a production tree's node_modules what no running process reads (docker/Dockerfile's deps
// stage, and apps/platform-api/test/ops-production-tree.spec.ts on the same tree):
//   - TypeScript (24 MB): installed by `npm ci --omit=dev` only as an optional peer of @nestjs/swagger
//     (its compile-time CLI plugin) and valibot (types); nothing at runtime imports it. `--omit=peer`
//     would drop it too, but also @bull-board/ui, a peer the queue dashboard serves at runtime.
//   - source maps, type declarations and markdown of the dependencies (the apps' own dist/ keeps its
//     maps): 45 MB of platform-api's 195 MB, 38 MB of mail-api's 131 MB are maps alone.
// Usage: node docker/slim-node-modules.mjs <tree>   (prints what it removed)
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const UNUSED_PACKAGES = ['typescript'];
const UNUSED_BINS = ['tsc', 'tsserver'];
const UNUSED_FILE = /\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i;

/** Deletes the unused files under `dir` (a node_modules directory or below); returns the bytes freed. */
function slimDirectory(dir) {
  let freed = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) freed += slimDirectory(file);
    else if (entry.isFile() && UNUSED_FILE.test(entry.name)) {
      freed += lstatSync(file).size;
      rmSync(file);
    }
  }
  return freed;
}

/** Bytes of a directory tree (for the report). */
function sizeOf(target) {
  const stat = lstatSync(target);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(target).reduce((sum, name) => sum + sizeOf(path.join(target, name)), 0);
}

/** Every node_modules directory of the tree: the root's and the workspaces' (apps/*, packages/*). */
function nodeModulesDirs(tree) {
  const workspaces = ['apps', 'packages'].flatMap((group) => {
    try {
      return readdirSync(path.join(tree, group)).map((name) => path.join(tree, group, name));
    } catch {
      return [];
    }
  });
  return [tree, ...workspaces].map((dir) => path.join(dir, 'node_modules')).filter((dir) => exists(dir));
}

function exists(target) {
  try {
    lstatSync(target);
    return true;
  } catch {
    return false;
  }
}

export function slimNodeModules(tree) {
  let freed = 0;
  for (const dir of nodeModulesDirs(tree)) {
    for (const name of UNUSED_PACKAGES) {
      const target = path.join(dir, name);
      if (!exists(target)) continue;
      freed += sizeOf(target);
      rmSync(target, { recursive: true, force: true });
    }
    for (const name of UNUSED_BINS) rmSync(path.join(dir, '.bin', name), { force: true });
    freed += slimDirectory(dir);
  }
  return freed;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const tree = process.argv[2];
  if (!tree) {
    console.error('usage: node docker/slim-node-modules.mjs <tree>');
    process.exit(64);
  }
  console.log(`slim-node-modules: ${(slimNodeModules(tree) / 1024 / 1024).toFixed(1)} MB removed from ${tree}`);
}
