import { TorusError } from '../../protocols/errors.js';
import { runCalibrations } from '../calibration-runner.js';
import { requestCodecs } from '../request-schemas.js';
import type { Route } from '../router.js';

/**
 * Calibrated figures (docs/placement.md, "Calibrated figures"). POST runs a framework's calibration command on the
 * named nodes (every node by default) through their runner supervisors and answers, per node, the recorded figures
 * or why none were recorded; GET answers what the replicated state holds.
 */
export const calibrationRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/v1/calibrations',
    summary: "run a framework's calibration command on nodes and record their figures",
    writeRate: true,
    handler: async ({ facade, body }) => {
      const request = requestCodecs.calibration.decode(await body());
      const { runnerLog, recordCalibration } = facade;
      if (!runnerLog || !recordCalibration)
        throw new TorusError('TORUS_ACTOR_STOPPED', 'this node cannot run calibrations (no runner logs or cluster)');
      const answer = await runCalibrations(
        {
          state: () => facade.state(),
          events: (afterIndex, signal) => facade.events(afterIndex, signal),
          createInstance: (r) => facade.createInstance(r),
          getInstance: (id) => facade.getInstance(id),
          deleteInstance: (id) => facade.deleteInstance(id),
          runnerLog: (r, signal) => runnerLog.call(facade, r, signal),
          recordCalibration: (e) => recordCalibration.call(facade, e),
        },
        request,
      );
      return { status: 200, body: answer };
    },
  },
  {
    method: 'GET',
    path: '/v1/calibrations',
    summary: 'the calibrated figures per node and framework',
    handler: async ({ facade }) => {
      const { state } = await facade.state();
      return { status: 200, body: { calibrations: state.calibrations ?? {} } };
    },
  },
];
