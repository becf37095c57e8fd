// A Node.js client idle for a while, then inserting one document {_id: 1} into DB.c: prints its heartbeats as one
// JSON line, {"succeeded": n, "awaited": n, "failed": n, "failures": ["..."]}. Usage: node idle-heartbeats.js URI MILLIS DB
const { MongoClient } = require('mongodb');

(async () => {
  const [uri, millis, db] = process.argv.slice(2);
  const client = new MongoClient(uri);
  const seen = { succeeded: 0, awaited: 0, failed: 0, failures: [] };
  client.on('serverHeartbeatSucceeded', e => { seen.succeeded++; if (e.awaited) seen.awaited++; });
  client.on('serverHeartbeatFailed', e => { seen.failed++; seen.failures.push(String(e.failure && e.failure.message)); });
  await client.db('admin').command({ ping: 1 });
  await new Promise(resolve => setTimeout(resolve, Number(millis)));
  await client.db(db).collection('c').insertOne({ _id: 1 });
  await client.close();
  console.log(JSON.stringify(seen));
})().catch(e => { console.error(e); process.exit(1); });
