import { Type } from '../protocols/schema-kit.js';
import { artifactResponses } from './responses/artifacts.js';
import { calibrationResponses } from './responses/calibrations.js';
import { clusterResponses } from './responses/cluster.js';
import { instanceResponses } from './responses/instances.js';
import { CLOSED, errorBody, open } from './responses/kit.js';
import { measurementResponses } from './responses/measurements.js';

/**
 * The answers' schemas (TypeBox, src/protocols/schema-kit.ts), one file per resource in ./responses/, written to
 * describe exactly what the views (./views.ts, ./node-facade.ts) and the routes put on the wire; the OpenAPI
 * document serves these objects as they are, in the order listed here. Every object says whether it is closed (`additionalProperties: false`, the usual case) or open on
 * purpose (passthrough data owned elsewhere: the replicated state, planner plans, ring tables).
 * test/api/openapi-live.test.ts calls every route and validates the real answers against the document under
 * strict Ajv, and fails on any object that does not say which it is.
 */
export const responseSchemas = {
  CalibrationRun: calibrationResponses.CalibrationRun,
  Calibrations: calibrationResponses.Calibrations,
  Error: Type.Object({ error: errorBody }, CLOSED),
  NodeInfo: clusterResponses.NodeInfo,
  StateView: clusterResponses.StateView,
  Topology: clusterResponses.Topology,
  Peer: clusterResponses.Peer,
  PeerList: clusterResponses.PeerList,
  Instance: instanceResponses.Instance,
  InstanceList: instanceResponses.InstanceList,
  Deleted: instanceResponses.Deleted,
  ArtifactTransfers: artifactResponses.ArtifactTransfers,
  Previews: instanceResponses.Previews,
  PipelineBenchResult: measurementResponses.PipelineBenchResult,
  BenchRun: measurementResponses.BenchRun,
  BenchRunList: measurementResponses.BenchRunList,
  RingBenchResult: measurementResponses.RingBenchResult,
  DeviceMeasured: measurementResponses.DeviceMeasured,
  MeasureLinksQueued: measurementResponses.MeasureLinksQueued,
  MemberRemoved: clusterResponses.MemberRemoved,
  MemberRemovalPending: clusterResponses.MemberRemovalPending,
  OpenApiDocument: open('this document (OpenAPI 3.1)', { openapi: Type.Literal('3.1.0') }),
};
