/**
 * The answers about instances: the placed instance with its plan, workload, runners and job, and placement
 * previews.
 */
import { RUNNER_STATES } from '../../protocols/events.js';
import { BACKENDS, SHARDINGS } from '../../protocols/placement-kinds.js';
import { MapOf, StringEnum, Type } from '../../protocols/schema-kit.js';
import { ref, str, num, int, bool, opt, CLOSED, open } from './kit.js';

const backend = StringEnum(BACKENDS);
const sharding = StringEnum(SHARDINGS);

const endpoint = Type.Object({ ip: str, port: int }, CLOSED);

const instancePlan = Type.Object(
  {
    id: str,
    backend,
    sharding,
    nodes: Type.Array(str, { description: 'rank order' }),
    shards: Type.Array(Type.Object({ node: str, rank: int, worldSize: int, startLayer: int, endLayer: int }, CLOSED)),
    port: int,
    hostsByNode: opt(MapOf(Type.Array(endpoint), { description: 'per node, the addresses its ring neighbours dial' })),
    jacclDevices: opt(
      Type.Array(Type.Array(Type.Union([Type.String(), Type.Null()])), { description: 'RDMA device matrix (jaccl)' }),
    ),
    jacclCoordinators: opt(MapOf(str)),
    meshAddresses: opt(
      MapOf(str, { description: 'per node, an address every other node reaches (MASTER_ADDR, *_SOCKET_IFNAME)' }),
    ),
  },
  { ...CLOSED, description: 'the placement the leader applied (src/protocols/instance-plan.ts)' },
);

const workloadSpec = Type.Object(
  {
    id: str,
    kind: StringEnum(['ring', 'exec']),
    memoryBytes: int,
    layers: int,
    hiddenSize: opt(int),
    kvHeads: opt(int),
    supportsTensor: opt(bool),
    logs: opt(
      Type.Object(
        { maxFiles: opt(int), maxFileBytes: opt(int) },
        {
          ...CLOSED,
          description: "how each rank's stdout and stderr rotate on its node (src/protocols/log-rotation.ts)",
        },
      ),
    ),
    bytesPerLayer: opt(int),
    activationBytesPerToken: opt(int),
    flopsPerTokenPerLayer: opt(num),
    tokensPerStep: opt(int),
    returnBytesPerStep: opt(int),
    contextTokens: opt(int),
    kvBytesPerTokenPerLayer: opt(int),
    framework: opt(str),
    model: opt(Type.String({ description: 'the model artifact each node receives its layers of (docs/artifacts.md)' })),
    artifacts: opt(
      Type.Array(str, { description: 'artifact ids the workload needs on every node (docs/artifacts.md)' }),
    ),
    restart: opt(
      Type.Object(
        { policy: StringEnum(['never', 'on-failure']), max: int },
        { ...CLOSED, description: 'what happens when the job fails (exec)' },
      ),
    ),
    command: opt(str),
    args: opt(Type.Array(str)),
    env: opt(
      MapOf(Type.Literal('[redacted]'), {
        description: 'the names of the variables set; every value is "[redacted]" (values never leave the node)',
      }),
    ),
    cwd: opt(str),
  },
  { ...CLOSED, description: 'what the instance runs (src/protocols/workload-spec.ts)' },
);

const runner = Type.Object(
  {
    node: str,
    rank: int,
    status: StringEnum(RUNNER_STATES),
    reason: opt(str),
    restarts: opt(Type.Integer({ description: 'restart attempts so far' })),
    exitCode: opt(Type.Integer({ description: "an exec rank's command exit code" })),
    signal: opt(Type.String({ description: 'the signal that ended it' })),
  },
  CLOSED,
);

/** An exec instance is a job (src/api/views.ts). */
const job = Type.Object(
  {
    state: StringEnum(['running', 'restarting', 'completed', 'failed']),
    exitCode: opt(Type.Integer({ description: "0 when completed; the first failing rank's code" })),
    signal: opt(Type.String({ description: 'the signal that killed the first failing rank' })),
    failedRank: opt(int),
    failedNode: opt(str),
    restarts: Type.Integer({ description: 'group restarts so far (restart policy on-failure)' }),
  },
  { ...CLOSED, description: 'the job state of an exec instance' },
);

export const instanceResponses = {
  Instance: Type.Object(
    {
      id: str,
      nodes: Type.Array(str, { description: 'ring (rank) order' }),
      runners: Type.Array(runner),
      backend,
      sharding,
      status: StringEnum(['active', 'needs-replacement', 'failed', 'completed']),
      reason: opt(str),
      generation: Type.Integer({ description: '1 at creation, +1 per re-placement' }),
      pinned: opt(
        Type.Boolean({
          description: 'true: placed on the nodes the request named, in its order; never moved to other nodes',
        }),
      ),
      exitCode: opt(Type.Integer({ description: "a finished job: 0, or the first failing rank's code" })),
      job: opt(job),
      workload: workloadSpec,
      plan: instancePlan,
      artifacts: opt(
        Type.Array(
          Type.Object(
            {
              id: str,
              name: str,
              bytes: int,
              nodes: Type.Array(
                Type.Object(
                  {
                    node: str,
                    haveBytes: int,
                    complete: bool,
                    rateBps: opt(Type.Integer({ description: 'receiving at, bytes/s (while a transfer runs)' })),
                    layers: opt(
                      Type.Array(int, {
                        minItems: 2,
                        maxItems: 2,
                        description: "the workload's model: this node's pipeline stage [from, to)",
                      }),
                    ),
                    bytes: opt(
                      Type.Integer({
                        description: 'what this node needs of it (its stage), when not the whole artifact',
                      }),
                    ),
                  },
                  CLOSED,
                ),
              ),
              bound: opt(
                Type.Object(
                  {
                    seconds: Type.Number({ minimum: 0 }),
                    node: str,
                    side: StringEnum(['in', 'out']),
                    bytes: int,
                    capacityBps: num,
                  },
                  {
                    ...CLOSED,
                    description:
                      "the time no schedule beats for what the placed nodes still lack, over the measured links, and the node ('holders': the holders together) and side of it that set it (docs/artifacts.md, The bound)",
                  },
                ),
              ),
            },
            CLOSED,
          ),
          {
            description:
              "the workload's artifacts and model on the placed nodes (docs/artifacts.md); present when the workload lists any or names a model",
          },
        ),
      ),
    },
    CLOSED,
  ),
  InstanceList: Type.Object({ instances: Type.Array(ref('Instance')) }, CLOSED),
  Deleted: Type.Object({ deleted: str }, CLOSED),
  Previews: Type.Object(
    {
      previews: Type.Array(
        Type.Object(
          {
            sharding,
            backend,
            nodeCount: int,
            plan: opt(
              open(
                "the planner's plan: instance, hops, explanation (src/actors/placement-planner/search/plan-result.ts)",
              ),
            ),
            refusal: opt(
              open(
                "the planner's reason: kind, message, explanation (src/actors/placement-planner/search/plan-result.ts)",
              ),
            ),
          },
          { ...CLOSED, description: 'one option: a plan, or the refusal' },
        ),
      ),
    },
    { ...CLOSED, description: 'every sharding × backend × node count option' },
  ),
};
