import { TorusError } from '../../protocols/errors.js';
import { requestCodecs } from '../request-schemas.js';
import type { Route } from '../router.js';

/**
 * Re-measurement on request: the network profiler measures links when they appear or its interfaces
 * change, never continuously; this asks it to measure now (all of this node's links, or those to one peer and/or
 * one address). 202 with the links it will measure; the new figures arrive as LinkMeasured events
 * (/v1/topology `measuredAt`, /v1/events). A filter that matches no link is 404 and changes nothing.
 */
export const linksRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/v1/links/measure',
    summary: "re-measure this node's links now (all, or to one peer / one address): 202 + the links queued",
    writeRate: true,
    handler: async ({ facade, body }) => {
      const request = requestCodecs.measureLinks.decode(await body());
      if (!facade.measureLinks) throw new TorusError('TORUS_ACTOR_STOPPED', 'this node has no network profiler');
      const answer = await facade.measureLinks(request);
      return { status: 202, body: answer };
    },
  },
  {
    method: 'POST',
    path: '/v1/device/measure',
    summary: "measure this node's memory bandwidth and compute again (~2 s of one core): 200 + the figures",
    writeRate: true,
    handler: async ({ facade }) => {
      if (!facade.measureDevice) throw new TorusError('TORUS_ACTOR_STOPPED', 'this node has no network profiler');
      return { status: 200, body: await facade.measureDevice() };
    },
  },
];
