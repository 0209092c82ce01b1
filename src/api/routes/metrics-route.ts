import { renderMetrics } from '../prometheus.js';
import { sampleProcess, startEventLoopMonitor } from '../process-metrics.js';
import { sendText } from '../../http/http-io.js';
import type { Route } from '../router.js';

startEventLoopMonitor(); // the first scrape then already has a window of event-loop delays

export const metricsRoute: Route = {
  method: 'GET',
  path: '/metrics',
  summary:
    'Prometheus text: per-link bandwidth/RTT, runner states, event index, restarts, limit rejections, process and Node.js runtime metrics',
  handler: async ({ facade, res, shared }) => {
    const [node, state, topology, instances, metrics, process] = await Promise.all([
      facade.node(),
      facade.state(),
      facade.topology(),
      facade.listInstances(),
      facade.metrics(),
      sampleProcess(),
    ]);
    sendText(
      res,
      200,
      renderMetrics({
        node,
        lastIndex: state.lastIndex,
        topology,
        instances,
        metrics,
        process,
        limitRejections: shared.limitStats.counts(),
      }),
      'text/plain; version=0.0.4; charset=utf-8',
    );
    return undefined;
  },
};
