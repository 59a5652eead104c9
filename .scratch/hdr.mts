const R = '/work/wt/integrity';
const { startTestNats } = await import(`${R}/test/support/natsServer.ts`);
const { connect, headers } = await import('@nats-io/transport-node');
const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
const nats = await startTestNats();
const nc = await connect({ servers: nats.url });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: 'T', subjects: ['t.>'], allow_direct: true });
const js = jetstream(nc);
const h = headers(); h.set('Bc-X', 'abc');
const a1 = await js.publish('t.a', 'one', { msgID: 'm1', expect: { lastSubjectSequence: 0 }, headers: h });
const m = await jsm.direct.getMessage('T', { seq: a1.seq });
console.log([...(m.header?.keys() ?? [])].map((k) => `${k}=${m.header.get(k)}`));
const c = await js.consumers.get('T');
const it = await c.fetch({ max_messages: 1 });
for await (const x of it) console.log('consumer', [...(x.headers?.keys() ?? [])].map((k) => `${k}=${x.headers.get(k)}`), x.info.timestampNanos);
// replay with header
try { await js.publish('t.a', 'one', { msgID: 'm2', expect: { lastSubjectSequence: 0 }, headers: h }); console.log('replay stored'); } catch (e) { console.log('replay refused', e.message); }
// raw publish with header Nats-Expected-Last-Subject-Sequence string
const h2 = headers(); h2.set('Nats-Expected-Last-Subject-Sequence', '0');
const r = await nc.request('t.a', 'two', { headers: h2 }); console.log(r.string());
await nc.close(); await nats[Symbol.asyncDispose]();
