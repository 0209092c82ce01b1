import { inCallersWords } from '../callers-words.js';
import { requestCodecs, type CreateInstanceRequest } from '../request-schemas.js';
import { workloadFromRequest } from '../../protocols/workload-spec.js';
import {
  modelBytesOf,
  modelRecordFor,
  resolveModelWorkload,
} from '../../actors/placement-planner/search/model-workload.js';
import type { Route } from '../router.js';

/** Placement previews and the instance lifecycle (create goes to the leader through the facade). */
export const instanceRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/v1/placements/preview',
    summary: 'every placement option (sharding × backend × node count), each a plan or a refusal',
    handler: async ({ facade, body }) => {
      const decoded = requestCodecs.preview.decode(await body());
      // A model's sizes from its record (docs/placement.md, "A model workload"), and its bytes for the planner.
      const artifacts = decoded.workload.model ? (await facade.state()).state.artifacts : undefined;
      const workload = resolveModelWorkload(decoded.workload, artifacts);
      const request = {
        ...decoded,
        workload: workload.model
          ? { ...workload, modelBytes: modelBytesOf(modelRecordFor(artifacts, workload.model)) }
          : workload,
      };
      // A preview covers every sharding × backend, so the request need not name one; but the planner's decoder
      // requires both (a real node answered 400 "request.sharding" to a body the schema accepts). The same
      // defaults as POST /v1/instances and the CLI.
      return {
        status: 200,
        body: await facade.previewPlacements({
          ...request,
          sharding: request.sharding ?? 'pipeline',
          backend: request.backend ?? 'ring',
        }),
      };
    },
  },
  {
    method: 'POST',
    path: '/v1/instances',
    summary: "place a workload and start its runners (201), or the planner's reason (409)",
    writeRate: true,
    handler: async ({ facade, body }) => {
      const decoded = requestCodecs.createInstance.decode(await body());
      const artifacts = decoded.workload.model ? (await facade.state()).state.artifacts : undefined;
      const request = normaliseCreate(decoded, artifacts);
      const instance = await inCallersWords(() => facade.createInstance(request));
      return { status: 201, body: instance, headers: { location: `/v1/instances/${encodeURIComponent(instance.id)}` } };
    },
  },
  {
    method: 'GET',
    path: '/v1/instances',
    summary: 'every instance with ring order and runner states',
    handler: async ({ facade }) => ({ status: 200, body: { instances: await facade.listInstances() } }),
  },
  {
    method: 'GET',
    path: '/v1/instances/:id',
    summary: 'one instance with its runner statuses',
    handler: async ({ facade, params }) => ({ status: 200, body: await facade.getInstance(params.id ?? '') }),
  },
  {
    method: 'DELETE',
    path: '/v1/instances/:id',
    summary: 'stop every runner of the instance and remove it',
    handler: async ({ facade, params }) => {
      await facade.deleteInstance(params.id ?? '');
      return { status: 200, body: { deleted: params.id } };
    },
  },
];

/**
 * Fills the documented defaults: `kind: ring`, and a model's sizes from its record (refused here when the model
 * is unknown or contradicted, before anything reaches the leader): the cluster's command carries them always.
 */
function normaliseCreate(
  body: CreateInstanceRequest,
  artifacts: Parameters<typeof resolveModelWorkload>[1],
): CreateInstanceRequest {
  return { ...body, workload: workloadFromRequest(resolveModelWorkload(body.workload, artifacts)) };
}
