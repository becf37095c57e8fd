#!/usr/bin/env node
// One case of `blackpipe report --spec --driver-cmd`: run OPERATION against URI with the Node.js
// driver's defaults. blackpipe seeds collection `items` (_id 1 to 5) in the URI's database before
// each case and judges by the attempts it counts; our exit status and last line are only shown.
'use strict';
const { MongoClient } = require('mongodb');

const [uri, operation] = process.argv.slice(2);

const operations = {
  insert: (items) => items.insertOne({ spec: 'insert' }),
  find: (items) => items.findOne({ _id: 1 }),
  getMore: async (items) => {
    for await (const doc of items.find({}, { batchSize: 2 })) void doc; // batches after the first are getMores
  },
  updateMany: (items) => items.updateMany({}, { $set: { touched: true } }),
  deleteMany: (items) => items.deleteMany({ _id: { $gt: 3 } }),
  insertW0: (items) => items.insertOne({ spec: 'insertW0' }, { writeConcern: { w: 0 } }),
};

async function main() {
  if (!uri || !operations[operation]) {
    console.log(`usage: spec-driver.js URI ${Object.keys(operations).join('|')}`);
    return 2;
  }
  let client;
  try {
    client = new MongoClient(uri); // the URI carries retryWrites and retryReads; nothing else is set
    await operations[operation](client.db().collection('items'));
    console.log('ok');
    return 0;
  } catch (error) {
    console.log(`${error.name}${error.code === undefined ? '' : ' ' + error.code}: ${error.message}`);
    return 1;
  } finally {
    if (client) await client.close();
  }
}

main().then((status) => { process.exitCode = status; }, (error) => {
  console.log(`${error.name}: ${error.message}`); // the last line blackpipe shows
  process.exitCode = 1;
});
