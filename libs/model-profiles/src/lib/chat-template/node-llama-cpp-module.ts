// node-llama-cpp is ESM-only; this package compiles to CommonJS, so it is loaded with a real
// dynamic import (kept as `import()` under "module": "node16"). Under Jest this needs
// NODE_OPTIONS=--experimental-vm-modules (set in the projects' test targets).
export type NodeLlamaCpp = typeof import('node-llama-cpp', { with: { 'resolution-mode': 'import' } });

let loaded: Promise<NodeLlamaCpp> | undefined;

/** The node-llama-cpp module, imported once. */
export function loadNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  loaded ??= import('node-llama-cpp');
  return loaded;
}
