// comlink 4.4.2 ships no .d.mts for its ESM node adapter; re-use the UMD typings.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { NodeEndpoint } from 'comlink/dist/umd/node-adapter.js';
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
