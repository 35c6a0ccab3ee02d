// Imported first by every entry point (HTTP, worker, CLIs), as `@app/service-kit/require-supported-node`:
// ES modules evaluate in import order, so this runs before any module that loads a native addon.
import { unsupportedNodeMessage } from './supported-node.js';

const refusal = unsupportedNodeMessage(process.versions.node);
if (refusal) {
  console.error(refusal);
  process.exit(1);
}
