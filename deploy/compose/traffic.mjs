// Optional demo traffic for docker-compose.yml (`--profile demo`): a small batch of tracking calls
// every second through the ingest service, so the Grafana dashboard has something to show.
const url = `${process.env.INGEST_URL ?? 'http://ingest:8080'}/v1/batch`;
const auth = `Basic ${Buffer.from(`${process.env.DEMO_WRITE_KEY ?? 'demo-write-key'}:`).toString('base64')}`;
const events = ['Signed Up', 'Order Completed', 'Product Viewed', 'Checkout Started'];
let n = 0;

async function tick() {
  n += 1;
  const batch = Array.from({ length: 3 }, (_, i) => ({
    type: 'track', userId: `demo-user-${(n + i) % 50}`, event: events[(n + i) % events.length], properties: { n },
  }));
  batch.push({ type: 'identify', userId: `demo-user-${n % 50}`, traits: { plan: n % 2 ? 'free' : 'pro' } });
  try {
    const res = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ batch }) });
    if (!res.ok) console.log(JSON.stringify({ msg: 'ingest answered', status: res.status, body: await res.text() }));
  } catch (err) {
    console.log(JSON.stringify({ msg: 'ingest unreachable', error: String(err) }));
  }
}

const timer = setInterval(tick, 1000);
for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => { clearInterval(timer); process.exit(0); });
