#!/usr/bin/env python3
"""One case of `blackpipe report --spec --driver-cmd`: run OPERATION against URI with PyMongo's
defaults. blackpipe seeds collection `items` (_id 1 to 5) in the URI's database before each case
and judges by the attempts it counts; our exit status and last line are only shown.
Works with PyMongo 3.11 (Debian bookworm's python3-pymongo) and 4.x."""
import sys

from pymongo import MongoClient
from pymongo.write_concern import WriteConcern


def get_more(items):
    for _ in items.find({}, batch_size=2):  # batches after the first are getMores
        pass


OPERATIONS = {
    'insert': lambda items: items.insert_one({'spec': 'insert'}),
    'find': lambda items: items.find_one({'_id': 1}),
    'getMore': get_more,
    'updateMany': lambda items: items.update_many({}, {'$set': {'touched': True}}),
    'deleteMany': lambda items: items.delete_many({'_id': {'$gt': 3}}),
    'insertW0': lambda items: items.with_options(write_concern=WriteConcern(w=0))
    .insert_one({'spec': 'insertW0'}),
}


def main(argv):
    if len(argv) != 3 or argv[2] not in OPERATIONS:
        print('usage: spec-driver.py URI ' + '|'.join(OPERATIONS))
        return 2
    uri, operation = argv[1], argv[2]
    client = None
    try:
        client = MongoClient(uri)  # the URI carries retryWrites and retryReads; nothing else is set
        OPERATIONS[operation](client.get_default_database()['items'])
        print('ok')
        return 0
    except Exception as error:  # the last line blackpipe shows
        code = getattr(error, 'code', None)
        print('%s%s: %s' % (type(error).__name__, '' if code is None else ' %s' % code, error))
        return 1
    finally:
        if client is not None:
            client.close()


if __name__ == '__main__':
    sys.exit(main(sys.argv))
