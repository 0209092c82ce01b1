/**
 * Artifact routes (docs/artifacts.md): the cluster's artifacts and who holds them, this node's
 * transfers, and the operations on this node's store. They sit in the same route table as every other API route,
 * so they pass the same authentication. (Peer transfers use separate routes with a cluster-key proof:
 * src/artifacts/peer-server.ts.)
 */
import { TorusError } from '../../protocols/errors.js';
import { artifactId } from '../../artifacts/ids.js';
import type { ArtifactService } from '../../artifacts/service.js';
import { modelView } from '../../artifacts/model/model-view.js';
import type { ClusterState } from '../../actors/topology-keeper/state.js';
import type { NodeFacade } from '../node-facade.js';
import { requestCodecs } from '../request-schemas.js';
import type { Route } from '../router.js';

const service = (facade: NodeFacade): ArtifactService => {
  if (!facade.artifacts) throw new TorusError('TORUS_ACTOR_STOPPED', 'this node runs no artifact service');
  return facade.artifacts;
};

/** The cluster-wide view: every artifact in the state with its holders, and what this node has of each. */
export function artifactsView(state: ClusterState, local: ArtifactService | undefined): unknown[] {
  return Object.entries(state.artifacts ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, a]) => ({
      id,
      name: a.name,
      bytes: a.bytes,
      chunks: a.chunks,
      holders: Object.entries(a.holders).map(([node, h]) => ({
        node,
        have: h.have,
        complete: h.have === a.chunks,
        // a model's pipeline stage held here: its layers [fromLayer, toLayer) and that stage's chunks held
        ...(h.stage && h.have !== a.chunks ? { stage: h.stage } : {}),
      })),
      ...(local?.transfer(id) ? { transfer: local.transfer(id) } : {}),
    }));
}

export const artifactRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/v1/artifacts',
    summary:
      "every artifact in the cluster with its holders (complete or partial), this node's store, and what of it is damaged",
    handler: async ({ facade }) => {
      const s = service(facade);
      return {
        status: 200,
        body: {
          artifacts: artifactsView((await facade.state()).state, s),
          local: s.localHoldings(),
          damaged: s.damaged(),
        },
      };
    },
  },
  {
    method: 'GET',
    path: '/v1/artifacts/transfers',
    summary: "this node's transfers (progress, rate, ETA, sources) and corrupt chunks peers served",
    handler: async ({ facade }) => ({ status: 200, body: service(facade).transfers() }),
  },
  {
    method: 'GET',
    path: '/v1/artifacts/:id',
    summary: "one artifact: holders, this node's transfer of it, and a model artifact's record (`model`)",
    handler: async ({ facade, params }) => {
      const id = artifactId(params.id);
      const { state } = await facade.state();
      const found = artifactsView(state, service(facade)).find((a) => (a as { id: string }).id === id);
      if (!found) throw new TorusError('TORUS_ARTIFACT_UNKNOWN', `no node holds artifact ${id}`, { id });
      const model = state.artifacts?.[id]?.model;
      return { status: 200, body: model ? { ...(found as object), model: modelView(model) } : found };
    },
  },
  {
    method: 'POST',
    path: '/v1/artifacts/:id/announce',
    summary:
      "tell the cluster this node holds an artifact `artifacts add` put in its store; answers once this node's state shows it",
    handler: async ({ facade, params, body }) => {
      requestCodecs.empty.decode(await body());
      return { status: 200, body: await service(facade).announce(artifactId(params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/v1/artifacts/:id/fetch',
    summary:
      'fetch an artifact into this node from every holder (202; progress in /v1/artifacts/transfers and ArtifactHeld events)',
    handler: async ({ facade, params, body }) => {
      requestCodecs.empty.decode(await body());
      return { status: 202, body: await service(facade).fetch(artifactId(params.id)) };
    },
  },
  {
    method: 'POST',
    path: '/v1/artifacts/:id/broadcast',
    summary: "send an artifact to nodes as a pipeline chain (given nodes in order, or an instance's ring order)",
    handler: async ({ facade, params, body }) => {
      const request = requestCodecs.broadcast.decode(await body());
      const nodes =
        'instance' in request ? [...(await facade.getInstance(request.instance)).nodes] : [...request.nodes];
      return { status: 202, body: await service(facade).broadcast(artifactId(params.id), nodes) };
    },
  },
  {
    method: 'DELETE',
    path: '/v1/artifacts/:id',
    summary: "remove an artifact from this node's store; answers once this node's state no longer lists it here",
    handler: async ({ facade, params }) => ({ status: 200, body: await service(facade).remove(artifactId(params.id)) }),
  },
];

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } };
const ok = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
});
const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const noFields = {
  required: false,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/EmptyRequest' } } },
};
/** Every artifact operation answers 503 on a node that runs no artifact service (an embedder's subset), and 400 for a malformed id or body. */
const always = { '400': err('a malformed artifact id or body'), '503': err('this node runs no artifact service') };

/** The OpenAPI entries of these routes (merged into src/api/openapi.ts). */
export const artifactOpenApiPaths: Record<string, Record<string, unknown>> = {
  '/v1/artifacts': {
    get: { summary: artifactRoutes[0]!.summary, responses: { ...always, '200': ok('artifacts and local holdings') } },
  },
  '/v1/artifacts/transfers': {
    get: {
      summary: artifactRoutes[1]!.summary,
      responses: {
        ...always,
        '200': {
          description: 'transfers, each with its bound, and corrupt chunks peers served',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ArtifactTransfers' } } },
        },
      },
    },
  },
  '/v1/artifacts/{id}': {
    get: {
      summary: artifactRoutes[2]!.summary,
      parameters: [idParam],
      responses: { ...always, '200': ok('the artifact'), '404': err('no node holds it') },
    },
    delete: {
      summary: artifactRoutes[6]!.summary,
      parameters: [idParam],
      responses: { ...always, '200': ok('removed'), '404': err('not on this node'), '409': err('being transferred') },
    },
  },
  '/v1/artifacts/{id}/announce': {
    post: {
      summary: artifactRoutes[3]!.summary,
      parameters: [idParam],
      requestBody: noFields,
      responses: { ...always, '200': ok('announced'), '404': err('not in the store') },
    },
  },
  '/v1/artifacts/{id}/fetch': {
    post: {
      summary: artifactRoutes[4]!.summary,
      parameters: [idParam],
      requestBody: noFields,
      responses: {
        ...always,
        '202': ok('transfer started'),
        '503': err('no holder'),
        '507': err('not enough disk space: the message names the node and the bytes missing'),
      },
    },
  },
  '/v1/artifacts/{id}/broadcast': {
    post: {
      summary: artifactRoutes[5]!.summary,
      parameters: [idParam],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/BroadcastRequest' } } },
      },
      responses: {
        ...always,
        '202': ok('the chain (head first) and the nodes that refused'),
        '404': err('unknown artifact or node'),
      },
    },
  },
};
