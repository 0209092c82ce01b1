/**
 * Durable term and vote: a node saves its vote before the grant leaves, and a node that voted in term T
 * and restarts (its vote read back from vote.json) never votes for another candidate in T. Also: a campaign is
 * saved before its vote requests go out. Pure core + the store's vote file.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initialAgreement, step } from '../../../src/actors/cluster/agreement/agreement.js';
import {
  DEFAULT_TIMINGS,
  type AgreementConfig,
  type AgreementState,
} from '../../../src/actors/cluster/agreement/types.js';
import { StateStore } from '../../../src/actors/cluster/storage/state-store.js';
import { topologyReplica } from '../../../src/actors/cluster/topology-state.js';
import { clusterNameHash } from '../../../src/actors/cluster/transport/auth.js';
import { createLogger } from '../../../src/runtime/log.js';

const cfg: AgreementConfig = { ...DEFAULT_TIMINGS, selfId: 'v', startedAt: 5 };

/** A settled follower without a leader that knows candidates b and c. */
function voter(now: number, state = initialAgreement(0)): AgreementState {
  let s = state;
  for (const id of ['b', 'c'])
    s = step(cfg, s, { kind: 'joined', now, nodeId: id, incarnation: 1, startedAt: 1 }).state;
  return step(cfg, s, { kind: 'tick', now: now + cfg.settleMs }).state;
}

t.test(
  'the vote is saved before the grant is sent; after a restart the node refuses another candidate in that term',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'torus-vote-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const store = () =>
      new StateStore({
        dataDir: dir,
        replica: topologyReplica,
        cluster: clusterNameHash('t'),
        retain: 4096,
        log: createLogger({ component: 'test', level: 'silent' }),
        now: () => 1,
      });
    const now = 10_000;
    const s = voter(now);
    const r = step(cfg, s, {
      kind: 'frame',
      now: now + 700,
      from: 'b',
      frame: { type: 'vote-request', term: 7, lastIndex: 0, lastTerm: 0 },
    });
    const kinds = r.effects.map((e) => (e.kind === 'send' ? `send ${e.frame.type}` : e.kind));
    const saveAt = kinds.indexOf('save-vote');
    const grantAt = r.effects.findIndex((e) => e.kind === 'send' && e.frame.type === 'vote' && e.frame.granted);
    t.ok(saveAt >= 0 && grantAt > saveAt, `save-vote comes before the grant: ${kinds.join(', ')}`);
    const saved = r.effects.find((e) => e.kind === 'save-vote');
    const st = store();
    st.load();
    if (saved?.kind === 'save-vote') st.saveVote(saved.vote);
    st.close();

    // kill -9 and restart: the vote comes back from vote.json.
    const loaded = store().load();
    t.same(loaded.vote, { term: 7, votedTerm: 7, votedFor: 'b' });
    const restarted = voter(now + 2000, initialAgreement(now + 2000, loaded.log, { commit: 0, vote: loaded.vote }));
    t.equal(restarted.term, 7, 'the term survives the restart');
    const other = step(cfg, restarted, {
      kind: 'frame',
      now: now + 3000,
      from: 'c',
      frame: { type: 'vote-request', term: 7, lastIndex: 0, lastTerm: 0 },
    });
    const answer = other.effects.find((e) => e.kind === 'send' && e.frame.type === 'vote');
    t.ok(
      answer?.kind === 'send' && answer.frame.type === 'vote' && !answer.frame.granted,
      'c is refused in term 7: no two votes in one term',
    );
    // Without the saved vote (the old behaviour) the same restart would grant it: the test can fail.
    const forgetful = voter(now + 2000, initialAgreement(now + 2000));
    const granted = step(cfg, forgetful, {
      kind: 'frame',
      now: now + 3000,
      from: 'c',
      frame: { type: 'vote-request', term: 7, lastIndex: 0, lastTerm: 0 },
    }).effects.find((e) => e.kind === 'send' && e.frame.type === 'vote');
    t.ok(
      granted?.kind === 'send' && granted.frame.type === 'vote' && granted.frame.granted,
      'a node that forgot its vote would grant it',
    );
    const same = step(cfg, restarted, {
      kind: 'frame',
      now: now + 3000,
      from: 'b',
      frame: { type: 'vote-request', term: 7, lastIndex: 0, lastTerm: 0 },
    }).effects.find((e) => e.kind === 'send' && e.frame.type === 'vote');
    t.ok(
      same?.kind === 'send' && same.frame.type === 'vote' && same.frame.granted,
      'the candidate it voted for may ask again',
    );
  },
);

t.test('a campaign is saved before its vote requests leave', async (t) => {
  const s = voter(10_000);
  const r = step(cfg, s, { kind: 'tick', now: 10_000 + cfg.settleMs + 3 * cfg.electionStaggerMs + 10 });
  const kinds = r.effects.map((e) => (e.kind === 'send' ? `send ${e.frame.type}` : e.kind));
  const saveAt = kinds.indexOf('save-vote');
  const requestAt = kinds.indexOf('send vote-request');
  t.ok(requestAt > 0 && saveAt >= 0 && saveAt < requestAt, `save-vote before vote-request: ${kinds.join(', ')}`);
});
