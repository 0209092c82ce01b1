import { renderMetrics } from '../prometheus.js';
import { sendText } from '../http-io.js';
import type { Route } from '../router.js';

export const metricsRoute: Route = {
  method: 'GET',
  path: '/metrics',
  summary: 'Prometheus text: per-link bandwidth/RTT, runner states, event index, restarts',
  handler: async ({ facade, res, shared }) => {
    const [node, state, topology, instances, metrics] = await Promise.all([
      facade.node(), facade.state(), facade.topology(), facade.listInstances(), facade.metrics(),
    ]);
    sendText(res, 200, renderMetrics({ node, lastIndex: state.lastIndex, topology, instances, metrics, limitRejections: shared.limitStats.counts() }), 'text/plain; version=0.0.4; charset=utf-8');
    return undefined;
  },
};
