// A Node.js client that inserts {_id: 1} into DB.c at once, while its monitor has only shaken hands (its first
// awaitable hello comes half a second later): prints {"ms": n}, the insert's time, or exits 1 with the error.
// Usage: node insert-at-once.js URI DB
const { MongoClient } = require('mongodb');

(async () => {
  const [uri, db] = process.argv.slice(2);
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  const started = Date.now();
  await client.db(db).collection('c').insertOne({ _id: 1 });
  const ms = Date.now() - started;
  await client.close();
  console.log(JSON.stringify({ ms }));
})().catch(e => { console.error(String(e)); process.exit(1); });
