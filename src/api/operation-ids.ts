/**
 * The `operationId` of every operation in the OpenAPI document: the name a client generator gives the method
 * (openapi-generator, openapi-typescript's `operations`), so each is a stable verb + noun, never derived from
 * the path. A new route names its operation here; the document refuses to build without one.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /node_id': 'getNodeId',
  'GET /v1/node': 'getNode',
  'GET /v1/state': 'getState',
  'GET /v1/topology': 'getTopology',
  'GET /v1/peers': 'listPeers',
  'POST /v1/device/measure': 'measureDevice',
  'POST /v1/links/measure': 'measureLinks',
  'POST /v1/calibrations': 'runCalibrations',
  'GET /v1/calibrations': 'listCalibrations',
  'POST /v1/placements/preview': 'previewPlacements',
  'POST /v1/instances': 'createInstance',
  'GET /v1/instances': 'listInstances',
  'GET /v1/instances/{id}': 'getInstance',
  'DELETE /v1/instances/{id}': 'deleteInstance',
  'GET /v1/instances/{id}/logs': 'getInstanceLogs',
  'DELETE /v1/members/{id}': 'removeMember',
  'GET /v1/events': 'streamEvents',
  'GET /v1/bench/ring': 'listRingBenchRuns',
  'POST /v1/bench/ring': 'startRingBench',
  'GET /v1/bench/ring/{id}': 'getRingBenchRun',
  'POST /v1/bench/pipeline': 'runPipelineBench',
  'GET /metrics': 'getMetrics',
  'GET /v1/openapi.json': 'getOpenApiDocument',
  'GET /': 'getDashboard',
  'GET /login': 'getSignInForm',
  'POST /login': 'signIn',
  'GET /dashboard/app.js': 'getDashboardAppScript',
  'GET /dashboard/dom.js': 'getDashboardDomScript',
  'GET /dashboard/jobs.js': 'getDashboardJobsScript',
  'GET /dashboard/bench-chart.js': 'getDashboardBenchChartScript',
  'GET /dashboard/previews.js': 'getDashboardPreviewsScript',
  'GET /dashboard/style.css': 'getDashboardStyles',
  'GET /v1/artifacts': 'listArtifacts',
  'GET /v1/artifacts/transfers': 'listArtifactTransfers',
  'GET /v1/artifacts/{id}': 'getArtifact',
  'DELETE /v1/artifacts/{id}': 'removeArtifact',
  'POST /v1/artifacts/{id}/announce': 'announceArtifact',
  'POST /v1/artifacts/{id}/fetch': 'fetchArtifact',
  'POST /v1/artifacts/{id}/broadcast': 'broadcastArtifact',
};

/** The operation's id, or an error naming the operation that has none (a route added without one). */
export function operationIdOf(method: string, path: string): string {
  const key = `${method.toUpperCase()} ${path}`;
  const id = Object.hasOwn(OPERATION_IDS, key) ? OPERATION_IDS[key] : undefined;
  if (id === undefined) throw new Error(`OpenAPI: no operationId for ${key} (src/api/operation-ids.ts)`);
  return id;
}
